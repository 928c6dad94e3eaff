"""The engine's packing (:mod:`heuristics.fastpack`, over lists and over arrays) makes the model's plans
(:mod:`heuristics.packing`): every one of the 66 heuristics, on real ticks of four traces under both
capacity rules, with one job and many, on whole fleets and on fleets most jobs overflow."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import heuristics.fastpack as fastpack
from heuristics import packing
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import Occupancy, room
from heuristics.registry import HEURISTICS
from tests.broker.coh.ipp_cases import captured

CASES = [("KTH-SP2-1996-2.1-cln.swf.gz", "constant-100", 1, 1), ("KTH-SP2-1996-2.1-cln.swf.gz", "heterogeneous", 2, 8),
         ("LCG-2005-1.swf.gz", "heterogeneous", 1, 1), ("LCG-2005-1.swf.gz", "constant-10", 3, 20),
         ("SDSC-BLUE-2000-4.2-cln.swf.gz", "heterogeneous", 1, 4),
         ("LPC-EGEE-2004-1.2-cln.swf.gz", "heterogeneous", 2, 30)]


def plans(batch: Batch, fleet: Fleet, name: str, monkeypatch: pytest.MonkeyPatch) -> list[Plan]:
    """The model's plan, then the engine's over lists, then over arrays (the same seed each)."""
    heuristic = HEURISTICS.get(name)
    out = [packing.pack(batch, fleet, heuristic.job_order, heuristic.vm_rule, rng=np.random.default_rng(7))]
    for limit in (10**9, -1):
        monkeypatch.setattr(fastpack, "SMALL_FLEET", limit)
        out.append(heuristic.plan(batch, fleet, np.random.default_rng(7)))
    return out


def assert_same(model: Plan, other: Plan, name: str) -> None:
    assert other.jobs.tolist() == model.jobs.tolist(), name
    assert other.targets.tolist() == model.targets.tolist(), name
    assert other.new_types.tolist() == model.new_types.tolist(), name
    assert other.n_slots == model.n_slots, name


@pytest.mark.parametrize("capacity", ["interval", "tick"])
@pytest.mark.parametrize(("trace", "reqs", "low", "high"), CASES)
def test_the_engine_packs_as_the_model_on_real_ticks(trace: str, reqs: str, low: int, high: int, capacity: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cases = captured(trace, reqs, low, high, n_jobs=3000, every=3, capacity=capacity)[:10]
    assert cases
    opened = 0
    for batch, whole in cases:
        for fleet in (whole, without_most_vms(whole)):
            for name in HEURISTICS:
                model, lists, arrays = plans(batch, fleet, name, monkeypatch)
                assert_same(model, lists, name)
                assert_same(model, arrays, name)
                opened += len(model.new_types)
    assert opened > 0


def without_most_vms(fleet: Fleet) -> Fleet:
    """The fleet with all but every eighth slot's VM released (their slots dead)."""
    dead = np.arange(len(fleet)) % 8 != 7
    return dataclasses.replace(fleet, vm_type=np.where(dead, -1, fleet.vm_type), free=np.where(dead, -1.0, fleet.free))


def one_vm(rows: list[list[tuple[float, float, float]]], now: float = 0.0) -> Fleet:
    """VMs of capacity 100, ready, hosting ``rows`` (start, end, r) under the interval rule."""
    n = len(rows)
    occ = Occupancy.of(rows)
    used = np.array([sum(x for _, _, x in row) for row in rows])
    nan = np.full(n, np.nan)
    return Fleet(now=now, boot_time=120.0, free=100.0 - used, capacity=np.full(n, 100.0), vm_type=np.zeros(n, np.int64),
                 ready_at=np.zeros(n), anchor=np.zeros(n), last_departure=np.zeros(n), n_jobs=np.ones(n, np.int64),
                 arr_min=nan, arr_max=nan, arr_sum=np.zeros(n), dep_min=occ.dep_min.copy(), dep_max=nan, btu=3600.0,
                 new_rollover=3600.0, type_capacity=np.array([100.0]), type_order=np.array([0]), rate=np.ones(n),
                 occupancy=occ)


def batch_of(arrival: float, runtime: float, r: float) -> Batch:
    return Batch(index=np.array([0]), arrival=np.array([arrival]), runtime=np.array([runtime]), r=np.array([r]),
                 user=np.array([0]))


