"""The cloud cluster's ledger, worked by hand (SPEC §7): billing, transfers, egress, sub-charging, P1-P6."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from broker.cloudcluster.bill import summarize
from broker.cloudcluster.policies import (
    CLUSTER_POLICIES,
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
    parse_keepalive,
)
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import DOWNLOAD_BPS, UPLOAD_BPS, CloudTerms
from broker.cloudcluster.world import ClusterWorld
from broker.cloudcluster.world import run as run_world
from broker.pricing.book import load_price_book
from broker.pricing.egress import GB, EgressPrices, EgressTier, monthly_bill
from broker.sim.recorder import Recorder
from broker.sim.validate import InvariantError
from workloads.htc import HtcJobs

EGRESS = load_price_book("ec2-2013-cluster").egress


def jobs(submit, runtime, user=None, up_s=0.0, down_s=0.0, origin=0.0) -> HtcJobs:
    """Jobs whose upload and download take ``up_s`` and ``down_s`` seconds at the paper's bandwidths."""
    n = len(submit)
    return HtcJobs(submit=np.asarray(submit, float), runtime=np.asarray(runtime, float),
                   user=np.asarray(user if user is not None else [0] * n, np.int64),
                   input_bytes=np.full(n, up_s * UPLOAD_BPS), output_bytes=np.full(n, down_s * DOWNLOAD_BPS),
                   origin=origin)


def run(js: HtcJobs, seed: int = 0, **kw):
    site_kw = {k: kw.pop(k) for k in ("charging", "boot", "egress") if k in kw}
    return simulate_cluster(js, ClusterPolicy(**kw), CloudTerms(hourly=0.145, **site_kw), seed=seed)


def test_one_job_exact_charging_timeline_and_one_period():
    r = run(jobs([100], [3000], up_s=1, down_s=1))
    job = r.jobs.iloc[0]
    assert (job.start, job.end, job.overhead, job.wait) == (100, 3102, 2, 0)
    led = r.instances.iloc[0]
    # kept to the end of its period
    assert (led.hired_at, led.anchor, led.released_at, led.units) == (100, 100, 3700, 1)
    assert r.summary.instance_cost == pytest.approx(0.145)


def test_wall_clock_bills_from_the_hour_start():
    js = jobs([3000], [1000])  # runs 3000..4000; time 0 is on the hour
    exact, wall = run(js), run(js, charging="wall-clock")
    assert (exact.instances.released_at[0], exact.instances.units[0]) == (6600, 1)
    assert (wall.instances.anchor[0], wall.instances.released_at[0], wall.instances.units[0]) == (0, 7200, 2)


def test_a_billed_period_is_exactly_3600_s():
    r = run(jobs([0], [3599.5]))  # idle half a second before its period ends: released at 3600, not earlier
    assert (r.instances.released_at[0], r.instances.units[0]) == (3600, 1)
    r = run(jobs([0], [3700]))  # busy at 3600: a second period starts, and is paid whole
    assert (r.instances.released_at[0], r.instances.units[0]) == (7200, 2)


def test_boot_time_is_waited_and_billed():
    r = run(jobs([0], [100], up_s=2, down_s=3), boot=120)
    job = r.jobs.iloc[0]
    assert (job.start, job.end, job.overhead) == (120, 225, 125)
    assert (r.instances.hired_at[0], r.instances.released_at[0]) == (0, 3600)


def test_an_idle_instance_is_reused_within_its_paid_period():
    r = run(jobs([0, 1000], [600, 600]))
    assert list(r.jobs.instance_id) == [0, 0] and list(r.instances.units) == [1]
    r = run(jobs([0, 4000], [600, 600]))  # gone at 3600: a second instance
    assert list(r.jobs.instance_id) == [0, 1] and list(r.instances.units) == [1, 1]


def test_dedicated_instances_serve_only_their_user_and_eq6_splits_shared_ones():
    js = jobs([0, 1000, 1500], [900, 1800, 300], user=[0, 1, 0])
    merged = run(js)
    assert list(merged.jobs.instance_id) == [0, 0, 1] and list(merged.instances.units) == [1, 1]
    # instance 0 ran user 0 for 900 s and user 1 for 1800 s: eq. 6 splits its 0.145 as 1/3, 2/3
    bill = merged.users.set_index("user").instance_cost
    assert bill[0] == pytest.approx(0.145 / 3 + 0.145) and bill[1] == pytest.approx(0.145 * 2 / 3)
    assert merged.users.cost.sum() == pytest.approx(merged.summary.cost)
    dedicated = run(js, pools=PerUser())
    assert list(dedicated.jobs.instance_id) == [0, 1, 0] and list(dedicated.instances.pool) == [0, 1]


