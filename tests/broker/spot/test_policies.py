"""Each policy on hand-worked timelines (100 s ticks; on-demand 0.001 $/s, spot 0.0001 $/s), and the registry."""

from __future__ import annotations

import pytest

from broker.spot.policies import SPOT_POLICIES, Failover, UniformProgress
from broker.spot.simulate import run_spot
from broker.spot.world import JobState, SpotJob
from tests.broker.spot.helpers import market
from workloads.errors import ConfigError, UnknownName

# W = 300 s, d = 50 s. Zone A: spot at ticks 0-1, none at 2-3, back from 4.
EARLY = ([1, 1, 0, 0, 1, 1, 1, 1], SpotJob(300, 600, 50))
# No spot until tick 3, plenty of slack: T = 800 s.
LATE = ([0, 0, 0, 1, 1, 1, 1, 1, 1], SpotJob(300, 800, 50))


@pytest.mark.parametrize(("policy", "case", "cost", "preemptions"), [
    ("on-demand", EARLY, 0.35, 0),
    # spot 0-200 (150 s done), idle while safe, on-demand from 400 when one more idle tick would miss: done at 600
    ("greedy", EARLY, 0.02 + 0.2, 1),
    # the same path: idle at 200 and 300 (150 >= ep(300) = 150), the safety net at 400 (200 < 150 + 2d)
    ("uniform-progress", EARLY, 0.02 + 0.2, 1),
    # knowing spot stays from 400, it takes it: 150 s more by 600 exactly, 400 s of spot in all
    ("omniscient", EARLY, 0.04, 1),
    # greedy waits for spot at 300: 350 s of spot
    ("greedy", LATE, 0.035, 0),
    # UP is behind ep(100) = 37.5 s at 100 and runs on-demand until progress 150 >= ep(400), then spot from 300
    ("uniform-progress", LATE, 0.2 + 0.02, 0),
    ("omniscient", LATE, 0.035, 0),
])
def test_each_policy_pays_its_hand_worked_cost(policy: str, case: tuple[list[int], SpotJob], cost: float,
                                               preemptions: int) -> None:
    counts, job = case
    run = run_spot(market(counts), [job], policy, validate=True)
    assert run.cost == pytest.approx(cost) and run.preemptions == preemptions and run.deadline_misses == 0


def test_the_early_case_meets_its_deadline_to_the_second() -> None:
    counts, job = EARLY
    for policy in ("greedy", "uniform-progress"):
        assert run_spot(market(counts), [job], policy).jobs.iloc[0]["done_h"] * 3600 == pytest.approx(600)


# Zone A (cheap) drops at tick 1 and is back at 2; zone B (twice A's price) is back only at 3.
TWO_ZONES = ([1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1], [1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1])


def two_zone_market():  # type: ignore[no-untyped-def]
    a, b = TWO_ZONES
    return market(a, b, prices=[[0.36] * len(a), [0.72] * len(b)])


def test_failover_blocks_the_preempted_zone_and_relaunches_in_the_next_by_price() -> None:
    # A 0-100 (50 s done, 0.01 $); A blocked; B from 300, ready 350, 250 s more: 300 s at 0.0002 $/s
    run = run_spot(two_zone_market(), [SpotJob(300, 1000, 50)], Failover(), validate=True)
    assert run.cost == pytest.approx(0.01 + 0.06) and run.preemptions == 1


def test_greedy_returns_to_the_cheapest_zone_as_soon_as_it_is_back() -> None:
    run = run_spot(two_zone_market(), [SpotJob(300, 1000, 50)], "greedy", validate=True)
    assert run.cost == pytest.approx(0.01 + 0.03)


def test_failover_with_no_block_is_greedy() -> None:
    job = SpotJob(300, 1000, 50)
    assert run_spot(two_zone_market(), [job], Failover(block_s=0.0)).cost == \
        pytest.approx(run_spot(two_zone_market(), [job], "greedy").cost)
    with pytest.raises(ConfigError, match="block time must be >= 0"):
        Failover(block_s=-1.0)
    assert Failover().block_s == 3600.0  # SkyPilot's wait before a preempted zone is tried again: our choice, an hour


