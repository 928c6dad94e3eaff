"""The cloud-cluster world on hand-worked timelines that a wrong count, rank or hand-over would change (SPEC §7).

Every figure is worked out in the comments: jobs (submit, run time), the instant each gets its
instance, instances hired / booted / released, the units billed at $0.145 per hour. Decisions of a
keep-alive rule are made by hand through ``advance`` / ``act``, so the draws play no part.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.cloudcluster.bill import summarize
from broker.cloudcluster.policies import ClusterPolicy, Delay, FixedKeepAlive, IdleTimeout, PerUser
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.world import ClusterWorld, run
from broker.sim.recorder import Recorder
from broker.sim.validate import InvariantError
from tests.broker.cloudcluster.test_world import jobs

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
    run(world, np.random.default_rng(0))
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
