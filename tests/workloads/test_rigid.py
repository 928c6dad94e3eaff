"""The rigid view keeps each job's SWF number, so a replay's results join back to the trace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workloads.errors import InputError
from workloads.rigid import RigidJobs, rigid_view
from workloads.schema import COLUMN_NAMES, DTYPES


def _trace(rows: list[dict[str, int]]) -> pd.DataFrame:
    frame = pd.DataFrame([{**dict.fromkeys(COLUMN_NAMES, pd.NA), **row} for row in rows], columns=list(COLUMN_NAMES))
    return frame.astype(DTYPES)


def test_ids_are_the_trace_job_numbers_in_submission_order():
    trace = _trace([
        {"job_id": 7, "submit_time": 50, "run_time": 10, "allocated_procs": 2, "requested_time": 20},
        {"job_id": 3, "submit_time": 10, "run_time": 10, "allocated_procs": 9, "requested_time": 20},  # too wide
        {"job_id": 4, "submit_time": 10, "run_time": 10, "allocated_procs": 1, "requested_time": 20},
        {"job_id": 9, "submit_time": 30, "run_time": 10, "allocated_procs": 1, "requested_time": 20},
    ])
    jobs, report = rigid_view(trace, nodes=4)
    assert jobs.ids.tolist() == [4, 9, 7] and jobs.submit.tolist() == [10, 30, 50]
    assert report.removed == {"submit time unknown": 0, "run time unknown or < 0": 0, "processors unknown": 0,
                              "wider than 4 nodes": 1}
    assert jobs.head(2).ids.tolist() == [4, 9]


def test_ids_default_to_positions_and_must_match_the_rows():
    one = np.array([1.0, 2.0, 3.0])
    assert RigidJobs(one, one, one, np.ones(3, dtype=np.int64)).ids.tolist() == [0, 1, 2]
    with pytest.raises(InputError, match=r"RigidJobs\.ids has 2 rows, expected 3"):
        RigidJobs(one, one, one, np.ones(3, dtype=np.int64), np.array([5, 6]))
