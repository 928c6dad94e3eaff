"""The fleet snapshots of :mod:`heuristics.fleet` on hand-worked cases: a batch's part, the cost-efficient type, the
fleet a plan leaves (:func:`heuristics.fleet.placed`), field by field and dtype by dtype.

The helpers here (``jobs``, ``running``, ``one_large``, ``on_slot0``) also build the hand-worked plans of the IPP
objective's tests (``tests/broker/coh/test_objective.py``).

Every departure, billing unit, cost and fleet field below is worked out by hand in the comment beside it.
Times: the tick is at 5,000 s and a VM boots 120 s, so a new VM is ready at 5,120. Billing is exact (units of
3,600 s counted from each VM's anchor): a VM anchored at 0 is in its second unit (3,600 to 7,200) at the tick, and
``units_until(anchor, end) = ceil((end - anchor) / 3600)``, so a departure exactly at 7,200 needs 2 units and one a
second later 3. Two VM types: 0 (capacity 100, 0.065 $ an hour) and 1 (capacity 410, 0.26 $ an hour).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from heuristics.fleet import Batch, Fleet, Plan, placed

NOW, BOOT = 5000.0, 120.0
HOURLY = np.array([0.065, 0.26])
CAPACITY = np.array([100.0, 410.0])
LARGE_FIRST = np.array([1, 0])  # capacity per dollar: 410 / 0.26 = 1577 > 100 / 0.065 = 1538


def jobs(arrival: list[float], runtime: list[float], r: list[float] | None = None) -> Batch:
    """Jobs 10, 11, ... of user 7 (requirement 50 each unless ``r``)."""
    m = len(arrival)
    return Batch(index=np.arange(10, 10 + m), arrival=np.array(arrival, float), runtime=np.array(runtime, float),
                 r=np.array(r if r is not None else [50.0] * m, float), user=np.full(m, 7))


def running(*, vm_type: list[int], anchor: list[float], ready_at: list[float], last_departure: list[float],
            free: list[float] | None = None, n_jobs: list[int] | None = None, arrivals: list[float] | None = None,
            departures: list[float] | None = None) -> Fleet:
    """A fleet at 5,000 s; ``arrivals`` / ``departures`` (one current job per VM) default to none hosted."""
    k = len(vm_type)
    types = np.array(vm_type, np.int64)
    hosted = arrivals is not None
    arr = np.array(arrivals, float) if hosted else np.full(k, np.nan)
    dep = np.array(departures, float) if departures is not None else np.full(k, np.nan)
    return Fleet(now=NOW, boot_time=BOOT, free=np.array(free, float) if free is not None else CAPACITY[types],
                 capacity=CAPACITY[types], vm_type=types, ready_at=np.array(ready_at, float),
                 anchor=np.array(anchor, float), last_departure=np.array(last_departure, float),
                 n_jobs=np.array(n_jobs, np.int64) if n_jobs is not None else np.zeros(k, np.int64),
                 arr_min=arr.copy(), arr_max=arr.copy(), arr_sum=np.nan_to_num(arr), dep_min=dep.copy(),
                 dep_max=dep.copy(), btu=3600.0, new_rollover=3600.0, type_capacity=CAPACITY,
                 type_order=LARGE_FIRST, rate=HOURLY[types])


def one_large(last_departure: float) -> Fleet:
    """One large VM (slot 0) started at 0: billed from 0, ready at 120, idle since ``last_departure``."""
    return running(vm_type=[1], anchor=[0.0], ready_at=[BOOT], last_departure=[last_departure])


def on_slot0(m: int = 1) -> Plan:
    return Plan(jobs=np.arange(m), targets=np.zeros(m, np.int64), new_types=np.array([], np.int64), n_slots=1)


# --- Batch, Fleet ------------------------------------------------------------------------------------------------


def test_part_is_the_jobs_from_lo_to_hi_minus_one() -> None:
    batch = jobs([100.0, 200.0, 300.0, 400.0], [10.0, 20.0, 30.0, 40.0], r=[1.0, 2.0, 3.0, 4.0])
    part = batch.part(1, 3)  # positions 1 and 2: jobs 11 and 12
    assert len(part) == 2
    np.testing.assert_array_equal(part.index, [11, 12])
    np.testing.assert_array_equal(part.arrival, [200.0, 300.0])
    np.testing.assert_array_equal(part.runtime, [20.0, 30.0])
    np.testing.assert_array_equal(part.r, [2.0, 3.0])
    np.testing.assert_array_equal(part.user, [7, 7])
    assert len(batch.part(4, 4)) == 0


def test_cost_efficient_type_takes_a_type_exactly_as_large_as_the_job() -> None:
    fleet = one_large(0.0)  # types by efficiency: 1 (410), then 0 (100)
    assert fleet.cost_efficient_type(410.0) == 1  # fills the large type exactly
    assert fleet.cost_efficient_type(100.0) == 1
    small_first = dataclasses.replace(fleet, type_order=np.array([0, 1]))  # were the small type the efficient one
    assert small_first.cost_efficient_type(100.0) == 0  # fills the small type exactly
    assert small_first.cost_efficient_type(100.5) == 1


def test_cost_efficient_type_names_a_requirement_no_type_holds() -> None:
    with pytest.raises(ValueError, match=r"no VM type holds a job of requirement 410\.5"):
        one_large(0.0).cost_efficient_type(410.5)


# --- placed: the fleet a plan leaves --------------------------------------------------------------------------------


def test_placed_field_by_field() -> None:
    # slot 0: large, started at 0, hosting one job (arrived 3,000, departs 6,000): free 410 - 110 = 300
    fleet = running(vm_type=[1], anchor=[0.0], ready_at=[BOOT], last_departure=[6000.0], free=[300.0], n_jobs=[1],
                    arrivals=[3000.0], departures=[6000.0])
    # job 10: arrived 4,000 (queued), r 110, 2,200 s -> slot 0: starts 5,000, ends 7,200
    # job 11: arrives 5,000, r 100, 1,000 s      -> new small (slot 1): starts 5,120, ends 6,120; fills it exactly
    # job 12: arrives 5,100, r 200, 500 s        -> new large (slot 2): starts 5,120, ends 5,620
    # job 13: arrives 5,000, r 90, 100 s         -> slot 0: starts 5,000, ends 5,100
    # new small (slot 3) gets no job
    batch = jobs([4000.0, 5000.0, 5100.0, 5000.0], [2200.0, 1000.0, 500.0, 100.0], r=[110.0, 100.0, 200.0, 90.0])
    plan = Plan(jobs=np.array([0, 1, 2, 3]), targets=np.array([0, 1, 2, 0]), new_types=np.array([0, 1, 0]),
                n_slots=1)
    got = placed(fleet, batch, plan, anchor=NOW, hourly=HOURLY)
    nan = np.nan
    assert len(got) == 4
    np.testing.assert_array_equal(got.vm_type, [1, 0, 1, 0])
    np.testing.assert_array_equal(got.capacity, [410.0, 100.0, 410.0, 100.0])
    np.testing.assert_array_equal(got.free, [300.0 - 110 - 90, 0.0, 410.0 - 200, 100.0])  # 100, 0, 210, 100
    np.testing.assert_array_equal(got.ready_at, [120.0, 5120.0, 5120.0, 5120.0])
    np.testing.assert_array_equal(got.anchor, [0.0, 5000.0, 5000.0, 5000.0])
    np.testing.assert_array_equal(got.rate, [0.26, 0.065, 0.26, 0.065])
    np.testing.assert_array_equal(got.n_jobs, [3, 1, 1, 0])
    # latest departure: max(6000, 7200, 5100) = 7200; a new VM's starts at now (5,000), its boot start
    np.testing.assert_array_equal(got.last_departure, [7200.0, 6120.0, 5620.0, 5000.0])
    np.testing.assert_array_equal(got.arr_min, [3000.0, 5000.0, 5100.0, nan])
    np.testing.assert_array_equal(got.arr_max, [5000.0, 5000.0, 5100.0, nan])
    np.testing.assert_array_equal(got.arr_sum, [12000.0, 5000.0, 5100.0, 0.0])  # 3000 + 4000 + 5000
    np.testing.assert_array_equal(got.arr_mean, [4000.0, 5000.0, 5100.0, nan])  # 12000 / 3
    np.testing.assert_array_equal(got.dep_min, [5100.0, 6120.0, 5620.0, nan])
    np.testing.assert_array_equal(got.dep_max, [7200.0, 6120.0, 5620.0, nan])
    # 3600 - (5000 - 0) mod 3600 = 2200 for slot 0; the new VMs' unit starts now: 3600
    np.testing.assert_array_equal(got.rollover, [2200.0, 3600.0, 3600.0, 3600.0])
    assert got.occupancy is None and got.now == NOW and got.boot_time == BOOT
    # the fleet it was given is untouched
    np.testing.assert_array_equal(fleet.vm_type, [1])
    np.testing.assert_array_equal(fleet.n_jobs, [1])
    np.testing.assert_array_equal(fleet.free, [300.0])


def test_placed_keeps_the_dtypes_of_the_fleet_it_is_given() -> None:
    # a compact snapshot: 32-bit VM types and job counts. The new VM's type (int64 in the plan) and its job count
    # (0, then 1) are stored in the fleet's own dtypes, not promoted to 64 bits.
    base = running(vm_type=[1], anchor=[0.0], ready_at=[BOOT], last_departure=[0.0])
    compact = dataclasses.replace(base, vm_type=np.array([1], np.int32), n_jobs=np.array([0], np.int32))
    plan = Plan(jobs=np.array([0]), targets=np.array([1]), new_types=np.array([0], np.int64), n_slots=1)
    got = placed(compact, jobs([5000.0], [100.0]), plan, anchor=NOW, hourly=HOURLY)
    assert got.vm_type.dtype == np.int32 and got.n_jobs.dtype == np.int32
    np.testing.assert_array_equal(got.vm_type, [1, 0])
    np.testing.assert_array_equal(got.n_jobs, [0, 1])
    for name in ("free", "capacity", "ready_at", "anchor", "last_departure", "arr_min", "arr_max", "arr_sum",
                 "dep_min", "dep_max", "rate"):
        assert getattr(got, name).dtype == np.float64, name
