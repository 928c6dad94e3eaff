"""What a supervisor sees at a decision (the elastic RL paper §3.2): state and job descriptors, candidate jobs.

**State** (:func:`state`): the running jobs' remaining work (their estimated run time less the time
they have run, at least 0), the time before a core frees up (0 with an idle core; otherwise the
least remaining estimate of a running job), the backlog (the waiting jobs' estimated work), the
idle cores, and each group's share of the waiting jobs.

**Job** (:func:`job_features`): interactive or batch, the group, the estimated run time. With the
wait reward (``wait=True``, issue 34) a job is also described by what its waiting costs: the wait
so far, its responsiveness now ``W = e / (e + w)`` (estimate ``e``, wait ``w``) and its *urgency*,
the ``W`` it loses per further minute of wait, ``60 W^2 / e``, at most 1 (:func:`urgency`).

**Candidates** (:func:`slots`): the paper lets any waiting job be the action; jobs that look the same
to the supervisor (same class, group and estimate) are one action to it. A decision offers, for
each class and group, the oldest waiting job and the one with the least estimated run time (the
oldest among equals): ``4 G`` *slots* in a fixed order, the action set of the Gymnasium
environment and of the SARSA learner. With median estimates every job of a class looks the same,
so the two coincide; with the oracle, the second lets a learner prefer short jobs. With the wait
reward a third kind, the most urgent job (the oldest among equals), makes ``6 G`` slots: the
shortest job may have lost its ``W`` already (a 0-second job that waited has ``W = 0``).

**Network inputs** (:func:`encode`): with the wait reward the state also carries what the waiting
costs (:func:`queue_cost`). Times as ``log1p(t / 60) / 10`` (about 0..1 from a second to a
year), cores as a fraction of the nominal pool, shares and flags as they are.
"""

from __future__ import annotations

import numpy as np

from broker.elastic.rewards import responsiveness
from broker.elastic.world import Decision, ElasticWorld

#: Slot kinds, in slot order (the paper's reward).
KINDS = ("oldest", "shortest")
#: Slot kinds with the wait reward.
WAIT_KINDS = ("oldest", "shortest", "urgent")


def n_slots(groups: int, wait: bool = False) -> int:
    """The number of slots of a world with ``groups`` groups (``wait``: with the urgent kind)."""
    return len(WAIT_KINDS if wait else KINDS) * 2 * groups


