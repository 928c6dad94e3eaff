"""The broker's job view: the documented filter, its counts, sorting and requirement draws."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from workloads import schema
from workloads.errors import ConfigError, InputError
from workloads.jobs import FilterReport, JobTable, check_rows, filter_rows, job_view
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


# The job table and the filter helpers on hand-made inputs: dtypes, defaults, slices, messages.
#
# ``JobTable`` holds int64 ``job_id`` and ``user``, float64 ``arrival``, ``runtime`` and ``r``, sorted by (arrival,
# job id); ``between(start, stop)`` keeps arrivals in ``[start, stop)``; ``filter_rows`` applies reasons in order, a
# row counted by the first reason that removes it, an unknown value removing nothing; ``check_rows`` names the type
# and the column that is wrong.


def table(**extra: object) -> JobTable:
    """Five jobs, arrivals 0, 10, 10, 20, 30 (ids 1..5), run times 1..5, r 10..50, users 7, 8, 7, 8, 7."""
    return JobTable.from_arrays(arrival=[0.0, 10.0, 10.0, 20.0, 30.0], runtime=[1.0, 2.0, 3.0, 4.0, 5.0],
                                r=[10.0, 20.0, 30.0, 40.0, 50.0], user=[7, 8, 7, 8, 7], **extra)


# --- JobTable --------------------------------------------------------------------------------------------------


def test_from_arrays_converts_every_column_to_its_dtype():
    jobs = JobTable.from_arrays(arrival=[5, 1], runtime=[2, 3], r=[10, 20], job_id=[8.0, 9.0], user=[4.0, 6.0])
    assert (jobs.arrival.dtype, jobs.runtime.dtype, jobs.r.dtype) == (np.float64,) * 3
    assert (jobs.job_id.dtype, jobs.user.dtype) == (np.int64, np.int64)
    # sorted by arrival: the job arriving at 1 (id 9) first
    assert jobs.job_id.tolist() == [9, 8] and jobs.user.tolist() == [6, 4]
    assert jobs.arrival.tolist() == [1.0, 5.0] and jobs.runtime.tolist() == [3.0, 2.0] and jobs.r.tolist() == [20, 10]


def test_from_arrays_defaults_origin_0_and_an_empty_source():
    jobs = JobTable.from_arrays(arrival=[1.0], runtime=[1.0], r=[10.0])
    assert (jobs.origin, jobs.source) == (0, "")
    assert (jobs.job_id.tolist(), jobs.user.tolist()) == ([1], [-1])


def test_head_keeps_the_origin():
    part = table(origin=1_000, source="t").head(2)
    assert (part.origin, part.source, part.job_id.tolist()) == (1_000, "t[:2]", [1, 2])


def test_between_keeps_arrivals_from_start_up_to_but_not_including_stop():
    jobs = table(origin=1_000, source="t")
    part = jobs.between(10, 30)  # arrivals 10, 10, 20 are in [10, 30); 0 is before, 30 is the stop
    assert part.job_id.tolist() == [2, 3, 4]
    assert part.arrival.tolist() == [10.0, 10.0, 20.0]
    assert part.runtime.tolist() == [2.0, 3.0, 4.0]
    assert part.r.tolist() == [20.0, 30.0, 40.0]
    assert part.user.tolist() == [8, 7, 8]
    assert (part.origin, part.source) == (1_000, "t[10 s, 30 s)")
    assert jobs.between(10.5, 20).job_id.tolist() == []  # nothing arrives in [10.5, 20)
    assert jobs.between(0, 0.5).source == "t[0 s, 0.5 s)"


def test_an_unsorted_table_is_refused_with_a_hint():
    one = np.ones(2)
    with pytest.raises(InputError, match=r"^JobTable\.arrival must be sorted; build tables with "
                                         r"JobTable\.from_arrays$"):
        JobTable(job_id=np.array([1, 2]), arrival=np.array([5.0, 1.0]), runtime=one, r=one, user=np.array([1, 1]))


def test_a_non_positive_run_time_is_refused_with_a_pointer_to_job_view():
    with pytest.raises(InputError, match=r"^JobTable\.runtime must be strictly positive "
                                         r"\(see workloads\.jobs\.job_view\)$"):
        JobTable.from_arrays(arrival=[0.0, 1.0], runtime=[1.0, 0.0], r=[1.0, 1.0])


# --- check_rows ------------------------------------------------------------------------------------------------


@dataclass
class Pair:
    key: list[float]
    other: list[float]


def test_check_rows_names_the_type_and_the_column():
    with pytest.raises(InputError, match=r"^Pair\.other has 1 rows, expected 2$"):
        check_rows(Pair([1.0, 2.0], [3.0]), "key", ("other",))
    with pytest.raises(InputError, match=r"^Pair\.key must be sorted$"):  # no hint: nothing after "sorted"
        check_rows(Pair([2.0, 1.0], [3.0, 4.0]), "key", ("other",))
    assert check_rows(Pair([1.0, 1.0], [3.0, 4.0]), "key", ("other",)) == 2  # ties are sorted


# --- filter_rows -----------------------------------------------------------------------------------------------


def test_filter_rows_counts_each_row_under_the_first_reason_and_unknowns_remove_nothing():
    first = pd.Series([True, True, pd.NA, False, False], dtype="boolean")  # rows 0, 1; row 2 unknown
    second = pd.Series([False, True, True, pd.NA, False], dtype="boolean")  # row 1 (taken), row 2; row 3 unknown
    keep, removed = filter_rows({"a": first, "b": second}, 5)
    assert keep.dtype == np.bool_
    assert keep.tolist() == [False, False, False, True, True]
    assert removed == {"a": 2, "b": 1}  # row 1 counted once, under "a"


def test_filter_rows_on_plain_boolean_series_and_no_reasons():
    keep, removed = filter_rows({"x": pd.Series([False, True, False])}, 3)
    assert (keep.tolist(), removed) == ([True, False, True], {"x": 1})
    keep, removed = filter_rows({}, 2)
    assert (keep.tolist(), removed) == ([True, True], {})


# --- job_view defaults ------------------------------------------------------------------------------------------


def test_job_view_defaults_origin_0_and_an_empty_source():
    data = {name: np.full(2, -1.0) for name in schema.COLUMN_NAMES}
    data.update(job_id=np.array([1.0, 2.0]), submit_time=np.array([0.0, 5.0]), run_time=np.array([3.0, 4.0]))
    jobs, report = job_view(schema.from_float_columns(data), reqs="constant-10", seed=0)
    assert (jobs.origin, jobs.source) == (0, "")
    assert jobs.job_id.tolist() == [1, 2] and jobs.r.tolist() == [10.0, 10.0]
    assert (report.read, report.kept) == (2, 2)


def test_job_view_keeps_large_job_and_user_numbers_exact_beside_unknown_ones():
    # Int64 columns hold integers beyond 2**53, where float64 would round (2**53 + 1 -> 2**53, 2**53 + 3 -> 2**53 + 4)
    big = 2**53
    trace = schema.from_float_columns({name: np.full(2, -1.0) for name in schema.COLUMN_NAMES})
    trace["submit_time"] = pd.array([0, 5], dtype="Int64")
    trace["run_time"] = pd.array([3, 4], dtype="Int64")
    trace["job_id"] = pd.array([big + 1, None], dtype="Int64")
    trace["user_id"] = pd.array([None, big + 3], dtype="Int64")
    jobs, _ = job_view(trace, reqs="constant-10", seed=0)
    assert jobs.job_id.tolist() == [9_007_199_254_740_993, -1]  # the unknown job number is -1
    assert jobs.user.tolist() == [-1, 9_007_199_254_740_995]


# --- whole numbers: requirements and arrivals (sums of them are exact in any order) ------------------------------


@pytest.mark.parametrize(("field", "values", "bad"), [
    ("r", [10.0, 0.5], "0.5"), ("r", [10.0, 0.0], "0.0"), ("r", [10.0, -10.0], "-10.0"), ("r", [10.0, np.inf], "inf"),
    ("r", [10.0, 2.0**53], "9007199254740992.0"), ("arrival", [0.0, 1.5], "1.5"), ("arrival", [0.0, np.nan], "nan"),
])
def test_a_fractional_or_out_of_range_requirement_or_arrival_is_refused_naming_the_job(field: str, values: list[float],
                                                                                        bad: str) -> None:
    arrays = {"arrival": np.array([0.0, 1.0]), "runtime": np.ones(2), "r": np.array([10.0, 20.0]),
              "job_id": np.array([7, 8])}
    arrays[field] = np.array(values)
    with pytest.raises(InputError, match=rf"JobTable\.{field} must be a whole number .* job 8 has {re.escape(bad)}"):
        JobTable.from_arrays(**arrays)


def test_whole_requirements_and_arrivals_of_any_size_below_two_to_the_53_are_kept() -> None:
    table = JobTable.from_arrays(arrival=np.array([-5.0, 2.0**52]), runtime=np.ones(2), r=np.array([1.0, 2.0**53 - 1]))
    assert table.r.tolist() == [1.0, 2.0**53 - 1] and table.arrival.tolist() == [-5.0, 2.0**52]
