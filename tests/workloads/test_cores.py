"""The one-core view on hand-made traces: filters on their boundaries, groups, counts and refusals.

``SPEC.md`` §6 and the module docstring: removed and counted, in order, unknown submit and unknown or negative run
time (0 is kept); an unknown group becomes group -1 (counted); ``"expand"`` makes ``p`` tasks (unknown ``p``: one,
counted), ``"one"`` runs every job on one core and counts those wider than one processor. ``groups[code]`` is the
trace group of a code, codes numbered in increasing group id.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from workloads.cores import CoreJobs, cores_view
from workloads.errors import ConfigError, InputError

REMOVED = ("submit time unknown", "run time unknown or < 0")
UNKNOWN_GROUP = "with unknown group (one shared group)"
UNKNOWN_PROCS = "with unknown processors (one task)"
WIDE = "wider than one processor (run on one core)"


def _frame(**columns) -> pd.DataFrame:
    n = len(columns["job_id"])
    base = {"submit_time": [0] * n, "wait_time": [0] * n, "run_time": [10] * n, "allocated_procs": [1] * n,
            "requested_procs": [1] * n, "group_id": [7] * n}
    return pd.DataFrame({**base, **columns}, dtype="Int64")


def test_unknown_or_negative_run_times_are_removed_and_zero_is_kept() -> None:
    frame = _frame(job_id=[1, 2, 3, 4, 5], submit_time=[0, pd.NA, 2, 3, 4], run_time=[0, 5, pd.NA, -2, 1])
    jobs, report = cores_view(frame)
    # 2: submit unknown; 3: run unknown; 4: run -2 < 0; 1 (run 0) and 5 (run 1) kept
    assert jobs.ids.tolist() == [1, 5] and jobs.runtime.tolist() == [0.0, 1.0]
    assert report.removed == dict(zip(REMOVED, (1, 2), strict=True))
    assert (report.read, report.kept) == (5, 2)


def test_an_unknown_group_is_group_minus_one_coded_with_the_others_in_order() -> None:
    frame = _frame(job_id=[1, 2, 3, 4], group_id=[9, pd.NA, 3, pd.NA])
    jobs, report = cores_view(frame, parallel="one")
    # group ids -1, 3, 9 get codes 0, 1, 2
    assert jobs.groups == (-1, 3, 9)
    assert jobs.group.tolist() == [2, 0, 1, 0] and jobs.group.dtype == np.int64
    assert report.kept_flagged == {UNKNOWN_GROUP: 2, WIDE: 0}


def test_with_one_core_jobs_wider_than_one_processor_are_counted_from_two() -> None:
    # widths: 1 (allocated), 2 (allocated), 3 (requested, allocated 0), unknown, 1 (requested, allocated unknown)
    frame = _frame(job_id=[1, 2, 3, 4, 5], allocated_procs=[1, 2, 0, pd.NA, pd.NA],
                   requested_procs=[8, 1, 3, pd.NA, 1])
    jobs, report = cores_view(frame, parallel="one")
    assert jobs.ids.tolist() == [1, 2, 3, 4, 5]  # one core each
    assert report.kept_flagged == {UNKNOWN_GROUP: 0, WIDE: 2}  # jobs 2 and 3
    assert (report.read, report.kept) == (5, 5)
    assert report.removed == dict(zip(REMOVED, (0, 0), strict=True))


def test_an_unknown_mode_is_refused_with_its_name() -> None:
    with pytest.raises(ConfigError, match=r"^parallel must be 'expand' or 'one', got 'all'$"):
        cores_view(_frame(job_id=[1]), parallel="all")


def test_head_takes_the_first_n_jobs() -> None:
    jobs, _ = cores_view(_frame(job_id=[1, 2, 3], submit_time=[0, 10, 20]))
    assert jobs.head(2).ids.tolist() == [1, 2]
    assert jobs.head(1).submit.tolist() == [0.0]
    assert jobs.head(0).ids.tolist() == []


def test_default_ids_are_int64_positions() -> None:
    jobs = CoreJobs(submit=np.zeros(2), runtime=np.zeros(2), group=np.zeros(2, dtype=np.int64), native_wait=np.zeros(2))
    assert jobs.ids.tolist() == [0, 1] and jobs.ids.dtype == np.int64


def _core_jobs(group: list[int], groups: tuple[int, ...]) -> CoreJobs:
    n = len(group)
    return CoreJobs(submit=np.zeros(n), runtime=np.ones(n), group=np.array(group, dtype=np.int64),
                    native_wait=np.zeros(n), groups=groups)


@pytest.mark.parametrize(("group", "groups", "top"), [
    ([-1, 0], (5,), 0),  # a negative code alone, the top code in range
    ([0, 1], (5,), 0),  # code 1 = the number of groups (1): one past the last
    ([1], (), 0),  # no groups named: codes 0..0
    ([0, 3], (4, 5, 6), 2),  # three groups: codes 0..2
], ids=["negative", "one-past-the-end", "no-groups", "three-groups"])
def test_group_codes_out_of_range_are_refused_with_the_range(group, groups, top) -> None:
    with pytest.raises(InputError, match=f"^{re.escape(f'CoreJobs.group codes must lie in 0..{top}')}$"):
        _core_jobs(group, groups)


def test_group_codes_up_to_the_last_group_are_accepted() -> None:
    assert _core_jobs([0, 0], ()).n_groups == 1
    assert _core_jobs([0, 2], (4, 5, 6)).group.tolist() == [0, 2]


def test_an_unknown_job_number_is_minus_one_as_in_the_other_views() -> None:
    # rigid_view and job_view turn an unknown job number into -1; cores_view converted it to int64 as it was
    # and escaped as pandas' own ValueError (read_swf gives such a row for a line starting with -1)
    jobs, _ = cores_view(_frame(job_id=[pd.NA, 2]))
    assert jobs.ids.tolist() == [-1, 2]


# --- processor counts, dtypes, order, origin and counts, by hand ---------------------------------------------------


def test_processor_counts_fall_back_to_the_request_and_at_least_one_task() -> None:
    # 1: none allocated, 3 requested -> 3 tasks; 2: 1 allocated (4 requested) -> 1 task;
    # 3: neither known -> 1 task (counted); 4: none allocated nor requested -> still 1 task
    frame = _frame(job_id=[1, 2, 3, 4], submit_time=[0, 1, 2, 3], wait_time=[5, 0, 0, 0],
                   allocated_procs=[0, 1, pd.NA, 0], requested_procs=[3, 4, pd.NA, 0])
    jobs, report = cores_view(frame)
    assert jobs.ids.tolist() == [1, 1, 1, 2, 3, 4] and jobs.native_wait.tolist() == [5.0, 5.0, 5.0, 0.0, 0.0, 0.0]
    assert (report.read, report.kept, len(jobs)) == (4, 4, 6)  # the report counts jobs; the view holds tasks
    assert report.kept_flagged == {"with unknown group (one shared group)": 0, "with unknown processors (one task)": 1}
    # times are float seconds even from the integer columns of a trace (no NA among the waits here)
    assert jobs.submit.dtype == jobs.runtime.dtype == jobs.native_wait.dtype == np.float64
    assert jobs.origin == 0.0 and cores_view(frame, origin=5)[0].origin == 5.0


def test_jobs_submitted_together_keep_the_logs_order() -> None:
    # 80 jobs alternately at 5 and 0: a stable sort puts 2, 4, ..., 80 first, then 1, 3, ..., 79
    ids = list(range(1, 81))
    jobs, _ = cores_view(_frame(job_id=ids, submit_time=[5, 0] * 40), parallel="one")
    assert jobs.ids.tolist() == ids[1::2] + ids[0::2]


def test_slices_keep_the_origin() -> None:
    jobs, _ = cores_view(_frame(job_id=[1, 2, 3], submit_time=[0, 10, 20]), origin=1_000_000_000.0)
    assert jobs.head(2).origin == jobs.slice(1, 3).origin == jobs.window(5.0, 10.0).origin == 1_000_000_000.0
    assert jobs.window(5.0, 10.0).ids.tolist() == [2]


def test_a_negative_run_time_is_refused() -> None:
    with pytest.raises(InputError, match=r"^CoreJobs need non-negative run times$"):
        CoreJobs(submit=np.zeros(2), runtime=np.array([5.0, -1.0]), group=np.zeros(2, dtype=np.int64),
                 native_wait=np.zeros(2))
