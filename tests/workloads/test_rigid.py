"""The rigid view keeps each job's SWF number, so a replay's results join back to the trace."""

from __future__ import annotations

import re

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


# The rigid view on hand-made traces: every filter on its boundary, widths, estimates, counts.
#
# ``SPEC.md`` §5 and the module docstring: width = SWF field 5 (allocated) if > 0, else field 8 (requested);
# estimate = field 9 (requested time) if > 0, else the run time (and counted); removed and counted, in this order:
# unknown submit, unknown or negative run time (0 is kept), unknown or non-positive width, width > nodes.


REASONS = ("submit time unknown", "run time unknown or < 0", "processors unknown")
USED_RUN_TIME = "requested time unknown (run time used)"
REFUSAL = "RigidJobs need nodes >= 1 and non-negative run times and estimates"


def job(job_id: int | None, submit: int | None = 0, run: int | None = 10, alloc: int | None = 1,
        req_procs: int | None = None, req_time: int | None = 20) -> dict[str, int]:
    return {"job_id": job_id, "submit_time": submit, "run_time": run, "allocated_procs": alloc,
            "requested_procs": req_procs, "requested_time": req_time}


def removed(submit: int = 0, run: int = 0, procs: int = 0, wide: int = 0, nodes: int = 4) -> dict[str, int]:
    return dict(zip((*REASONS, f"wider than {nodes} nodes"), (submit, run, procs, wide), strict=True))


def test_width_falls_back_to_requested_processors_when_allocated_is_unknown_or_zero():
    trace = _trace([
        job(1, alloc=None, req_procs=2),  # allocated unknown: width = requested 2
        job(2, alloc=0, req_procs=3),  # allocated 0: width = requested 3
        job(3, alloc=4, req_procs=1),  # allocated known: width 4 (= nodes, kept)
    ])
    jobs, report = rigid_view(trace, nodes=4)
    assert jobs.ids.tolist() == [1, 2, 3]
    assert jobs.nodes.tolist() == [2, 3, 4]
    assert report.removed == removed()
    assert (report.read, report.kept) == (3, 3)


def test_each_filter_removes_on_its_boundary_and_counts_once():
    trace = _trace([
        job(1, submit=None),  # submit unknown
        job(2, run=None),  # run time unknown
        job(3, run=-3),  # run time negative
        job(4, run=0),  # run time 0: kept
        job(5, alloc=None, req_procs=None),  # width unknown
        job(6, alloc=0, req_procs=0),  # width 0
        job(7, alloc=-2, req_procs=0),  # allocated not > 0, requested 0: width 0
        job(8, alloc=5),  # 5 > 4 nodes
        job(9, alloc=4),  # 4 = nodes: kept
        job(10, submit=None, run=None, alloc=9),  # all three wrong: counted once, as submit
    ])
    jobs, report = rigid_view(trace, nodes=4)
    assert jobs.ids.tolist() == [4, 9]
    assert jobs.runtime.tolist() == [0.0, 10.0]
    assert report.removed == removed(submit=2, run=2, procs=3, wide=1)
    # read 10 = kept 2 + removed (2 + 2 + 3 + 1)
    assert (report.read, report.kept) == (10, 2)
    assert report.kept_flagged == {USED_RUN_TIME: 0}


def test_estimate_is_the_requested_time_if_positive_else_the_run_time_and_is_counted():
    trace = _trace([
        job(1, run=10, req_time=None),  # unknown: run time 10 stands in, counted
        job(2, run=11, req_time=0),  # 0 is not > 0: run time 11, counted
        job(3, run=12, req_time=1),  # 1 > 0: estimate 1
        job(4, run=13, req_time=30),  # estimate 30
        job(5, run=14, req_time=-4),  # negative: run time 14, counted
    ])
    jobs, report = rigid_view(trace, nodes=4)
    assert jobs.estimate.tolist() == [10.0, 11.0, 1.0, 30.0, 14.0]
    assert report.kept_flagged[USED_RUN_TIME] in (2, 3)  # jobs 2 and 5, and job 1 once the bug below is fixed
    assert (report.read, report.kept) == (5, 5)
    _, report = rigid_view(_trace([job(k, req_time=t) for k, t in enumerate([0, 1, 2, -4, 0], start=1)]), nodes=4)
    assert report.kept_flagged == {USED_RUN_TIME: 3}  # requested 0, -4, 0 are not > 0; 1 and 2 are


