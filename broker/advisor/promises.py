"""Scheduler promises (the paper's §5.3): each job's start as conservative backfilling promised it at submission.

The paper has no scheduler of its logs, so it replays them through conservative backfilling and
adds each job's promise to the features. So do we: the trace's jobs (:func:`workloads.rigid.rigid_view`
on a machine of the log's size, requested times as the estimates) go through the hybrid site with
no cloud (:func:`broker.hybrid.world.replay`, conservative), and a job's feature is its *promised
wait*, promised start less submit time. The promise is known at submission: it depends on the jobs
submitted before it and on the run times of the jobs that had ended by then in the replay, never
on later ones. So the replay stops at the last job asked for.

The same replay gives each job a wait of its own, start less submit time (:data:`REPLAY_WAIT`): the
label the paper's Table 5 is on ("replaying them in a scheduler simulator for testing the impact of
scheduling promises", §5.1). :func:`with_replay_label` makes it the frame's wait, known when the job
started in the replay; the features stay the log's.

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
from workloads.errors import ConfigError, InputError
from workloads.rigid import rigid_view

log = logging.getLogger(__name__)

#: The feature's column in the advisor's frame.
PROMISE = "promised_wait_s"
#: The replay's own wait (start less submit, s) in the advisor's frame.
REPLAY_WAIT = "replay_wait_s"


def promised_waits(trace: pd.DataFrame, job_ids: np.ndarray, *, max_procs: int) -> np.ndarray:
    """The promised wait (s) of each of ``job_ids`` (SWF job numbers) on a ``max_procs``-node cluster."""
    return replayed_waits(trace, job_ids, max_procs=max_procs)[0]


def replayed_waits(trace: pd.DataFrame, job_ids: np.ndarray, *, max_procs: int) -> tuple[np.ndarray, np.ndarray]:
    """The promised wait and the replay's wait (s) of each of ``job_ids``, from one conservative replay."""
    jobs, _ = rigid_view(trace, nodes=max_procs)
    wanted = np.asarray(job_ids, dtype=np.int64)
    if not len(wanted):
        return np.empty(0), np.empty(0)
    at = _positions(jobs.ids, wanted)
    need = int(at.max()) + 1
    log.info("conservative replay of %d jobs for the promises of %d", need, len(wanted))
    schedule, _ = replay(jobs.head(need), max_procs, "conservative")
    return schedule.promised[at] - jobs.submit[at], schedule.start[at] - jobs.submit[at]


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
    """``frame`` with the promised wait (:data:`PROMISE`) and the replay's wait (:data:`REPLAY_WAIT`) of its first jobs.

    Both for the first ``rows`` jobs; the other rows' are NaN: the conservative replay stops at the last job asked for.
    A job cancelled while queued (the frame's ``cancelled`` column) is not in the replay (it has no run
    time to replay): its promise and replay wait are NaN too.
    """
    promised, waited = np.full(len(frame), np.nan), np.full(len(frame), np.nan)
    gone = frame["cancelled"].to_numpy(dtype=bool) if "cancelled" in frame else np.zeros(len(frame), dtype=bool)
    replayable, _ = replayable_jobs(trace, max_procs, "keep" if gone.any() else "drop")  # the frame's rows, in order
    if len(replayable) != len(frame):
        raise ConfigError(f"the frame has {len(frame):,} rows where the trace replays {len(replayable):,} jobs: "
                          "give the frame submission_features made of this trace")
    by_row = trace.reset_index(drop=True)
    by_row = by_row.assign(job_id=pd.Series(np.arange(len(by_row)), dtype="Int64"))
    rows_of_frame = trace.index.get_indexer(replayable.index)
    asked = np.flatnonzero(~gone[:rows])
    promised[asked], waited[asked] = replayed_waits(by_row, rows_of_frame[asked], max_procs=max_procs)
    return frame.assign(**{PROMISE: promised, REPLAY_WAIT: waited})


def with_replay_label(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` whose wait is the replay's (:data:`REPLAY_WAIT`), known when the job started in the replay.

    The log's wait is kept as ``log_wait_s``. Rows without a replay wait (past the last row replayed) keep
    a NaN wait, never known to any query.
    """
    if REPLAY_WAIT not in frame:
        raise ConfigError(f"the replay's waits need the frame's {REPLAY_WAIT!r} column (with_promises)")
    waited = frame[REPLAY_WAIT].to_numpy(dtype=np.float64)
    return frame.assign(log_wait_s=frame["wait_s"], wait_s=waited, wait_known_at=frame["submit_s"] + waited)