def test_uniform_progress_holds_on_demand_until_ahead_of_expected_progress_two_overheads_on() -> None:
    job = SpotJob(300, 800, 50)
    assert UniformProgress.expected(job_state(job), 400) == pytest.approx(150)
    run = run_spot(market([0, 0, 1, 1, 1, 1, 1, 1, 1]), [job], "uniform-progress")
    # on-demand from 100 (37.5 behind); at 200 progress 50 < ep(300) = 112.5 though spot is there: stays;
    # at 300 150 >= ep(400) = 150: spot from 300, done at 500
    assert run.jobs.iloc[0]["od_cost"] == pytest.approx(0.2) and run.jobs.iloc[0]["spot_cost"] == pytest.approx(0.02)


def job_state(job: SpotJob):  # type: ignore[no-untyped-def]
    from broker.spot.world import IDLE, JobState

    return JobState(0, job.work_s, job.deadline_s, job.overhead_s, job.checkpoint, 0.0, IDLE, 0.0, False)


def test_the_registry_builds_every_policy_and_refuses_an_unknown_one() -> None:
    assert list(SPOT_POLICIES) == ["on-demand", "greedy", "uniform-progress", "omniscient", "failover"]
    from broker.spot.policies import _build

    with pytest.raises(UnknownName) as info:
        _build().get("lucky")
    assert str(info.value) == ("unknown spot policy 'lucky'; known: on-demand, greedy, uniform-progress, omniscient, "
                               "failover")


def test_the_omniscient_policy_refuses_a_batch() -> None:
    with pytest.raises(ConfigError, match="one job at a time"):
        run_spot(market([1] * 8), [SpotJob(100, 600, 0), SpotJob(100, 600, 0)], "omniscient")


# -- one decision, built by hand (100 s ticks; the world is not needed by these policies) ---------------------

def state(job: int = 0, *, work: float = 300, deadline: float = 800, overhead: float = 50, progress: float = 0.0,
          using: int = -2, ready_in: float = 0.0) -> JobState:
    return JobState(job, work, deadline, overhead, True, progress, using, ready_in, False)


def decision(*jobs, now: float = 0.0, free=(1,), prices=None):  # type: ignore[no-untyped-def]
    from broker.spot.world import Decision

    return Decision(now, round(now / 100), 100.0, tuple(free), tuple(prices or [0.36] * len(free)), 3.6, tuple(jobs))


def test_the_registry_is_built_name_by_name() -> None:
    from broker.spot.policies import Greedy, Omniscient, OnDemand, _build

    assert {n: _build().get(n) for n in _build()} == {
        "on-demand": OnDemand, "greedy": Greedy, "uniform-progress": UniformProgress, "omniscient": Omniscient,
        "failover": Failover}


@pytest.mark.parametrize(("jobs", "free", "expected"), [
    ((state(0), state(1), state(2)), (2,), (0, 0, -2)),  # two free instances go to the first two jobs
    ((state(0, using=0), state(1)), (1,), (0, 0)),  # a kept instance takes none of the free ones
    ((state(0, using=-1), state(1)), (1,), (-1, 0)),  # on-demand takes none either
    ((state(0), state(1)), (1, 1), (0, 1)),  # the second job goes to the next zone
])
def test_jobs_share_out_the_free_instances_in_order(jobs, free, expected) -> None:  # type: ignore[no-untyped-def]
    from broker.spot.policies import Greedy

    assert Greedy().decide(decision(*jobs, free=free, prices=[0.36, 0.72][:len(free)]), None) == expected  # type: ignore[arg-type]


def test_the_cheapest_free_zone_is_taken_not_the_first() -> None:
    from broker.spot.policies import Greedy

    assert Greedy().decide(decision(state(), free=(1, 1), prices=[0.72, 0.36]), None) == (1,)  # type: ignore[arg-type]


def test_safe_counts_work_done_within_the_tick_the_time_left_and_what_a_kept_instance_saves() -> None:
    from broker.spot.policies import safe

    # on-demand already running: 100 s more ends the work exactly, with no time for an overhead after it
    assert safe(state(work=100, deadline=100, using=-1), -1, decision(state()))
    # a new spot launch with 50 s left before the deadline: only 50 s of progress, not a whole tick's
    assert not safe(state(work=60, deadline=200, overhead=0), 0, decision(state(), now=150.0))
    # keeping a ready instance finishes (100 s); relaunching it would not (50 s) and leaves no room
    assert safe(state(work=100, deadline=190, using=0), 0, decision(state()))
    assert not safe(state(work=100, deadline=190, using=-2), 0, decision(state()))


