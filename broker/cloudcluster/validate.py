"""Invariant checks of ``validate=True`` cloud-cluster runs.

After every event: every job that arrived is done, running or queued; no more than ``cap``
instances hired; no instance runs two jobs. At every release: the instance is idle, released at the
end of a paid period (unless the idle-timeout baseline released it), after it booted. At the end:
every job done once, after it arrived and after its instance booted; every instance released; the
bill covers every lease. A failed check raises :class:`~broker.sim.validate.InvariantError`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from broker.cloudcluster.policies import ClusterPolicy
from broker.cloudcluster.state import Instances, Usage, Waiting
from broker.cloudcluster.terms import CloudTerms
from broker.pricing.billing import BOUNDARY_TOLERANCE
from broker.sim.ledger import Ledger
from broker.sim.validate import EPS, InvariantError, check_conservation
from workloads.htc import HtcJobs


class ClusterState(Protocol):
    """What the checks read of a cloud-cluster world."""

    jobs: HtcJobs
    policy: ClusterPolicy
    terms: CloudTerms
    ledger: Ledger
    cap: float
    finished: int
    waiting: Waiting
    instances: Instances
    usage: Usage
    begin: np.ndarray
    done: np.ndarray
    on: np.ndarray


class ClusterValidator:
    """Checks the invariants of one cloud-cluster world (see the module docstring)."""

    def __init__(self, world: ClusterState) -> None:
        self.world = world
        self.arrived = 0

    def at_arrival(self) -> None:
        """A job arrived."""
        self.arrived += 1

    def at_event(self, t: float) -> None:
        """Checks after the event at ``t``."""
        w, usage = self.world, self.world.usage
        check_conservation(t, submitted=self.arrived, done=w.finished, running=usage.active, queued=w.waiting.count)
        if usage.alive > w.cap:
            raise InvariantError(f"t={t}: {usage.alive} instances hired, the cap is {w.cap}")
        busy = [j for j in w.instances.busy if j >= 0]
        if len(busy) != usage.active or len(set(busy)) != len(busy):
            raise InvariantError(f"t={t}: {usage.active} jobs active but instances run {len(busy)} (distinct "
                                 f"{len(set(busy))})")

    def at_release(self, t: float, inst: int) -> None:
        """Checks for instance ``inst`` released at ``t`` (before the world marks it released)."""
        w, i = self.world, self.world.instances
        if i.busy[inst] >= 0:
            raise InvariantError(f"instance {inst} released at {t} while running job {i.busy[inst]}")
        if not t >= i.ready[inst] - EPS:
            raise InvariantError(f"instance {inst} released at {t} before it booted ({i.ready[inst]})")
        periods = (t - i.anchor[inst]) / w.terms.btu
        if w.policy.release.idle_timeout() is None and abs(periods - round(periods)) > 1e-9 * max(1, periods):
            raise InvariantError(f"instance {inst} released at {t}, {periods:.6f} periods after its anchor "
                                 f"{i.anchor[inst]}: not at the end of a paid period")

    def at_end(self) -> None:
        """Every job done once, after it arrived and on a booted instance; every instance released and paid for."""
        w = self.world
        jobs = w.jobs
        if w.finished != len(jobs) or np.isnan(w.done).any() or (w.on < 0).any():
            raise InvariantError(f"{len(jobs) - w.finished} job(s) never done")
        if np.any(w.begin < jobs.submit - EPS):
            i = int(np.argmax(w.begin < jobs.submit - EPS))
            raise InvariantError(f"job {i} got an instance at {w.begin[i]}, before it arrived at {jobs.submit[i]}")
        ready = np.asarray(w.instances.ready)[w.on]
        if np.any(w.begin < ready - EPS):
            i = int(np.argmax(w.begin < ready - EPS))
            raise InvariantError(f"job {i} started at {w.begin[i]} on instance {w.on[i]}, before it booted at "
                                 f"{ready[i]}")
        if not all(w.instances.released) or len(w.ledger) != len(w.instances) or w.usage.alive != 0:
            raise InvariantError(f"{len(w.instances) - len(w.ledger)} instance(s) never released")
        slack = max(EPS, BOUNDARY_TOLERANCE * w.terms.btu)  # a release this close after a boundary is on it
        for r in w.ledger.records:
            if r.anchor + r.units * w.terms.btu < r.released_at - slack or r.anchor > r.hired_at + EPS:
                raise InvariantError(f"instance {r.instance_id}: billed from {r.anchor} for {r.units} period(s) does "
                                     f"not cover its lease [{r.hired_at}, {r.released_at}]")
