"""Each policy on hand-worked timelines (100 s ticks; on-demand 0.001 $/s, spot 0.0001 $/s), and the registry."""

from __future__ import annotations

import pytest

from broker.spot.policies import SPOT_POLICIES, Failover, UniformProgress
from broker.spot.simulate import run_spot
from broker.spot.world import SpotJob
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
    with pytest.raises(UnknownName):
        SPOT_POLICIES.get("lucky")


def test_the_omniscient_policy_refuses_a_batch() -> None:
    with pytest.raises(ConfigError, match="one job at a time"):
        run_spot(market([1] * 8), [SpotJob(100, 600, 0), SpotJob(100, 600, 0)], "omniscient")
