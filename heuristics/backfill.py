"""Backfilling on a cluster of M homogeneous nodes: EASY and conservative (``SPEC.md`` §5).

Rigid jobs ask for ``nodes`` nodes and give a requested time (``estimate``) that the scheduler
uses as their run time; the actual ``runtime`` stays hidden until a job ends (a job running past
its estimate is treated as ending any moment now). Jobs are queued in submission order.

*EASY* starts queued jobs in order while they fit; the first that does not gets a reservation at
the *shadow time*, when enough running jobs will (by their estimates) have ended, and a later job
may start now only if it fits and either ends (by its estimate) before the shadow time or uses no
more than the nodes the head will leave spare then. *Conservative* gives every job, when it
arrives, the earliest reservation that fits the profile of free nodes left by the running jobs and
the earlier reservations: its *promised start*. When a job ends early the reservations are
compressed in queue order, each moved to its earliest fit but never later than it was, so (with
estimates that are not below the run times) no job starts after its promise. The scheduler only
works at submissions and completions: nothing else can change a decision.

:class:`Cluster` is the state (running jobs, the queue) and one scheduling pass; the hybrid site
world (:mod:`broker.hybrid.world`) drives it event by event and may take waiting jobs elsewhere
(:meth:`Cluster.take`); with a cloud cap of 0 that world is the plain replay of the cluster alone.
"""

from __future__ import annotations

import copy
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Literal

import numpy as np

from workloads.errors import ConfigError, InputError
from workloads.rigid import RigidJobs

Discipline = Literal["easy", "conservative"]


