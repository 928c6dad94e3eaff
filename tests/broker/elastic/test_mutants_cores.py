"""The one-core view by hand where the first tests leave room: processor counts, dtypes, order, origin, counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workloads.cores import CoreJobs, cores_view
from workloads.errors import InputError


def _frame(**columns) -> pd.DataFrame:
    n = len(columns["job_id"])
    base = {"submit_time": [0] * n, "wait_time": [0] * n, "run_time": [10] * n, "allocated_procs": [1] * n,
            "requested_procs": [1] * n, "group_id": [7] * n}
    return pd.DataFrame({**base, **columns}, dtype="Int64")


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
