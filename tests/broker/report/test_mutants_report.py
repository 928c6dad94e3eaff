"""The report's parts on small hand-made inputs, with hand-worked answers: boundaries, ties and the page's text."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.report import build, page
from broker.report.budget import Budget
from broker.report.model import Figure, ReportConfig, ReportInput, Section
from broker.report.sections import advisor, cluster, coh, elastic, leasing, reservations, trace
from workloads.errors import CloudbrokerError, ConfigError
from workloads.lublin import default_workload
from workloads.swf import SwfHeader
from workloads.swf_writer import write_swf


class Clock:
    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


def small_frame() -> pd.DataFrame:
    """Five jobs; three have a run time > 0 (A, B, C), D ran 0 s, E has no run time.

    A: submitted 0, waits 0, runs 7200 s on 4 allocated processors (user 1)
    B: submitted 1800, waits 1800, runs 1 s, no allocation, 2 requested (user 2)
    C: submitted 3600, waits 7200, runs 3600 s, no processor count (1 processor; user 1)
    """
    f = default_workload(seed=0, n_jobs=5)
    f["submit_time"] = pd.array([0, 1800, 3600, 7200, 100], dtype="Int64")
    f["wait_time"] = pd.array([0, 1800, 7200, 5, 5], dtype="Int64")
    f["run_time"] = pd.array([7200, 1, 3600, 0, None], dtype="Int64")
    f["allocated_procs"] = pd.array([4, None, None, 1, 1], dtype="Int64")
    f["requested_procs"] = pd.array([4, 2, None, 1, 1], dtype="Int64")
    f["user_id"] = pd.array([1, 2, 1, 3, 4], dtype="Int64")
    return f


def small_input(tmp_path: Path, frame: pd.DataFrame | None = None, header: SwfHeader | None = None,
                nodes: int = 4) -> ReportInput:
    f = small_frame() if frame is None else frame
    path = write_swf(f, tmp_path / "t.swf", {"MaxProcs": nodes})
    return ReportInput(path, f, SwfHeader(max_procs=nodes) if header is None else header, "t", "t.swf", nodes, 0)


# --- the budget ---------------------------------------------------------------------------------------------------


def test_a_budget_under_one_second_is_a_budget() -> None:
    budget = Budget(0.5, clock=Clock())
    assert budget.seconds == 0.5 and budget.left == 0.5 and budget.skipped == []
    with pytest.raises(ValueError, match=r"> 0 s, got -1"):
        Budget(-1.0)


def test_a_skipped_part_is_logged_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    budget = Budget(1.0, clock=Clock())
    with caplog.at_level(logging.INFO, logger="broker.report.budget"):
        assert not budget.allow("x", 2.0)
    assert [r.getMessage() for r in caplog.records] == ["skipped x: needs about 2.0 s, 1.0 s of the budget left"]


# --- cluster: the grid, the peak, the TOML, the flags -------------------------------------------------------------


def test_the_grid_families_in_full_and_a_cap_of_one_for_a_small_peak() -> None:
    assert cluster.families(40) == [
        {"name": "end of the paid hour"},
        {"name": "P1 cap", "cap": [4, 10, 20]},
        {"name": "P3 keep-alive", "keepalive": ["fixed:0.1", "fixed:0.3", "fixed:0.5"]},
        {"name": "P4 delay", "delay_min": [1, 5, 15]},
        {"name": "P6 next hour", "wait_next_hour_min": [5, 15]},
        {"name": "baseline: idle timeout", "idle_timeout_min": [5, 30]}]
    # peak 5: 0.5 -> 0 -> at least 1; 1.25 -> 1; 2.5 -> 2 (half to even)
    assert cluster.families(5)[1]["cap"] == [1, 2]


def test_no_jobs_have_a_peak_of_zero() -> None:
    assert cluster._peak(np.array([]), np.array([])) == 0


def test_the_toml_text_quotes_strings_and_writes_booleans_in_lower_case() -> None:
    spec = {"name": "r", "workload": {"trace": "/t.swf", "seed": 3, "paired": True, "other": False},
            "family": [{"name": "a", "cap": [1, 2], "keepalive": ["fixed:0.1"], "ratio": 0.5}]}
    assert cluster.toml(spec) == ('name = "r"\n[workload]\ntrace = "/t.swf"\nseed = 3\npaired = true\nother = false\n'
                                  '\n[[family]]\nname = "a"\ncap = [1, 2]\nkeepalive = ["fixed:0.1"]\nratio = 0.5\n')


def test_settings_and_flags_name_only_the_set_values() -> None:
    row = pd.Series({"family": "P1 cap", "cap": 4, "merge": None, "keepalive": "fixed:0.1",
                     "idle_timeout_min": float("nan"), "delay_min": 2.5, "burst_ratio": None,
                     "wait_next_hour_min": 15.0, "charging": None, "boot_s": None, "cost": 3.0})
    assert cluster._settings(row) == "cap = 4, keepalive = fixed:0.1, delay_min = 2.5, wait_next_hour_min = 15"
    assert cluster._flags(row) == "--cap 4 --keepalive fixed:0.1 --delay 2.5 --wait-next-hour 15 "
    other = pd.Series({"idle_timeout_min": 30.0, "burst_ratio": 0.25})
    assert cluster._settings(other) == "idle_timeout_min = 30, burst_ratio = 0.25"
    assert cluster._flags(other) == "--idle-timeout 30 --burst-ratio 0.25 "
    assert cluster._flags(pd.Series({"cost": 1.0})) == "" and cluster._settings(pd.Series({"cost": 1.0})) == ""
    assert cluster._value(5) == "5" and cluster._value(2.0) == "2" and cluster._value("x y") == "x y"


# --- the trace section --------------------------------------------------------------------------------------------


def test_the_hourly_table_of_no_jobs_has_the_three_columns() -> None:
    empty = trace.hourly_state(np.array([]), np.array([]), np.array([]), np.array([]), span_end=0.0)
    assert list(empty.columns) == ["hour", "busy_procs", "queued_jobs"] and len(empty) == 0


def test_the_hours_count_from_the_first_submission_and_nothing_is_busy_before_the_first_start() -> None:
    # one job on 3 processors: submitted 10000, starts 13600 (waits 1 h), ends 17200; span_end 17200
    table = trace.hourly_state(np.array([10000.0]), np.array([13600.0]), np.array([17200.0]), np.array([3.0]),
                               span_end=17200.0)
    assert table["hour"].tolist() == [0.0, 1.0, 2.0]
    assert table["busy_procs"].tolist() == [0.0, 3.0, 0.0]
    assert table["queued_jobs"].tolist() == [1, 0, 0]


def test_the_procs_are_the_allocation_else_the_request_else_one() -> None:
    frame = pd.DataFrame({"allocated_procs": pd.array([4, 0, None, -1, None], dtype="Int64"),
                          "requested_procs": pd.array([8, 2, 6, None, 0], dtype="Int64")})
    assert trace._procs(frame).tolist() == [4.0, 2.0, 6.0, 1.0, 1.0]
    one = pd.DataFrame({"allocated_procs": pd.array([1], dtype="Int64"),
                        "requested_procs": pd.array([8], dtype="Int64")})
    assert trace._procs(one).tolist() == [1.0]  # one allocated processor is an allocation


def test_the_trace_section_on_three_jobs(tmp_path: Path) -> None:
    budget = Budget(60.0, clock=Clock())
    s = trace.run(small_input(tmp_path), budget)
    assert budget.planned == 0.0  # the trace's summary always runs: it is not planned
    assert budget.parts == [{"part": "trace summary", "estimated_s": round(0.05 + 2e-6 * 5, 3)}]  # five jobs
    assert (s.key, s.title, s.status) == ("trace", "The trace", "done")
    n = s.numbers
    assert n == {"jobs_in_trace": 5, "jobs_with_run_time": 3, "span_days": pytest.approx(1 / 24), "users": 2,
                 "site_nodes": 4, "run_time_mean_s": pytest.approx(10801 / 3), "run_time_median_s": 3600.0,
                 "procs_mean": pytest.approx(7 / 3), "offered_load": pytest.approx(32402 / 14400),
                 "waits_recorded": True, "recorded_wait_mean_s": 3000.0, "busy_peak_procs": 6.0,
                 "queue_peak_jobs": 1}
    assert isinstance(n["queue_peak_jobs"], int) and isinstance(n["busy_peak_procs"], float)
    hourly = s.tables["trace_hourly"]  # the same three jobs as test_parts' hourly test
    assert hourly["busy_procs"].tolist() == [4.0, 6.0, 0.0, 1.0, 0.0]
    assert hourly["queued_jobs"].tolist() == [0, 1, 1, 0, 0]
    assert s.summary == ("3 jobs with a run time over 0.0 days from 2 users on a site of 4 processors; they offer "
                         "225% of the site's capacity.")
    assert s.recommendation == ("Offered load 225%: more than the site can run: jobs queue for long, and cloud "
                                "capacity pays.")
    assert s.commands == [("the trace's header and fields", "cloudbroker trace info t.swf --json")]
    (figure,) = s.figures
    assert figure.name == "trace_load.svg"
    assert figure.caption == ("Processors busy and jobs waiting at every hour, from the submissions, waits and run "
                              "times the log recorded.")
    for text in (">busy processors / M (M = 4)<", ">load (the log's own schedule)<", ">jobs waiting<",
                 ">queue (the log's own schedule)<", ">day<"):
        assert text in figure.svg, text


def test_the_trace_section_without_recorded_waits_counts_jobs_from_their_submission(tmp_path: Path) -> None:
    frame = small_frame()
    frame["wait_time"] = pd.array([None] * 5, dtype="Int64")
    frame["submit_time"] += 86400  # a day later: the span is still 3600 s
    s = trace.run(small_input(tmp_path, frame, nodes=16), Budget(60.0, clock=Clock()))
    assert s.numbers["span_days"] == pytest.approx(1 / 24)
    n = s.numbers
    assert n["waits_recorded"] is False and n["recorded_wait_mean_s"] is None and n["queue_peak_jobs"] is None
    # A busy [0, 7200) on 4, B [1800, 1801) on 2, C [3600, 7200) on 1: at 0 h 4, at 1 h 4 + 1, at 2 h none
    assert s.tables["trace_hourly"]["busy_procs"].tolist() == [4.0, 5.0, 0.0]
    assert n["busy_peak_procs"] == 5.0
    assert n["offered_load"] == pytest.approx(32402 / (16 * 3600))  # 56 %
    assert s.recommendation == ("Offered load 56%: a site mostly idle: leasing pays only at the peaks, and reserved "
                                "instances need a steady base. The log records no waits, so the advisor has nothing "
                                "to learn from.")
    caption = s.figures[0].caption
    assert caption.endswith("recorded (no waits recorded: jobs counted from their submission).")
    assert ">the trace records no waits<" in s.figures[0].svg and ">queue<" in s.figures[0].svg
    assert ">jobs waiting<" not in s.figures[0].svg


def test_a_trace_without_a_run_time_spans_no_time(tmp_path: Path) -> None:
    frame = small_frame()
    frame["run_time"] = pd.array([0, None, 0, 0, None], dtype="Int64")
    s = trace.run(small_input(tmp_path, frame), Budget(60.0, clock=Clock()))
    n = s.numbers
    assert (n["jobs_with_run_time"], n["span_days"], n["users"]) == (0, 0.0, 0)
    assert n["run_time_mean_s"] is None and n["run_time_median_s"] is None and n["procs_mean"] is None
    assert n["offered_load"] is None and n["waits_recorded"] is False and n["busy_peak_procs"] == 0.0
    assert n["queue_peak_jobs"] is None and len(s.tables["trace_hourly"]) == 0
    assert s.summary == "0 jobs with a run time over 0.0 days from 0 users on a site of 4 processors."
    assert s.recommendation == "The trace spans no time: the other sections have little to measure."


def test_a_trace_of_one_second_offers_a_load_and_the_trace_part_runs_on_a_spent_budget(tmp_path: Path) -> None:
    frame = small_frame().head(2)
    frame["submit_time"] = pd.array([0, 1], dtype="Int64")
    frame["wait_time"] = pd.array([0, 0], dtype="Int64")
    frame["run_time"] = pd.array([1, 1], dtype="Int64")
    budget = Budget(0.1, clock=Clock())
    s = trace.run(small_input(tmp_path, frame), budget)
    assert s.status == "done" and budget.skipped == []
    # span 1 s; 4 + 2 processor-seconds over 4 processors
    assert s.numbers["offered_load"] == 6 / 4 and s.numbers["span_days"] == 1 / 86400


def test_the_trace_summary_groups_thousands() -> None:
    n: dict[str, object] = {"offered_load": 0.615, "jobs_with_run_time": 12345, "span_days": 1.25, "users": 1000,
                            "site_nodes": 1024}
    assert trace._summary(n) == ("12,345 jobs with a run time over 1.2 days from 1,000 users on a site of 1,024 "
                                 "processors; they offer 62% of the site's capacity.")


def test_the_trace_advice_in_full_at_each_level() -> None:
    assert trace._advice(0.95, True) == ("Offered load 95%: more than the site can run: jobs queue for long, and "
                                         "cloud capacity pays.")
    assert trace._advice(0.7, True) == ("Offered load 70%: a busy site: queues form at peaks, where leased capacity "
                                        "shortens waits.")
    assert trace._advice(0.6, True) == ("Offered load 60%: a site mostly idle: leasing pays only at the peaks, and "
                                        "reserved instances need a steady base.")


# --- the texts of the other sections ------------------------------------------------------------------------------


def test_coh_names_the_cheapest_row_wherever_it_is_and_without_heuristics() -> None:
    table = pd.DataFrame([
        {"policy": "FCFS-SM", "cost": 120.0, "lower_bound": 60.0, "cost_over_lb": 2.0, "wait_mean_s": 0.0,
         "wait_p95_s": 0.0},
        {"policy": "FCFS-LD", "cost": 80.0, "lower_bound": 60.0, "cost_over_lb": 80 / 60, "wait_mean_s": 1.0,
         "wait_p95_s": 2.0},
        {"policy": "CoH (trio)", "cost": 100.0, "lower_bound": 60.0, "cost_over_lb": 100 / 60, "wait_mean_s": 2.0,
         "wait_p95_s": 9.0}])
    summary, advice = coh._texts(table)
    assert summary == ("FCFS-LD costs $80.00, 1.333 times the lower bound $60.00; jobs wait 0.000278 h on average "
                       "(0.000556 h at the 95th percentile) for a VM to boot.")
    assert advice == "Run FCFS-LD: the portfolio does not beat it here."
    only = pd.DataFrame([{"policy": "CoH (trio)", "cost": 1234.5, "lower_bound": 1000.0, "cost_over_lb": 1.2345,
                          "wait_mean_s": 0.0, "wait_p95_s": 0.0},
                         {"policy": "CoH + IPP", "cost": 1200.0, "lower_bound": 1000.0, "cost_over_lb": 1.2,
                          "wait_mean_s": 0.0, "wait_p95_s": 0.0}])
    assert coh._texts(only) == (
        "CoH + IPP costs $1,200.00, 1.200 times the lower bound $1,000.00; jobs wait 0 h on average (0 h at the 95th "
        "percentile) for a VM to boot.",
        "Run CoH + IPP (the heuristics alone were left out to stay in the budget).")


def test_leasing_without_balances_and_without_the_learner() -> None:
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 4"], "v": pd.array([0, 4], dtype="Int64"),
                          "twt_imp_pct": [None, None], "cost_pct": [None, None], "balance": [None, None]})
    assert leasing._texts(table, 4) == (
        "The balances are undefined: the site alone never waits, or leasing never uses a node.",
        "Do not lease: the site runs its jobs without waiting.")
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 4", "constant V = 8"],
                          "v": pd.array([0, 4, 8], dtype="Int64"), "twt_imp_pct": [0.0, 50.0, 90.0],
                          "cost_pct": [0.0, 20.0, 60.0], "balance": [0.0, 30.0, 30.0]})  # a tie: the first
    assert leasing._texts(table, 8) == (
        "The best constant cap is V = 4 of M = 8: waits 50.0 % shorter for 20.0 % of the cloud use of an unbounded "
        "lease (balance 30.0).",
        "Lease with a constant cap of 4 nodes (the learner was left out: budget).")


def test_the_leasing_row_normalises_by_the_references() -> None:
    s = SimpleNamespace(twt_s=50.0, cloud_cpu_s=10.0, wait_mean_s=2.5, caps=[1, 2, 3, 6])
    assert leasing._row("constant V = 3", 3, s, (200.0, 50.0)) == {
        "policy": "constant V = 3", "v": 3, "twt_s": 50.0, "cloud_cpu_s": 10.0, "wait_mean_s": 2.5,
        "twt_imp_pct": 75.0, "cost_pct": 20.0, "balance": 55.0, "cap_mean": 3.0}
    none = leasing._row("Q-learning", None, SimpleNamespace(twt_s=1.0, cloud_cpu_s=1.0, wait_mean_s=0.0, caps=[]),
                        (0.0, 50.0))
    assert none["twt_imp_pct"] is None and none["cost_pct"] == 2.0 and none["balance"] is None
    assert none["cap_mean"] is None and none["v"] is None


def test_the_advisor_counts_only_positive_savings_and_rounds_hours_half_to_even() -> None:
    table = pd.DataFrame({"overhead": [2.0, 0.5, 0.25, 1.0, 4.0],
                          "saved_time_s": [0.5, 5400.0, 0.0, 12600.0, -1.0],
                          "oracle_saved_time_s": [1.0, 19800.0, 0.0, 27000.0, 0.0]})
    summary, advice = advisor._texts(table, 1234.5, 99.5)
    assert summary == "Predictions miss waits by 0.343 h and run times by 0.0276 h (RMSE)."
    # paying: 2.0 (0.5 s), 0.5 (1.5 h), 1.0 (3.5 h); the slowest 2.0, the fastest 0.5
    assert advice == ("Use the advisor while the cloud slows a job by at most 2 per processor: it saves its users 0 h "
                      "there (the oracle 0 h) and 2 h at 0.5 (the oracle 6 h).")
    table["overhead"] = [0.5, 2.0, 0.25, 1.0, 4.0]  # now 2.0 saves 1.5 h, 1.0 3.5 h, 0.5 saves 0.5 s
    _, advice = advisor._texts(table, 0.0, 0.0)
    assert advice == ("Use the advisor while the cloud slows a job by at most 2 per processor: it saves its users 2 h "
                      "there (the oracle 6 h) and 0 h at 0.5 (the oracle 0 h).")
    table["overhead"] = [4.0, 0.5, 0.25, 1.0, 2.0]
    table["saved_time_s"] = [0.0, 5400.0, 0.0, 12600.0, -1.0]
    _, advice = advisor._texts(table, 0.0, 0.0)
    assert advice == ("Use the advisor while the cloud slows a job by at most 1 per processor: it saves its users 4 h "
                      "there (the oracle 8 h) and 2 h at 0.5 (the oracle 6 h).")


def test_the_advisor_needs_max_procs_and_waits_for_at_least_half_the_jobs(tmp_path: Path) -> None:
    frame = default_workload(seed=0, n_jobs=4)
    frame["wait_time"] = pd.array([1, 2, None, None], dtype="Int64")  # exactly half recorded
    inp = small_input(tmp_path, frame)
    assert advisor._missing(inp) == ""
    frame["wait_time"] = pd.array([1, None, None, None], dtype="Int64")
    assert advisor._missing(inp) == "the trace records no wait for most jobs: there is nothing to learn waits from"
    inp.header = SwfHeader(max_procs=0)
    assert advisor._missing(inp) == "the trace's header gives no MaxProcs (the machine's size the features need)"


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


def test_the_elastic_estimate_is_two_rule_runs_and_one_sarsa_run() -> None:
    assert elastic._cost(1000) == pytest.approx(2 * (0.05 + 1000 * 6e-5) + (0.05 + 1000 * 4e-4 + 1000 ** 2 * 1.4e-8))


def test_the_reservation_texts_and_fractions() -> None:
    assert reservations._fraction(1.0, 4.0) == 0.25
    assert reservations._fraction(1.0, 0.5) == 2.0  # any whole above 0 divides
    assert reservations._fraction(1.0, 0.0) is None and reservations._fraction(1.0, -2.0) is None
    nothing: Any = SimpleNamespace(plan=SimpleNamespace(counts={}))
    assert reservations._texts({}, nothing) == ("The demand never holds steady enough for a reservation to pay.",
                                                "Stay on demand: no reservation breaks even on this demand.")
    plan: Any = SimpleNamespace(plan=SimpleNamespace(counts={("m1.small", "reserved-heavy"): 2,
                                                             ("c1.medium", "reserved-light"): 1}))
    n: dict[str, object] = {"predicted_savings_fraction": 0.25, "replayed_savings_fraction": 0.1,
                            "coh_r_cost": 1234.5, "coh_on_demand_cost": 1371.666}
    assert reservations._texts(n, plan) == (
        "Reserve 1 c1.medium light, 2 m1.small heavy (1-year term): predicted 25.0% below all on demand. Replayed "
        "with CoH-R: $1,234.50 against $1,371.67 on demand.",
        "Buy the plan: CoH-R saves 10.0% when it is replayed on the trace.")
    n["replayed_savings_fraction"] = -0.05
    assert reservations._texts(n, plan)[1] == "Do not buy it yet: replayed, CoH-R costs 5.0% more than CoH on demand."
    n["replayed_savings_fraction"] = 0.0  # no saving is no reason to buy
    assert reservations._texts(n, plan)[1].startswith("Do not buy it yet: replayed, CoH-R costs")
    assert reservations._texts({"predicted_savings_fraction": None}, plan) == (
        "Reserve 1 c1.medium light, 2 m1.small heavy (1-year term).",
        "Buy the plan if the coming year's demand looks like the trace's (not replayed: budget).")


def test_the_coh_row_and_its_numbers() -> None:
    summary = SimpleNamespace(cost=10.0, lower_bound=8.0, cost_over_lb=1.25, wait_mean_s=3.0, wait_p95_s=7.0,
                              utilization=0.5, instances=4, instance_hours=20.0)
    row = coh._row("CoH (trio)", SimpleNamespace(summary=summary))  # type: ignore[arg-type]
    assert row == {"policy": "CoH (trio)", "cost": 10.0, "lower_bound": 8.0, "cost_over_lb": 1.25,
                   "wait_mean_s": 3.0, "wait_p95_s": 7.0, "utilization": 0.5, "instances": 4, "instance_hours": 20.0}
    assert coh._numbers(row) == {k: v for k, v in row.items() if k != "policy"} and "policy" not in coh._numbers(row)


def test_the_cli_seeds_are_the_children_simulate_derives() -> None:
    requirement, policy = coh.cli_seeds(7)
    # SeedSequence(7).spawn(2) gives children with spawn keys (0,) and (1,); the workload child's second child (0, 1)
    assert requirement.entropy == 7 and requirement.spawn_key == (0, 1)
    assert policy == int(np.random.SeedSequence(7, spawn_key=(1,)).generate_state(1)[0])
    assert isinstance(policy, int)


def test_the_job_view_is_built_once_per_input(tmp_path: Path) -> None:
    inp = small_input(tmp_path)
    jobs = coh.broker_jobs(inp)
    assert inp.shared["coh_jobs"] is jobs and coh.broker_jobs(inp) is jobs
    assert len(jobs) == 3  # the jobs with a run time > 0


# --- the sections that cannot run here say why -------------------------------------------------------------------


def test_sections_that_do_not_fit_the_budget_or_the_trace_say_why(tmp_path: Path) -> None:
    inp = small_input(tmp_path)
    budget = Budget(0.1, clock=Clock())
    s = coh.run(inp, budget)  # four runs of 0.05 s at least without the integer program, and CoH-R
    assert (s.key, s.title, s.status) == ("coh", "CoH on on-demand instances", "skipped")
    assert s.why == "CoH on on-demand instances: needs about 0.3 s, 0.1 s of the budget left" == budget.skipped[-1]
    s = reservations.run(inp, budget)
    assert (s.key, s.title, s.status, s.why) == ("reservations", "Reserved instances", "skipped",
                                                 "the CoH replay its plan is made on did not run")
    s = cluster.run(inp, budget)
    assert (s.key, s.title, s.status) == ("cluster", "A cluster run wholly on the cloud", "skipped")
    assert s.why.startswith("the cloud-cluster grid: needs about ") and s.why == budget.skipped[-1]
    s = leasing.run(inp, budget)  # caps(4) = [0, 1, 2, 4]: 6 runs of 0.05 s at least; the third skip
    assert (s.key, s.title, s.status) == ("leasing", "A site that leases cloud nodes", "skipped")
    assert s.why == "constant caps V: needs about 0.3 s, 0.1 s of the budget left" == budget.skipped[2]
    assert budget.planned == 0.0 and len(budget.skipped) == 3
    s = elastic.run(inp, budget)  # one core-job per processor: 4 + 2 + 1, and 1 for the job that ran 0 s
    assert (s.key, s.title, s.status, s.why) == ("elastic", "An elastic pool of cores", "not applicable",
                                                 "8 core-jobs, fewer than 5,000")
    s = advisor.run(inp, budget)
    assert (s.key, s.title, s.status, s.why) == ("advisor", "Run here or in the cloud: the placement advisor",
                                                 "not applicable", "3 replayable jobs, fewer than 2,000")
    inp.header = SwfHeader()
    s = advisor.run(inp, budget)
    assert (s.status, s.why) == ("not applicable",
                                 "the trace's header gives no MaxProcs (the machine's size the features need)")
    assert len(budget.skipped) == 3


# --- the page -----------------------------------------------------------------------------------------------------


def page_section() -> Section:
    table = pd.DataFrame({"name": [f"r{i}" for i in range(27)],
                          "x": [999.9994, 1000.0, -1234.5, float("nan")] + [0.5] * 23})
    return Section("k1", "A & B", status="not applicable", why="no <waits>", summary="s & t",
                   recommendation="do <this>", figures=[Figure("f.svg", 'a "cap"', "<svg/>")],
                   tables={"tab": table, "tab_hourly": table.head(3)}, commands=[("one", "cmd --a"), ("two", "x<y")],
                   skipped_parts=["p1", "p<2"])


def test_a_section_on_the_page_in_full() -> None:
    html = page._section(page_section())
    parts = html.split("\n")
    assert parts[0] == ('<section id="k1"><h2>A &amp; B<span class="status not-applicable">not applicable</span>'
                        '</h2>')
    assert parts[1] == "<p><b>Did not run:</b> no &lt;waits&gt;</p>"
    assert parts[2] == "<p>s &amp; t</p>"
    assert parts[3] == "<p class=advice><b>Recommendation.</b> do &lt;this&gt;</p>"
    assert parts[4] == ('<figure><img alt="a &quot;cap&quot;" src="data:image/svg+xml;base64,PHN2Zy8+">'
                        '<figcaption>a &quot;cap&quot;</figcaption></figure>')
    assert '<table class="dataframe data">' in html
    assert "<td>999.999</td>" in html and "<td>1,000</td>" in html and "<td>-1,234</td>" in html
    assert "<td>-</td>" in html and "<td>r24</td>" in html and "<td>r25</td>" not in html
    assert "<p class=note>2 more rows in <code>tables/tab.parquet</code>.</p>" in html
    assert "<p class=note>The series: <code>tables/tab_hourly.parquet</code> (3 rows).</p>" in html
    assert "<p class=note>Left out: p1; p&lt;2</p>" in html
    assert ("<p class=note>The commands behind these numbers:</p><pre># one\ncmd --a\n# two\nx&lt;y</pre>\n"
            "</section>") in html
    assert html.endswith("</pre>\n</section>")


def test_an_empty_done_section_is_its_heading_only() -> None:
    assert page._section(Section("k", "T")) == ('<section id="k"><h2>T<span class="status done">done</span></h2>\n'
                                                "</section>")


def test_a_table_of_exactly_the_shown_rows_says_nothing_more() -> None:
    table = pd.DataFrame({"x": [1.0] * 25})
    text = page._table("t", table)
    assert text.count("<tr>") == 25 and "more rows" not in text and text.endswith("</table>")
    text = page._table("t", pd.DataFrame({"x": [1.0] * 1026}))
    assert text.endswith("<p class=note>1,001 more rows in <code>tables/t.parquet</code>.</p>")


def test_numbers_on_the_page_switch_to_whole_numbers_at_1000() -> None:
    assert page._number(999.9994) == "999.999" and page._number(-999.5) == "-999.500"
    assert page._number(1000.0) == "1,000" and page._number(-1000.0) == "-1,000" and page._number(1234.5) == "1,234"


def test_the_page_in_full() -> None:
    footer = {"budget_s": 90.0, "planned_s": 12.4, "wall_s": 3.5, "seed": 5, "skipped": ["a <b>", "c"]}
    text = page.render("T & U", "sub <x>", [page_section(), Section("k2", "Two")], footer)
    assert text.startswith("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><meta name=viewport "
                           "content='width=device-width, initial-scale=1'><link rel=icon href='data:,'>"
                           "<title>T &amp; U</title><style>\nbody { font: 15px/1.45 system-ui, sans-serif;")
    assert "\n.note { font-size: 0.85em; color: #555; }\n</style></head>\n" in text
    assert ("<body><main><h1>T &amp; U</h1><p>sub &lt;x&gt;</p><nav><a href=\"#k1\">A &amp; B</a> "
            "<a href=\"#k2\">Two</a></nav>\n<section id=\"k1\">") in text
    assert ('<section id="k2"><h2>Two<span class="status done">done</span></h2>\n</section>\n'
            "<h2 id=skipped>Left out to stay within the budget</h2><ul><li>a &lt;b&gt;</li><li>c</li></ul>\n"
            "<p class=note>Budget 2 min, planned 12 s from estimates, 4 s spent. Seed 5. Run the commands from this "
            "report's folder (they read <code>reservation_plan.json</code> and <code>cluster_grid.toml</code> "
            "beside this page).</p>\n<p class=note>Every figure is in <code>report.json</code>, every table in "
            "<code>tables/</code> (Parquet).</p></main></body></html>\n") in text
    assert '</section>\n<section id="k2">' in text  # one section per line block, in order
    del footer["skipped"]
    bare = page.render("T", "s", [], footer)
    assert "<nav></nav>\n\n\n<p class=note>Budget 2 min," in bare  # no sections, nothing left out


def test_a_table_on_the_page_has_no_index_column() -> None:
    assert page._table("t", pd.DataFrame({"a": [1.5]}, index=[7])) == (
        '<table class="dataframe data">\n  <thead>\n    <tr style="text-align: right;">\n      <th>a</th>\n'
        "    </tr>\n  </thead>\n  <tbody>\n    <tr>\n      <td>1.500</td>\n    </tr>\n  </tbody>\n</table>")


# --- building and writing a report --------------------------------------------------------------------------------


def fake_sections(calls: list[str]) -> tuple[tuple[str, str, Any], ...]:
    def first(inp: ReportInput, budget: Budget) -> Section:
        calls.append(f"first {inp.nodes} {len(inp.frame)}")
        assert budget.allow("part", 1.23456)
        s = Section("first", "First", summary="ok", numbers={"n": np.int64(3), "x": np.float64(0.5)})
        s.tables["first_t"] = pd.DataFrame({"a": [1, 2]})
        s.figures.append(Figure("first.svg", "cap", "<svg>1</svg>"))
        s.files["plan.json"] = "{}"
        return s

    def second(inp: ReportInput, budget: Budget) -> Section:
        calls.append("second")
        raise ConfigError("a job is too large")

    def third(inp: ReportInput, budget: Budget) -> Section:
        budget.allow("big", 1e9)
        return Section("third", "Third", status="skipped", why="budget")

    return (("first", "First", first), ("second", "Second", second), ("third", "Third", third))


class StepClock:
    """100 s at the budget's start, 101.23456 s at every later reading."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        t, self.t = self.t, 101.23456
        return t


