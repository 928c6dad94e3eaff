"""Elastic sweeps (:mod:`broker.elastic.sweep`) by hand on a four-job SWF file:
the window, the pool, the cells, the grid and the table."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import broker.elastic.sweep as elastic_sweep
from broker.elastic.sweep import (
    CELL_NAME,
    FIGURES,
    configs,
    elastic_cell,
    native_cell,
    pool_of,
    sweep_table,
    window,
)
from broker.elastic.world import PoolConfig
from broker.sweep import Cell, Memo
from tests.workloads.test_swf import job_line, write_swf
from workloads.errors import ConfigError

DAY = 86400
# job 1: 2 processors at 100 (two one-core tasks of 100 s, logged wait 10), group 5; job 2: 50 s a day later,
# group 7, no wait; job 3: 2000 s two days and 10 s later, group 5, no logged wait; job 4: 30 s three days
# later, group 7, logged wait 20
LINES = [
    job_line(1, submit_time="100", wait_time="10", run_time="100", allocated_procs="2", group_id="5"),
    job_line(2, submit_time=str(100 + DAY), wait_time="0", run_time="50", allocated_procs="1", group_id="7"),
    job_line(3, submit_time=str(100 + 2 * DAY + 10), run_time="2000", allocated_procs="1", group_id="5"),
    job_line(4, submit_time=str(100 + 3 * DAY), wait_time="20", run_time="30", allocated_procs="1", group_id="7"),
]


@pytest.fixture
def trace(tmp_path, monkeypatch) -> str:
    monkeypatch.setattr(elastic_sweep, "VIEWS", Memo(size=2))  # no view left over from another test
    return str(write_swf(tmp_path, "four.swf", ["; UnixStartTime: 1000000000", *LINES], compress=False))


def test_the_window_of_a_trace(trace: str, tmp_path) -> None:
    everything = window(trace)
    assert everything.ids.tolist() == [1, 1, 2, 3, 4] and everything.origin == 1_000_000_000.0
    assert window(trace, "one").ids.tolist() == [1, 2, 3, 4]  # another view, not the memo's expanded one
    assert window(trace, first_day=1).ids.tolist() == [2, 3, 4]  # from 100 + 1 day on
    assert window(trace, first_day=1, days=1).ids.tolist() == [2]  # job 3 is 10 s past the day
    assert window(trace, first_day=2).ids.tolist() == [3, 4]
    assert window(trace, days=2).ids.tolist() == [1, 1, 2]
    assert window(trace, "one", first_day=0.5, days=2, limit=1).ids.tolist() == [2]
    assert window(trace, limit=2).ids.tolist() == [1, 1]
    empty = str(write_swf(tmp_path, "empty.swf", ["; UnixStartTime: 1000000000"], compress=False))
    assert len(window(empty, first_day=1, days=1)) == 0
    undated = str(write_swf(tmp_path, "undated.swf", LINES, compress=False))
    assert window(undated).origin == 0.0  # no UnixStartTime: time 0 is the epoch


def test_the_pool_of_a_configuration() -> None:
    assert pool_of({}) == PoolConfig(81, elastic=False, min_cores=30, max_cores=None, hold_s=900.0,
                                     estimate="oracle")
    got = pool_of({"cores": 4, "mode": "elastic", "min_cores": 2, "max_cores": 6, "hold_s": 60, "estimate": "median"})
    assert got == PoolConfig(4, elastic=True, min_cores=2, max_cores=6, hold_s=60.0, estimate="median")


def test_an_elastic_cell_by_hand(trace: str) -> None:
    got = elastic_cell({"trace": trace, "policy": "fcfs", "cores": 1, "trim": 0}, 0)
    assert list(got) == list(FIGURES)
    # one core, FCFS: the two tasks of job 1 run 100-200 and 200-300 (the second waited 100 s), the others at once
    assert (got["jobs"], got["decisions"], got["peak_cores"], got["trainings"], got["mean_cores"]) == (5, 5, 1, 0, 1.0)
    span = 100 + 3 * DAY + 30 - 100  # the first submission to the last termination
    assert got["utilization"] == pytest.approx(2280 / span) and got["core_hours"] == pytest.approx(span / 3600)
    # interactive W: 1, 0.5, 1, 1; waits 0, 100, 0, 0; the batch job (2000 s) never waits
    assert got["w_interactive_mean"] == pytest.approx(0.875) and got["wait_interactive_mean_s"] == pytest.approx(25.0)
    assert got["w_interactive_std"] == pytest.approx(math.sqrt(0.046875)) and got["w_batch_mean"] == 1.0
    # F at the starts: shares 2200 / 2280 and 80 / 2280; 53/55 twice, then 0.8 / share0, 74/75 and 1
    share0 = 2200 / 2280
    assert got["fairness_mean"] == pytest.approx((2 * 53 / 55 + 0.8 / share0 + 74 / 75 + 1) / 5)
    # the default trim (500 at each end) leaves no job to count; the window's keys reach the view
    assert elastic_cell({"trace": trace, "policy": "fcfs", "cores": 1}, 0)["w_interactive_mean"] is None
    assert elastic_cell({"trace": trace, "policy": "fcfs", "cores": 1, "parallel": "one"}, 0)["jobs"] == 4
    assert elastic_cell({"trace": trace, "policy": "fcfs", "cores": 1, "first_day": 1, "days": 1}, 0)["jobs"] == 1
    assert elastic_cell({"trace": trace, "policy": "fcfs", "cores": 1, "limit": 2}, 0)["jobs"] == 2
    elastic = elastic_cell({"trace": trace, "policy": "threshold", "mode": "elastic", "cores": 2, "min_cores": 1,
                            "max_cores": 3}, 0)
    assert elastic["peak_cores"] == 2  # the demand never passes two cores
    with pytest.raises(ConfigError, match="lambda must lie in"):
        elastic_cell({"trace": trace, "policy": "fcfs", "cores": 1, "lam": 1.5}, 0)


def test_an_elastic_cell_hands_its_settings_and_seed_to_the_run(trace: str, monkeypatch) -> None:
    seen = []
    real = elastic_sweep.run_elastic

    def spy(jobs, pool, policy, **kwargs):
        seen.append((len(jobs), pool, policy, kwargs))
        return real(jobs, pool, policy, **kwargs)

    monkeypatch.setattr(elastic_sweep, "run_elastic", spy)
    elastic_cell({"trace": trace, "policy": "sjf", "cores": 2, "lam": 0.25, "trim": 1}, 7)
    elastic_cell({"trace": trace, "policy": "edf", "cores": 3, "reward": "wait"}, 8)
    assert seen == [(5, PoolConfig(2), "sjf", {"lam": 0.25, "seed": 7, "trim": 1, "reward": "paper"}),
                    (5, PoolConfig(3), "edf", {"lam": 0.5, "seed": 8, "trim": 500, "reward": "wait"})]


def test_a_native_cell_by_hand(trace: str) -> None:
    got = native_cell({"trace": trace, "trim": 0}, 0)
    # the logged waits: 10 and 10 (job 1's tasks), 0, none for job 3 (left out), 20 for 30 s
    assert (got["jobs"], got["jobs_without_wait"], got["w_batch_mean"]) == (5, 1, None)
    assert got["w_interactive_mean"] == pytest.approx((2 * 100 / 110 + 1.0 + 30 / 50) / 4)
    assert got["wait_interactive_mean_s"] == pytest.approx(10.0)
    default = native_cell({"trace": trace}, 0)  # trim 500: nothing counted, so nothing missing
    assert default["jobs_without_wait"] == 0 and default["w_interactive_mean"] is None
    assert native_cell({"trace": trace, "parallel": "one", "trim": 0}, 0)["jobs"] == 4
    assert native_cell({"trace": trace, "first_day": 1, "days": 1, "trim": 0}, 0)["jobs"] == 1
    assert native_cell({"trace": trace, "limit": 2, "trim": 0}, 0)["jobs"] == 2


def test_a_native_cell_leaves_out_500_jobs_at_each_end_by_default(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(elastic_sweep, "VIEWS", Memo(size=2))
    lines = [job_line(k, submit_time=str(k), wait_time="0", run_time="10", allocated_procs="1") for k in range(1001)]
    got = native_cell({"trace": str(write_swf(tmp_path, "many.swf", lines, compress=False))}, 0)
    assert got["jobs"] == 1001 and got["w_interactive_mean"] == 1.0  # the middle job alone is counted


def test_the_grid_of_configurations() -> None:
    assert configs("t") == [{"trace": "t", "mode": "rigid", "policy": "sarsa", "lam": 0.5, "estimate": "oracle"}]
    grid = configs("t", modes=("rigid", "elastic"), policies=("fcfs", "threshold"), lams=(0, 1),
                   estimates=("median",), cores=4)
    # the threshold autoscaler only on the elastic pool; common settings before the axes
    assert [(c["mode"], c["policy"], c["lam"]) for c in grid] == [
        ("rigid", "fcfs", 0.0), ("rigid", "fcfs", 1.0), ("elastic", "fcfs", 0.0), ("elastic", "fcfs", 1.0),
        ("elastic", "threshold", 0.0), ("elastic", "threshold", 1.0)]
    assert list(grid[0]) == ["trace", "cores", "mode", "policy", "lam", "estimate"]
    assert grid[0]["cores"] == 4 and grid[0]["estimate"] == "median" and type(grid[0]["lam"]) is float


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"modes": ()}, r"^modes must be rigid and/or elastic, got \[\]$"),
    ({"modes": ("rigid", "fixed")}, r"^modes must be rigid and/or elastic, got \['rigid', 'fixed'\]$"),
    ({"policies": ()}, r"^policies must be among fcfs, sjf, edf, greedy-w, urgent, threshold, sarsa, got \[\]$"),
    ({"policies": ("fcfs", "lifo")},
     r"^policies must be among fcfs, sjf, edf, greedy-w, urgent, threshold, sarsa, got \['fcfs', 'lifo'\]$"),
    ({"lams": ()}, r"^lambda must lie in \[0, 1\], got \[\]$"),
    ({"lams": (0.5, 1.01)}, r"^lambda must lie in \[0, 1\], got \[0.5, 1.01\]$"),
    ({"lams": (-0.01,)}, r"^lambda must lie in \[0, 1\], got \[-0.01\]$"),
    ({"estimates": ()}, r"^estimates must be among oracle, median, got \[\]$"),
    ({"estimates": ("oracle", "mean")}, r"^estimates must be among oracle, median, got \['oracle', 'mean'\]$"),
])
def test_a_bad_grid_is_refused(kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message):
        configs("t", **kwargs)


def test_the_sweep_table() -> None:
    grid = [Cell(CELL_NAME, {"mode": "rigid", "policy": "fcfs", "lam": 0.5, "estimate": "oracle"}, 2**62 + 1),
            Cell(CELL_NAME, {"mode": "elastic", "policy": "sarsa", "lam": 1.0, "estimate": "median"}, 3)]
    table = sweep_table(grid, [{"utilization": 0.25, "jobs": 10, "peak_cores": 4, "decisions": 10, "trainings": 2},
                               {"utilization": 0.5}])
    assert list(table.columns) == ["mode", "policy", "lam", "estimate", "seed", *FIGURES]
    assert table[["mode", "policy", "estimate"]].to_numpy().tolist() == [["rigid", "fcfs", "oracle"],
                                                                       ["elastic", "sarsa", "median"]]
    assert table["lam"].tolist() == [0.5, 1.0] and table["utilization"].tolist() == [0.25, 0.5]
    # seeds and counts are exact nullable integers: 2**62 + 1 survives, a missing count is <NA>
    for name in ("seed", "peak_cores", "jobs", "decisions", "trainings"):
        assert str(table[name].dtype) == "Int64"
    assert table["seed"].tolist() == [2**62 + 1, 3] and table["jobs"].tolist()[0] == 10
    assert table["jobs"].isna().tolist() == [False, True] and pd.isna(table.loc[1, "fairness_mean"])
    assert isinstance(table, pd.DataFrame) and table["trainings"].tolist()[0] == 2
    with pytest.raises(ValueError):
        sweep_table(grid, [{}])  # one result for two cells
    empty = sweep_table([], [])
    assert list(empty.columns) == ["mode", "policy", "lam", "estimate", "seed", *FIGURES] and len(empty) == 0
