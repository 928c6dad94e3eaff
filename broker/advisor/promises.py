"""Scheduler promises (the paper's §5.3): each job's start as conservative backfilling promised it at submission.

The paper has no scheduler of its logs, so it replays them through conservative backfilling and
adds each job's promise to the features. So do we: the trace's jobs (:func:`workloads.rigid.rigid_view`
on a machine of the log's size, requested times as the estimates) go through the hybrid site with
no cloud (:func:`broker.hybrid.world.replay`, conservative), and a job's feature is its *promised
wait*, promised start less submit time. The promise is known at submission: it depends on the jobs
submitted before it and on the run times of the jobs that had ended by then in the replay, never
on later ones. So the replay stops at the last job asked for.

A promise is the replay's, not the real machine's: the real log's waits come from its own scheduler
and its own run of events. :func:`promised_waits` joins jobs by their SWF job number (a number that
is not unique among the replayed jobs, or a job the replay does not have, is an error);
:func:`with_promises` joins the advisor's frame by the trace's rows instead, so that a log whose
job numbers repeat or are unknown (real ones have both) still gets its promises.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from broker.advisor.features import replayable_jobs
from broker.hybrid.world import replay
from workloads.errors import InputError
from workloads.rigid import rigid_view

log = logging.getLogger(__name__)

#: The feature's column in the advisor's frame.
PROMISE = "promised_wait_s"


def promised_waits(trace: pd.DataFrame, job_ids: np.ndarray, *, max_procs: int) -> np.ndarray:
    """The promised wait (s) of each of ``job_ids`` (SWF job numbers) on a ``max_procs``-node cluster."""
    jobs, _ = rigid_view(trace, nodes=max_procs)
    wanted = np.asarray(job_ids, dtype=np.int64)
    if not len(wanted):
        return np.empty(0)
    at = _positions(jobs.ids, wanted)
    need = int(at.max()) + 1
    log.info("conservative replay of %d jobs for the promises of %d", need, len(wanted))
    schedule, _ = replay(jobs.head(need), max_procs, "conservative")
    return schedule.promised[at] - jobs.submit[at]


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` is in ``ids``; refused when one is absent or appears more than once."""
    twice = pd.Index(ids).duplicated(keep=False)
    clash = np.intersect1d(wanted, ids[twice])
    if len(clash):
        raise InputError(f"job number {clash[0]} appears {int((ids == clash[0]).sum())} times in the trace: "
                         "promises join by job number, which must be unique")
    single = np.flatnonzero(~twice)
    found = pd.Index(ids[single]).get_indexer(wanted)
    if (found < 0).any():
        missing = int(wanted[np.flatnonzero(found < 0)[0]])
        raise InputError(f"job {missing} has no promise: the conservative replay does not have it")
    return single[found]


def with_promises(frame: pd.DataFrame, trace: pd.DataFrame, max_procs: int, rows: int) -> pd.DataFrame:
    """``frame`` with the promised wait of its first ``rows`` jobs (:data:`PROMISE`).

    The other rows' promises are NaN: the conservative replay stops at the last job asked for.
    """
    column = np.full(len(frame), np.nan)
    replayable, _ = replayable_jobs(trace, max_procs)  # the frame's rows, in its order
    by_row = trace.reset_index(drop=True)
    by_row = by_row.assign(job_id=pd.Series(np.arange(len(by_row)), dtype="Int64"))
    rows_of_frame = trace.index.get_indexer(replayable.index)
    column[:rows] = promised_waits(by_row, rows_of_frame[:rows], max_procs=max_procs)
    return frame.assign(**{PROMISE: column})