def test_an_instance_that_ran_nothing_is_charged_to_the_user_who_started_it():
    # boot 300: user 1's job arrives at 200 and starts instance 1; instance 0 is free at 310 and takes it
    r = run(jobs([0, 200], [10, 500], user=[0, 1]), boot=300)
    assert list(r.jobs.instance_id) == [0, 0] and list(r.jobs.start) == [300, 310]
    assert list(r.instances.units) == [1, 1]
    bill = r.users.set_index("user").instance_cost
    assert bill[0] == pytest.approx(0.145 * 10 / 510)
    assert bill[1] == pytest.approx(0.145 * 500 / 510 + 0.145)  # the unused instance 1 is user 1's
    assert r.users.cost.sum() == pytest.approx(r.summary.cost)


def test_cap_queues_fcfs():
    r = run(jobs([0, 10, 20], [100, 100, 100]), cap=1)
    assert list(r.jobs.start) == [0, 100, 200] and len(r.instances) == 1


def test_p4_delay_and_an_instance_freed_meanwhile():
    r = run(jobs([0], [100]), start=(Delay(600),))
    assert r.jobs.start[0] == 600 and r.instances.hired_at[0] == 600
    r = run(jobs([0, 50], [30, 10]), start=(Delay(600),))  # job 1 takes job 0's instance at 630
    assert list(r.jobs.start) == [600, 630] and len(r.instances) == 1
    r = run(jobs([0, 50], [300, 10]), start=(Delay(600),))  # no instance free by 650: job 1 starts one
    assert list(r.jobs.start) == [600, 650] and len(r.instances) == 2


def test_p5_lifts_the_delay_while_the_queue_is_long():
    js = jobs([0, 0, 0], [100, 100, 100])
    assert list(run(js, cap=10, start=(Delay(600),)).jobs.start) == [600] * 3
    # more than 0.2 x 10 = 2 jobs wait: no delay
    assert list(run(js, cap=10, start=(Delay(600, burst_ratio=0.2),)).jobs.start) == [0] * 3


def test_p6_holds_jobs_arriving_near_the_end_of_the_hour():
    assert run(jobs([1000], [10]), start=(NextHour(1200),)).jobs.start[0] == 1000
    assert run(jobs([3000], [10]), start=(NextHour(1200),)).jobs.start[0] == 3600
    assert run(jobs([3000], [10])).jobs.start[0] == 3000
    # the wall clock comes from the trace origin: 10:40 is 20 min before 11:00
    origin = dt.datetime(2013, 6, 1, 10, 40, tzinfo=dt.UTC).timestamp()
    r = run(jobs([0], [10], origin=origin), start=(NextHour(1200),))
    assert r.jobs.start[0] == 1200


def test_keep_alive_fixed_one_keeps_one_more_period_then_an_idle_period_always_goes():
    js = jobs([0], [100])
    assert list(run(js).instances.units) == [1]
    assert list(run(js, keepalive=FixedKeepAlive(1.0)).instances.units) == [2]
    r = run(jobs([0, 4000], [100, 100]), keepalive=FixedKeepAlive(1.0))
    assert list(r.jobs.instance_id) == [0, 0] and list(r.instances.units) == [3]


class View:
    """3 of 4 instances idle; the load over the last ``window`` seconds is 0.25 (0.75 over other windows)."""

    idle, hired = 3, 4

    def load(self, t: float, window: float) -> float:
        return 0.25 if window == 3600 else 0.75


def test_keep_alive_rules_probabilities():
    view = View()
    assert FixedKeepAlive(0.4).probability(0.0, view) == 0.4
    assert IdleKeepAlive(0.4).probability(0.0, view) == pytest.approx(0.1)
    assert LoadKeepAlive(0.4).probability(0.0, view) == pytest.approx(0.1)
    assert LoadKeepAlive(0.4, 600).probability(0.0, view) == pytest.approx(0.3)
    assert parse_keepalive("load:0.3:7200") == LoadKeepAlive(0.3, 7200)
    for bad in ("fixed", "idle:0.3:60", "often:0.3", "fixed:2"):
        with pytest.raises(ValueError):
            parse_keepalive(bad)


def test_load_keep_alive_reads_the_window():
    # one instance busy 0..1800 of its first hour: load over the last hour at 3600 is 0.5
    js = jobs([0], [1800])
    kept = [run(js, seed=s, keepalive=LoadKeepAlive(1.0)).instances.units[0] for s in range(200)]
    assert 0.4 < np.mean(np.array(kept) == 2) < 0.6


def test_idle_timeout_baseline_ignores_paid_periods():
    r = run(jobs([0], [100]), release=IdleTimeout(600))
    assert (r.instances.released_at[0], r.instances.units[0]) == (700, 1)
    r = run(jobs([0], [3500]), release=IdleTimeout(600))  # idle at 3500, gone at 4100: a second period started
    assert (r.instances.released_at[0], r.instances.units[0]) == (4100, 2)