def test_a_report_of_the_generated_workload_with_stand_in_sections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []
    monkeypatch.setattr(build, "SECTIONS", fake_sections(calls))
    monkeypatch.setattr(build, "Budget", lambda seconds: Budget(seconds, clock=StepClock()))
    progress: list[tuple[int, int, str]] = []
    out = tmp_path / "a" / "b"
    out.mkdir(parents=True)  # an existing empty folder is fine
    with caplog.at_level(logging.INFO, logger="broker.report.build"):
        report = build.build_report(ReportConfig(nodes=64, budget_min=0.5, seed=3), out,
                                    progress=lambda d, t, s: progress.append((d, t, s)))
    messages = [r.getMessage() for r in caplog.records if r.name == "broker.report.build"]
    assert len(messages) == 4 and messages[1] == "section second not applicable: a job is too large"
    for message, what in zip([messages[0], *messages[2:]], ("first: done", "second: not applicable", "third: skipped"),
                             strict=True):
        assert message.startswith(f"section {what} in ") and message.endswith(" s")
        assert float(message.split(" in ")[1][:-2]) >= 0.0
    assert progress == [(0, 3, "First"), (1, 3, "Second"), (2, 3, "Third"), (3, 3, "writing")]
    assert calls == ["first 64 2000", "second"]
    assert report.out_dir == out and report.label == "the generated workload (2,000 jobs, seed 3)"
    assert [(s.key, s.title, s.status, s.why) for s in report.sections] == [
        ("first", "First", "done", ""), ("second", "Second", "not applicable", "a job is too large"),
        ("third", "Third", "skipped", "budget")]
    assert all(0.0 <= s.seconds < 60.0 for s in report.sections)
    budget = report.budget
    assert budget["budget_s"] == 30.0 and budget["planned_s"] == 6.235 and budget["seed"] == 3  # 5 s of overhead
    assert budget["nodes"] == 64 and budget["wall_s"] == 1.235  # 1.23456 s on the budget's clock
    assert budget["skipped"] == ["big: needs about 1,000,000,000 s, 24 s of the budget left"]
    assert report.to_dict()["trace"] == report.label and report.to_dict()["budget"] is budget
    assert [s["key"] for s in report.to_dict()["sections"]] == ["first", "second", "third"]
    # the files
    swf = (out / "workload.swf").read_text().splitlines()
    assert swf[:5] == ["; Version: 2.2", "; Computer: Lublin-Feitelson model (workloads.lublin.default_workload)",
                       "; MaxNodes: 256", "; MaxProcs: 256", "; Note: generated by cloudbroker report with seed 3"]
    assert len(swf) == 5 + 2000
    assert pd.read_parquet(out / "tables" / "first_t.parquet")["a"].tolist() == [1, 2]
    assert (out / "figures" / "first.svg").read_text() == "<svg>1</svg>" and (out / "plan.json").read_text() == "{}"
    text = (out / "report.json").read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "budget": {\n    "budget_s": 30.0,')
    data = json.loads(text)
    assert data["trace"] == report.label and data["budget"]["planned_s"] == 6.235
    assert data["sections"][0]["numbers"] == {"n": 3, "x": 0.5}
    html = (out / "index.html").read_text()
    assert "<title>Site report: the generated workload (2,000 jobs, seed 3)</title>" in html
    assert ("<p>1 of 3 analyses ran for a site of 64 processors; each section gives its numbers, a recommendation "
            "and the commands that reproduce them.</p>") in html
    assert "Budget 0 min, planned 6 s from estimates" in html and "Seed 3." in html
    assert "<li>big: needs about 1,000,000,000 s, 24 s of the budget left</li>" in html
    # the tables without their index (the first section's table has a RangeIndex; see the next test too)
    import pyarrow.parquet as pq

    assert pq.read_schema(out / "tables" / "first_t.parquet").names == ["a"]
    build.write(report)  # writing again over the same folder
    assert (out / "index.html").read_text() == html


def test_a_table_with_its_own_index_is_written_without_it(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    section = Section("s", "S", tables={"t": pd.DataFrame({"a": [1, 2]}, index=[5, 7])})
    report = build.Report([section], {"budget_s": 60.0, "planned_s": 0.0, "wall_s": 0.0, "skipped": [], "seed": 0,
                                      "nodes": 8}, tmp_path, "x")
    build.write(report)
    assert pq.read_schema(tmp_path / "tables" / "t.parquet").names == ["a"]
    assert pd.read_parquet(tmp_path / "tables" / "t.parquet").index.tolist() == [0, 1]


def test_the_sites_size_is_the_header_s_max_procs_without_nodes(tmp_path: Path) -> None:
    inp = build.report_input(ReportConfig(seed=1), tmp_path)
    assert inp.nodes == 256 and inp.trace_arg == "workload.swf" and inp.seed == 1
    pd.testing.assert_frame_equal(inp.frame, default_workload(seed=1, n_jobs=2000))
    assert inp.header.max_procs == 256 and inp.header.fields["Computer"].startswith("Lublin-Feitelson model")
    assert inp.path == tmp_path / "workload.swf" and len(inp.frame) == 2000
    assert inp.label == "the generated workload (2,000 jobs, seed 1)"


def test_a_trace_file_is_named_relative_to_the_report_and_sized_by_its_largest_job(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = small_frame()
    write_swf(frame, tmp_path / "t.swf")  # no MaxProcs
    monkeypatch.chdir(tmp_path)
    inp = build.report_input(ReportConfig(trace="t.swf"), tmp_path / "out")
    assert inp.label == "t.swf" and inp.trace_arg == "../t.swf"  # the commands run from the report's folder
    assert inp.nodes == 4 and isinstance(inp.nodes, int)  # the largest of the allocations and requests
    assert build.report_input(ReportConfig(trace="t.swf", nodes=9), tmp_path / "out").nodes == 9


def test_a_trace_without_max_procs_or_processor_counts_needs_nodes(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # float columns: read_swf's Int64 columns of only -1 make _largest raise instead (see the mutation report)
    frame = pd.DataFrame({"allocated_procs": [float("nan")], "requested_procs": [float("nan")]})
    monkeypatch.setattr(build, "load_trace", lambda name, **_: SimpleNamespace(path=tmp_path / "u.swf", frame=frame,
                                                                               header=SwfHeader()))
    with pytest.raises(ConfigError, match=r"^u: no header MaxProcs and no processor counts: give the site's "
                                          r"size with --nodes$"):
        build.report_input(ReportConfig(trace="u"), tmp_path / "out")
    inp = build.report_input(ReportConfig(trace="u", nodes=2), tmp_path / "out")
    assert (inp.label, inp.trace_arg, inp.nodes) == ("u", "u", 2)  # not a file: the name as given


def test_the_largest_job_and_numbers_as_json() -> None:
    frame = pd.DataFrame({"allocated_procs": pd.array([3, None], dtype="Int64"),
                          "requested_procs": pd.array([None, 7], dtype="Int64")})
    assert build._largest(frame) == 7
    frame = pd.DataFrame({"allocated_procs": [float("nan")], "requested_procs": [float("nan")]})
    assert build._largest(frame) == 0
    assert build._plain(np.int64(4)) == 4 and type(build._plain(np.float32(0.5))) is float
    with pytest.raises(TypeError, match=r"^not JSON-serialisable: object$"):
        build._plain(object())


def test_a_section_that_raises_a_non_cloudbroker_error_is_not_hidden() -> None:
    def bad(inp: Any, budget: Any) -> Section:
        raise ValueError("a bug")

    def unsuited(inp: Any, budget: Any) -> Section:
        raise CloudbrokerError("no field")

    with pytest.raises(ValueError, match="a bug"):
        build._run("k", "T", bad, None, None)  # type: ignore[arg-type]
    s = build._run("k", "T", unsuited, None, None)  # type: ignore[arg-type]
    assert (s.key, s.title, s.status, s.why) == ("k", "T", "not applicable", "no field")


# --- whole sections on a small generated workload (300 jobs; 5,001 processors in all) -------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> ReportInput:
    frame = default_workload(seed=0, n_jobs=300)
    path = write_swf(frame, tmp_path_factory.mktemp("g") / "g.swf", {"MaxProcs": 256})
    return ReportInput(path, frame, SwfHeader(max_procs=256), "g", "g.swf", 256, 0)


def fresh(inp: ReportInput) -> ReportInput:
    return ReportInput(inp.path, inp.frame, inp.header, inp.label, inp.trace_arg, inp.nodes, inp.seed)


def est(part: str, n: float, runs: int = 1) -> float:
    """The estimate by hand: SECONDS_PER_JOB as the module's table gives it, 0.05 s fixed per run."""
    per_job = {"coh_trio": 8e-5, "coh_ipp": 2.8e-4, "coh_heuristic": 4.5e-5, "coh_r": 2.5e-4,
               "leasing_constant": 1.5e-5, "leasing_qlearning": 9e-4, "advisor": 9e-4, "elastic_rule": 6e-5,
               "elastic_sarsa": 4e-4, "cluster_cell": 2.4e-5}[part]
    return runs * (0.05 + per_job * n + (1.4e-8 * n ** 2 if part == "elastic_sarsa" else 0.0))


def run_command(command: str) -> Any:
    """A command of the page, run in this process (the reference the page promises)."""
    import shlex

    from tests.conftest import cloudbroker

    args = shlex.split(command)
    assert args[0] == "cloudbroker"
    result = cloudbroker(*args[1:])
    assert result.code == 0, (command, result.err)
    return json.loads(result.out)


def test_coh_and_the_reservations_with_every_part(generated: ReportInput, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(generated.path.parent)  # the commands name the trace g.swf and the plan beside it
    inp = fresh(generated)
    budget = Budget(600.0, clock=Clock())
    s = coh.run(inp, budget)
    n = len(inp.shared["coh_jobs"])
    assert n == 300 and s.numbers["jobs"] == 300 and s.numbers["requirements"] == "heterogeneous"
    assert (s.key, s.title, s.status, s.skipped_parts) == ("coh", "CoH on on-demand instances", "done", [])
    everything = est("coh_trio", n) + est("coh_ipp", n) + 3 * est("coh_heuristic", n) + est("coh_r", n)
    assert budget.planned == pytest.approx(everything)  # CoH-R's replay of the next section included
    table = s.tables["coh_policies"]
    assert table["policy"].tolist() == ["CoH (trio)", "CoH + IPP", "FCFS-SM", "FCFS-LD", "FCFS-CFH"]
    assert list(table.columns) == ["policy", "cost", "lower_bound", "cost_over_lb", "wait_mean_s", "wait_p95_s",
                                   "utilization", "instances", "instance_hours"]
    assert (table["cost_over_lb"] == table["cost"] / table["lower_bound"]).all()
    assert table["lower_bound"].nunique() == 1 and (table["cost"] >= table["lower_bound"]).all()
    assert s.numbers["policies"] == {r["policy"]: {k: v for k, v in r.items() if k != "policy"}
                                     for r in table.to_dict(orient="records")}
    base = "cloudbroker simulate --trace g.swf --reqs heterogeneous --seed 0 --json --policy"
    assert s.commands == [("CoH (trio)", f"{base} coh"),
                          ("CoH + IPP", f"{base} coh --solver cpsat --time-limit 1 --deterministic"),
                          ("FCFS-SM", f"{base} FCFS-SM"), ("FCFS-LD", f"{base} FCFS-LD"),
                          ("FCFS-CFH", f"{base} FCFS-CFH")]
    demand, cost, ipp = inp.shared["coh_demand"]
    assert cost == table.loc[1, "cost"] and ipp is coh.IPP and ipp.time_limit == 1.0 and ipp.deterministic
    assert (s.summary, s.recommendation) == coh._texts(table)
    for (what, command), cost_ in zip(s.commands, table["cost"], strict=True):
        assert run_command(command)["cost"] == cost_, what
    assert [f.name for f in s.figures] == ["coh_costs.svg"]
    assert s.figures[0].caption.startswith("Cost of each policy over its lower bound LB")
    assert ">cost of each policy on on-demand instances<" in s.figures[0].svg
    assert f">  ${float(table['cost'].iloc[2]):,.2f}<" in s.figures[0].svg

    r = reservations.run(inp, budget)
    assert (r.key, r.title, r.status, r.skipped_parts) == ("reservations", "Reserved instances", "done", [])
    assert budget.planned == pytest.approx(everything)
    numbers = r.numbers
    assert numbers["demand_from"] == "CoH + IPP" and numbers["term_years"] == 1
    assert numbers["coh_on_demand_cost"] == cost
    assert numbers["predicted_savings_fraction"] == pytest.approx(
        numbers["predicted_savings"] / numbers["on_demand_cost_per_term"])
    assert numbers["replayed_savings_fraction"] == pytest.approx((cost - numbers["coh_r_cost"]) / cost)
    plan = json.loads(r.files["reservation_plan.json"])
    assert plan["demand"] == {"source": "CoH replay of g", "intervals": len(demand)}
    assert plan["plan"] == numbers["plan"] and plan["mode"] == "per-type" and plan["term_years"] == 1
    assert plan["expected_cost"] == numbers["expected_cost_per_term"]
    assert plan["savings"] == numbers["predicted_savings"]
    assert plan["on_demand_cost"] == numbers["on_demand_cost_per_term"]
    assert r.files["reservation_plan.json"].startswith('{\n  "demand": {')  # sorted keys, indented by 2
    assert r.commands == [
        ("the plan", "cloudbroker plan-reservations --trace g.swf --reqs heterogeneous --seed 0 --replay-solver cpsat "
                     "--json"),
        ("the plan on plan-reservations' default demand (CoH without its integer program)",
         "cloudbroker plan-reservations --trace g.swf --reqs heterogeneous --seed 0 --json"),
        ("CoH-R on the plan", "cloudbroker simulate --trace g.swf --reqs heterogeneous --seed 0 --policy coh-r "
                              "--reservations reservation_plan.json --solver cpsat --time-limit 1 --deterministic "
                              "--json")]
    assert len(r.tables["reservation_lines"]) > 0 and [f.name for f in r.figures] == ["reservations_demand.svg"]
    assert ">CoH's demand per hour and the reserved instances<" in r.figures[0].svg
    assert r.summary.startswith("Reserve ") and " Replayed with CoH-R: $" in r.summary
    (generated.path.parent / "reservation_plan.json").write_text(r.files["reservation_plan.json"])
    assert run_command(r.commands[0][1])["plan"] == numbers["plan"]
    assert run_command(r.commands[1][1])["plan"] == numbers["trio_plan"]
    assert run_command(r.commands[2][1])["cost"] == numbers["coh_r_cost"]
    assert r.recommendation.startswith("Buy the plan: CoH-R saves ")
    assert r.summary.endswith(reservations.why_not_plan_reservations(numbers, True, r.commands[0][1]))


def test_coh_without_its_integer_program_when_its_share_cannot_hold_it(generated: ReportInput) -> None:
    inp = fresh(generated)
    n = 300
    rest = est("coh_trio", n) + 3 * est("coh_heuristic", n) + est("coh_r", n)
    budget = Budget(rest + 1e-9, clock=Clock())  # the trio, the heuristics and CoH-R, not the integer program
    s = coh.run(inp, budget)
    assert s.tables["coh_policies"]["policy"].tolist() == ["CoH (trio)", "FCFS-SM", "FCFS-LD", "FCFS-CFH"]
    with_ipp = rest + est("coh_ipp", n)
    assert s.skipped_parts == [f"CoH's integer program: needs about {with_ipp:.1f} s with the rest on 300 jobs, "
                               f"{rest:.1f} s of the budget left"]
    assert [c[0] for c in s.commands] == ["CoH (trio)", "FCFS-SM", "FCFS-LD", "FCFS-CFH"]
    assert inp.shared["coh_demand"][2] is None and budget.planned == pytest.approx(rest)
    assert inp.shared["coh_demand"][1] == s.tables["coh_policies"].loc[0, "cost"]
    r = reservations.run(inp, budget)
    assert r.numbers["demand_from"] == "CoH (trio)" and "coh_r_cost" in r.numbers and "trio_plan" not in r.numbers
    assert [c[0] for c in r.commands] == ["the plan", "CoH-R on the plan"]
    assert r.commands[0][1] == "cloudbroker plan-reservations --trace g.swf --reqs heterogeneous --seed 0 --json"
    assert r.summary.endswith("as plan-reservations makes it by default; the same numbers: " + r.commands[0][1] + ".")


def test_leasing_every_cap_and_the_learner(tmp_path: Path) -> None:
    frame = default_workload(seed=0, n_jobs=80)
    inp = ReportInput(write_swf(frame, tmp_path / "l.swf"), frame, SwfHeader(max_procs=256), "l", "l.swf", 256, 0)
    budget = Budget(600.0, clock=Clock())
    s = leasing.run(inp, budget)
    assert budget.planned == pytest.approx(est("leasing_constant", 80, runs=8) + est("leasing_qlearning", 80))
    assert (s.key, s.title, s.status, s.skipped_parts) == ("leasing", "A site that leases cloud nodes", "done", [])
    table = s.tables["leasing_policies"]
    names = [f"constant V = {v}" for v in (0, 16, 32, 64, 128, 256)]
    assert table["policy"].tolist() == [*names, "Q-learning"]
    assert table["v"].dtype == "Int64" and table["v"].tolist()[:6] == [0, 16, 32, 64, 128, 256]
    assert pd.isna(table["v"].iloc[6])
    assert list(table.columns) == ["policy", "v", "twt_s", "cloud_cpu_s", "wait_mean_s", "twt_imp_pct", "cost_pct",
                                   "balance", "cap_mean"]
    n = s.numbers
    assert (n["nodes"], n["jobs"]) == (256, 80)
    v0 = n["policies"]["constant V = 0"]
    # V = 0 is the site alone: the reference wait, no cloud use, balance 0
    assert v0["twt_s"] == n["twt_local_only_s"] and v0["cloud_cpu_s"] == 0.0
    assert (v0["twt_imp_pct"], v0["cost_pct"], v0["balance"], v0["cap_mean"]) == (0.0, 0.0, 0.0, 0.0)
    assert n["policies"]["constant V = 64"]["cap_mean"] == 64.0
    assert set(v0) == {"v", "twt_s", "cloud_cpu_s", "wait_mean_s", "twt_imp_pct", "cost_pct", "balance", "cap_mean"}
    assert n["cloud_cpu_unbounded_s"] >= n["policies"]["constant V = 256"]["cloud_cpu_s"] > 0
    command = "cloudbroker leasing --trace l.swf --nodes 256 --policy"
    assert s.commands == [*[(name, f"{command} constant:{v} --json") for name, v in
                            zip(names, (0, 16, 32, 64, 128, 256), strict=True)],
                          ("Q-learning", f"{command} qlearning --json")]
    assert (s.summary, s.recommendation) == leasing._texts(table, 256)
    assert [f.name for f in s.figures] == ["leasing_caps.svg"]
    svg = s.figures[0].svg
    for text in (">constant cap V (cloud nodes)<", ">leasing: the constant caps and the learner<",
                 ">wait improvement %<", ">cloud cost %<", ">balance<", ">Q-learning's balance<"):
        assert text in svg, text

    budget = Budget(est("leasing_constant", 80, runs=8) + 1e-9, clock=Clock())
    s = leasing.run(inp, budget)
    assert s.tables["leasing_policies"]["policy"].tolist() == names
    both = est("leasing_constant", 80, runs=8) + est("leasing_qlearning", 80)
    assert s.skipped_parts == [f"Q-learning: needs about {both:.1f} s with the caps on 80 jobs, "
                               f"{est('leasing_constant', 80, runs=8):.1f} s of the budget left"]
    assert ">Q-learning's balance<" not in s.figures[0].svg
    assert s.recommendation.startswith("Lease with a constant cap of ")


def test_leasing_with_no_job_that_fits_the_site(tmp_path: Path) -> None:
    frame = small_frame()
    frame["requested_procs"] = pd.array([4, 4, 4, 4, 4], dtype="Int64")
    frame["allocated_procs"] = pd.array([4, 4, 4, 4, 4], dtype="Int64")
    inp = small_input(tmp_path, frame, nodes=2)
    s = leasing.run(inp, Budget(60.0, clock=Clock()))
    assert (s.status, s.why) == ("not applicable", "no job of the trace fits the site's nodes")


def test_the_cluster_grid_its_front_and_the_pick(generated: ReportInput) -> None:
    import tomllib

    import joblib

    budget = Budget(600.0, clock=Clock())
    with joblib.parallel_config(backend="threading", n_jobs=1):
        s = cluster.run(fresh(generated), budget)
    assert (s.key, s.title, s.status) == ("cluster", "A cluster run wholly on the cloud", "done")
    spec = tomllib.loads(s.files["cluster_grid.toml"])
    # the trace as the commands name it, relative to the report's folder (where cluster sweep is run)
    assert spec["name"] == "report" and spec["workload"] == {"trace": "g.swf", "seed": 0}
    caps = spec["family"][1]["cap"]
    assert spec["family"][:1] == [{"name": "end of the paid hour"}] and spec["family"][1]["name"] == "P1 cap"
    assert spec["family"][2:] == cluster.families(1)[2:]  # the families without a cap do not depend on the peak
    cells = 1 + len(caps) + 3 + 3 + 2 + 2
    assert budget.planned == pytest.approx(est("cluster_cell", 300, runs=cells))
    table = s.tables["cluster_grid"]
    assert list(table.columns) == ["family", "settings", "cost", "instance_cost", "egress_cost", "overhead_mean_s",
                                   "overhead_p95_s", "instances", "pareto"]
    assert len(table) == cells and table["family"].iloc[0] == "end of the paid hour"
    assert table["settings"].iloc[0] == "" and table["settings"].iloc[1] == f"cap = {caps[0]}"
    n = s.numbers
    assert (n["jobs"], n["cells"], n["on_front"]) == (300, cells, int(table["pareto"].sum()))
    assert n["cheapest_cost"] == table["cost"].min() and n["lowest_overhead_s"] == table["overhead_mean_s"].min()
    front = table[table["pareto"]]
    within = front[front["overhead_mean_s"] <= 600.0]
    best = (within.iloc[int(np.argmin(within["cost"].to_numpy(float)))] if len(within) else
            front.iloc[int(np.argmin(front["overhead_mean_s"].to_numpy(float)))])
    pick = n["recommended"]
    assert pick == {"family": best["family"], "settings": best["settings"], "cost": best["cost"],
                    "overhead_mean_s": best["overhead_mean_s"]}
    kept = ("the cheapest policy that keeps a job's mean overhead within ten minutes." if len(within) else
            "the lowest overhead of the grid: no policy keeps it within ten minutes.")
    assert s.recommendation == (f"Run {best['family']} ({best['settings'] or 'its defaults'}): ${best['cost']:,.2f} "
                                f"with {best['overhead_mean_s'] / 3600:.3g} h of mean overhead, {kept}")
    assert s.summary == (f"{cells} policies on 300 jobs; {n['on_front']} are on the front of cost against the mean "
                         f"overhead a job sees (its wait for an instance and the boot).")
    flags = {"cap": "--cap", "keepalive": "--keepalive", "idle_timeout_min": "--idle-timeout", "delay_min": "--delay",
             "wait_next_hour_min": "--wait-next-hour"}
    flag = "".join(f"{flags[part.split(' = ')[0]]} {part.split(' = ')[1]} " for part in best["settings"].split(", ")
                   if part)
    assert s.commands == [
        ("every cell of the grid", "cloudbroker cluster sweep cluster_grid.toml --out cluster-sweep --seed 0 --json"),
        ("the recommended point", f"cloudbroker cluster --trace g.swf --seed 0 {flag}--json")]
    assert [f.name for f in s.figures] == ["cluster_front.svg"]
    for text in (">Pareto front<", ">recommended<", ">cloud cluster: cost against overhead<", ">cost ($)<"):
        assert text in s.figures[0].svg, text


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
    assert s.skipped_parts == ["the elastic pool ran the first 5,000 of 5,001 core-jobs (the budget)"]
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
    assert (s.status, s.why) == ("skipped", f"the elastic pool: needs about {elastic._cost(5000):.1f} s, 1.0 s of "
                                            "the budget left")
    big = default_workload(seed=0, n_jobs=1300)
    total = int(big["allocated_procs"].sum())
    assert 20_000 < total < 50_000  # windows: all of it, 20,000, 10,000, 5,000
    inp = ReportInput(tmp_path / "y.swf", big, SwfHeader(max_procs=256), "y", "y.swf", 256, 0)
    s = elastic.run(inp, Budget(1.0, clock=Clock()))
    assert s.status == "skipped" and s.why.startswith("the elastic pool: needs about ")


def test_the_advisor_on_2000_jobs_with_recorded_waits(tmp_path: Path) -> None:
    from tests.conftest import cloudbroker
    from workloads.swf import read_swf

    frame = default_workload(seed=0, n_jobs=2000)
    frame["wait_time"] = pd.array((np.arange(2000) % 7) * 60, dtype="Int64")
    path = write_swf(frame, tmp_path / "a.swf", {"MaxProcs": 256, "UnixStartTime": 1_000_000_000,
                                                 "TimeZoneString": "Europe/Stockholm"})
    header = read_swf(path).header
    assert header.unix_start_time == 1_000_000_000 and header.time_zone_string == "Europe/Stockholm"
    inp = ReportInput(path, frame, header, "a", "a.swf", 256, 0)
    small = Budget(1.0, clock=Clock())
    s = advisor.run(inp, small)
    assert (s.status, s.why) == ("skipped", "the advisor: needs about 1.9 s, 1.0 s of the budget left")
    budget = Budget(est("advisor", 2000), clock=Clock())  # exactly the estimate: 0.05 + 9e-4 * 2000
    s = advisor.run(inp, budget)
    assert (s.key, s.status) == ("advisor", "done") and budget.left == 0.0
    n = s.numbers
    assert (n["replayable_jobs"], n["tune"], n["skip"], n["evaluate"]) == (2000, 500, 1000, 1000)
    table = s.tables["advisor_speeds"]
    assert list(table.columns) == ["overhead", "jobs_to_cloud", "saved_time_s", "no_cutoff_jobs_to_cloud",
                                   "no_cutoff_saved_time_s", "oracle_jobs_to_cloud", "oracle_saved_time_s"]
    assert table["overhead"].tolist() == [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 10.0]
    assert (table["jobs_to_cloud"] <= 1000).all() and (table["oracle_saved_time_s"] >= 0).all()
    assert n["speeds"] == table.to_dict(orient="records") and n["rmse_wait_s"] > 0 and n["rmse_run_s"] > 0
    assert s.commands == [("every figure of the section",
                           "cloudbroker advise --trace a.swf --tune 500 --skip 1000 --evaluate 1000 --json")]
    # the page's command, in one process, is the reference for the predictions (local time of day included)
    run = cloudbroker("advise", "--trace", str(path), "--tune", "500", "--skip", "1000", "--evaluate", "1000", "--json")
    assert run.code == 0, run.err
    got = json.loads(run.out)
    assert (n["rmse_wait_s"], n["rmse_run_s"]) == pytest.approx((got["rmse_wait_s"], got["rmse_run_s"]), rel=1e-12)
    assert (s.summary, s.recommendation) == advisor._texts(table, n["rmse_wait_s"], n["rmse_run_s"])
    assert [f.name for f in s.figures] == ["advisor_saved.svg"]
    for text in (">advisor<", ">advisor, no cutoff<", ">oracle<", ">time saved (h)<", ">10<", ">0.01<",
                 ">cloud slow-down per processor (o)<", ">time the advisor saves its users, by how slow the cloud is<"):
        assert text in s.figures[0].svg, text


def test_the_cluster_grid_gives_the_numbers_of_cluster_sweep_on_its_file(generated: ReportInput, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import joblib

    from tests.conftest import cloudbroker

    with joblib.parallel_config(backend="threading", n_jobs=1):
        s = cluster.run(fresh(generated), Budget(600.0, clock=Clock()))
    monkeypatch.chdir(generated.path.parent)  # the report's folder, where the file names the trace g.swf
    (tmp_path / "cluster_grid.toml").write_text(s.files["cluster_grid.toml"])
    # the command of the page, in one process: the reference for the grid's cells and their seeds
    run = cloudbroker("cluster", "sweep", str(tmp_path / "cluster_grid.toml"), "--out", str(tmp_path / "sweep"),
                      "--seed", "0", "--json", "--n-jobs", "1")
    assert run.code == 0, run.err
    sweep = json.loads(run.out)
    table = s.tables["cluster_grid"]
    assert [row["family"] for row in sweep] == table["family"].tolist()
    assert [row["cost"] for row in sweep] == pytest.approx(table["cost"].tolist(), rel=1e-10, abs=0)
    assert [row["overhead_mean_s"] for row in sweep] == pytest.approx(table["overhead_mean_s"].tolist(), rel=1e-10)


def cluster_table(overheads: tuple[float, float, float, float]) -> pd.DataFrame:
    """Four hand-made cells: the default policy, a cap, a delay on the front; a keep-alive off it."""
    rows = [{"family": "end of the paid hour", "cost": 10.0, "pareto": True},
            {"family": "P1 cap", "cap": 2, "cost": 8.0, "pareto": True},
            {"family": "P4 delay", "delay_min": 5.0, "cost": 12.0, "pareto": True},
            {"family": "P3 keep-alive", "keepalive": "fixed:0.1", "cost": 11.0, "pareto": False}]
    table = pd.DataFrame([{"family": r["family"], **{k: r.get(k) for k in cluster.SETTINGS}, "cost": r["cost"],
                           "instance_cost": r["cost"], "egress_cost": 0.0, "overhead_mean_s": o,
                           "overhead_p95_s": 2 * o, "instances": 3, "pareto": r["pareto"]}
                          for r, o in zip(rows, overheads, strict=True)])
    return table


@pytest.mark.parametrize(("overheads", "expected", "command"), [
    # exactly ten minutes is within: the cheapest such front cell is the default policy
    ((600.0, 900.0, 100.0, 700.0),
     "Run end of the paid hour (its defaults): $10.00 with 0.167 h of mean overhead, the cheapest policy that keeps a "
     "job's mean overhead within ten minutes.", "cloudbroker cluster --trace g.swf --seed 0 --json"),
    # nothing within: the lowest overhead of the front
    ((601.0, 900.0, 650.0, 100.0),
     "Run end of the paid hour (its defaults): $10.00 with 0.167 h of mean overhead, the lowest overhead of the grid: "
     "no policy keeps it within ten minutes.", "cloudbroker cluster --trace g.swf --seed 0 --json"),
    ((601.0, 900.0, 600.0, 100.0),
     "Run P4 delay (delay_min = 5): $12.00 with 0.167 h of mean overhead, the cheapest policy that keeps a job's mean "
     "overhead within ten minutes.", "cloudbroker cluster --trace g.swf --seed 0 --delay 5 --json"),
])
def test_the_cluster_pick_on_a_hand_made_grid(generated: ReportInput, monkeypatch: pytest.MonkeyPatch,
                                              overheads: tuple[float, float, float, float], expected: str,
                                              command: str) -> None:
    monkeypatch.setattr(cluster, "run_sweep", lambda fn, todo, n_jobs: [])
    monkeypatch.setattr(cluster, "sweep_table", lambda configs, results: cluster_table(overheads))
    s = cluster.run(fresh(generated), Budget(600.0, clock=Clock()))
    assert s.recommendation == expected
    assert s.commands[1] == ("the recommended point", command)
    n = s.numbers
    assert (n["cells"], n["on_front"], n["cheapest_cost"]) == (4, 3, 8.0)
    assert n["lowest_overhead_s"] == min(overheads)
    assert s.summary == ("4 policies on 300 jobs; 3 are on the front of cost against the mean overhead a job sees "
                         "(its wait for an instance and the boot).")
    assert s.tables["cluster_grid"]["settings"].tolist() == ["", "cap = 2", "delay_min = 5", "keepalive = fixed:0.1"]


# --- the figures: what each draws, read from the matplotlib figure itself ------------------------------------------


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The matplotlib figures the sections turn into SVG, kept for inspection."""
    from broker.report import figures

    kept: list[Any] = []
    original = figures.svg

    def keep(fig: Any) -> str:
        kept.append(fig)
        return original(fig)

    monkeypatch.setattr(figures, "svg", keep)
    return kept


def data(line: Any, axis: str) -> list[float]:
    return np.asarray(line.get_xdata() if axis == "x" else line.get_ydata(), dtype=float).tolist()


def rgba(color: str) -> tuple[float, ...]:
    from matplotlib.colors import to_rgba

    return to_rgba(color)


def test_the_trace_figure_draws_load_over_m_and_the_queue_by_day(drawn: list[Any]) -> None:
    hourly = pd.DataFrame({"hour": [0.0, 1.0, 2.0, 3.0, 4.0], "busy_procs": [4.0, 6.0, 0.0, 1.0, 0.0],
                           "queued_jobs": [0, 1, 1, 0, 0]})
    trace._figure(hourly, 4, True)
    load, queue = drawn[0].axes
    days = [0.0, 1 / 24, 2 / 24, 3 / 24, 4 / 24]
    line, limit = load.lines
    assert data(line, "x") == pytest.approx(days) and data(line, "y") == [1.0, 1.5, 0.0, 0.25, 0.0]
    assert line.get_linewidth() == 0.6
    assert data(limit, "y") == [1.0, 1.0] and limit.get_color() == "k"
    assert (limit.get_linewidth(), limit.get_linestyle()) == (0.8, "--")
    assert (load.get_xlabel(), load.get_ylabel()) == ("day", "busy processors / M (M = 4)")
    (waiting,) = queue.lines
    assert data(waiting, "x") == pytest.approx(days) and data(waiting, "y") == [0, 1, 1, 0, 0]
    assert (waiting.get_linewidth(), waiting.get_color()) == (0.6, "tab:red")
    assert (queue.get_xlabel(), queue.get_ylabel(), queue.get_title()) == ("day", "jobs waiting",
                                                                          "queue (the log's own schedule)")
    trace._figure(hourly, 4, False)
    queue = drawn[1].axes[1]
    (text,) = queue.texts
    assert (text.get_text(), text.get_position(), text.get_ha(), text.get_va()) == (
        "the trace records no waits", (0.5, 0.5), "center", "center")
    assert text.get_transform() is queue.transAxes
    assert list(queue.get_xticks()) == [] and list(queue.get_yticks()) == [] and queue.get_title() == "queue"


def test_the_coh_figure_draws_each_policy_over_its_lower_bound(drawn: list[Any]) -> None:
    table = pd.DataFrame({"policy": ["CoH (trio)", "FCFS-SM", "CoH + IPP"], "cost": [90.0, 120.0, 80.0],
                          "cost_over_lb": [1.5, 2.0, 4 / 3]})
    figure = coh._figure(table)
    assert figure.caption == ("Cost of each policy over its lower bound LB (every job on a perfectly packed VM, no "
                              "waste); the figure at each bar's end is the policy's cost.")
    (ax,) = drawn[0].axes
    bars = ax.patches  # the most expensive first
    assert [b.get_width() for b in bars] == [2.0, 1.5, 4 / 3]
    assert [b.get_facecolor() for b in bars] == [rgba("tab:gray"), rgba("tab:blue"), rgba("tab:blue")]
    (one,) = ax.lines
    assert data(one, "x") == [1.0, 1.0] and one.get_color() == "k"
    assert (one.get_linewidth(), one.get_linestyle()) == (0.8, "--")
    texts = ax.texts
    assert [t.get_text() for t in texts] == ["  $120.00", "  $90.00", "  $80.00"]
    for text, bar in zip(texts, bars, strict=True):
        assert text.get_position() == (bar.get_width(), bar.get_y() + bar.get_height() / 2)
        assert (text.get_va(), text.get_fontsize()) == ("center", 8)
    assert ax.get_xlabel() == "cost / lower bound (1 = the lower bound)"
    assert ax.get_xlim() == (0.0, 2.5)


def test_the_leasing_figure_draws_the_three_curves_and_the_learners_balance(drawn: list[Any]) -> None:
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 8", "Q-learning"],
                          "v": pd.array([0, 8, None], dtype="Int64"), "twt_imp_pct": [0.0, 60.0, 70.0],
                          "cost_pct": [0.0, 20.0, 25.0], "balance": [0.0, 40.0, 45.0]})
    figure = leasing._figure(table)
    assert figure.caption == ("Wait improvement over the site alone, cloud use against leasing without a cap, and "
                              "their difference (the balance), for each constant cap V; the dashed line is "
                              "Q-learning's balance.")
    (ax,) = drawn[0].axes
    imp, cost, balance, q = ax.lines
    for line, y, marker in ((imp, [0.0, 60.0], "o"), (cost, [0.0, 20.0], "s"), (balance, [0.0, 40.0], "^")):
        assert data(line, "x") == [0.0, 8.0] and data(line, "y") == y
        assert (line.get_marker(), line.get_linestyle()) == (marker, "-")
    assert data(q, "y") == [45.0, 45.0] and (q.get_color(), q.get_linestyle()) == ("tab:red", "--")
    assert ax.get_ylabel() == "%" and ax.get_legend().get_texts()[0].get_fontsize() == 7


def test_the_advisor_figure_draws_three_bars_per_speed(drawn: list[Any]) -> None:
    table = pd.DataFrame({"overhead": [0.01, 10.0], "saved_time_s": [3600.0, -7200.0],
                          "no_cutoff_saved_time_s": [1800.0, 0.0], "oracle_saved_time_s": [7200.0, 36000.0]})
    figure = advisor._figure(table)
    assert figure.caption == ("Hours of wait plus run time saved over the evaluated jobs by sending jobs to the cloud "
                              "when the predictions say it is faster; the oracle knows each job's wait and run time.")
    (ax,) = drawn[0].axes
    bars = ax.patches
    assert [b.get_x() + b.get_width() / 2 for b in bars] == pytest.approx([-0.27, 0.73, 0.0, 1.0, 0.27, 1.27])
    assert [b.get_width() for b in bars] == pytest.approx([0.27] * 6)
    assert [b.get_height() for b in bars] == [1.0, -2.0, 0.5, 0.0, 2.0, 10.0]
    (zero,) = ax.lines
    assert data(zero, "y") == [0, 0] and (zero.get_color(), zero.get_linewidth()) == ("k", 0.8)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.01", "10"]
    assert ax.get_legend().get_texts()[0].get_fontsize() == 7


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


def test_the_cluster_figure_draws_each_family_the_front_and_the_pick(drawn: list[Any]) -> None:
    table = cluster_table((600.0, 900.0, 100.0, 700.0))
    figure = cluster._figure(table, table.iloc[0])
    assert figure.caption == ("Every policy of the grid: its cost and the mean overhead a job sees; the line joins "
                              "the Pareto front, the circle marks the recommended point.")
    (ax,) = drawn[0].axes
    *families, pick = ax.collections
    assert [c.get_label() for c in families] == ["end of the paid hour", "P1 cap", "P4 delay", "P3 keep-alive"]
    assert [c.get_sizes().tolist() for c in families] == [[18.0]] * 4
    assert families[1].get_offsets().tolist() == [[0.25, 8.0]]  # overheads in hours, the page's unit for waits
    (front,) = ax.lines  # by overhead
    assert data(front, "x") == [100 / 3600, 600 / 3600, 900 / 3600] and data(front, "y") == [12.0, 10.0, 8.0]
    assert (front.get_color(), front.get_linestyle(), front.get_linewidth()) == ("k", "-", 0.8)
    assert front.get_label() == "Pareto front"
    assert pick.get_offsets().tolist() == [[600 / 3600, 10.0]] and pick.get_sizes().tolist() == [120.0]
    assert pick.get_label() == "recommended" and len(pick.get_facecolor()) == 0
    assert pick.get_edgecolor().tolist() == [list(rgba("tab:red"))] and pick.get_linewidth().tolist() == [1.5]
    assert ax.get_xscale() == "symlog" and ax.xaxis.get_transform().linthresh == 0.01
    assert ax.get_xlabel() == "mean overhead per job (h, logarithmic above 0.01 h)" and ax.get_ylabel() == "cost ($)"
    legend = ax.get_legend()
    assert legend.get_texts()[0].get_fontsize() == 6 and legend._ncols == 2


class FakeDemand:
    interval_s = 3600.0
    types = ("small", "large")
    counts = np.array([[1, 0], [3, 2], [4, 1]])

    def __len__(self) -> int:
        return 3


def test_the_reservations_figure_draws_the_demand_by_day_and_the_reserved_levels(drawn: list[Any]) -> None:
    report: Any = SimpleNamespace(plan=SimpleNamespace(counts={("small", "reserved-heavy"): 2,
                                                               ("small", "reserved-light"): 1}))
    figure = reservations._figure(FakeDemand(), report)  # type: ignore[arg-type]
    assert figure.caption == ("VMs CoH bills in each hour, by type, and the instances the plan reserves (dashed).")
    (ax,) = drawn[0].axes
    small, reserved, large = ax.lines  # no line for a type without reservations
    assert data(small, "x") == [0.0, 1 / 24, 2 / 24] and data(small, "y") == [1, 3, 4]
    assert (small.get_linewidth(), small.get_label()) == (0.6, "small VMs billed")
    assert data(reserved, "y") == [3, 3] and reserved.get_color() == small.get_color()
    assert (reserved.get_linestyle(), reserved.get_linewidth(), reserved.get_label()) == ("--", 1.0,
                                                                                        "small reserved (3)")
    assert data(large, "y") == [0, 2, 1] and large.get_label() == "large VMs billed"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("day", "VMs")
    legend = ax.get_legend()
    assert legend._loc == 1 and legend.get_texts()[0].get_fontsize() == 7  # 1: upper right