def urgency(estimate: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """``min(1, 60 W^2 / e)``: the responsiveness lost per further minute of wait.

    1 for a 0-second job that has not waited, 0 once it has.
    """
    estimate, wait = np.asarray(estimate, dtype=np.float64), np.asarray(wait, dtype=np.float64)
    w = responsiveness(estimate, wait)
    rate = np.divide(60.0 * w * w, estimate, out=np.where(w > 0, 1.0, 0.0), where=estimate > 0)
    return np.minimum(rate, 1.0)


def state(world: ElasticWorld, decision: Decision) -> np.ndarray:
    """``[running work, time to a free core, backlog, idle cores, share of each group among the waiting]``."""
    t, groups = decision.now, world.jobs.n_groups
    if world.running:
        jobs = np.fromiter(world.running.keys(), dtype=np.int64, count=len(world.running))
        starts = np.fromiter(world.running.values(), dtype=np.float64, count=len(world.running))
        remaining = np.maximum(world.est.of(jobs) - (t - starts), 0.0)
        running_work, to_free = float(remaining.sum()), (0.0 if decision.idle > 0 else float(remaining.min()))
    else:
        running_work, to_free = 0.0, 0.0
    queued = decision.queued
    backlog = float(world.est.of(queued).sum())
    shares = np.bincount(world.jobs.group[queued], minlength=groups) / max(len(queued), 1)
    return np.concatenate([[running_work, to_free, backlog, float(decision.idle)], shares])


def slots(world: ElasticWorld, decision: Decision, wait: bool = False) -> np.ndarray:
    """The candidate job of each slot (-1: empty): by kind, then class (batch first), then group.

    ``4 G`` slots, ``6 G`` with ``wait`` (the urgent kind).
    """
    groups = world.jobs.n_groups
    queued = decision.queued
    out = np.full(n_slots(groups, wait), -1, dtype=np.int64)
    if not len(queued):
        return out
    key = world.interactive[queued].astype(np.int64) * groups + world.jobs.group[queued]
    keys, first = np.unique(key, return_index=True)  # queued is in submission order: the first is the oldest
    out[keys] = queued[first]
    order = np.lexsort((queued, world.est.of(queued), key))  # by key, then estimate, then age
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    out[2 * groups + ordered[starts]] = queued[order[starts]]
    if wait:
        hurry = urgency(world.est.of(queued), decision.now - world.jobs.submit[queued])
        order = np.lexsort((queued, -hurry, key))  # by key, then the most urgent, then age
        ordered = key[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        out[4 * groups + ordered[starts]] = queued[order[starts]]
    return out


def job_features(world: ElasticWorld, jobs: np.ndarray, now: float | None = None) -> np.ndarray:
    """``[interactive, one-hot group, estimated run time]`` per job.

    With ``now`` (the wait reward) also ``[wait so far, W now, urgency]``.
    """
    groups = world.jobs.n_groups
    out = np.zeros((len(jobs), 2 + groups + (0 if now is None else 3)))
    out[:, 0] = world.interactive[jobs]
    out[np.arange(len(jobs)), 1 + world.jobs.group[jobs]] = 1.0
    estimate = world.est.of(jobs)
    out[:, 1 + groups] = estimate
    if now is not None:
        wait = now - world.jobs.submit[jobs]
        out[:, 2 + groups:] = np.column_stack([wait, responsiveness(estimate, wait), urgency(estimate, wait)])
    return out


def scale_time(seconds: np.ndarray | float) -> np.ndarray:
    """Times for a network: ``log1p(t / 60) / 10``."""
    return np.log1p(np.asarray(seconds, dtype=np.float64) / 60.0) / 10.0


def state_inputs(world: ElasticWorld, decision: Decision, wait: bool = False) -> np.ndarray:
    """The state as a network sees it: times scaled, idle cores over the nominal pool, the group shares.

    With ``wait`` (the wait reward) also what the waiting costs: the waiting jobs and the sum of their
    urgencies (the W they lose per minute), both over the nominal pool (:func:`queue_cost`).
    """
    raw = state(world, decision)
    head = np.concatenate([scale_time(raw[:3]), [raw[3] / float(world.pool.cores)], raw[4:]])
    return np.concatenate([head, queue_cost(world, decision)]) if wait else head


def queue_cost(world: ElasticWorld, decision: Decision) -> np.ndarray:
    """``[waiting jobs, sum of their urgencies]`` over the nominal pool's cores."""
    queued = decision.queued
    hurry = urgency(world.est.of(queued), decision.now - world.jobs.submit[queued]).sum() if len(queued) else 0.0
    return np.array([len(queued), hurry]) / float(world.pool.cores)


def encode(world: ElasticWorld, decision: Decision, jobs: np.ndarray, cores: np.ndarray | None = None,
           wait: bool = False) -> np.ndarray:
    """Network inputs of the actions ``(jobs[i], cores[i])`` at ``decision``: state, job, then pool size (elastic).

    With ``wait`` the job's wait descriptors follow its run time.
    """
    head = state_inputs(world, decision, wait)
    nominal = float(world.pool.cores)
    groups = world.jobs.n_groups
    job = job_features(world, jobs, decision.now if wait else None)
    job[:, 1 + groups] = scale_time(job[:, 1 + groups])
    if wait:
        job[:, 2 + groups] = scale_time(job[:, 2 + groups])
    rows = [np.broadcast_to(head, (len(jobs), len(head))), job]
    if cores is not None:
        rows.append(np.asarray(cores, dtype=np.float64).reshape(-1, 1) / nominal)
    return np.hstack(rows)


def input_size(groups: int, elastic: bool, wait: bool = False) -> int:
    """The length of :func:`encode`'s rows."""
    return 4 + groups + 2 + groups + 5 * int(wait) + int(elastic)


def levels(low: int, high: int, count: int) -> np.ndarray:
    """``count`` pool sizes spread evenly over ``[low, high]`` (rounded, distinct)."""
    return np.unique(np.round(np.linspace(low, high, max(count, 1))).astype(np.int64))