def test_egress_tiers_per_month():
    assert EGRESS.month_cost(1) == 0
    assert EGRESS.month_cost(11) == pytest.approx(10 * 0.12)
    assert EGRESS.month_cost(1 + 10240 + 100) == pytest.approx(10240 * 0.12 + 100 * 0.09)
    assert EGRESS.month_cost(60000) == pytest.approx(10240 * 0.12 + 40960 * 0.09 + (60000 - 51201) * 0.07)
    # 6 GB in January and 6 GB in February: each month has its free GB
    origin = dt.datetime(2013, 1, 31, 23, 0, tzinfo=dt.UTC).timestamp()
    bill, share = monthly_bill(np.array([600.0, 7200.0]), np.array([6 * GB, 6 * GB]), EGRESS, origin=origin)
    assert sorted(bill.values()) == [pytest.approx(0.6), pytest.approx(0.6)] and share.sum() == pytest.approx(1.2)
    with pytest.raises(ValueError):
        EgressPrices((EgressTier(10, 0.1), EgressTier(5, 0.2)))


def test_egress_in_a_run_and_the_split_of_the_bill():
    origin = dt.datetime(2013, 1, 31, 23, 0, tzinfo=dt.UTC).timestamp()
    n = 3
    js = HtcJobs(submit=np.array([0.0, 0.0, 7200.0]), runtime=np.full(n, 60.0), user=np.array([0, 1, 1]),
                 input_bytes=np.zeros(n), output_bytes=np.array([2 * GB, 4 * GB, 3 * GB]), origin=origin)
    r = run(js, egress=EGRESS)
    # January: 6 GB -> 5 x 0.12 split 2:4; February: 3 GB -> 2 x 0.12
    assert r.summary.egress_cost == pytest.approx(0.6 + 0.24)
    e = r.users.set_index("user").egress_cost
    assert e[0] == pytest.approx(0.2) and e[1] == pytest.approx(0.4 + 0.24)
    assert r.summary.cost == pytest.approx(r.summary.instance_cost + 0.84)


def test_same_seed_same_run_and_bad_settings():
    js = jobs(np.arange(0, 20000, 700.0), np.full(29, 1500.0))
    a = run(js, seed=3, keepalive=FixedKeepAlive(0.5))
    b = run(js, seed=3, keepalive=FixedKeepAlive(0.5))
    assert a.instances.equals(b.instances) and a.jobs.equals(b.jobs)
    with pytest.raises(ValueError):
        ClusterPolicy(cap=0)
    with pytest.raises(ValueError):
        ClusterPolicy(release=IdleTimeout(60), keepalive=FixedKeepAlive(0.5))
    with pytest.raises(ValueError):
        (NextHour(3600),)


def test_the_keep_alive_decision_pauses_the_world_and_a_copy_runs_on_alike() -> None:
    from broker.cloudcluster.world import ClusterWorld, run

    js = jobs(np.arange(0, 30000, 1100.0), np.full(28, 1500.0), user=[0, 1] * 14)
    policy = ClusterPolicy(keepalive=FixedKeepAlive(0.5), pools=PerUser())
    whole = simulate_cluster(js, policy, CloudTerms(), seed=3)
    world, rng = ClusterWorld(js, policy, CloudTerms(), validate=True), np.random.default_rng(3)
    decision = world.advance()
    assert decision is not None and world.instances.busy[decision.instance] < 0  # idle at its period end
    assert decision.now == world.billing.deadline(world.instances.anchor[decision.instance], decision.now - 1)
    world.act(policy.keepalive.keep(decision.now, world, rng))  # type: ignore[union-attr]
    twin, twin_rng = world.copy(), np.random.default_rng(3)
    twin_rng.bit_generator.state = rng.bit_generator.state
    from broker.cloudcluster.bill import summarize
    a, b = summarize(run(world, rng)), summarize(run(twin, twin_rng))
    for r in (a, b):
        assert r.jobs.equals(whole.jobs) and r.instances.equals(whole.instances)


# -- the rules one by one, on their boundaries (module docstring of broker.cloudcluster.policies) -------------

def test_pools_merged_and_per_user() -> None:
    users = np.array([3, 0, 3, 1])
    assert Merged().pool_of(users).tolist() == [0, 0, 0, 0] and Merged().pool_of(users).dtype == np.int64
    assert PerUser().pool_of(users).tolist() == [3, 0, 3, 1] and PerUser().pool_of(users).dtype == np.int64
    assert ClusterPolicy().pools == Merged() and ClusterPolicy().release == EndOfPeriod()
    assert (ClusterPolicy().cap, ClusterPolicy().keepalive, ClusterPolicy().start) == (None, None, ())


def test_delay_and_its_burst_exception_on_the_boundary() -> None:
    assert Delay(600).not_before(100.0, waiting=50, cap=10) == 700.0  # no burst ratio: always delayed
    assert Delay(0).not_before(100.0, waiting=0, cap=10) == 100.0
    burst = Delay(600, burst_ratio=0.5)
    assert burst.not_before(100.0, waiting=5, cap=10) == 700.0  # 5 wait, not more than 0.5 x 10
    assert burst.not_before(100.0, waiting=6, cap=10) == 100.0  # more than 5 wait: a burst, no delay
    assert Delay(600, burst_ratio=0.0).not_before(100.0, waiting=1, cap=10) == 100.0
    assert Delay(600, burst_ratio=0.0).not_before(100.0, waiting=0, cap=10) == 700.0
    for bad in ({"seconds": -1.0}, {"seconds": 10.0, "burst_ratio": -0.1}):
        with pytest.raises(ValueError):
            Delay(**bad)


