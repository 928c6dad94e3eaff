"""The elastic section (:mod:`broker.report.sections.elastic`): its texts, the best run and the estimate by hand,
the pool cut to the budget on a small generated workload, the figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from broker.report.budget import Budget
from broker.report.model import ReportInput
from broker.report.sections import elastic
from tests.broker.report.hand_made import Clock, est, fresh, rgba, run_command
from workloads.lublin import default_workload
from workloads.swf import SwfHeader

# --- the texts and rows on hand-made tables -----------------------------------------------------------------------


def test_the_elastic_texts_in_full_and_without_interactive_jobs() -> None:
    table = pd.DataFrame({"run": ["fcfs (rigid)", "threshold (elastic)", "sarsa (elastic)"],
                          "w_interactive_mean": [0.3, 0.5, 0.4], "core_hours": [1000.0, 1500.5, 1500.5]})
    summary, advice = elastic._texts(table)
    assert summary == ("the site's fixed pool: W 0.300, 1,000 core-hours; the threshold autoscaler: W 0.500, 1,500 "
                       "core-hours; SARSA: W 0.400, 1,500 core-hours.")
    assert advice == ("Run the threshold autoscaler: the most responsive pool (W 0.500, 1,500 core-hours); SARSA "
                      "loses 0.100 in W against the threshold autoscaler for the same core-hours.")
    none = pd.DataFrame({"run": ["fcfs (rigid)", "threshold (elastic)", "sarsa (elastic)"],
                         "w_interactive_mean": pd.Series([None, None, None], dtype=object),
                         "core_hours": [1.0, 2.0, 3.0]})
    assert elastic._texts(none) == (".", "No interactive job was counted: the responsiveness cannot be compared.")
    one = none.copy()
    one["w_interactive_mean"] = pd.Series([0.25, None, None], dtype=object)
    assert elastic._texts(one) == ("the site's fixed pool: W 0.250, 1 core-hours.",
                                   "No interactive job was counted: the responsiveness cannot be compared.")


def test_the_best_elastic_run_is_the_highest_w_then_the_fewest_core_hours() -> None:
    table = pd.DataFrame({"run": ["a", "b", "c"], "w_interactive_mean": [0.2, 0.8, 0.8],
                          "core_hours": [1.0, 3.0, 2.0]})
    assert elastic.best_run(table) == "c"
    table["core_hours"] = [1.0, 2.0, 2.0]
    assert elastic.best_run(table) == "b"
    table["w_interactive_mean"] = [0.9, 0.8, 0.8]
    assert elastic.best_run(table) == "a"


def test_the_elastic_estimate_is_two_rule_runs_and_two_sarsa_runs_or_one_without_the_wait_learner() -> None:
    rule, sarsa = 0.05 + 1000 * 6e-5, 0.05 + 1000 * 4e-4 + 1000 ** 2 * 1.4e-8
    assert elastic._cost(1000) == pytest.approx(2 * rule + 2 * sarsa)
    assert elastic._cost(1000, elastic.PAPER_RUNS) == pytest.approx(2 * rule + sarsa)


# --- the whole section on a small generated workload (300 jobs; 5,001 processors in all) --------------------------


def test_the_elastic_pool_cut_to_the_window_the_budget_holds(generated: ReportInput,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(generated.path.parent)
    cost_5000 = est("elastic_rule", 5000, runs=2) + est("elastic_sarsa", 5000)
    small = Budget(1.0, clock=Clock())
    s = elastic.run(fresh(generated), small)
    assert (s.status, s.why) == ("skipped", f"the elastic pool: needs about {cost_5000:.1f} s, 1.0 s of the budget "
                                            "left")
    budget = Budget(cost_5000 + 1e-4, clock=Clock())  # 5,001 core-jobs would need 9.6e-4 s more
    s = elastic.run(fresh(generated), budget)
    assert (s.key, s.title, s.status) == ("elastic", "An elastic pool of cores", "done")
    assert budget.planned == pytest.approx(cost_5000)
    # all four runs do not fit even on 5,000 core-jobs: the wait learner is left out, and said so
    assert len(s.skipped_parts) == 2
    assert s.skipped_parts[0].startswith("SARSA on the wait reward: its run does not fit the budget left (")
    assert s.skipped_parts[0].endswith(" s) beside the others'")
    assert s.skipped_parts[1] == "the elastic pool ran the first 5,000 of 5,001 core-jobs (the budget)"
    n = s.numbers
    assert (n["core_jobs"], n["core_jobs_in_trace"], n["cores"], n["min_cores"]) == (5000, 5001, 256, 30)
    table = s.tables["elastic_runs"]
    assert table["run"].tolist() == ["fcfs (rigid)", "threshold (elastic)", "sarsa (elastic)"]
    assert list(table.columns) == ["run", "w_interactive_mean", "share_interactive_wait_over_120s",
                                   "wait_interactive_mean_s", "w_batch_mean", "utilization", "mean_cores", "core_hours"]
    assert table["mean_cores"].iloc[0] == 256.0  # the rigid pool is the site's M cores
    assert n["runs"]["fcfs (rigid)"] == {k: v for k, v in table.iloc[0].to_dict().items() if k != "run"}
    tail = "--cores 256 --min-cores 30 --limit-jobs 5000 --trim 500 --seed 0 --json"
    assert s.commands == [
        ("fcfs (rigid)", f"cloudbroker elastic --trace g.swf --mode rigid --policy fcfs {tail}"),
        ("threshold (elastic)", f"cloudbroker elastic --trace g.swf --mode elastic --policy threshold {tail}"),
        ("sarsa (elastic)", f"cloudbroker elastic --trace g.swf --mode elastic --policy sarsa {tail}")]
    assert (s.summary, s.recommendation) == elastic._texts(table)
    for (what, command), row in list(zip(s.commands, table.to_dict(orient="records"), strict=True))[:2]:
        got = run_command(command)  # the rigid pool and the threshold rule (SARSA's run is the slow one)
        assert (got["w_interactive_mean"], got["core_hours"]) == (row["w_interactive_mean"], row["core_hours"]), what
    assert [f.name for f in s.figures] == ["elastic_runs.svg"]
    for text in (">mean W of interactive jobs<", ">responsiveness (higher is better)<", ">core-hours paid<",
                 ">cores paid for (lower is better)<"):
        assert text in s.figures[0].svg, text


def test_the_elastic_pool_needs_5000_core_jobs_and_falls_back_to_the_smallest_window(tmp_path: Path) -> None:
    frame = default_workload(seed=0, n_jobs=300)  # 5,001 processors
    frame["allocated_procs"] = frame["allocated_procs"] - pd.array([1] + [0] * 299, dtype="Int64")
    inp = ReportInput(tmp_path / "x.swf", frame, SwfHeader(max_procs=256), "x", "x.swf", 256, 0)
    s = elastic.run(inp, Budget(1.0, clock=Clock()))  # exactly 5,000 core-jobs: applicable, then too costly
    cost = elastic._cost(5000, elastic.PAPER_RUNS)  # the wait learner left out first
    assert (s.status, s.why) == ("skipped", f"the elastic pool: needs about {cost:.1f} s, 1.0 s of the budget left")
    big = default_workload(seed=0, n_jobs=1300)
    total = int(big["allocated_procs"].sum())
    assert 20_000 < total < 50_000  # windows: all of it, 20,000, 10,000, 5,000
    inp = ReportInput(tmp_path / "y.swf", big, SwfHeader(max_procs=256), "y", "y.swf", 256, 0)
    s = elastic.run(inp, Budget(1.0, clock=Clock()))
    assert s.status == "skipped" and s.why.startswith("the elastic pool: needs about ")


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


def test_the_elastic_figure_draws_responsiveness_and_core_hours(drawn: list[Any]) -> None:
    table = pd.DataFrame({"run": ["fcfs (rigid)", "threshold (elastic)", "sarsa (elastic)"],
                          "w_interactive_mean": [0.3, 0.5, 0.4], "core_hours": [1000.0, 1500.0, 1200.0]})
    figure = elastic._figure(table)
    assert figure.caption == ("Interactive jobs' mean responsiveness W = run / (run + wait) (1: no wait) and the "
                              "core-hours each pool paid for.")
    resp, cost = drawn[0].axes
    assert [b.get_height() for b in resp.patches] == [0.3, 0.5, 0.4]
    assert [b.get_facecolor() for b in resp.patches] == [rgba("tab:blue")] * 3
    assert [b.get_height() for b in cost.patches] == [1000.0, 1500.0, 1200.0]
    assert [b.get_facecolor() for b in cost.patches] == [rgba("tab:gray")] * 3
    assert (resp.get_ylabel(), resp.get_title()) == ("mean W of interactive jobs", "responsiveness (higher is better)")
    assert (cost.get_ylabel(), cost.get_title()) == ("core-hours paid", "cores paid for (lower is better)")
    for ax in (resp, cost):
        label = ax.get_xticklabels()[0]
        assert (label.get_fontsize(), label.get_rotation()) == (7, 15)
