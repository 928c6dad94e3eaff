"""Invariant checks of ``validate=True`` hybrid-site runs.

After every scheduling pass: every job submitted so far has started or waits in the queue, and no
job ended that did not start; the local nodes in use are exactly the widths of the running jobs
and never more than M; a pass that moved jobs to the cloud left at most ``V`` cloud nodes in use;
no job started before its submission. At the end: every job started and ended. A failed check
raises :class:`~broker.sim.validate.InvariantError`.
"""

from __future__ import annotations

from typing import Protocol

from broker.sim.validate import InvariantError, check_conservation
from heuristics.backfill import Cluster
from workloads.rigid import RigidJobs


class SiteState(Protocol):
    """What the checks read of a hybrid world."""

    cluster: Cluster
    cap: float
    cloud_used: int
    next_job: int
    started: int
    ended: int
    log: list[tuple[int, float, int]]

    @property
    def jobs(self) -> RigidJobs:
        """The job list."""
        ...


class HybridValidator:
    """Checks the invariants of one hybrid world (see the module docstring)."""

    def __init__(self, world: SiteState) -> None:
        self.world = world
        self.cloud_before = world.cloud_used
        self.logged = len(world.log)

    def before_pass(self) -> None:
        """A pass begins: note what it starts from."""
        w = self.world
        self.cloud_before, self.logged = w.cloud_used, min(self.logged, len(w.log))

    def at_pass(self, now: float) -> None:
        """Checks after a pass at ``now``."""
        w = self.world
        c, jobs = w.cluster, w.jobs
        started = w.started
        check_conservation(now, submitted=w.next_job, done=w.ended, running=started - w.ended,
                           queued=len(c.queue))
        used = sum(int(jobs.nodes[j]) for j in c.running)
        if c.free < 0 or used + c.free != c.m:
            raise InvariantError(f"t={now}: {c.free} local nodes free and {used} in use on a {c.m}-node cluster")
        if w.cloud_used > self.cloud_before and w.cloud_used > w.cap:
            raise InvariantError(f"t={now}: jobs moved to the cloud up to {w.cloud_used} nodes, the cap is {w.cap}")
        for job, start, _ in w.log[self.logged:]:
            if start < jobs.submit[job]:
                raise InvariantError(f"job {job} started at {start}, before its submission at {jobs.submit[job]}")
        self.logged = len(w.log)

    def at_end(self) -> None:
        """Every job started and ended."""
        w = self.world
        if w.ended != len(w.jobs) or w.started != len(w.jobs):
            raise InvariantError(f"{len(w.jobs)} jobs, {w.started} started, {w.ended} ended")