def test_next_hour_holds_the_last_seconds_of_each_hour_only() -> None:
    rule = NextHour(1200)
    assert rule.not_before(2399.0, waiting=0, cap=1) == 2399.0  # 1201 s before 3600
    assert rule.not_before(2400.0, waiting=0, cap=1) == 3600.0  # exactly 1200 s before: held
    assert rule.not_before(3599.0, waiting=0, cap=1) == 3600.0
    assert rule.not_before(3600.0, waiting=0, cap=1) == 3600.0  # on the hour: a whole hour ahead, not held
    assert rule.not_before(9800.0, waiting=0, cap=1) == 10800.0 and rule.not_before(9000.0, waiting=0, cap=1) == 9000.0
    assert NextHour(0).not_before(3599.0, waiting=0, cap=1) == 3599.0
    assert NextHour(100, hour=1000).not_before(950.0, waiting=0, cap=1) == 1000.0
    assert NextHour(100, hour=1000).not_before(850.0, waiting=0, cap=1) == 850.0
    assert NextHour(3599).hour == 3600.0
    for seconds in (-1.0, 3600.0):
        with pytest.raises(ValueError):
            NextHour(seconds)


def test_keep_alive_probability_bounds_and_draws() -> None:
    view = View()
    for p in (0.0, 1.0):
        assert FixedKeepAlive(p).p == p and IdleKeepAlive(p).p == p and LoadKeepAlive(p).p == p
    for p in (-0.01, 1.01):
        for rule in (FixedKeepAlive, IdleKeepAlive, LoadKeepAlive):
            with pytest.raises(ValueError, match="probability"):
                rule(p)
    with pytest.raises(ValueError, match="window"):
        LoadKeepAlive(0.5, 0.0)
    assert LoadKeepAlive(0.5).window == 3600.0 and LoadKeepAlive(0.5, 1e-3).window == 1e-3
    rng = np.random.default_rng(0)
    assert not any(FixedKeepAlive(0.0).keep(0.0, view, rng) for _ in range(100))
    assert all(FixedKeepAlive(1.0).keep(0.0, view, rng) for _ in range(100))
    # one draw per decision: the rule keeps exactly when the draw is below its probability
    draws = np.random.default_rng(5).random(200)
    rng = np.random.default_rng(5)
    kept = [FixedKeepAlive(0.3).keep(0.0, view, rng) for _ in range(200)]
    assert kept == [bool(d < 0.3) for d in draws]


class NoneHired:
    idle, hired = 0, 0

    def load(self, t: float, window: float) -> float:
        return 0.0


class AllBusy:
    idle, hired = 0, 5

    def load(self, t: float, window: float) -> float:
        return 1.0


def test_idle_keep_alive_with_no_instance_or_none_idle() -> None:
    assert IdleKeepAlive(0.6).probability(0.0, NoneHired()) == 0.0
    assert IdleKeepAlive(0.6).probability(0.0, AllBusy()) == 0.6
    assert LoadKeepAlive(0.6).probability(0.0, AllBusy()) == 0.6


def test_parse_keepalive_forms() -> None:
    assert parse_keepalive("fixed:0.3") == FixedKeepAlive(0.3)
    assert parse_keepalive("idle:1") == IdleKeepAlive(1.0)
    assert parse_keepalive("load:0.5") == LoadKeepAlive(0.5, 3600.0)
    for bad in ("load", "load:0.1:60:7", "fixed:x", "", "idle"):
        with pytest.raises(ValueError, match="keep-alive"):
            parse_keepalive(bad)


def test_release_rules_and_their_bounds() -> None:
    assert EndOfPeriod().idle_timeout() is None
    assert IdleTimeout(0.0).idle_timeout() == 0.0 and IdleTimeout(600).idle_timeout() == 600
    with pytest.raises(ValueError, match="idle_timeout"):
        IdleTimeout(-1.0)
    assert ClusterPolicy(cap=1).cap == 1
    with pytest.raises(ValueError, match="cap"):
        ClusterPolicy(cap=0)
    assert ClusterPolicy(release=IdleTimeout(60)).keepalive is None
    assert ClusterPolicy(keepalive=FixedKeepAlive(0.5)).release == EndOfPeriod()


