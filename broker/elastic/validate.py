"""Invariant checks of ``validate=True`` elastic-pool runs.

After every instant's events and after every dispatch: every job submitted so far is terminated,
running or waiting, exactly once; the running jobs fit in the pool (the pool is never below them);
a rigid pool keeps its size; an elastic pool stays within ``[min_cores, max_cores]`` and each size
holds at least ``hold_s`` before the next change; no job starts before its submission. At the end:
every job ran and terminated, and the pool's core-seconds are its sizes integrated over time. A
failed check raises :class:`~broker.sim.validate.InvariantError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from broker.sim.validate import EPS, InvariantError, check_conservation

if TYPE_CHECKING:
    import numpy as np

    from broker.elastic.world import PoolConfig, Queue
    from workloads.cores import CoreJobs


class PoolState(Protocol):
    """What the checks read of an elastic world."""

    jobs: CoreJobs
    pool: PoolConfig
    size: int
    submitted: int
    done: int
    running: dict[int, float]
    queue: Queue
    sizes: list[tuple[float, int]]
    start: np.ndarray
    end: np.ndarray

    def core_seconds(self, t: float | None = None) -> float:
        """Core-seconds to ``t``."""
        ...


class ElasticValidator:
    """Checks the invariants of one elastic world (see the module docstring)."""

    def __init__(self, world: PoolState) -> None:
        self.world = world
        self.changes = len(world.sizes)

    def at_event(self, now: float) -> None:
        """Checks at ``now``, after an instant's events or a dispatch."""
        w, pool = self.world, self.world.pool
        check_conservation(now, submitted=w.submitted, done=w.done, running=len(w.running), queued=len(w.queue))
        if len(w.running) > w.size:
            raise InvariantError(f"t={now}: {len(w.running)} jobs run on a pool of {w.size} cores")
        if not pool.elastic and w.size != pool.cores:
            raise InvariantError(f"t={now}: a rigid pool of {pool.cores} cores has {w.size}")
        if pool.elastic and not pool.min_cores <= w.size <= pool.ceiling:
            raise InvariantError(f"t={now}: the pool has {w.size} cores, outside [{pool.min_cores}, {pool.ceiling}]")
        for k in range(max(self.changes, 2), len(w.sizes)):
            (before, _), (after, size) = w.sizes[k - 1], w.sizes[k]
            if after - before < pool.hold_s - EPS:
                raise InvariantError(f"t={after}: the pool changed to {size} cores {after - before} s after its "
                                     f"last change, before the {pool.hold_s} s hold")
        self.changes = len(w.sizes)
        for job, start in w.running.items():
            if start < w.jobs.submit[job]:
                raise InvariantError(f"job {job} started at {start}, before its submission at {w.jobs.submit[job]}")

    def at_end(self) -> None:
        """Every job ran and terminated; the core-seconds are the sizes over time."""
        w = self.world
        n = len(w.jobs)
        if w.done != n or w.submitted != n or len(w.queue) or w.running:
            raise InvariantError(f"{n} jobs, {w.submitted} submitted, {w.done} terminated, {len(w.running)} running, "
                                 f"{len(w.queue)} waiting at the end")
        if n and ((w.start < w.jobs.submit).any() or (w.end < w.start).any()):
            raise InvariantError("a job started before its submission or ended before it started")
        end = float(w.end.max()) if n else w.sizes[0][0]
        times = [t for t, _ in w.sizes] + [end]
        integral = sum(size * (times[k + 1] - times[k]) for k, (_, size) in enumerate(w.sizes))
        if abs(integral - w.core_seconds(end)) > EPS * max(1.0, integral):
            raise InvariantError(f"the pool's core-seconds are {w.core_seconds(end)}, its sizes give {integral}")