@dataclass(slots=True)
class Cluster:
    """M nodes, the jobs running on them and the queue (see the module docstring)."""

    m: int
    jobs: RigidJobs
    discipline: Discipline = "easy"
    free: int = 0
    queue: list[int] = field(default_factory=list)
    running: dict[int, float] = field(default_factory=dict)  # job -> estimated end
    promised: dict[int, float] = field(default_factory=dict)
    head_reservation: dict[int, float] = field(default_factory=dict)
    reserved: dict[int, float] = field(default_factory=dict)
    _width: list[int] = field(default_factory=list, init=False, repr=False)
    _est: list[float] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.m < 1:
            raise ConfigError(f"a cluster needs m >= 1 nodes, got {self.m}")
        if self.discipline not in ("easy", "conservative"):
            raise ConfigError(f"discipline must be 'easy' or 'conservative', got {self.discipline!r}")
        self.free = self.m
        self._width, self._est = self.jobs.nodes.tolist(), self.jobs.estimate.tolist()  # plain lists: hot loops
        too_wide = np.flatnonzero(self.jobs.nodes > self.m)
        if len(too_wide):
            i = int(too_wide[0])
            raise InputError(f"job {i} asks for {self.jobs.nodes[i]} nodes, the cluster has {self.m}")

    def copy(self) -> Cluster:
        """An independent copy of the state (the job list is shared, never changed)."""
        twin = copy.copy(self)
        twin.queue, twin.running, twin.promised = list(self.queue), dict(self.running), dict(self.promised)
        twin.head_reservation, twin.reserved = dict(self.head_reservation), dict(self.reserved)
        return twin

    def submit(self, job: int, now: float) -> None:
        """Queue ``job`` (at its submission)."""
        self.queue.append(job)
        if self.discipline == "conservative":
            profile = self._profile(now)
            start = profile.earliest(self._width[job], self._est[job])
            self.reserved[job] = self.promised[job] = start

    def finish(self, job: int) -> None:
        """``job`` ended: free its nodes."""
        del self.running[job]
        self.free += self._width[job]

    def take(self, job: int) -> None:
        """Remove a waiting job from the queue (it runs elsewhere)."""
        self.queue.remove(job)
        self.reserved.pop(job, None)

    def schedule(self, now: float) -> list[int]:
        """Start what the discipline allows now; returns the started jobs in start order."""
        if self.discipline == "easy":
            return self._easy(now)
        self._compress(now)
        width = self._width
        # a job running past its estimate still holds its nodes: the profile counts them free from now
        return [self._start(j, now) for j in list(self.queue) if self.reserved[j] <= now and width[j] <= self.free]

    def _start(self, job: int, now: float) -> int:
        self.queue.remove(job)
        return self._launch(job, now)

    def _launch(self, job: int, now: float) -> int:
        self.reserved.pop(job, None)
        self.free -= self._width[job]
        self.running[job] = now + self._est[job]
        return job

    def _easy(self, now: float) -> list[int]:
        width, est, queue = self._width, self._est, self.queue
        started = []
        while queue and width[queue[0]] <= self.free:
            started.append(self._start(queue[0], now))
        if not queue or (self.free == 0 and queue[0] in self.head_reservation):
            return started  # nothing fits on no free node; the head's reservation is already known
        head = queue[0]
        shadow, extra = self._shadow(width[head], now)
        self.head_reservation.setdefault(head, shadow)
        if self.free == 0:
            return started  # no job can backfill on no free node
        keep = [head]
        for job in queue[1:]:
            p = width[job]
            if p <= self.free:
                in_time = now + est[job] <= shadow
                if in_time or p <= extra:
                    started.append(self._launch(job, now))
                    if not in_time:
                        extra -= p
                    continue
            keep.append(job)
        self.queue[:] = keep
        return started

    def _shadow(self, need: int, now: float) -> tuple[float, int]:
        """When the running jobs (by their estimates) leave ``need`` nodes free, and how many spare then."""
        avail, shadow, width = self.free, None, self._width
        for job, estimated in sorted(self.running.items(), key=itemgetter(1)):
            end = estimated if estimated >= now else now  # max(estimated, now); clamping keeps the order
            if shadow is not None and end > shadow:
                break
            avail += width[job]
            if shadow is None and avail >= need:
                shadow = end  # jobs ending at the same instant still add spare nodes
        if shadow is not None:
            return shadow, avail - need
        raise RuntimeError(f"no time at which {need} nodes are free on a {self.m}-node cluster")

    def _profile(self, now: float) -> _Profile:
        """Free nodes over time: the running jobs (by their estimates) and the current reservations."""
        profile = _Profile(now, self.free)
        for job, end in self.running.items():
            profile.release(max(end, now), self._width[job])
        for job, start in self.reserved.items():
            begin = max(start, now)
            profile.reserve(begin, begin + self._est[job], self._width[job])
        return profile

    def _compress(self, now: float) -> None:
        """Move each reservation, in queue order, to its earliest fit (never later unless it no longer fits)."""
        profile = self._profile(now)
        for job in self.queue:
            p, d = self._width[job], self._est[job]
            old = max(self.reserved[job], now)
            profile.reserve(old, old + d, -p)
            start = profile.earliest(p, d)
            profile.reserve(start, start + d, p)
            self.reserved[job] = start


class _Profile:
    """Free nodes over time as a step function: ``free[k]`` from ``times[k]`` to ``times[k+1]``."""

    def __init__(self, now: float, free: int) -> None:
        self.times, self.free = [now], [free]

    def _split(self, t: float) -> int:
        k = bisect_right(self.times, t) - 1
        if self.times[k] != t:
            self.times.insert(k + 1, t)
            self.free.insert(k + 1, self.free[k])
            k += 1
        return k

    def release(self, t: float, nodes: int) -> None:
        k = self._split(t)
        for i in range(k, len(self.free)):
            self.free[i] += nodes

    def reserve(self, start: float, end: float, nodes: int) -> None:
        a = self._split(start)
        b = self._split(end) if end > start else a
        for i in range(a, b):
            self.free[i] -= nodes

    def earliest(self, nodes: int, duration: float) -> float:
        times, free = self.times, self.free
        for k, t in enumerate(times):
            if free[k] < nodes:
                continue
            end, ok, i = t + duration, True, k
            while i + 1 < len(times) and times[i + 1] < end:
                i += 1
                if free[i] < nodes:
                    ok = False
                    break
            if ok:
                return t
        return math.inf
