"""The job table and the filter helpers on hand-made inputs: dtypes, defaults, slices, messages (mutation testing).

``JobTable`` holds int64 ``job_id`` and ``user``, float64 ``arrival``, ``runtime`` and ``r``, sorted by (arrival,
job id); ``between(start, stop)`` keeps arrivals in ``[start, stop)``; ``filter_rows`` applies reasons in order, a
row counted by the first reason that removes it, an unknown value removing nothing; ``check_rows`` names the type
and the column that is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from workloads import schema
from workloads.errors import InputError
from workloads.jobs import JobTable, check_rows, filter_rows, job_view


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
