"""The IPP objective on hand-worked plans, and against what the engine bills."""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.config import SimulationConfig
from broker.coh.objective import plan_cost
from broker.coh.simulate import simulate
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book
from broker.sim.recorder import MemoryRecorder
from heuristics.fleet import Batch, Fleet, Plan
from workloads.jobs import JobTable

CATALOG = load_price_book().catalog()
HOURLY = CATALOG.hourly


def one_vm_fleet(ld: float) -> Fleet:
    a = np.array
    return Fleet(now=1000.0, boot_time=120.0, free=a([300.0]), capacity=a([410.0]), vm_type=a([1]),
                 ready_at=a([120.0]), anchor=a([0.0]), last_departure=a([ld]), n_jobs=a([1]),
                 arr_min=a([np.nan]), arr_max=a([np.nan]), arr_sum=a([0.0]), dep_min=a([np.nan]),
                 dep_max=a([np.nan]), btu=3600.0, new_rollover=3600.0,
                 type_capacity=CATALOG.capacity, type_order=CATALOG.efficiency_order(), rate=HOURLY[[1]])


def single(arrival: float, runtime: float) -> Batch:
    return Batch(index=np.array([0]), arrival=np.array([arrival]), runtime=np.array([runtime]),
                 r=np.array([50.0]), user=np.array([0]))


@pytest.mark.parametrize(("runtime", "extra_units"), [(4000, 0), (6300, 1), (13_000, 2)])
def test_running_vm_pays_only_the_extra_units(runtime: float, extra_units: int) -> None:
    fleet = one_vm_fleet(ld=5000.0)  # billed from 0: 2 units already cover the jobs it hosts
    plan = Plan(jobs=np.array([0]), targets=np.array([0]), new_types=np.array([], np.int64), n_slots=1)
    assert plan_cost(plan, single(1000, runtime), fleet, Billing(), HOURLY) == pytest.approx(extra_units * 0.26)


def test_new_vm_pays_from_now_to_the_latest_departure() -> None:
    fleet = one_vm_fleet(ld=5000.0)
    plan = Plan(jobs=np.array([0]), targets=np.array([1]), new_types=np.array([0]), n_slots=1)
    # small VM started at 1000, ready 1120: the job (arrival 1000) starts 1120, ends 4720 -> 2 units
    assert plan_cost(plan, single(1000, 3600), fleet, Billing(), HOURLY) == pytest.approx(2 * 0.065)


def test_objective_equals_the_bill_of_a_one_tick_run() -> None:
    rng = np.random.default_rng(3)
    runtime = rng.uniform(100, 3000, 40)
    table = JobTable.from_arrays(arrival=np.full(40, 1000.0), runtime=runtime, r=10 * rng.integers(1, 11, 40))
    recorder = MemoryRecorder()
    res = simulate(table, CATALOG, config=SimulationConfig(), seed=0, recorder=recorder)
    ticks = recorder.frame("portfolio")
    assert len(ticks) == 1
    winner = ticks.winner.iloc[0]
    assert ticks[f"cost[{winner}]"].iloc[0] == pytest.approx(res.summary.cost)