@pytest.mark.parametrize("limit", [10**9, -1])
@pytest.mark.parametrize(("rows", "job", "fits"), [
    # a job of 60 leaves at 100: a job of 50 from 100 fits, from 99 does not ([start, end) is half open)
    ([(0.0, 100.0, 60.0)], (100.0, 50.0, 50.0), True),
    ([(0.0, 100.0, 60.0)], (99.0, 50.0, 50.0), False),
    # a job of 60 starting at 200: a job of 50 over [100, 200) fits, over [100, 201) does not
    ([(200.0, 300.0, 60.0)], (100.0, 100.0, 50.0), True),
    ([(200.0, 300.0, 60.0)], (100.0, 101.0, 50.0), False),
    # 30 until 150 and 30 from 150: the peak over [100, 200) is 30, so 70 fits and 71 does not
    ([(0.0, 150.0, 30.0), (150.0, 400.0, 30.0)], (100.0, 100.0, 70.0), True),
    ([(0.0, 150.0, 30.0), (150.0, 400.0, 30.0)], (100.0, 100.0, 71.0), False),
])
def test_room_over_the_run_decides_a_fit_at_its_boundaries(rows: list[tuple[float, float, float]],
                                                         job: tuple[float, float, float], fits: bool, limit: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpack, "SMALL_FLEET", limit)
    fleet, batch = one_vm([rows]), batch_of(*job)
    for name in ("FCFS-LD", "FCFS-SM", "FCFS-CFH", "FCFS-Rnd"):
        heuristic = HEURISTICS.get(name)
        plan = heuristic.plan(batch, fleet, np.random.default_rng(0))
        model = packing.pack(batch, fleet, heuristic.job_order, heuristic.vm_rule, rng=np.random.default_rng(0))
        assert_same(model, plan, name)
        assert (plan.targets.tolist() == [0]) == fits, name


def random_fleet(rng: np.random.Generator, n: int, now: float = 1000.0) -> Fleet:
    """A fleet as a run leaves it: VMs ready by ``now + 120`` (some still booting, some slots dead), each
    hosting jobs that start once it is ready and end after ``now``, within its capacity at every instant;
    many end within a call's horizon, some start after ``now`` (placed ahead of their arrival)."""
    capacities = np.array([100.0, 400.0])
    vm_type = rng.integers(0, 2, n)
    vm_type[rng.random(n) < 0.2] = -1
    ready = now + rng.choice([-3000.0, -500.0, 0.0, 60.0, 120.0], n)
    rows: list[list[tuple[float, float, float]]] = []
    for j in range(n):
        row: list[tuple[float, float, float]] = []
        for _ in range(int(rng.integers(0, 6)) if vm_type[j] >= 0 else 0):
            start = max(float(ready[j]), now - float(rng.choice([2000.0, 100.0, 0.0])) + float(rng.integers(0, 140)))
            end = max(start, now) + float(rng.choice([1.0, 30.0, 90.0, 135.0, 5000.0]))
            job = (start, end, float(rng.integers(1, 11)) * 10.0)
            if room(float(capacities[vm_type[j]]), row, start, end) >= job[2]:
                row.append(job)
        rows.append(row)
    occ = Occupancy.of(rows)
    cap = np.where(vm_type >= 0, capacities[np.maximum(vm_type, 0)], 0.0)
    held = [[x for _, _, x in row] for row in rows]
    starts, ends = [[a for a, _, _ in row] for row in rows], [[b for _, b, _ in row] for row in rows]
    nan = math.nan
    return Fleet(
        now=now, boot_time=120.0, free=np.where(vm_type >= 0, cap - np.array([sum(h) for h in held]), -1.0),
        capacity=cap, vm_type=vm_type, ready_at=ready, anchor=ready - 120.0 - rng.integers(0, 3600, n),
        last_departure=np.array([max(e, default=float(ready[j])) for j, e in enumerate(ends)]),
        n_jobs=np.array([len(h) for h in held]), arr_min=np.array([min(a, default=nan) for a in starts]),
        arr_max=np.array([max(a, default=nan) for a in starts]), arr_sum=np.array([float(sum(a)) for a in starts]),
        dep_min=np.array([min(e, default=nan) for e in ends]), dep_max=np.array([max(e, default=nan) for e in ends]),
        btu=3600.0, new_rollover=3600.0, type_capacity=capacities, type_order=np.array([1, 0]),
        rate=np.where(vm_type == 1, 0.26, 0.065), occupancy=occ)


def random_batch(rng: np.random.Generator, m: int, now: float = 1000.0) -> Batch:
    """Jobs arriving up to 130 s ahead, some of them over before later ones arrive."""
    arrival = np.sort(now + rng.integers(-20, 131, m).astype(float))
    return Batch(index=np.arange(m), arrival=arrival, runtime=rng.choice([1.0, 20.0, 60.0, 3000.0], m),
                 r=rng.integers(1, 11, m) * 10.0, user=rng.integers(0, 3, m))


@pytest.mark.parametrize("seed", range(40))
def test_the_engine_packs_as_the_model_on_fleets_whose_jobs_leave_during_the_call(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    fleet, batch = random_fleet(rng, int(rng.integers(2, 9))), random_batch(rng, int(rng.integers(1, 7)))
    for name in HEURISTICS:
        model, lists, arrays = plans(batch, fleet, name, monkeypatch)
        assert_same(model, lists, name)
        assert_same(model, arrays, name)