def test_greedy_and_failover_keep_a_running_instance_that_finishes_in_time() -> None:
    from broker.spot.policies import Greedy

    job = state(work=100, deadline=190, using=0)
    for policy in (Greedy(), Failover()):
        assert policy.decide(decision(job, free=(0,)), None) == (0,)  # type: ignore[arg-type]


def test_failover_stays_on_demand_and_goes_on_demand_when_idling_is_unsafe() -> None:
    assert Failover().decide(decision(state(using=-1)), None) == (-1,)  # type: ignore[arg-type]
    assert Failover().decide(decision(state(work=300, deadline=400), free=(0,)), None) == (-1,)  # type: ignore[arg-type]


def test_failover_blocks_a_zone_for_the_job_that_lost_it_only_and_not_past_its_block() -> None:
    policy = Failover()
    policy.last = {0: 0}  # job 0 ran in zone 0 at the last tick and is idle now: preempted
    both = decision(state(0), state(1), free=(1, 1), prices=[0.36, 0.72])
    assert policy.decide(both, None) == (1, 0)  # type: ignore[arg-type]
    unblocked = Failover(block_s=0.0)
    unblocked.last = {0: 0}
    assert unblocked.decide(decision(state(0)), None) == (0,)  # type: ignore[arg-type]


def test_uniform_progress_rules_at_their_boundaries() -> None:
    # hysteresis: on on-demand with ep(300) = 112.5 <= progress 120 < ep(400) = 150: stays, though spot is free
    assert UniformProgress().decide(decision(state(progress=120, using=-1), now=300.0), None) == (-1,)  # type: ignore[arg-type]
    # safety net exactly at its edge: time left 500 = work left 400 + 2d: not yet, spot is taken
    assert UniformProgress().decide(decision(state(work=400, deadline=500)), None) == (0,)  # type: ignore[arg-type]
    # on spot and running with too little time left: it stays (exploitation comes before the safety net)
    assert UniformProgress().decide(decision(state(work=450, deadline=500, using=0)), None) == (0,)  # type: ignore[arg-type]
    # once the safety net fires, on-demand to the end, whatever comes later
    policy = UniformProgress()
    assert policy.decide(decision(state(work=460, deadline=500), free=(0,)), None) == (-1,)  # type: ignore[arg-type]
    assert policy.decide(decision(state(work=100, deadline=5000), now=100.0), None) == (-1,)  # type: ignore[arg-type]


def test_the_omniscient_policy_keeps_its_cost_and_runs_on_demand_when_nothing_can_finish() -> None:
    from broker.spot.policies import Omniscient

    policy = Omniscient()
    run = run_spot(market(*[EARLY[0]]), [EARLY[1]], policy, validate=True)
    assert policy.cost == pytest.approx(run.cost)
    hopeless = run_spot(market([1] * 8), [SpotJob(590, 600, 20)], "omniscient", validate=True)
    assert hopeless.deadline_misses == 1 and hopeless.jobs.iloc[0]["od_cost"] > 0
    with pytest.raises(ConfigError) as info:
        run_spot(market([1] * 8), [SpotJob(100, 600, 0), SpotJob(100, 600, 0)], "omniscient")
    assert str(info.value) == "the omniscient optimum is for one job at a time"


# -- the paper's rules where an earlier reading differed ---------------------------------------------------------------
# Greedy's safety net is the paper's (§3.3-3.4): idle with R(t) < C(t) + 2d -> on-demand to the end. With d = 150 s on
# 100 s ticks, a rule that only keeps one more tick off on-demand safe (R >= C + d + a tick) would still take spot at
# R - C = 250; the paper's greedy does not. Spot 0-200 (50 s done after the 150 s changeover), gone at 200, back at 300.
WINDOW = ([1, 1, 0, 1, 1, 1, 1, 1, 1], SpotJob(300, 800, 150))


