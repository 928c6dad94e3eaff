"""What each section says, on hand-made tables: the recommendation follows the numbers, ties and limits included."""

from __future__ import annotations

import pandas as pd

from broker.report.sections import advisor, coh, elastic, leasing, trace


def test_coh_recommends_the_cheapest_and_its_saving_over_the_best_single_heuristic() -> None:
    table = pd.DataFrame([
        {"policy": "CoH (trio)", "cost": 90.0, "lower_bound": 60.0, "cost_over_lb": 1.5, "wait_mean_s": 2.0,
         "wait_p95_s": 9.0},
        {"policy": "FCFS-SM", "cost": 100.0, "lower_bound": 60.0, "cost_over_lb": 100 / 60, "wait_mean_s": 0.0,
         "wait_p95_s": 0.0},
        {"policy": "FCFS-LD", "cost": 120.0, "lower_bound": 60.0, "cost_over_lb": 2.0, "wait_mean_s": 0.0,
         "wait_p95_s": 0.0}])
    summary, advice = coh._texts(table)
    assert summary == ("CoH (trio) costs $90.00, 1.500 times the lower bound $60.00; jobs wait 0.000556 h on average "
                       "(0.0025 h at the 95th percentile) for a VM to boot.")  # one unit for waits: hours
    assert advice == "Run CoH (trio): 10.0% below the best single heuristic, FCFS-SM ($100.00)."
    table.loc[0, "cost"] = 100.0  # a tie with FCFS-SM: the first row (CoH) is the cheapest, saving 0
    assert coh._texts(table)[1] == "Run CoH (trio): 0.0% below the best single heuristic, FCFS-SM ($100.00)."
    assert coh._texts(table.iloc[1:])[1] == "Run FCFS-SM: the portfolio does not beat it here."


def test_leasing_says_plainly_when_the_learner_loses_to_a_constant_cap_and_when_it_wins() -> None:
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 8", "constant V = 16", "Q-learning"],
                          "v": pd.array([0, 8, 16, None], dtype="Int64"), "twt_imp_pct": [0.0, 60.0, 80.0, 70.0],
                          "cost_pct": [0.0, 20.0, 50.0, 25.0], "balance": [0.0, 40.0, 30.0, 45.0]})
    summary, advice = leasing._texts(table, 16)
    assert summary.startswith("The best constant cap is V = 8 of M = 16: waits 60.0 % shorter for 20.0 %")
    assert advice == "Q-learning's balance 45.0 beats the best constant cap by 5.0 points: let it choose the daily cap."
    table.loc[3, "balance"] = 40.0  # a tie is no gain
    assert leasing._texts(table, 16)[1] == ("Keep a constant cap of 8 nodes: Q-learning's balance 40.0 is 0.0 points "
                                            "below it, so the learner loses to a fixed rule here.")
    table["balance"] = None
    assert leasing._texts(table, 16)[1] == "Do not lease: the site runs its jobs without waiting."


def test_the_elastic_section_recommends_the_highest_responsiveness_w() -> None:
    def runs(fixed: float, rule: float, sarsa: float, rule_hours: float, sarsa_hours: float) -> pd.DataFrame:
        return pd.DataFrame({"run": ["fcfs (rigid)", "threshold (elastic)", "sarsa (elastic)"],
                             "w_interactive_mean": [fixed, rule, sarsa],
                             "core_hours": [1000.0, rule_hours, sarsa_hours]})

    # KTH's shape: the threshold autoscaler has the highest W (W = run / (run + wait): higher is better)
    assert elastic._texts(runs(0.6, 0.9, 0.7, 100.0, 145.0))[1] == (
        "Run the threshold autoscaler: the most responsive pool (W 0.900, 100 core-hours); SARSA loses 0.200 in W "
        "against the threshold autoscaler for 45% more core-hours.")
    assert elastic._texts(runs(0.6, 0.7, 0.9, 100.0, 50.0))[1] == (
        "Run SARSA: the most responsive pool (W 0.900, 50 core-hours); SARSA gains 0.200 in W against the threshold "
        "autoscaler for 50% fewer core-hours.")
    assert elastic._texts(runs(0.95, 0.9, 0.9, 100.0, 100.0))[1] == (
        "Run the site's fixed pool: the most responsive pool (W 0.950, 1,000 core-hours); SARSA is as responsive as "
        "the threshold autoscaler for the same core-hours. An elastic pool saves core-hours here, not waits.")
    # a tie on W goes to the fewer core-hours
    assert elastic._texts(runs(0.5, 0.9, 0.9, 100.0, 50.0))[1].startswith("Run SARSA: ")
    assert elastic._texts(runs(0.5, 0.9, 0.9, 50.0, 100.0))[1].startswith("Run the threshold autoscaler: ")
    # a run that counted no interactive job: pandas holds its figure as NaN
    summary, advice = elastic._texts(runs(0.4, float("nan"), 0.3, 100.0, 50.0))
    assert advice == "No interactive job was counted: the responsiveness cannot be compared."
    assert "threshold" not in summary and summary.startswith("the site's fixed pool: W 0.400")