def test_start_rules_combine_to_the_latest_time() -> None:
    assert ClusterPolicy().not_before(3000.0, waiting=0, cap=10) == 3000.0
    both = ClusterPolicy(start=(Delay(300), NextHour(1200)))
    assert both.not_before(3000.0, waiting=0, cap=10) == 3600.0  # next hour (3600) after the delay (3300)
    assert both.not_before(1000.0, waiting=0, cap=10) == 1300.0  # the delay; 1300 is not held by P6
    assert ClusterPolicy(start=(NextHour(1200), Delay(900))).not_before(3000.0, waiting=0, cap=10) == 3900.0


def test_named_policies_build_the_rules_they_name() -> None:
    get = CLUSTER_POLICIES.get
    assert get("merged")() == ClusterPolicy()
    assert get("per-user")() == ClusterPolicy(pools=PerUser())
    assert get("cap")(n=7) == ClusterPolicy(cap=7)
    assert get("keepalive-fixed")(p=0.2) == ClusterPolicy(keepalive=FixedKeepAlive(0.2))
    assert get("keepalive-idle")(p=0.2) == ClusterPolicy(keepalive=IdleKeepAlive(0.2))
    assert get("keepalive-load")(p=0.2, window=60.0) == ClusterPolicy(keepalive=LoadKeepAlive(0.2, 60.0))
    assert get("delay")(seconds=60.0) == ClusterPolicy(start=(Delay(60.0),))
    assert get("burst")(seconds=60.0, ratio=0.1, cap=5) == ClusterPolicy(cap=5, start=(Delay(60.0, burst_ratio=0.1),))
    assert get("next-hour")(seconds=60.0) == ClusterPolicy(start=(NextHour(60.0),))
    assert get("idle-timeout")(seconds=60.0) == ClusterPolicy(release=IdleTimeout(60.0))


# The cloud-cluster world on hand-worked timelines that a wrong count, rank or hand-over would change (SPEC §7).
#
# Every figure is worked out in the comments: jobs (submit, run time), the instant each gets its
# instance, instances hired / booted / released, the units billed at $0.145 per hour. Decisions of a
# keep-alive rule are made by hand through ``advance`` / ``act``, so the draws play no part.


PRICE = 0.145
KEEP = FixedKeepAlive(0.5)  # only makes the world stop at decisions; every decision is taken by hand below


def decide(world: ClusterWorld, keeps: list[bool]) -> list[tuple[float, int, int, int]]:
    """Act on every decision with the next of ``keeps``; each decision's (now, instance, idle, hired) as seen."""
    seen = []
    while (decision := world.advance()) is not None:
        seen.append((decision.now, decision.instance, world.idle, world.hired))
        world.act(keeps.pop(0))
    assert keeps == []
    return seen


# -- idle instances: the count a rule reads, and the one a job takes -------------------------------------------

def test_the_idle_count_through_reuse_a_queue_at_the_cap_and_releases() -> None:
    # Merged, cap 2, no boot. j0 (0, 1,000 s) and j1 (0, 2,000 s) each hire an instance at 0:
    #   instance 0 runs j0 over [0, 1000], instance 1 runs j1 over [0, 2000].
    # 1,000: instance 0 idle (1 idle). 1,500: j2 (100 s) takes it (0 idle), [1500, 1600].
    # 1,550: j3 (300 s) finds none idle and 2 hired = the cap: it waits.
    # 1,600: instance 0 frees and takes j3 straight from the queue, [1600, 1900] (waited 50 s).
    # 1,900: instance 0 idle (1); 2,000: instance 1 idle (2). Both paid hours end at 3,600.
    # 3,600: instance 0 first (its period-end event is the older): 2 idle of 2 hired; released -> 1 idle of 1.
    #        then instance 1: 1 idle of 1 hired; released -> nothing hired.
    # 5,000: j4 (100 s) hires instance 2, [5000, 5100]; idle; 8,600: 1 idle of 1 hired; released.
    world = ClusterWorld(jobs([0, 0, 1500, 1550, 5000], [1000, 2000, 100, 300, 100]),
                         ClusterPolicy(cap=2, keepalive=KEEP), CloudTerms())
    assert decide(world, [False, False, False]) == [(3600, 0, 2, 2), (3600, 1, 1, 1), (8600, 2, 1, 1)]
    assert (world.idle, world.hired) == (0, 0)
    r = summarize(world)
    assert list(r.jobs.start) == [0, 0, 1500, 1600, 5000] and list(r.jobs.wait) == [0, 0, 0, 50, 0]
    assert list(r.jobs.instance_id) == [0, 1, 0, 0, 2]
    assert list(r.instances.released_at) == [3600, 3600, 8600] and list(r.instances.units) == [1, 1, 1]
    assert list(r.instances.jobs_hosted) == [3, 1, 1]
    assert r.summary.instance_cost == pytest.approx(3 * PRICE)


