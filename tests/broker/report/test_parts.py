"""The report's parts with known answers: the budget's arithmetic, the hourly load, caps, the knee, the grid file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from broker.cloudcluster.sweep import grid
from broker.report.budget import FIXED_SECONDS, SECONDS_PER_JOB, Budget, estimate
from broker.report.sections.cluster import _peak, families, recommend, toml
from broker.report.sections.leasing import caps
from broker.report.sections.trace import hourly_state


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_part_that_fits_exactly_runs_and_the_next_second_does_not() -> None:
    budget = Budget(60.0, clock=Clock())
    assert budget.allow("a", 45.0) and budget.left == 15.0
    assert budget.allow("b", 15.0) and budget.left == 0.0  # exactly what is left
    assert not budget.allow("c", 1e-9)
    assert budget.skipped == ["c: needs about 0.0 s, 0.0 s of the budget left"]
    assert budget.planned == 60.0


def test_the_clock_guard_skips_everything_once_the_budget_is_spent() -> None:
    clock = Clock()
    budget = Budget(10.0, clock=clock)
    clock.t += 10.0  # exactly spent: not yet over
    assert budget.allow("a", 1.0)
    clock.t += 0.5
    assert not budget.allow("b", 0.0)
    assert budget.skipped == ["b: the budget ran out (10 s of 10 s spent)"]


def test_an_estimate_is_the_fixed_cost_plus_the_cost_per_job_per_run() -> None:
    assert estimate("coh_trio", 10_000) == pytest.approx(FIXED_SECONDS + 10_000 * SECONDS_PER_JOB["coh_trio"])
    assert estimate("leasing_constant", 1000, runs=3) == pytest.approx(3 * (FIXED_SECONDS + 1000 * 1.5e-5))
    # SARSA's queue grows with the jobs: a term in the square of the jobs
    assert estimate("elastic_sarsa", 20_000) == pytest.approx(FIXED_SECONDS + 20_000 * 4e-4 + 20_000 ** 2 * 1.4e-8)
    with pytest.raises(ValueError, match="> 0"):
        Budget(0.0)


def test_the_hourly_load_and_queue_count_each_job_on_its_half_open_intervals() -> None:
    # job 0: submitted 0, starts 0, ends 7200 on 4 procs; job 1: submitted 1800, starts 3600, ends 3601 on 2;
    # job 2: submitted 3600, waits until 10800, ends 14400 on 1
    submit = np.array([0.0, 1800.0, 3600.0])
    start = np.array([0.0, 3600.0, 10800.0])
    end = np.array([7200.0, 3601.0, 14400.0])
    table = hourly_state(submit, start, end, np.array([4.0, 2.0, 1.0]), span_end=14400.0)
    assert table["hour"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert table["busy_procs"].tolist() == [4.0, 6.0, 0.0, 1.0, 0.0]  # at 7200 job 0 has ended; at 14400 job 2
    assert table["queued_jobs"].tolist() == [0, 1, 1, 0, 0]  # at 3600 job 1 starts, job 2 arrives and waits


def test_a_section_shares_what_is_left_by_weight_and_slices_to_fit_it() -> None:
    budget = Budget(100.0, clock=Clock())
    assert budget.share(2.0, 5.0) == 40.0
    n = budget.slice("part", lambda m: 0.1 + 0.01 * m, 10_000, least=1000)
    assert n == 3900  # the most that fits, 3,990, rounded down to two significant digits
    assert budget.planned == pytest.approx(39.1) and budget.share_left == pytest.approx(0.9)
    assert budget.share(1.0, 3.0) == pytest.approx(60.9 / 3)  # what the first share left is shared again
    assert budget.slice("whole", lambda m: 0.01 * m, 500, least=1000) == 500  # the whole trace fits
    assert budget.slice("big", lambda m: 0.1 * m, 10_000, least=1000) is None  # not even 1,000 jobs
    assert budget.skipped == ["big: needs about 100 s, 15 s of the budget left"]


def test_the_parts_are_timed_from_one_start_to_the_next() -> None:
    clock = Clock()
    budget = Budget(100.0, clock=clock)
    budget.start("a", 1.0)
    clock.t += 2.5
    budget.start("b", 2.0)
    clock.t += 1.0
    budget.close()
    budget.close()  # nothing open: nothing changes
    assert budget.parts == [{"part": "a", "estimated_s": 1.0, "wall_s": 2.5},
                            {"part": "b", "estimated_s": 2.0, "wall_s": 1.0}]


def test_the_caps_are_fractions_of_the_site_with_0_and_m_always_in() -> None:
    assert caps(100) == [0, 6, 12, 25, 50, 100]
    assert caps(16) == [0, 1, 2, 4, 8, 16]
    assert caps(1) == [0, 1]


def test_the_recommendation_is_the_cheapest_within_ten_minutes_of_overhead_else_the_quickest() -> None:
    cost = np.array([11008.9, 11444.1, 11778.4, 11907.6, 12066.4])
    overhead = np.array([8.5e6, 31_757.0, 600.0, 149.8, 13.6])  # KTH-SP2's front, 449 s moved onto the limit
    assert recommend(cost, overhead) == 2  # exactly ten minutes is within
    overhead[2] = 600.001
    assert recommend(cost, overhead) == 3
    assert recommend(np.array([5.0, 5.0]), np.array([100.0, 50.0])) == 1  # same cost: the lower overhead
    assert recommend(np.array([1.0, 2.0, 3.0]), np.array([900.0, 700.0, 700.0])) == 1  # none within: the quickest


def test_the_peak_counts_an_end_before_a_start_at_the_same_instant() -> None:
    assert _peak(np.array([0.0, 10.0, 5.0]), np.array([10.0, 5.0, 10.0])) == 2
    assert _peak(np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0])) == 3


def test_the_grid_file_reads_back_as_the_same_cells() -> None:
    spec = {"name": "report", "workload": {"trace": "/data/t.swf", "seed": 3}, "family": families(40)}
    assert families(40)[1]["cap"] == [4, 10, 20]
    assert grid(tomllib.loads(toml(spec))) == grid(spec)
    assert len(grid(spec)) == 1 + 3 + 3 + 3 + 2 + 2


def test_a_trace_without_maxprocs_or_processor_counts_asks_for_the_sites_size(tmp_path: Path) -> None:
    from broker.report.build import report_input
    from broker.report.model import ReportConfig
    from workloads.errors import ConfigError

    trace = tmp_path / "t.swf"
    trace.write_text("; Version: 2.2\n1 0 5 10 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    with pytest.raises(ConfigError, match="give the site's size with --nodes"):
        report_input(ReportConfig(trace=str(trace)), tmp_path)
    assert report_input(ReportConfig(trace=str(trace), nodes=4), tmp_path).nodes == 4


def test_the_advisor_section_takes_its_protocol_from_the_advisors_fitting_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from broker.advisor.evaluate import Protocol
    from broker.report.budget import Budget
    from broker.report.model import ReportInput
    from broker.report.sections import advisor
    from workloads.lublin import default_workload
    from workloads.swf import read_swf
    from workloads.swf_writer import write_swf

    frame = default_workload(seed=0, n_jobs=2000)
    frame["wait_time"] = frame["submit_time"] % 600
    path = write_swf(frame, tmp_path / "a.swf", {"MaxProcs": 256})
    asked: list[int] = []

    def fitting(n: int, count: str) -> Protocol:
        asked.append((n, count))
        return Protocol(tune=100, skip=300, evaluate=200, count=count)

    monkeypatch.setattr(Protocol, "fitting", staticmethod(fitting))
    s = advisor.run(ReportInput(path, frame, read_swf(path).header, "a", "a.swf", 256, 0), Budget(600.0))
    assert asked == [(2000, "jobs")]  # the budget cuts the trace by jobs: the windows count jobs
    assert (s.numbers["tune"], s.numbers["skip"], s.numbers["evaluate"]) == (100, 300, 200)
    assert s.numbers["label"] == "log" and "--label log --count jobs" in s.commands[0][1]
