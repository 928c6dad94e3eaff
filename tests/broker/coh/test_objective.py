"""The IPP objective on hand-worked plans, and against what the engine bills."""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.config import SimulationConfig
from broker.coh.objective import plan_cost, planned_departures
from broker.coh.simulate import simulate
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book
from broker.sim.recorder import MemoryRecorder
from heuristics.fleet import Batch, Fleet, Plan
from tests.heuristics.test_fleet import BOOT, jobs, on_slot0, one_large, running
from tests.heuristics.test_fleet import HOURLY as TWO_TYPES_HOURLY
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


# --- the IPP objective on hand-worked ticks ------------------------------------------------------------------------
# The fleets, batches and plans are built by the helpers of tests/heuristics/test_fleet.py (whose docstring gives the
# times and prices): a tick at 5,000 s, a 120-s boot, exact billing in units of 3,600 s, two VM types, 0 (capacity
# 100, 0.065 $ an hour) and 1 (capacity 410, 0.26 $ an hour).


def test_default_is_the_papers_reading_charged_from_the_last_departure() -> None:
    # the VM's last job left at 1,000 (unit 1); at 5,000 it idles in unit 2. A job arriving at 5,000 runs 1,000 s
    # on it: start max(5000, 5000, 120) = 5000, departs 6,000.
    # paper (default): units_until(0, 6000) - units_until(0, 1000) = 2 - 1 = 1 unit -> 0.26 $
    # paid=True: ld = max(1000, 5000) = 5000: units_until(0, 6000) - units_until(0, 5000) = 2 - 2 = 0 -> 0 $
    fleet, batch, plan = one_large(1000.0), jobs([5000.0], [1000.0]), on_slot0()
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY) == pytest.approx(0.26)
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY, paid=False) == pytest.approx(0.26)
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY, paid=True) == 0.0


def test_a_queued_job_starts_now_not_at_its_past_arrival() -> None:
    # the job arrived at 4,000 and waited; its VM was ready at 120. It starts at max(4000, 5000, 120) = 5000 and,
    # running 3,200 s, departs 8,200: units_until(0, 8200) = 3, the VM's own (last departure 4,000) 2 -> 1 unit.
    # Started at its arrival it would depart exactly at 7,200, the rollover of unit 2, and cost nothing.
    fleet, batch, plan = one_large(4000.0), jobs([4000.0], [3200.0]), on_slot0()
    assert planned_departures(plan, batch, fleet) == ([0], [8200.0])
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY) == pytest.approx(0.26)
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY, paid=True) == pytest.approx(0.26)


def test_a_job_on_a_ready_running_vm_does_not_wait_for_a_boot() -> None:
    # the VM has been ready since 120: a job arriving at 5,000 starts at 5,000 and, running 2,200 s, departs at 7,200,
    # exactly the end of unit 2: units_until(0, 7200) - units_until(0, 4000) = 2 - 2 = 0 -> free.
    # (Were it made to wait for a boot, 5,120 + 2,200 = 7,320 would need a third unit: 0.26 $.)
    fleet, batch, plan = one_large(4000.0), jobs([5000.0], [2200.0]), on_slot0()
    assert planned_departures(plan, batch, fleet) == ([0], [7200.0])
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY) == 0.0


def test_departures_and_cost_on_a_ready_a_booting_and_a_new_vm() -> None:
    # slot 0: large, started at 0, ready at 120, last departure 4,000.
    # slot 1: small, started at 4,950 (billed from 4,950), still booting until 5,070, no job yet (ld = 4,950).
    # new VM 0 (target 2): large, billed from 5,000, ready at 5,120.
    fleet = running(vm_type=[1, 0], anchor=[0.0, 4950.0], ready_at=[BOOT, 5070.0], last_departure=[4000.0, 4950.0])
    batch = jobs([4000.0, 5000.0, 5100.0, 5000.0], [2200.0, 3480.0, 1000.0, 3480.0])
    plan = Plan(jobs=np.array([0, 1, 2, 3]), targets=np.array([0, 1, 2, 1]), new_types=np.array([1]), n_slots=2)
    # job 0 (queued since 4,000) on slot 0: max(4000, 5000, 120) = 5000 + 2200 = 7200
    # job 1 on slot 1: max(5000, 5000, 5070) = 5070 + 3480 = 8550 = 4950 + 3600, slot 1's first rollover
    # job 2 (arrives 5,100, in the look-ahead) on the new VM: max(5100, 5000, 5120) = 5120 + 1000 = 6120
    # job 3 on slot 1 too, departing at the same 8,550 as job 1
    assert planned_departures(plan, batch, fleet) == ([0, 1, 2, 1], [7200.0, 8550.0, 6120.0, 8550.0])
    # slot 0: units_until(0, 7200) - units_until(0, 4000) = 2 - 2 = 0
    # slot 1 (paper): units_until(4950, 8550) - units_until(4950, 4950) = 1 - 0 = 1 -> 0.065
    # new VM: units_until(5000, 6120) = 1 -> 0.26
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY) == pytest.approx(0.065 + 0.26)
    # paid: slot 1's ld = max(4950, 5000) = 5000, units_until(4950, 5000) = 1 already paid -> 1 - 1 = 0
    assert plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY, paid=True) == pytest.approx(0.26)


@pytest.mark.parametrize(("n_jobs", "n_targets"), [(2, 1), (1, 2)])
def test_a_plan_whose_jobs_and_targets_differ_in_length_is_rejected(n_jobs: int, n_targets: int) -> None:
    # a plan pairs jobs[p] with targets[p]: a job without a target (or a target without a job) is an error, not a
    # plan silently cut to its shorter part
    fleet, batch = one_large(4000.0), jobs([5000.0, 5000.0], [100.0, 100.0])
    plan = Plan(jobs=np.arange(n_jobs), targets=np.zeros(n_targets, np.int64), new_types=np.array([], np.int64),
                n_slots=1)
    with pytest.raises(ValueError):
        planned_departures(plan, batch, fleet)
    with pytest.raises(ValueError):
        plan_cost(plan, batch, fleet, Billing(), TWO_TYPES_HOURLY)