def test_a_kept_instance_has_the_most_paid_time_left() -> None:
    # j0 (0, 100 s) hires instance 0 (paid hour [0, 3600]); j1 (50, 100 s) hires instance 1 ([50, 3650]).
    # 3,600: instance 0 was busy in its hour: decision, kept -> paid until 7,200.
    # 3,620: j2 (100 s): instance 0 (7,200) has more paid time left than instance 1 (3,650): [3620, 3720].
    # 3,650: instance 1 (busy in its hour): released, 1 unit.
    # 3,720: instance 0 idle; 7,200: busy in its second hour: decision, released: 2 units.
    world = ClusterWorld(jobs([0, 50, 3620], [100, 100, 100]), ClusterPolicy(keepalive=KEEP), CloudTerms())
    assert decide(world, [True, False, False]) == [(3600, 0, 2, 2), (3650, 1, 1, 2), (7200, 0, 1, 1)]
    r = summarize(world)
    assert list(r.jobs.instance_id) == [0, 1, 0] and list(r.jobs.start) == [0, 50, 3620]
    assert list(r.instances.released_at) == [7200, 3650] and list(r.instances.units) == [2, 1]
    assert r.summary.instance_cost == pytest.approx(3 * PRICE)


def test_equal_paid_time_left_goes_to_the_older_instance() -> None:
    # j0 (0, 100 s) and j1 (0, 200 s) hire instances 0 and 1 at 0: both paid until 3,600.
    # Instance 1 went idle later (200) but has the same paid time left: j2 at 1,000 takes instance 0.
    r = simulate_cluster(jobs([0, 0, 1000], [100, 200, 300]), ClusterPolicy(), CloudTerms())
    assert list(r.jobs.instance_id) == [0, 1, 0] and list(r.instances.released_at) == [3600, 3600]


def test_an_instance_that_booted_idle_takes_a_job_across_its_period_end() -> None:
    # Merged, boot 300. 0: j0 (10 s) hires instance 0 (ready at 300).
    # 200: j1 (500 s) is not covered by the one booting instance (it covers j0): instance 1 (ready at 500).
    # 300: instance 0 takes j0, [300, 310]; 310: then j1 from the queue, [310, 810].
    # 500: instance 1 boots to an empty queue: idle, paid until 3,800. 810: instance 0 idle, paid until 3,600.
    # 3,000: j2 (1,000 s) takes instance 1 (3,800 > 3,600), [3000, 4000]; 3,600: instance 0 released.
    # 3,800: instance 1 busy: a second period starts. 4,000: idle, paid until 7,400: released then, 2 units.
    r = simulate_cluster(jobs([0, 200, 3000], [10, 500, 1000]), ClusterPolicy(), CloudTerms(boot=300))
    assert list(r.jobs.start) == [300, 310, 3000] and list(r.jobs.end) == [310, 810, 4000]
    assert list(r.jobs.wait) == [300, 110, 0] and list(r.jobs.overhead) == [300, 110, 0]
    assert list(r.jobs.instance_id) == [0, 0, 1]
    led = r.instances
    assert list(led.instance_type) == ["instance", "instance"]
    assert list(led.hired_at) == [0, 200] and list(led.ready_at) == [300, 500]
    assert list(led.released_at) == [3600, 7400] and list(led.units) == [1, 2]
    assert list(led.jobs_hosted) == [2, 1] and list(led.busy_capacity_s) == [510, 1000]
    assert list(led.capacity) == [1.0, 1.0]
    assert list(led.utilization) == [510 / 3600, 1000 / 7200]
    assert r.summary.instance_cost == pytest.approx(3 * PRICE)


# -- the state a paused world shows --------------------------------------------------------------------------------

def test_a_paused_world_shows_a_booting_instance_and_a_job_not_started() -> None:
    # Per-user pools, boot 300. j0 (user 0, 0, 100 s): instance 0 hired at 0, ready 300, runs [300, 400].
    # j1 (user 1, 3,400, 100 s): instance 1 hired at 3,400, booting until 3,700.
    # 3,600: instance 0's hour ends (busy in it): the decision. j1 has no instance yet.
    world = ClusterWorld(jobs([0, 3400], [100, 100], user=[0, 1]), ClusterPolicy(pools=PerUser(), keepalive=KEEP),
                         CloudTerms(boot=300))
    decision = world.advance()
    assert decision is not None and (decision.now, decision.instance) == (3600, 0)
    assert (world.idle, world.hired, world.waiting.count) == (1, 2, 1)
    assert np.isnan(world.begin).tolist() == [False, True] and np.isnan(world.done).tolist() == [False, True]
    assert world.begin[0] == 300 and world.done[0] == 400
    assert world.on.tolist() == [0, -1]  # j1 is on no instance yet
    assert world.instances.busy == [-1, -1] and world.instances.released == [False, False]
    assert world.instances.ready[0] == 300 and math.isnan(world.instances.ready[1])  # instance 1 has not booted
    world.act(False)  # instance 0 released at 3,600
    # 3,700: instance 1 runs j1, [3700, 3800]; its hour (from 3,400) ends at 7,000: decision, released.
    assert decide(world, [False]) == [(7000, 1, 1, 1)]
    r = summarize(world)
    assert list(r.jobs.start) == [300, 3700] and list(r.jobs.wait) == [300, 300]
    assert list(r.instances.released_at) == [3600, 7000]
    assert list(r.users.instance_cost) == [pytest.approx(PRICE), pytest.approx(PRICE)]


