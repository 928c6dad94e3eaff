"""The cloud cluster's state in groups: each job's fixed timeline, the waiting jobs, the instances, the counts.

:class:`~broker.cloudcluster.world.ClusterWorld` holds one of each and runs the events; these small
classes keep their own books (the world's copy copies each by its attributes,
:mod:`broker.sim.copying`):

- :class:`Timelines`: what a run reads of each job and never changes (submission, upload, run,
  download, pool, user).
- :class:`Waiting`: the jobs waiting for an instance, first come first served in each pool.
- :class:`Instances`: the instances hired so far, by id (hire order), and the idle ones of each
  pool with the most paid time left first.
- :class:`Usage`: instances active and hired now and, for a keep-alive rule that reads the load,
  their integrals over time.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from broker.cloudcluster.terms import CloudTerms
from workloads.htc import HtcJobs


@dataclass(frozen=True, slots=True)
class Timelines:
    """Per job (by index), what a run reads and never changes: times in seconds, the pool and the user."""

    submit: tuple[float, ...]
    upload: tuple[float, ...]
    runtime: tuple[float, ...]
    download: tuple[float, ...]
    pool: tuple[int, ...]
    user: tuple[int, ...]

    @classmethod
    def of(cls, jobs: HtcJobs, terms: CloudTerms, pools: np.ndarray) -> Timelines:
        """The timelines of ``jobs`` at ``terms``' bandwidths; ``pools`` is each job's pool."""
        return cls(tuple(jobs.submit.tolist()), tuple((jobs.input_bytes / terms.upload_bps).tolist()),
                   tuple(jobs.runtime.tolist()), tuple((jobs.output_bytes / terms.download_bps).tolist()),
                   tuple(pools.tolist()), tuple(jobs.user.tolist()))


class Waiting:
    """The jobs waiting for an instance, in arrival order in each pool.

    Attributes
    ----------
    queue : dict of int to list of int
        Per pool, its jobs from ``head[pool]`` on wait (the list is emptied once none does).
    pools : set of int
        The pools with a waiting job.
    count : int
        Jobs waiting in all pools.
    """

    __slots__ = ("count", "head", "pools", "queue")

    def __init__(self) -> None:
        self.queue: dict[int, list[int]] = {}
        self.head: dict[int, int] = {}
        self.pools: set[int] = set()
        self.count = 0

    def add(self, pool: int, job: int) -> None:
        """``job`` waits at the end of ``pool``'s queue."""
        self.queue.setdefault(pool, []).append(job)
        self.head.setdefault(pool, 0)
        self.count += 1
        self.pools.add(pool)

    def pop(self, pool: int) -> int | None:
        """The job at the head of ``pool``'s queue, taken out of it (``None``: no job waits there)."""
        q = self.queue.get(pool)
        if q is None or self.head[pool] >= len(q):
            return None
        job = q[self.head[pool]]
        self.head[pool] += 1
        self.count -= 1
        if self.head[pool] == len(q):
            self.pools.discard(pool)
            self.queue[pool], self.head[pool] = [], 0
        return job

    def uncovered(self, booting: dict[int, int]) -> list[tuple[int, int, int]]:
        """Per pool, ``(pool, position, job)`` of its first waiting job no booting instance will take."""
        out = []
        for pool in self.pools:
            first = self.head[pool] + booting.get(pool, 0)
            if first < len(self.queue[pool]):
                out.append((pool, first, self.queue[pool][first]))
        return out


