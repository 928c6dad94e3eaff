"""Cloud-cluster invariants over random small workloads and random compositions of P1-P6."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.cloudcluster.policies import (
    ClusterPolicy,
    Delay,
    EndOfPeriod,
    FixedKeepAlive,
    IdleKeepAlive,
    IdleTimeout,
    LoadKeepAlive,
    Merged,
    NextHour,
    PerUser,
)
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import DOWNLOAD_BPS, UPLOAD_BPS, CloudTerms
from tests.broker.cloudcluster.checks import check_run
from workloads.htc import HtcJobs


@st.composite
def workloads(draw: st.DrawFn) -> HtcJobs:
    n = draw(st.integers(1, 40))
    gaps = draw(st.lists(st.sampled_from([0.0, 1.0, 30.0, 600.0, 3000.0, 3600.0, 7200.0]), min_size=n, max_size=n))
    runtime = draw(st.lists(st.sampled_from([0.0, 5.0, 100.0, 1800.0, 3600.0, 5000.0]), min_size=n, max_size=n))
    users = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    up = draw(st.lists(st.sampled_from([0.0, 1.0, 60.0]), min_size=n, max_size=n))
    return HtcJobs(submit=np.cumsum(gaps), runtime=np.array(runtime), user=np.array(users, dtype=np.int64),
                   input_bytes=np.array(up) * UPLOAD_BPS, output_bytes=np.array(up) * DOWNLOAD_BPS,
                   origin=float(draw(st.sampled_from([0, 1800, 1_000_000_123]))))


@st.composite
def policies(draw: st.DrawFn) -> ClusterPolicy:
    timeout = draw(st.sampled_from([None, None, 0.0, 600.0]))
    keep = None if timeout is not None else draw(st.sampled_from(
        [None, FixedKeepAlive(0.5), IdleKeepAlive(0.8), LoadKeepAlive(1.0, 1800)]))
    delay, ratio = draw(st.sampled_from([0.0, 60.0, 900.0])), draw(st.sampled_from([None, 0.0, 0.5]))
    hold = draw(st.sampled_from([0.0, 600.0]))
    start = (((Delay(delay, burst_ratio=ratio),) if delay or ratio is not None else ())
             + ((NextHour(hold),) if hold else ()))
    return ClusterPolicy(cap=draw(st.sampled_from([None, 1, 2, 5])), pools=draw(st.sampled_from([Merged(), PerUser()])),
                         keepalive=keep, release=EndOfPeriod() if timeout is None else IdleTimeout(timeout),
                         start=start)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(), policy=policies(), charging=st.sampled_from(["exact", "wall-clock"]),
       boot=st.sampled_from([0.0, 120.0, 600.0]), seed=st.integers(0, 3))
def test_every_run_holds_the_invariants(jobs, policy, charging, boot, seed):
    site = CloudTerms(charging=charging, boot=boot)
    r = simulate_cluster(jobs, policy, site, seed=seed, validate=True)
    check_run(r, jobs, policy)
    again = simulate_cluster(jobs, policy, site, seed=seed)
    assert r.instances.equals(again.instances) and r.jobs.equals(again.jobs)
