"""The cloud cluster's invariant checks on hand-made states: each check fires on its violation, and only then."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.cloudcluster.policies import ClusterPolicy, IdleTimeout
from broker.cloudcluster.state import Instances, Usage, Waiting
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.validate import ClusterValidator
from broker.pricing.billing import Billing
from broker.sim.ledger import InstanceRecord, Ledger
from broker.sim.validate import InvariantError
from workloads.htc import HtcJobs


class Cluster:
    """A finished run: job 0 (submitted at 0) ran on instance 0 (hired at 0, booted at 120), job 1 (submitted at
    100) on instance 1 (hired at 100, booted at 220); both instances released after one paid hour."""

    def __init__(self, policy: ClusterPolicy | None = None) -> None:
        self.jobs = HtcJobs(submit=np.array([0.0, 100.0]), runtime=np.array([500.0, 200.0]), user=np.zeros(2, np.int64),
                            input_bytes=np.zeros(2), output_bytes=np.zeros(2))
        self.policy, self.terms = policy or ClusterPolicy(), CloudTerms()
        self.ledger = Ledger(Billing())
        for inst, hired in enumerate((0.0, 100.0)):
            self.ledger.close(inst, "c1", hired_at=hired, ready_at=hired + 120, released_at=hired + 3600,
                              anchor=hired, hourly=0.1, jobs_hosted=1, busy_capacity_s=300.0, capacity=1.0)
        self.cap = math.inf
        self.finished, self.waiting, self.usage, self.instances = 2, Waiting(), Usage(track=False), Instances()
        self.begin, self.done = np.array([120.0, 220.0]), np.array([620.0, 420.0])
        self.on = np.array([0, 1], dtype=np.int64)
        i = self.instances
        i.pool, i.busy = [0, 0], [-1, -1]
        i.ready, i.anchor = [120.0, 220.0], [0.0, 100.0]
        i.released = [True, True]


def test_a_consistent_end_passes_and_so_do_the_edges() -> None:
    ClusterValidator(Cluster()).at_end()
    w = Cluster()
    w.begin[1], w.instances.ready[1] = 100.0, 100.0  # on its arrival, on an instance booted then
    ClusterValidator(w).at_end()
    w = Cluster()
    w.begin[1], w.instances.ready[1] = 100.0 - 0.5e-6, 100.0 - 0.5e-6  # within the microsecond of slack
    ClusterValidator(w).at_end()


@pytest.mark.parametrize(("change", "match"), [
    (lambda w: setattr(w, "finished", 1), "never done"),
    (lambda w: w.done.__setitem__(1, np.nan), "never done"),
    (lambda w: w.on.__setitem__(1, -1), "never done"),
    (lambda w: (w.begin.__setitem__(1, 99.99), w.instances.ready.__setitem__(1, 50.0)), "before it arrived"),
    (lambda w: w.begin.__setitem__(1, 219.0), "before it booted"),
    (lambda w: w.begin.__setitem__(0, 119.99), "job 0 started"),
    (lambda w: w.instances.released.__setitem__(1, False), "never released"),
    (lambda w: w.ledger.records.pop(), "never released"),
    (lambda w: setattr(w.usage, "alive", 1), "never released"),
])
def test_end_checks(change, match: str) -> None:
    w = Cluster()
    change(w)
    with pytest.raises(InvariantError, match=match):
        ClusterValidator(w).at_end()


def record(anchor: float, hired: float, released: float, units: int) -> InstanceRecord:
    return InstanceRecord(0, "c1", hired, hired + 120, released, anchor, units, 0.1, 0.1 * units, 1, 0.0, 1.0)


@pytest.mark.parametrize(("rec", "ok"), [
    (record(0.0, 0.0, 3600.0, 1), True),
    (record(0.0, 0.0, 3600.0 + 3e-6, 1), True),  # within 1e-9 of a unit after the boundary: on it
    (record(0.0, 0.0, 3600.0 + 1e-4, 1), False),
    (record(0.0, 0.0, 7000.0, 1), False),
    (record(0.0, 0.0, 7000.0, 2), True),
    (record(-600.0, 0.0, 3000.0, 1), True),  # wall-clock: billed from the hour before the hire
    (record(10.0, 0.0, 3610.0, 1), False),  # billed from after the hire: the lease is not covered
])
def test_the_bill_covers_every_lease(rec: InstanceRecord, ok: bool) -> None:
    w = Cluster()
    w.ledger.records[0] = rec
    if ok:
        ClusterValidator(w).at_end()
    else:
        with pytest.raises(InvariantError, match="does not cover"):
            ClusterValidator(w).at_end()


def running() -> Cluster:
    """Job 0 runs on instance 0, job 1 waits; one instance hired, the cap is 1."""
    w = Cluster()
    w.finished, w.usage.active, w.waiting.count, w.usage.alive, w.cap = 0, 1, 1, 1, 1.0
    w.instances.busy, w.instances.released = [0], [False]
    return w


def arrived(w: Cluster, n: int = 2) -> ClusterValidator:
    v = ClusterValidator(w)
    for _ in range(n):
        v.at_arrival()
    return v


def test_event_checks() -> None:
    arrived(running()).at_event(150.0)  # at the cap, job 0 (id 0) running: fine
    with pytest.raises(InvariantError, match="submitted"):
        arrived(running(), 3).at_event(150.0)
    w = running()
    w.usage.alive = 2
    with pytest.raises(InvariantError, match="the cap is 1"):
        arrived(w).at_event(150.0)
    w = running()
    w.instances.busy = [-1]  # job 0 active, but no instance runs it
    with pytest.raises(InvariantError, match="jobs active"):
        arrived(w).at_event(150.0)
    w = running()
    w.usage.active, w.waiting.count, w.usage.alive, w.cap = 2, 0, 2, 2.0
    w.instances.busy = [0, 0]  # two instances run one job
    with pytest.raises(InvariantError, match="distinct"):
        arrived(w).at_event(150.0)


def test_release_checks() -> None:
    w = Cluster()
    v = ClusterValidator(w)
    v.at_release(3600.0, 0)
    v.at_release(7200.0, 0)
    v.at_release(100.0 + 3600.0, 1)
    v.at_release(360000.00018, 0)  # 100 periods + 5e-8: within the tolerance of 1e-9 x 100 periods
    for t, inst, match in ((3600.5, 0, "not at the end of a paid period"), (3600.0 + 1e-5, 0, "paid period"),
                           (3700.5, 1, "paid period"), (119.0, 0, "before it booted")):
        with pytest.raises(InvariantError, match=match):
            v.at_release(t, inst)
    w.instances.busy[0] = 0  # running job 0
    with pytest.raises(InvariantError, match="while running job 0"):
        v.at_release(3600.0, 0)


def test_release_before_boot_has_a_microsecond_of_slack() -> None:
    w = Cluster(ClusterPolicy(release=IdleTimeout(0.0)))
    v = ClusterValidator(w)
    v.at_release(120.0 - 0.5e-6, 0)
    with pytest.raises(InvariantError, match="before it booted"):
        v.at_release(120.0 - 2e-6, 0)


def test_an_idle_timeout_releases_off_the_period_end() -> None:
    v = ClusterValidator(Cluster(ClusterPolicy(release=IdleTimeout(600.0))))
    v.at_release(1220.0, 0)
