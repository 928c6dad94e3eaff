"""The broker's job view: the documented filter, its counts, sorting and requirement draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workloads import schema
from workloads.errors import ConfigError
from workloads.jobs import FilterReport, JobTable, job_view
from workloads.requirements import requirements

UNKNOWN = -1.0


def make_trace(**columns: list[float]) -> pd.DataFrame:
    """A trace with the given SWF columns (floats, -1 unknown); every other column unknown."""
    n = len(next(iter(columns.values())))
    data: dict[str, object] = {name: np.full(n, UNKNOWN) for name in schema.COLUMN_NAMES}
    data.update({name: np.asarray(values, dtype=np.float64) for name, values in columns.items()})
    return schema.from_float_columns(data)


def mixed_trace() -> pd.DataFrame:
    """Ten jobs, one per filter case.

    1 ok | 2 submit unknown | 3 run unknown | 4 run 0 | 5 run negative | 6 failed, kept |
    7 cancelled, kept | 8 submit and run unknown (counted once, as submit) | 9 status unknown,
    kept unflagged | 10 failed with run 0 (counted as run time, not as status).
    """
    return make_trace(
        job_id=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        submit_time=[0, -1, 20, 30, 40, 50, 60, -1, 80, 90],
        run_time=[10, 5, -1, 0, -3, 20, 30, -1, 40, 0],
        status=[1, 1, 1, 1, 1, 0, 5, 1, -1, 0],
        user_id=[3, 3, 3, 3, 3, 4, 5, 3, -1, 4],
    )


def test_default_filter_counts_every_removal_and_flags_failed_and_cancelled() -> None:
    table, report = job_view(mixed_trace(), reqs="constant-10", seed=0)
    assert report.read == 10
    assert report.kept == len(table) == 4
    assert report.removed == {"submit time unknown": 2, "run time unknown or <= 0": 4}
    assert report.kept_flagged == {"status failed": 1, "status cancelled": 1}
    assert table.job_id.tolist() == [1, 6, 7, 9]
    assert report.read == report.kept + sum(report.removed.values())


@pytest.mark.parametrize(
    ("drop", "kept_ids", "removed", "flagged"),
    [
        (frozenset({"failed"}), [1, 7, 9], {"status failed": 1}, {"status cancelled": 1}),
        (frozenset({"cancelled"}), [1, 6, 9], {"status cancelled": 1}, {"status failed": 1}),
        (
            frozenset({"failed", "cancelled"}),
            [1, 9],
            {"status failed": 1, "status cancelled": 1},
            {},
        ),
    ],
)
def test_named_status_groups_are_removed_and_counted(
    drop: frozenset[str], kept_ids: list[int], removed: dict[str, int], flagged: dict[str, int]
) -> None:
    table, report = job_view(mixed_trace(), reqs="constant-10", seed=0, drop_status=drop)
    assert table.job_id.tolist() == kept_ids
    assert report.removed == {"submit time unknown": 2, "run time unknown or <= 0": 4, **removed}
    assert report.kept_flagged == flagged
    assert report.read == report.kept + sum(report.removed.values())


def test_unknown_status_group_raises() -> None:
    with pytest.raises(ValueError, match="unknown status group"):
        job_view(mixed_trace(), reqs="constant-10", seed=0, drop_status=frozenset({"killed"}))


def test_unknown_requirement_model_raises() -> None:
    with pytest.raises(ValueError, match="unknown requirement model"):
        job_view(mixed_trace(), reqs="huge", seed=0)


def test_describe_names_every_nonzero_reason() -> None:
    _, report = job_view(mixed_trace(), reqs="constant-10", seed=0)
    text = report.describe()
    assert text.startswith("read 10, kept 4")
    assert "removed 2 (submit time unknown)" in text
    assert "removed 4 (run time unknown or <= 0)" in text
    assert "kept 1 status failed" in text and "kept 1 status cancelled" in text
    quiet = FilterReport(read=3, kept=3, removed={"submit time unknown": 0})
    assert quiet.describe() == "read 3, kept 3"


def test_table_is_sorted_by_arrival_then_job_id_and_columns_follow() -> None:
    trace = make_trace(
        job_id=[1, 4, 2, 3],
        submit_time=[50, 10, 10, 30],
        run_time=[100, 400, 200, 300],
        status=[1, 1, 1, 1],
        user_id=[11, 14, 12, 13],
    )
    table, _ = job_view(trace, reqs="heterogeneous", seed=3, origin=1_000, source="unit")
    r_by_row = requirements("heterogeneous", 4, seed=3)
    assert table.job_id.tolist() == [2, 4, 3, 1]
    assert table.arrival.tolist() == [10.0, 10.0, 30.0, 50.0]
    assert table.runtime.tolist() == [200.0, 400.0, 300.0, 100.0]
    assert table.user.tolist() == [12, 14, 13, 11]
    assert table.r.tolist() == r_by_row[[2, 1, 3, 0]].tolist()
    assert table.departure.tolist() == [210.0, 410.0, 330.0, 150.0]
    assert (table.origin, table.source) == (1_000, "unit")
    assert table.arrival.dtype == np.float64 and table.job_id.dtype == np.int64


def test_unknown_user_and_job_id_become_minus_one() -> None:
    trace = make_trace(job_id=[-1, 7], submit_time=[0, 5], run_time=[1, 1], user_id=[-1, 2])
    table, _ = job_view(trace, reqs="constant-10", seed=0)
    assert table.job_id.tolist() == [-1, 7]
    assert table.user.tolist() == [-1, 2]


def test_requirement_of_a_job_does_not_depend_on_the_filter() -> None:
    trace = mixed_trace()
    loose, _ = job_view(trace, reqs="heterogeneous", seed=42)
    strict, _ = job_view(
        trace, reqs="heterogeneous", seed=42, drop_status=frozenset({"failed", "cancelled"})
    )
    r_loose = dict(zip(loose.job_id.tolist(), loose.r.tolist(), strict=True))
    assert all(
        r_loose[j] == r for j, r in zip(strict.job_id.tolist(), strict.r.tolist(), strict=True)
    )
    by_row = requirements("heterogeneous", len(trace), seed=42)
    assert loose.r.tolist() == by_row[[0, 5, 6, 8]].tolist()


def test_heterogeneous_requirements_are_roughly_uniform_on_10_to_100() -> None:
    n = 20_000
    trace = make_trace(
        job_id=list(range(1, n + 1)), submit_time=list(range(n)), run_time=[60] * n, status=[1] * n
    )
    table, _ = job_view(trace, reqs="heterogeneous", seed=1)
    values, counts = np.unique(table.r, return_counts=True)
    assert values.tolist() == [10.0 * k for k in range(1, 11)]
    se = np.sqrt(n * 0.1 * 0.9)
    assert np.abs(counts - n / 10).max() < 4 * se


@pytest.mark.parametrize(("model", "value"), [("constant-100", 100.0), ("constant-10", 10.0)])
def test_constant_requirements_are_exact(model: str, value: float) -> None:
    table, _ = job_view(mixed_trace(), reqs=model, seed=None)
    assert table.r.tolist() == [value] * len(table)


def test_same_seed_same_requirements_different_seed_different() -> None:
    trace = make_trace(job_id=list(range(1, 201)), submit_time=list(range(200)), run_time=[5] * 200)
    first, _ = job_view(trace, reqs="heterogeneous", seed=7)
    again, _ = job_view(trace, reqs="heterogeneous", seed=7)
    other, _ = job_view(trace, reqs="heterogeneous", seed=8)
    np.testing.assert_array_equal(first.r, again.r)
    assert not np.array_equal(first.r, other.r)


def test_empty_trace_gives_empty_table() -> None:
    table, report = job_view(schema.empty_frame(), reqs="heterogeneous", seed=0)
    assert len(table) == 0 and report.read == 0 and report.kept == 0
    assert report.removed == {"submit time unknown": 0, "run time unknown or <= 0": 0}


# ---------------------------------------------------------------- JobTable itself


def test_from_arrays_sorts_and_defaults_ids_and_users() -> None:
    table = JobTable.from_arrays(
        arrival=np.array([3.0, 1.0, 2.0]), runtime=np.array([1.0, 2.0, 3.0]), r=np.ones(3)
    )
    assert table.job_id.tolist() == [2, 3, 1]
    assert table.arrival.tolist() == [1.0, 2.0, 3.0]
    assert table.user.tolist() == [-1, -1, -1]


def test_job_table_rejects_inconsistent_arrays() -> None:
    ones = np.ones(3)
    with pytest.raises(ValueError, match="rows"):
        JobTable(job_id=np.arange(3), arrival=ones[:2], runtime=ones, r=ones, user=ones)
    with pytest.raises(ValueError, match="sorted"):
        JobTable(
            job_id=np.arange(3), arrival=np.array([2.0, 1.0, 3.0]), runtime=ones, r=ones, user=ones
        )
    with pytest.raises(ValueError, match="strictly positive"):
        JobTable(
            job_id=np.arange(3), arrival=ones, runtime=np.array([1.0, 0.0, 1.0]), r=ones, user=ones
        )


def test_head_and_to_frame() -> None:
    table = JobTable.from_arrays(
        arrival=np.arange(5.0), runtime=np.full(5, 10.0), r=np.full(5, 20.0), source="demo"
    )
    first = table.head(2)
    assert len(first) == 2 and first.job_id.tolist() == [1, 2] and first.source == "demo[:2]"
    frame = table.to_frame()
    assert list(frame.columns) == ["job_id", "arrival", "runtime", "departure", "r", "user"]
    assert frame["departure"].tolist() == [10.0, 11.0, 12.0, 13.0, 14.0]


# -- a view expands parallel jobs into at most MAX_TASKS tasks (issue 31) -----------------------------------------
def _wide(procs: list[int]) -> pd.DataFrame:
    n = len(procs)
    return pd.DataFrame({"job_id": list(range(1, n + 1)), "submit_time": [0] * n, "wait_time": [0] * n,
                         "run_time": [10] * n, "status": [1] * n, "user_id": [1] * n, "group_id": [1] * n,
                         "allocated_procs": procs, "requested_procs": procs}, dtype="Int64")


@pytest.mark.parametrize("view", ["cores", "htc"])
def test_a_parallel_job_wider_than_the_tasks_a_view_makes_is_refused_before_they_are_made(
        view: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from workloads.cores import cores_view
    from workloads.htc import htc_view

    def make(frame: pd.DataFrame) -> int:
        jobs = cores_view(frame)[0] if view == "cores" else htc_view(frame, parallel="expand")[0]
        return len(jobs)

    with pytest.raises(ConfigError, match=r"^parallel 'expand' makes 1,000,000,000,001 one-core tasks of the trace's 2 "
                                          r"jobs \(the widest has 1,000,000,000,000 processors\); at most 100,000,000"):
        make(_wide([10**12, 1]))
    monkeypatch.setattr("workloads.jobs.MAX_TASKS", 5)
    assert make(_wide([4, 1])) == 5  # the bound itself is made
    with pytest.raises(ConfigError, match="makes 6 one-core tasks"):
        make(_wide([4, 2]))