def test_greedy_goes_on_demand_once_idle_with_less_than_two_overheads_of_slack() -> None:
    counts, job = WINDOW
    run = run_spot(market(counts), [job], "greedy", validate=True)
    # at 200: R = 600, C = 250, 600 >= 250 + 300: idle; at 300: R = 500 < 550: on-demand from 300, ready at 450,
    # done at 700: 200 s of spot (0.02 $) and 400 s of on-demand (0.4 $)
    assert run.cost == pytest.approx(0.02 + 0.4) and run.deadline_misses == 0
    assert run.jobs.iloc[0]["done_h"] * 3600 == pytest.approx(700)


def test_greedy_takes_spot_back_with_exactly_two_overheads_of_slack() -> None:
    from broker.spot.policies import Greedy

    # R = 500, C = 200, 2d = 300: not below, so spot; one second less of slack: on-demand
    assert Greedy().decide(decision(state(work=300, deadline=800, overhead=150, progress=100), now=300.0), None) == (0,)  # type: ignore[arg-type]
    assert Greedy().decide(decision(state(work=300, deadline=800, overhead=150, progress=99), now=300.0), None) == (-1,)  # type: ignore[arg-type]


def test_the_safety_net_also_covers_a_tick_longer_than_two_overheads() -> None:
    from broker.spot.policies import Greedy

    # d = 10 s on 100 s ticks: R - C = 100 >= 2d, but one more idle tick would leave 0 s for a 10 s changeover
    job = state(work=300, deadline=500, overhead=10, progress=100)
    assert Greedy().decide(decision(job, now=200.0, free=(0,)), None) == (-1,)  # type: ignore[arg-type]
    assert UniformProgress().decide(decision(job, now=200.0, free=(0,)), None) == (-1,)  # type: ignore[arg-type]
    for policy in ("greedy", "uniform-progress"):
        assert run_spot(market([1, 0, 0, 0, 0, 0]), [SpotJob(300, 500, 10)], policy, validate=True).deadline_misses == 0


def test_uniform_progress_leaves_on_demand_only_for_spot() -> None:
    # the authors' implementation: on on-demand with no spot, it stays, however far ahead (no relaunch later)
    ahead = state(progress=200, using=-1)
    assert UniformProgress().decide(decision(ahead, now=300.0, free=(0,)), None) == (-1,)  # type: ignore[arg-type]
    assert UniformProgress().decide(decision(ahead, now=300.0, free=(1,)), None) == (0,)  # type: ignore[arg-type]
    # no spot ever: idle at 0 (not behind), on-demand from 100 (behind ep = 37.5), ready at 150, done at 450: 0.35 $;
    # leaving for idle once ahead of ep(t + 2d) at 300 would relaunch at 500 and pay 0.4 $
    run = run_spot(market([0] * 9), [SpotJob(300, 800, 50)], "uniform-progress", validate=True)
    assert run.cost == pytest.approx(0.35) and run.launches == 1


def test_greedy_and_failover_leave_a_spot_instance_still_in_its_changeover_when_keeping_it_could_miss() -> None:
    from broker.spot.policies import Greedy

    # on spot in zone 0, 100 s of changeover left, nothing done: keeping it one tick leaves 350 s for 300 s of work
    # and a 50 s relaunch (just safe); with a deadline one second earlier, on-demand now
    for policy in (Greedy, Failover):
        just = state(work=300, deadline=450, overhead=50, using=0, ready_in=100)
        assert policy().decide(decision(just, free=(0,)), None) == (0,)  # type: ignore[arg-type]
        late = state(work=300, deadline=449, overhead=50, using=0, ready_in=100)
        assert policy().decide(decision(late, free=(0,)), None) == (-1,)  # type: ignore[arg-type]


def test_uniform_progress_ahead_of_ep_goes_on_demand_when_a_tick_idle_would_leave_no_room() -> None:
    # d = 10 s on 100 s ticks, at 100 s: progress 100 >= ep = 75 (so not behind) and time left 300 >= 200 + 2d;
    # but idle until 200 leaves 200 s for 200 s of work and a 10 s launch: on-demand now, not idle
    job = state(work=300, deadline=400, overhead=10, progress=100)
    assert UniformProgress().decide(decision(job, now=100.0, free=(0,)), None) == (-1,)  # type: ignore[arg-type]
    # with spot free, the launch itself is safe (90 s of progress in the tick): spot
    assert UniformProgress().decide(decision(job, now=100.0, free=(1,)), None) == (0,)  # type: ignore[arg-type]