def test_a_job_done_exactly_at_its_period_end_and_kept_idle_through_the_next() -> None:
    # j0 (0, 3,600 s) ends exactly when its instance's hour ends: it was busy in it, so a decision at 3,600.
    # Kept: paid until 7,200. Idle since 3,600 = the start of that period: not busy in it, so no decision:
    # released at 7,200 after 2 units.
    world = ClusterWorld(jobs([0], [3600]), ClusterPolicy(keepalive=KEEP), CloudTerms())
    assert decide(world, [True]) == [(3600, 0, 1, 1)]
    r = summarize(world)
    assert (r.instances.released_at[0], r.instances.units[0]) == (7200, 2)
    assert r.summary.instance_cost == pytest.approx(2 * PRICE)


# -- a released instance hands its place under the cap to a waiting job -------------------------------------------

def test_at_the_cap_a_waiting_job_starts_when_the_instance_ahead_is_released_at_its_period_end() -> None:
    # Per-user pools, cap 1. j0 (user 0, 0, 1,000 s) on instance 0 (pool 0), idle from 1,000.
    # j1 (user 1, 2,000, 100 s): pool 1 has no instance and 1 is hired = the cap: it waits.
    # 3,600: instance 0 released (1 unit); instance 1 hired for j1 at once, [3600, 3700]; released 7,200.
    js = jobs([0, 2000], [1000, 100], user=[0, 1])
    r = simulate_cluster(js, ClusterPolicy(pools=PerUser(), cap=1), CloudTerms())
    assert list(r.jobs.start) == [0, 3600] and list(r.jobs.wait) == [0, 1600]
    assert list(r.instances.hired_at) == [0, 3600] and list(r.instances.released_at) == [3600, 7200]
    assert r.summary.instance_cost == pytest.approx(2 * PRICE)


def test_at_the_cap_a_waiting_job_starts_when_a_decision_releases_the_instance_ahead() -> None:
    # As above with a keep-alive rule: at 3,600 instance 0 is idle, 1 hired, j1 waits; released by hand.
    world = ClusterWorld(jobs([0, 2000], [1000, 100], user=[0, 1]),
                         ClusterPolicy(pools=PerUser(), cap=1, keepalive=KEEP), CloudTerms())
    assert decide(world, [False, False]) == [(3600, 0, 1, 1), (7200, 1, 1, 1)]
    r = summarize(world)
    assert list(r.jobs.start) == [0, 3600] and list(r.instances.hired_at) == [0, 3600]


def test_at_the_cap_a_waiting_job_starts_when_the_idle_timeout_releases_the_instance_ahead() -> None:
    # Idle timeout 600 s, cap 1. j0 (user 0, 0, 1,000 s): idle at 1,000, released at 1,600.
    # j1 (user 1, 1,200, 100 s) waits; 1,600: instance 1 hired, [1600, 1700]; idle, released at 2,300.
    js = jobs([0, 1200], [1000, 100], user=[0, 1])
    r = simulate_cluster(js, ClusterPolicy(pools=PerUser(), cap=1, release=IdleTimeout(600)), CloudTerms())
    assert list(r.jobs.start) == [0, 1600] and list(r.jobs.wait) == [0, 400]
    assert list(r.instances.released_at) == [1600, 2300] and list(r.instances.units) == [1, 1]


def test_an_idle_timeout_expiring_exactly_at_an_arrival_loses_to_it() -> None:
    # Idle timeout 600 s. j0 (0, 100 s) idle at 100, its timer expires at 700, when j1 (100 s) arrives:
    # arrivals go first, so j1 takes the instance, [700, 800]; idle again, released at 1,400 (1 unit).
    r = simulate_cluster(jobs([0, 700], [100, 100]), ClusterPolicy(release=IdleTimeout(600)), CloudTerms())
    assert list(r.jobs.instance_id) == [0, 0] and list(r.jobs.start) == [0, 700]
    assert (len(r.instances), r.instances.released_at[0], r.instances.units[0]) == (1, 1400, 1)


# -- P4 delays: queued jobs, timers and instances freed meanwhile ---------------------------------------------------

