"""The cloud-cluster paper's findings (§6.1-6.2), held as tests on slices of real traces.

LPC-EGEE (a grid's HTC work) and SDSC-SP2 (parallel jobs, one instance each), the first 8,000 jobs
of each, with the paper's c1.medium price, its bandwidths and egress tiers and the volume model.
Every run also passes the ledger invariants (no release while a job runs or before a paid period
ends; periods of exactly 3600 s).
"""

from __future__ import annotations

import functools

import pytest

from broker.cloudcluster.policies import ClusterPolicy, Delay, FixedKeepAlive, NextHour, PerUser, parse_keepalive
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import CloudTerms
from broker.pricing.book import load_price_book
from tests.broker.cloudcluster.checks import check_run
from tests.conftest import trace_path
from workloads.cache import load_trace
from workloads.htc import HtcJobs, htc_view

TRACES = ("LPC-EGEE-2004-1.2-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz")
N = 8000


@functools.cache
def slice_of(name: str) -> HtcJobs:
    swf = load_trace(trace_path(name))
    jobs, _ = htc_view(swf.frame, origin=swf.header.unix_start_time or 0, seed=1)
    return jobs.head(N)


def run(name: str, policy: ClusterPolicy, *, charging: str = "exact", boot: float = 0.0, seed: int = 0):
    book = load_price_book("ec2-2013-cluster")
    site = CloudTerms(hourly=book.offer("c1.medium", "on-demand").hourly, egress=book.egress,  # type: ignore[union-attr]
                      charging=charging, boot=boot)  # type: ignore[arg-type]
    jobs = slice_of(name)
    r = simulate_cluster(jobs, policy, site, seed=seed)
    check_run(r, jobs, policy)
    return r.summary.to_dict()


POLICIES = [ClusterPolicy(), ClusterPolicy(cap=40), ClusterPolicy(pools=PerUser(), cap=40),
            ClusterPolicy(keepalive=FixedKeepAlive(0.3)), ClusterPolicy(start=(Delay(600),)),
            ClusterPolicy(start=(NextHour(1200),))]


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize("policy", POLICIES, ids=range(len(POLICIES)))
def test_exact_charging_never_costs_more_than_wall_clock(name, policy):
    exact, wall = run(name, policy), run(name, policy, charging="wall-clock")
    assert exact["instance_cost"] <= wall["instance_cost"]


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize("cap", [None, 20, 80])
@pytest.mark.parametrize("charging", ["exact", "wall-clock"])
def test_merging_never_costs_more_than_dedicated_pools(name, cap, charging):
    merged = run(name, ClusterPolicy(cap=cap), charging=charging)
    dedicated = run(name, ClusterPolicy(cap=cap, pools=PerUser()), charging=charging)
    assert merged["instance_cost"] <= dedicated["instance_cost"]


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize("rule", ["fixed", "idle", "load"])
def test_with_zero_boot_time_keep_alive_only_adds_cost(name, rule):
    base = run(name, ClusterPolicy())
    for p in (0.1, 0.3, 0.5):
        kept = run(name, ClusterPolicy(keepalive=parse_keepalive(f"{rule}:{p}")))
        assert kept["instance_cost"] >= base["instance_cost"]
        assert kept["overhead_mean_s"] == pytest.approx(base["overhead_mean_s"])  # no job ever waits


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize("boot", [120.0, 600.0])
def test_with_a_boot_time_keep_alive_lowers_mean_overhead(name, boot):
    base = run(name, ClusterPolicy(), boot=boot)
    kept = run(name, ClusterPolicy(keepalive=FixedKeepAlive(0.5)), boot=boot)
    assert kept["overhead_mean_s"] < base["overhead_mean_s"]
    assert kept["instance_cost"] > base["instance_cost"]


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize(("cheap", "fast", "charging"), [
    (ClusterPolicy(cap=10), ClusterPolicy(), "exact"),
    (ClusterPolicy(start=(Delay(1800),)), ClusterPolicy(), "exact"),
    (ClusterPolicy(start=(NextHour(1800),)), ClusterPolicy(), "wall-clock"),
], ids=["P1 cap", "P4 delay", "P6 next hour"])
def test_p1_p4_p6_trade_cost_against_overhead(name, cheap, fast, charging):
    a, b = run(name, cheap, charging=charging), run(name, fast, charging=charging)
    assert a["instance_cost"] < b["instance_cost"] and a["overhead_mean_s"] > b["overhead_mean_s"]