def test_an_unknown_requested_time_is_counted_where_the_run_time_stands_in():
    # the module docstring: where a log has no requested time, the run time stands in "and the jobs are counted";
    # an unknown (NA) one was used but not counted: NA > 0 is NA, and ~NA summed as nothing
    _, report = rigid_view(_trace([job(1, req_time=None), job(2, req_time=20)]), nodes=4)
    assert report.kept_flagged == {USED_RUN_TIME: 1}


def test_columns_have_the_float_and_integer_dtypes():
    jobs, _ = rigid_view(_trace([job(1, submit=5, run=7, alloc=2, req_time=9)]), nodes=4)
    assert (jobs.submit.dtype, jobs.runtime.dtype, jobs.estimate.dtype) == (np.float64,) * 3
    assert (jobs.nodes.dtype, jobs.ids.dtype) == (np.int64, np.int64)
    assert (jobs.submit.tolist(), jobs.runtime.tolist(), jobs.estimate.tolist()) == ([5.0], [7.0], [9.0])


def test_an_unknown_job_number_becomes_minus_one():
    jobs, report = rigid_view(_trace([job(None, submit=3), job(8, submit=4)]), nodes=4)
    assert jobs.ids.tolist() == [-1, 8]
    assert report.kept == 2


def test_jobs_submitted_at_the_same_time_keep_their_trace_order():
    # 17 jobs (enough for NumPy's unstable sort to reorder ties): job k submits at (k - 1) % 2
    trace = _trace([job(k, submit=(k - 1) % 2) for k in range(1, 18)])
    jobs, _ = rigid_view(trace, nodes=4)
    # submit 0: jobs 1, 3, ..., 17 in trace order; then submit 1: jobs 2, 4, ..., 16
    assert jobs.ids.tolist() == [*range(1, 18, 2), *range(2, 17, 2)]
    assert jobs.submit.tolist() == [0.0] * 9 + [1.0] * 8


def test_an_empty_trace_gives_an_empty_report_with_every_reason():
    jobs, report = rigid_view(_trace([]), nodes=2)
    assert len(jobs) == 0
    assert (report.read, report.kept) == (0, 0)
    assert report.removed == removed(nodes=2)
    assert report.kept_flagged == {USED_RUN_TIME: 0}


def test_rigid_jobs_default_ids_are_int64_positions():
    one = np.array([1.0, 2.0])
    assert RigidJobs(one, one, one, np.ones(2, dtype=np.int64)).ids.dtype == np.int64


@pytest.mark.parametrize(("nodes", "runtime", "estimate"), [
    ([0, 1], [1.0, 1.0], [1.0, 1.0]),  # a job on no node
    ([1, 1], [1.0, -1.0], [1.0, 1.0]),  # a negative run time alone
    ([1, 1], [1.0, 1.0], [-1.0, 1.0]),  # a negative estimate alone
], ids=["nodes", "runtime", "estimate"])
def test_rigid_jobs_refuse_each_bad_column_alone(nodes, runtime, estimate):
    with pytest.raises(InputError, match=f"^{re.escape(REFUSAL)}$"):
        RigidJobs(np.array([0.0, 1.0]), np.array(runtime), np.array(estimate), np.array(nodes))


def test_rigid_jobs_accept_zero_run_times_and_estimates():
    zero = np.zeros(1)
    jobs = RigidJobs(zero, zero, zero, np.ones(1, dtype=np.int64))
    assert (len(jobs), jobs.nodes.tolist()) == (1, [1])