def test_the_advisor_names_the_slowest_cloud_where_it_still_saves_time() -> None:
    table = pd.DataFrame({"overhead": [0.01, 0.1, 1.0], "saved_time_s": [7200.0, 3600.0, 0.0],
                          "oracle_saved_time_s": [10800.0, 7200.0, 3600.0]})
    _, advice = advisor._texts(table, 100.0, 50.0)
    assert advice == ("Use the advisor while the cloud slows a job by at most 0.1 per processor: it saves its users "
                      "1 h there (the oracle 2 h) and 2 h at 0.01 (the oracle 3 h).")
    table["saved_time_s"] = [0.0, -1.0, 0.0]
    assert advisor._texts(table, 1.0, 1.0)[1] == "Keep jobs here: at no cloud speed tried does the advisor save time."


def test_the_trace_advice_follows_the_offered_load_at_its_thresholds() -> None:
    assert "more than the site can run" in trace._advice(0.91, True)
    assert "a busy site" in trace._advice(0.9, True) and "a busy site" in trace._advice(0.61, True)
    assert "mostly idle" in trace._advice(0.6, True)
    assert trace._advice(0.5, False).endswith("The log records no waits, so the advisor has nothing to learn from.")
    assert trace._advice(None, True).startswith("The trace spans no time")


def test_the_elastic_section_sets_the_wait_learner_beside_the_autoscaler() -> None:
    table = pd.DataFrame({"run": ["fcfs (rigid)", "threshold (elastic)", "sarsa (elastic)", "sarsa-wait (elastic)"],
                          "w_interactive_mean": [0.6, 0.8, 0.7, 0.85], "core_hours": [1000.0, 100.0, 145.0, 110.0]})
    assert elastic._texts(table)[1] == (
        "Run SARSA on the wait reward: the most responsive pool (W 0.850, 110 core-hours); SARSA loses 0.100 in W "
        "against the threshold autoscaler for 45% more core-hours; SARSA on the wait reward gains 0.050 in W for 10% "
        "more core-hours.")
    table["w_interactive_mean"] = [0.6, 0.8, 0.7, 0.8]
    assert elastic._texts(table)[1].endswith("; SARSA on the wait reward is level in W for 10% more core-hours.")
    assert elastic.label("elastic", "sarsa", "wait") == "sarsa-wait (elastic)"
    assert elastic.label("rigid", "fcfs", "paper") == "fcfs (rigid)"


def test_the_wait_learner_is_left_out_before_the_section_is_skipped() -> None:
    class Share:
        share_left = 0.0

    budget = Share()
    budget.share_left = elastic._cost(5000, elastic.PAPER_RUNS) + 0.01  # the paper's runs fit, not all four
    runs, dropped = elastic._fitting(elastic.RUNS, budget, 5000)  # type: ignore[arg-type]
    assert runs == elastic.PAPER_RUNS and dropped
    budget.share_left = elastic._cost(5000, elastic.RUNS)  # exactly enough for all four
    assert elastic._fitting(elastic.RUNS, budget, 5000) == (elastic.RUNS, False)  # type: ignore[arg-type]