def test_a_delay_lets_an_instance_that_frees_meanwhile_serve_the_queue_fcfs() -> None:
    # Delay 600 s, merged. j0 (0, 100 s): instance 0 hired at 600, [600, 700]; idle, paid until 4,200.
    # 3,000: j1 (1,300 s) takes it at once (an idle instance needs no delay), [3000, 4300].
    # 4,000: j2 (10 s) waits (could start an instance at 4,600); 4,010: j3 (10 s) waits behind it.
    # 4,200: instance 0's first period-end event is out of date (it is busy): nothing; it starts a second hour.
    # 4,300: instance 0 takes j2, [4300, 4310] (j3 could start an instance at 4,610); 4,310: j3, [4310, 4320].
    # 4,600 and 4,610: the timers find no job waiting. 4,320: idle, paid until 7,800: released, 2 units.
    world = ClusterWorld(jobs([0, 3000, 4000, 4010], [100, 1300, 10, 10]), ClusterPolicy(start=(Delay(600),)),
                         CloudTerms())
    run_world(world, np.random.default_rng(0))
    r = summarize(world)
    assert list(r.jobs.start) == [600, 3000, 4300, 4310] and list(r.jobs.end) == [700, 4300, 4310, 4320]
    assert list(r.jobs.wait) == [600, 0, 300, 300] and list(r.jobs.instance_id) == [0, 0, 0, 0]
    led = r.instances
    assert (len(led), led.hired_at[0], led.released_at[0], led.units[0]) == (1, 600, 7800, 2)
    assert (led.jobs_hosted[0], led.busy_capacity_s[0]) == (4, 1420)
    assert r.summary.instance_cost == pytest.approx(2 * PRICE)
    # nothing left behind: every timer fired, no pool waits, and no load records (the rule reads no load)
    assert world.timers == set() and world.waiting.pools == set() and world.waiting.count == 0
    assert world.usage.times == [0.0]


def test_jobs_queued_behind_a_delay_start_instances_in_arrival_order() -> None:
    # Delay 600 s, cap 3, each job 1,000 s. j0 (0), j1 (10), j2 (400) wait; one timer at 600.
    # 600: instance 0 for j0; j1 may start one only at 610 (a timer then). 610: instance 1 for j1;
    # j2 only at 1,000 (a timer then). 1,000: instance 2 for j2. All idle before their hour ends.
    r = simulate_cluster(jobs([0, 10, 400], [1000, 1000, 1000]), ClusterPolicy(cap=3, start=(Delay(600),)),
                         CloudTerms())
    assert list(r.jobs.start) == [600, 610, 1000] and list(r.jobs.wait) == [600, 600, 600]
    assert list(r.jobs.instance_id) == [0, 1, 2]
    assert list(r.instances.hired_at) == [600, 610, 1000]
    assert list(r.instances.released_at) == [4200, 4210, 4600]


# -- billing period, progress, checks, misuse ----------------------------------------------------------------------

def test_a_shorter_billing_unit_ends_periods_sooner() -> None:
    # A 600-s unit: j0 (0, 100 s) idle at 100, released at 600; j1 (700, 100 s) hires a new one,
    # released at 1,300. Two units of $0.145 (a tenth of an hour each is billed as 1/6 h).
    r = simulate_cluster(jobs([0, 700], [100, 100]), ClusterPolicy(), CloudTerms(btu=600))
    assert list(r.jobs.instance_id) == [0, 1]
    assert list(r.instances.released_at) == [600, 1300] and list(r.instances.units) == [1, 1]
    assert list(r.instances.billed_hours) == [pytest.approx(1 / 6)] * 2
    assert r.summary.instance_cost == pytest.approx(2 * PRICE)


def test_progress_is_reported_every_n_jobs_and_at_the_last() -> None:
    # Every 2 jobs of 3: after the 2nd and the 3rd (the last), not after the 1st.
    calls: list[tuple[int, int]] = []
    recorder = Recorder(progress=lambda done, total: calls.append((done, total)), every=2)
    simulate_cluster(jobs([0, 10, 20], [100, 100, 100]), ClusterPolicy(), CloudTerms(), recorder=recorder)
    assert calls == [(2, 3), (3, 3)]


def corrupted(validate: bool | None = None) -> ClusterWorld:
    """A world whose queue count says one job more waits than does (nothing but a check can notice)."""
    js, policy, terms = jobs([0], [100]), ClusterPolicy(), CloudTerms()
    world = ClusterWorld(js, policy, terms) if validate is None else ClusterWorld(js, policy, terms, validate=validate)
    world.waiting.count += 1
    return world


def test_invariants_are_checked_after_every_event_only_when_asked() -> None:
    # at the first event (j0 arrives at 0 and is queued for the instance it starts): 1 submitted, 2 queued
    with pytest.raises(InvariantError) as caught:
        corrupted(validate=True).advance()
    assert str(caught.value) == "t=0.0: 1 job(s) submitted but 0 done + 0 running + 2 queued = 2"
    for world in (corrupted(), corrupted(validate=False)):
        assert world.advance() is None and world.finished == 1


def test_advance_and_act_refuse_to_be_called_out_of_turn() -> None:
    world = ClusterWorld(jobs([0], [100]), ClusterPolicy(keepalive=KEEP), CloudTerms())
    with pytest.raises(RuntimeError) as caught:
        world.act(True)
    assert str(caught.value) == "no decision is pending (call advance first)"
    assert world.advance() is not None
    with pytest.raises(RuntimeError) as caught:
        world.advance()
    assert str(caught.value) == "the previous decision was not acted on (call act first)"
