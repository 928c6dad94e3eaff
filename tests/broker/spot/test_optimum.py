"""The omniscient optimum: equal to brute force over every choice sequence, replayed exactly by the world."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from broker.pricing.spot import SpotBilling
from broker.spot.optimum import omniscient_plan, optimum, problem
from broker.spot.simulate import run_spot
from broker.spot.world import IDLE, ON_DEMAND, SpotJob
from tests.broker.spot.helpers import Script, market
from workloads.errors import ConfigError


def brute_force(m, job: SpotJob) -> float:  # type: ignore[no-untyped-def]
    """The least cost of any sequence of choices, one per tick, that finishes by the deadline."""
    ticks = math.ceil(job.deadline_s / m.gap_s)
    options = (IDLE, ON_DEMAND, *range(len(m.zones)))
    best = math.inf
    for choices in itertools.product(options, repeat=ticks):
        try:
            run = run_spot(m, [job], Script(choices), validate=True)
        except ValueError:  # spot where none was free
            continue
        if run.deadline_misses == 0:
            best = min(best, run.cost)
    return best


def random_case(seed: int, zones: int, ticks: int, checkpoint: bool | None = None):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    counts = [rng.integers(0, 2, size=ticks + 1).tolist() for _ in range(zones)]
    prices = [rng.choice([0.36, 0.72, 1.8], size=ticks + 1).tolist() for _ in range(zones)]
    deadline = int(rng.choice([ticks * 100, ticks * 100 - 70]))
    job = SpotJob(int(rng.integers(150, deadline - 20)), deadline, int(rng.choice([0, 30, 130, 250])),
                  checkpoint=bool(rng.integers(0, 2)) if checkpoint is None else checkpoint)
    return market(*counts, prices=prices), job


@pytest.mark.parametrize(("seed", "zones", "ticks"), [(s, 1, 5) for s in range(6)] + [(6, 1, 6), (7, 1, 6), (8, 2, 5)])
def test_the_optimum_equals_brute_force_over_every_choice_sequence(seed: int, zones: int, ticks: int) -> None:
    m, job = random_case(seed, zones, ticks)
    expected = brute_force(m, job)
    got = optimum(problem(m, m.window(0, ticks + 1), job))
    assert got == pytest.approx(expected, rel=1e-12) if expected < math.inf else got == math.inf


#: Hand-picked shapes the random ones rarely give: work done within one tick (with and without a restart),
#: a changeover shorter than a tick, cheap spot that keeps being lost without checkpointing.
SHAPES = [
    ([[1, 1, 0, 1, 1, 1]], [[0.36] * 6], SpotJob(60, 500, 30, checkpoint=False)),
    ([[0, 1, 1, 0, 1, 1]], [[0.36] * 6], SpotJob(90, 430, 0, checkpoint=True)),
    ([[1, 0, 1, 1, 0, 1]], [[0.36, 0.36, 1.8, 0.36, 0.36, 0.36]], SpotJob(150, 500, 30, checkpoint=False)),
    ([[1, 0, 1, 0, 1, 1], [0, 1, 1, 1, 0, 0]], [[0.36] * 6, [0.72] * 6], SpotJob(170, 470, 30, checkpoint=False)),
    ([[1, 0, 1, 0, 1, 1], [0, 1, 1, 1, 0, 0]], [[0.36] * 6, [0.72] * 6], SpotJob(170, 470, 30, checkpoint=True)),
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_the_optimum_equals_brute_force_on_shapes_random_cases_miss(shape: int) -> None:
    counts, prices, job = SHAPES[shape]
    m = market(*counts, prices=prices)
    expected = brute_force(m, job)
    assert expected < math.inf and optimum(problem(m, m.window(0, 6), job)) == pytest.approx(expected, rel=1e-12)
    cost, _ = omniscient_plan(m, m.window(0, 6), job)
    assert run_spot(m, [job], "omniscient", validate=True).cost == pytest.approx(cost, rel=1e-12)


@pytest.mark.parametrize("checkpoint", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_the_world_replaying_the_plan_pays_the_optimum_and_no_policy_pays_less(seed: int, checkpoint: bool) -> None:
    m, job = random_case(seed + 100, 2, 12, checkpoint)
    cost, choices = omniscient_plan(m, m.window(0, 13), job)
    run = run_spot(m, [job], "omniscient", validate=True)
    if cost == math.inf:
        assert choices == [] and run.deadline_misses == 1
        return
    assert run.cost == pytest.approx(cost, rel=1e-12) and run.deadline_misses == 0
    for policy in ("on-demand", "greedy", "uniform-progress", "failover"):
        other = run_spot(m, [job], policy)
        assert other.deadline_misses or other.cost >= cost * (1 - 1e-12)


def test_a_job_that_cannot_finish_has_no_plan() -> None:
    m = market([1] * 8)
    assert omniscient_plan(m, m.window(0, 8), SpotJob(590, 600, 20)) == (math.inf, [])


def test_the_optimum_refuses_hourly_billing_and_fractional_seconds() -> None:
    hourly = market([1] * 8, billing=SpotBilling("hour"))
    with pytest.raises(ConfigError) as info:
        problem(hourly, hourly.window(0, 8), SpotJob(300, 600, 0))
    assert str(info.value) == "the omniscient optimum is for per-second billing (use --billing second)"
    m = market([1] * 8)
    for job, name, value in ((SpotJob(300.5, 600, 0), "work", 300.5), (SpotJob(300, 600.5, 0), "deadline", 600.5),
                             (SpotJob(300, 600, 0.5), "overhead", 0.5)):
        with pytest.raises(ConfigError) as info:
            problem(m, m.window(0, 8), job)
        assert str(info.value) == f"the omniscient optimum needs whole seconds: the {name} is {value} s"


def test_the_unit_is_the_gcd_of_tick_work_deadline_and_overhead() -> None:
    m = market([1] * 1000, gap=195)
    pb = problem(m, m.window(0, 1000), SpotJob(48 * 3600, 52 * 3600, 720))
    assert (pb.unit_s, pb.gap, pb.work, pb.overhead, pb.ages) == (15, 13, 11520, 48, 4)
    assert pb.lengths[-1] == (52 * 3600 - 959 * 195) // 15 and len(pb.lengths) == 960