class Instances:
    """The instances hired so far, by id (hire order), and the idle ones of each pool.

    Per instance: its ``pool``, the ``starter`` (the user whose waiting job made it start), when it
    was ``hired_at``, its billing ``anchor`` and when it was ``ready`` (s), whether it is
    ``released``, the job it is ``busy`` with (-1: idle or booting), the jobs it ``hosted`` and
    their execution time ``exec_s``, since when it is idle (``idle_since``, nan when not) and a
    ``version`` that every change of state moves on, so a pending event about an older state is
    ignored.

    Attributes
    ----------
    booting : dict of int to int
        Per pool, its instances still booting.
    n_idle : int
        Instances idle now.
    """

    __slots__ = ("anchor", "booting", "busy", "exec_s", "hired_at", "hosted", "idle_heaps", "idle_since", "n_idle",
                 "pool", "ready", "released", "starter", "version")

    def __init__(self) -> None:
        self.pool: list[int] = []
        self.starter: list[int] = []
        self.hired_at: list[float] = []
        self.anchor: list[float] = []
        self.ready: list[float] = []
        self.released: list[bool] = []
        self.busy: list[int] = []
        self.hosted: list[int] = []
        self.exec_s: list[float] = []
        self.idle_since: list[float] = []
        self.version: list[int] = []
        self.booting: dict[int, int] = {}
        # pool -> heap of (-period end, instance, version): the idle instance with the most paid time left first
        self.idle_heaps: dict[int, list[tuple[float, int, int]]] = {}
        self.n_idle = 0

    def __len__(self) -> int:
        return len(self.pool)

    def hire(self, t: float, pool: int, user: int, anchor: float) -> int:
        """A new instance of ``pool``, hired at ``t`` for ``user``'s job and billed from ``anchor``; its id."""
        inst = len(self.pool)
        self.pool.append(pool)
        self.starter.append(user)
        self.hired_at.append(t)
        self.anchor.append(anchor)
        self.ready.append(math.nan)
        self.released.append(False)
        self.busy.append(-1)
        self.hosted.append(0)
        self.exec_s.append(0.0)
        self.idle_since.append(math.nan)
        self.version.append(0)
        self.booting[pool] = self.booting.get(pool, 0) + 1
        return inst

    def booted(self, inst: int, t: float) -> None:
        """``inst`` is ready at ``t``."""
        self.booting[self.pool[inst]] -= 1
        self.ready[inst] = t

    def serve(self, inst: int, job: int, runtime: float) -> None:
        """``inst`` (idle or just booted) takes ``job`` of ``runtime`` seconds."""
        if not math.isnan(self.idle_since[inst]):
            self.n_idle -= 1
            self.idle_since[inst] = math.nan
        self.busy[inst] = job
        self.version[inst] += 1
        self.hosted[inst] += 1
        self.exec_s[inst] += runtime

    def free(self, inst: int) -> None:
        """``inst``'s job is done."""
        self.busy[inst] = -1
        self.version[inst] += 1

    def idle(self, inst: int, t: float, end: float) -> None:
        """``inst`` is idle from ``t``, paid until ``end``: it joins its pool's idle instances."""
        self.idle_since[inst] = t
        self.n_idle += 1
        self.version[inst] += 1
        self.push_idle(inst, end)

    def push_idle(self, inst: int, end: float) -> None:
        """List idle ``inst`` as paid until ``end`` (again, when kept another period)."""
        heapq.heappush(self.idle_heaps.setdefault(self.pool[inst], []), (-end, inst, self.version[inst]))

    def take_idle(self, pool: int) -> int | None:
        """The idle instance of ``pool`` with the most paid time left (the oldest among equals), or ``None``."""
        heap = self.idle_heaps.get(pool)
        while heap:
            _, inst, version = heapq.heappop(heap)
            if version == self.version[inst] and self.busy[inst] < 0 and not self.released[inst]:
                return inst
        return None

    def release(self, inst: int) -> None:
        """Idle ``inst`` is released."""
        self.released[inst] = True
        self.n_idle -= 1
        self.version[inst] += 1


class Usage:
    """Instances active and hired now and, when ``track``, their integrals at each change.

    Attributes
    ----------
    active, alive : int
        Instances running a job, and hired (booting, active or idle), now.
    times, active_s, hired_s : list of float
        The instants the counts changed at and the active and hired instance-seconds from 0 to each
        (kept only for a rule that reads the load).
    """

    __slots__ = ("active", "active_s", "alive", "hired_s", "times", "track")

    def __init__(self, track: bool) -> None:
        self.active = self.alive = 0
        self.track = track
        self.times, self.active_s, self.hired_s = [0.0], [0.0], [0.0]

    def count(self, t: float, d_active: int, d_alive: int) -> None:
        """Advance the integrals to ``t`` (when tracked), then change the active and hired counts."""
        last = self.times[-1]
        if self.track and t > last:
            self.active_s.append(self.active_s[-1] + self.active * (t - last))
            self.hired_s.append(self.hired_s[-1] + self.alive * (t - last))
            self.times.append(t)
        self.active += d_active
        self.alive += d_alive

    def load(self, t: float, window: float) -> float:
        """Active over hired instance-time in ``[t - window, t]`` (0 with none hired)."""
        a1, h1 = self.integrals(t)
        a0, h0 = self.integrals(t - window)
        return (a1 - a0) / (h1 - h0) if h1 > h0 else 0.0

    def integrals(self, t: float) -> tuple[float, float]:
        """Active and hired instance-seconds from time 0 to ``t`` (``t`` not after the current time)."""
        ts, i = self.times, bisect_left(self.times, t)
        if i == 0:
            return 0.0, 0.0
        if i == len(ts):
            rates = (float(self.active), float(self.alive))
        else:
            span = ts[i] - ts[i - 1]
            rates = ((self.active_s[i] - self.active_s[i - 1]) / span, (self.hired_s[i] - self.hired_s[i - 1]) / span)
        dt = t - ts[i - 1]
        return self.active_s[i - 1] + rates[0] * dt, self.hired_s[i - 1] + rates[1] * dt
