"""Invariants every cloud-cluster run must hold, checked from its result alone."""

from __future__ import annotations

import numpy as np
import pytest

from broker.cloudcluster.policies import ClusterPolicy
from broker.cloudcluster.site import ClusterResult, peak
from workloads.htc import HtcJobs


def check_run(r: ClusterResult, jobs: HtcJobs, policy: ClusterPolicy, btu: float = 3600.0) -> None:
    """Every job served once after it arrived; no instance released while a job runs on it or before
    its paid period ends; periods of exactly ``btu``; at most ``cap`` instances; the bill adds up."""
    j, led = r.jobs, r.ledger
    assert len(j) == len(jobs) and (j.instance >= 0).all()
    assert (j.begin >= j.submit).all() and (j.done >= j.begin + j.runtime - 1e-6).all()
    assert (j.overhead >= -1e-6).all()
    assert (led.ready >= led.hired).all() and (led.released >= led.ready).all()
    on = led.iloc[j.instance.to_numpy()]
    assert (j.begin.to_numpy() >= on.ready.to_numpy()).all()
    assert (j.done.to_numpy() <= on.released.to_numpy()).all(), "an instance released while a job ran on it"
    order = np.lexsort((j.begin.to_numpy(), j.instance.to_numpy()))
    inst, begin, done = j.instance.to_numpy()[order], j.begin.to_numpy()[order], j.done.to_numpy()[order]
    same = inst[1:] == inst[:-1]
    assert (begin[1:][same] >= done[:-1][same] - 1e-6).all(), "two jobs at once on one instance"
    paid = led.anchor + led.units * btu
    assert (led.units >= 1).all() and (paid >= led.released - 1e-6).all()
    if policy.idle_timeout is None:
        assert np.allclose(led.released, paid, atol=1e-6), "released before the end of a paid period"
    if policy.cap is not None:
        assert peak(led.hired.to_numpy(), led.released.to_numpy()) <= policy.cap
    if not policy.merge:
        assert (led.pool.to_numpy()[j.instance.to_numpy()] == jobs.user).all()
    assert r.users.cost.sum() == pytest.approx(r.cost)
