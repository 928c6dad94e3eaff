"""The capacity rules on hand-worked cases: a job that arrives just as another leaves shares its VM
under the interval rule and starts a new VM under the tick rule, for the heuristics, the IPP's
evaluator, the exact path, the solvers and the whole world alike.

The case: one ``large`` VM (capacity 410, $0.26 an hour, ready since t=0) hosts job A (r=400) over
``[0, 1000)``. At the tick t=870 (boot 120 + tick 10 ahead of B's arrival) job B (r=400, 500 s)
arrives at t=1000. Under the interval rule B's ``[1000, 1500)`` never meets A, so the VM has room
(410 - 0 >= 400), and B costs nothing more: both fit in the VM's first hour (anchor 0, unit ends
3600). Under the tick rule A still holds 400 at t=870, room 10 < 400, so B needs a new VM: one
hour of a ``large`` ($0.26, ``small`` holds only 100). With B arriving one second earlier, the
jobs overlap over ``[999, 1000)`` and B needs a new VM under both rules.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.exact import solve_exact
from broker.coh.instance import make_instance
from broker.coh.intervals import IntervalTable
from broker.coh.ipp import build_model
from broker.coh.ipp_member import IppMember
from broker.coh.simulate import simulate
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import peaks
from heuristics.registry import HEURISTICS
from solvers.base import Limit, get_solver
from workloads.jobs import JobTable

CATALOG = load_price_book().catalog()
BILLING = Billing()
LARGE = 0.26


def fleet_with_a(*, interval: bool, a_end: float = 1000.0, now: float = 870.0) -> Fleet:
    table = IntervalTable(1)
    table.add(0, job=0, start=0.0, end=a_end, r=400.0)
    one = np.ones(1)
    return Fleet(now=now, boot_time=120.0, free=10 * one, capacity=410 * one, vm_type=np.ones(1, np.int64),
                 ready_at=0 * one, anchor=0 * one, last_departure=a_end * one, n_jobs=np.ones(1, np.int64),
                 arr_min=0 * one, arr_max=0 * one, arr_sum=0 * one, dep_min=a_end * one, dep_max=a_end * one,
                 btu=3600.0, new_rollover=3600.0, type_capacity=CATALOG.capacity,
                 type_order=CATALOG.efficiency_order(), rate=LARGE * one,
                 occupancy=table.occupancy(1) if interval else None)


def batch(arrival: list[float], runtime: list[float], r: list[float]) -> Batch:
    m = len(arrival)
    return Batch(index=np.arange(m), arrival=np.array(arrival), runtime=np.array(runtime), r=np.array(r),
                 user=np.zeros(m, np.int64))


B = ([1000.0], [500.0], [400.0])
B_EARLY = ([999.0], [500.0], [400.0])
SHARE = Plan(jobs=np.array([0]), targets=np.array([0]), new_types=np.array([], np.int64), n_slots=1)
NEW = Plan(jobs=np.array([0]), targets=np.array([1]), new_types=np.array([1]), n_slots=1)


@pytest.mark.parametrize("name", ["FCFS-LD", "FCFS-SM", "FCFS-LM", "FCFS-ED", "FCFS-CFH", "LJF-EA", "RR-Rnd"])
@pytest.mark.parametrize(("interval", "jobs", "target"), [(True, B, 0), (False, B, 1), (True, B_EARLY, 1),
                                                           (False, B_EARLY, 1)])
def test_heuristics_share_the_vm_only_when_the_intervals_do_not_meet(name: str, interval: bool, jobs: tuple,
                                                                      target: int) -> None:
    plan = HEURISTICS.get(name).plan(batch(*jobs), fleet_with_a(interval=interval), np.random.default_rng(0))
    assert plan.targets.tolist() == [target]
    assert plan.new_types.tolist() == ([] if target == 0 else [1])


@pytest.mark.parametrize(("interval", "jobs", "shared"), [(True, B, 0.0), (False, B, np.inf), (True, B_EARLY, np.inf)])
def test_the_evaluator_and_the_exact_path_agree(interval: bool, jobs: tuple, shared: float) -> None:
    inst = make_instance(batch(*jobs), fleet_with_a(interval=interval), BILLING, CATALOG.hourly, paid=True)
    assert inst.cost(SHARE) == shared
    assert inst.cost(NEW) == pytest.approx(LARGE)
    plan, cost = solve_exact(inst)
    assert cost == pytest.approx(min(shared, LARGE))
    assert plan.targets.tolist() == ([0] if shared == 0 else [1])


@pytest.mark.parametrize("solver", ["cbc", "cpsat"])
@pytest.mark.parametrize(("interval", "target"), [(True, 0), (False, 1)])
def test_the_integer_program_shares_the_vm_under_the_interval_rule(solver: str, interval: bool, target: int) -> None:
    member = IppMember(get_solver(solver), Limit.deterministic(5.0 if solver == "cpsat" else 5000.0),
                       billing=BILLING, hourly=CATALOG.hourly, fast_path=False)
    plan = member.plan(batch(*B), fleet_with_a(interval=interval), np.random.default_rng(0))
    assert plan is not None and member.last is not None and member.last.status.value == "optimal"
    assert plan.targets.tolist() == [target]


def test_two_jobs_one_after_the_other_share_one_new_vm_only_under_the_interval_rule() -> None:
    # C (r=400) over [1000, 1500) and D (r=400) over [1500, 2000) on an empty fleet: one new large
    # VM holds both in turn (one hour, $0.26) under the interval rule; the tick rule needs two.
    jobs = batch([1000.0, 1500.0], [500.0, 500.0], [400.0, 400.0])
    for interval, vms in ((True, 1), (False, 2)):
        f = fleet_with_a(interval=interval, a_end=0.0)  # A left at 0: the VM is idle...
        f = dataclasses.replace(f, vm_type=np.full(1, -1), free=np.full(1, -1.0))  # ...and released
        plan = HEURISTICS.get("FCFS-LD").plan(jobs, f, np.random.default_rng(0))
        assert len(plan.new_types) == vms
        inst = make_instance(jobs, f, BILLING, CATALOG.hourly, paid=True)
        assert solve_exact(inst)[1] == pytest.approx(vms * LARGE)
        model = build_model(inst)
        result = get_solver("cpsat").solve(model.model, limit=Limit.deterministic(5.0))
        assert result.values is not None
        assert inst.cost(model.decode(result.values)) == pytest.approx(vms * LARGE)


@pytest.mark.parametrize(("runtime_y", "interval", "vms"), [(100.0, True, 0), (101.0, True, 1), (100.0, False, 1)])
def test_a_job_placed_earlier_in_the_call_counts_over_its_own_interval_whatever_the_order(
        runtime_y: float, interval: bool, vms: int) -> None:
    # An idle large VM. LJF places X (r=300, [1000, 1500)) first, then Y (r=200, arriving at 900):
    # Y over [900, 1000) ends exactly as X starts and shares the VM; over [900, 1001) it meets X at
    # 1000 (500 > 410) and needs a new VM, as it always does under the tick rule (room 110).
    f = fleet_with_a(interval=interval, a_end=0.0)
    f = dataclasses.replace(f, free=np.full(1, 410.0), n_jobs=np.zeros(1, np.int64))
    if interval:
        f = dataclasses.replace(f, occupancy=IntervalTable(1).occupancy(1))
    jobs = batch([900.0, 1000.0], [runtime_y, 500.0], [200.0, 300.0])
    plan = HEURISTICS.get("LJF-FFH").plan(jobs, f, np.random.default_rng(0))
    assert plan.jobs.tolist() == [1, 0]
    assert plan.targets.tolist() == [0, 0 if vms == 0 else 1]
    assert len(plan.new_types) == vms
    inst = make_instance(jobs, f, BILLING, CATALOG.hourly, paid=True)
    together = Plan(jobs=np.array([0, 1]), targets=np.array([0, 0]), new_types=np.array([], np.int64), n_slots=1)
    assert np.isfinite(inst.cost(together)) == (vms == 0)


def run(arrival_b: float, capacity: str) -> tuple[int, float]:
    table = JobTable.from_arrays(arrival=np.array([0.0, arrival_b]), runtime=np.array([1000.0, 500.0]),
                                 r=np.array([400.0, 400.0]), origin=0)
    config = SimulationConfig(CohConfig("FCFS-LD"), EngineConfig(validate=True, capacity=capacity))  # type: ignore[arg-type]
    res = simulate(table, CATALOG, config=config, seed=1)
    return len(res.instances), res.summary.cost


@pytest.mark.parametrize(("arrival_b", "capacity", "vms"), [(1000.0, "interval", 1), (1000.0, "tick", 2),
                                                            (999.0, "interval", 2), (999.0, "tick", 2)])
def test_the_world_runs_the_rule_and_validates_it(arrival_b: float, capacity: str, vms: int) -> None:
    n, cost = run(arrival_b, capacity)
    assert n == vms
    assert cost == pytest.approx(vms * LARGE)


def test_peaks_against_a_fine_time_grid() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = int(rng.integers(1, 6))
        start = np.round(rng.uniform(0, 50, k))
        end = start + np.round(rng.uniform(1, 30, k))
        r = rng.integers(1, 5, k).astype(float)
        s = float(np.round(rng.uniform(0, 60)))
        e = s + float(np.round(rng.uniform(1, 30)))
        grid = np.arange(s, e, 0.5)  # every instant of [s, e) on a grid finer than the integer times
        expected = max(float(r[(start <= t) & (t < end)].sum()) for t in grid)
        pad = np.array([-np.inf]), np.array([np.inf]), np.array([0.0])
        got = peaks(np.concatenate((start, pad[0]))[None], np.concatenate((end, pad[1]))[None],
                    np.concatenate((r, pad[2]))[None], np.array([s]), np.array([e]))
        assert got[0] == expected


def test_an_idle_vm_ranks_after_every_vm_hosting_a_job_and_idle_ties_go_to_the_lowest_slot() -> None:
    # Latest departure is defined by a VM's final running job (paper §3.3): an idle VM has none.
    # Slots 0 and 2 are idle (slot 2 emptied later), slot 1 hosts a job leaving at 1100.
    three = np.ones(3)
    f = Fleet(now=1000.0, boot_time=120.0, free=np.array([410.0, 300.0, 410.0]), capacity=410 * three,
              vm_type=np.ones(3, np.int64), ready_at=0 * three, anchor=0 * three,
              last_departure=np.array([200.0, 1100.0, 900.0]), n_jobs=np.array([0, 1, 0]),
              arr_min=np.array([np.nan, 500.0, np.nan]), arr_max=np.array([np.nan, 500.0, np.nan]),
              arr_sum=np.array([0.0, 500.0, 0.0]), dep_min=np.array([np.nan, 1100.0, np.nan]),
              dep_max=np.array([np.nan, 1100.0, np.nan]), btu=3600.0, new_rollover=3600.0,
              type_capacity=CATALOG.capacity, type_order=CATALOG.efficiency_order(), rate=LARGE * three)
    rng = np.random.default_rng(0)
    assert HEURISTICS.get("FCFS-LD").plan(batch([1130.0], [100.0], [100.0]), f, rng).targets.tolist() == [1]
    assert HEURISTICS.get("FCFS-LD").plan(batch([1130.0], [100.0], [350.0]), f, rng).targets.tolist() == [0]


@pytest.mark.slow
def test_fcfs_ld_on_all_of_kth_costs_at_least_1_percent_less_and_the_tick_rule_gives_the_old_cost() -> None:
    from tests.conftest import trace_path
    from workloads.cache import load_trace
    from workloads.jobs import job_view

    swf = load_trace(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    jobs, _ = job_view(swf.frame, reqs="constant-100", seed=1, origin=swf.header.unix_start_time or 0)
    cost = {rule: simulate(jobs, CATALOG, seed=1, config=SimulationConfig(
        CohConfig("FCFS-LD"), EngineConfig(capacity=rule))).summary.cost for rule in ("tick", "interval")}
    assert cost["tick"] == pytest.approx(6918.60, abs=0.005)  # the figure before the interval rule (issue 16)
    assert cost["interval"] <= 0.99 * cost["tick"]
