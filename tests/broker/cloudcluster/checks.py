"""Invariants every cloud-cluster run must hold, checked from its result alone (not by the world's validator)."""

from __future__ import annotations

import numpy as np
import pytest

from broker.cloudcluster.bill import ClusterResult, peak
from broker.cloudcluster.policies import ClusterPolicy, IdleTimeout, PerUser
from workloads.htc import HtcJobs


def check_run(r: ClusterResult, jobs: HtcJobs, policy: ClusterPolicy, btu: float = 3600.0) -> None:
    """Every job served once after it arrived; no instance released while a job runs on it or before
    its paid period ends; periods of exactly ``btu``; at most ``cap`` instances; the bill adds up."""
    j, led = r.jobs, r.instances
    assert len(j) == len(jobs) and (j.instance_id >= 0).all()
    assert (led.instance_id.to_numpy() == np.arange(len(led))).all()
    assert (j.start >= j.submit).all() and (j.end >= j.start + j.runtime - 1e-6).all()
    assert (j.overhead >= -1e-6).all()
    assert (led.ready_at >= led.hired_at).all() and (led.released_at >= led.ready_at).all()
    on = led.iloc[j.instance_id.to_numpy()]
    assert (j.start.to_numpy() >= on.ready_at.to_numpy()).all()
    assert (j.end.to_numpy() <= on.released_at.to_numpy()).all(), "an instance released while a job ran on it"
    order = np.lexsort((j.start.to_numpy(), j.instance_id.to_numpy()))
    inst, begin, done = j.instance_id.to_numpy()[order], j.start.to_numpy()[order], j.end.to_numpy()[order]
    same = inst[1:] == inst[:-1]
    assert (begin[1:][same] >= done[:-1][same] - 1e-6).all(), "two jobs at once on one instance"
    paid = led.anchor + led.units * btu
    assert (led.units >= 1).all() and (paid >= led.released_at - 1e-6).all()
    if not isinstance(policy.release, IdleTimeout):
        assert np.allclose(led.released_at, paid, atol=1e-6), "released before the end of a paid period"
    if policy.cap is not None:
        assert peak(led.hired_at.to_numpy(), led.released_at.to_numpy()) <= policy.cap
    if isinstance(policy.pools, PerUser):
        assert (led.pool.to_numpy()[j.instance_id.to_numpy()] == jobs.user).all()
    assert r.users.cost.sum() == pytest.approx(r.summary.cost)
