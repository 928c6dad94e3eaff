"""What a supervisor sees at a decision (the elastic RL paper §3.2): state and job descriptors, candidate jobs.

**State** (:func:`state`): the running jobs' remaining work (their estimated run time less the time
they have run, at least 0), the time before a core frees up (0 with an idle core; otherwise the
least remaining estimate of a running job), the backlog (the waiting jobs' estimated work), the
idle cores, and each group's share of the waiting jobs.

**Job** (:func:`job_features`): interactive or batch, the group, the estimated run time.

**Candidates** (:func:`slots`): the paper lets any waiting job be the action; jobs that look the same
to the supervisor (same class, group and estimate) are one action to it. A decision offers, for
each class and group, the oldest waiting job and the one with the least estimated run time (the
oldest among equals): ``4 G`` *slots* in a fixed order, the action set of the Gymnasium
environment and of the SARSA learner. With median estimates every job of a class looks the same,
so the two coincide; with the oracle, the second lets a learner prefer short jobs.

**Network inputs** (:func:`encode`): times as ``log1p(t / 60) / 10`` (about 0..1 from a second to a
year), cores as a fraction of the nominal pool, shares and flags as they are.
"""

from __future__ import annotations

import numpy as np

from broker.elastic.world import Decision, ElasticWorld

#: Slot kinds, in slot order.
KINDS = ("oldest", "shortest")


def n_slots(groups: int) -> int:
    """The number of slots of a world with ``groups`` groups."""
    return len(KINDS) * 2 * groups


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


def slots(world: ElasticWorld, decision: Decision) -> np.ndarray:
    """The candidate job of each slot (-1: empty), ``4 G`` of them: by kind, then class (batch first), then group."""
    groups = world.jobs.n_groups
    queued = decision.queued
    out = np.full(n_slots(groups), -1, dtype=np.int64)
    if not len(queued):
        return out
    key = world.interactive[queued].astype(np.int64) * groups + world.jobs.group[queued]
    keys, first = np.unique(key, return_index=True)  # queued is in submission order: the first is the oldest
    out[keys] = queued[first]
    order = np.lexsort((queued, world.est.of(queued), key))  # by key, then estimate, then age
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    out[2 * groups + ordered[starts]] = queued[order[starts]]
    return out


def job_features(world: ElasticWorld, jobs: np.ndarray) -> np.ndarray:
    """``[interactive, one-hot group, estimated run time]`` per job."""
    groups = world.jobs.n_groups
    out = np.zeros((len(jobs), 2 + groups))
    out[:, 0] = world.interactive[jobs]
    out[np.arange(len(jobs)), 1 + world.jobs.group[jobs]] = 1.0
    out[:, -1] = world.est.of(jobs)
    return out


def scale_time(seconds: np.ndarray | float) -> np.ndarray:
    """Times for a network: ``log1p(t / 60) / 10``."""
    return np.log1p(np.asarray(seconds, dtype=np.float64) / 60.0) / 10.0


def encode(world: ElasticWorld, decision: Decision, jobs: np.ndarray, cores: np.ndarray | None = None) -> np.ndarray:
    """Network inputs of the actions ``(jobs[i], cores[i])`` at ``decision``: state, job, then pool size (elastic)."""
    raw = state(world, decision)
    nominal = float(world.pool.cores)
    head = np.concatenate([scale_time(raw[:3]), [raw[3] / nominal], raw[4:]])
    job = job_features(world, jobs)
    job[:, -1] = scale_time(job[:, -1])
    rows = [np.broadcast_to(head, (len(jobs), len(head))), job]
    if cores is not None:
        rows.append(np.asarray(cores, dtype=np.float64).reshape(-1, 1) / nominal)
    return np.hstack(rows)


def input_size(groups: int, elastic: bool) -> int:
    """The length of :func:`encode`'s rows."""
    return 4 + groups + 2 + groups + int(elastic)


def levels(low: int, high: int, count: int) -> np.ndarray:
    """``count`` pool sizes spread evenly over ``[low, high]`` (rounded, distinct)."""
    return np.unique(np.round(np.linspace(low, high, max(count, 1))).astype(np.int64))
