"""The IPP instance and model: objective agrees with the heuristics' evaluator; the linearization
is exact on encoded plans; the exact fast path equals brute force."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

from broker.coh.exact import solve_exact
from broker.coh.instance import make_instance, reduce_vms
from broker.coh.ipp import CapacityRows, IppInstance, build_model
from broker.coh.objective import plan_cost
from heuristics.fleet import Plan
from tests.broker.coh.ipp_cases import BILLING, CATALOG, all_heuristic_plans, captured

CASES = [("LCG-2005-1.swf.gz", "heterogeneous"), ("KTH-SP2-1996-2.1-cln.swf.gz", "constant-100"),
         ("LCG-2005-1.swf.gz", "constant-10")]


@pytest.mark.parametrize("paid", [False, True])
@pytest.mark.parametrize(("trace", "reqs"), CASES)
def test_ipp_objective_equals_the_evaluator_on_many_plans(trace: str, reqs: str, paid: bool) -> None:
    checked = 0
    for batch, fleet in captured(trace, reqs, 3, 20)[:12]:
        inst = make_instance(batch, fleet, BILLING, CATALOG.hourly, paid=paid)
        for plan in all_heuristic_plans(batch, fleet):
            expected = plan_cost(plan, batch, fleet, BILLING, CATALOG.hourly, paid=paid)
            assert inst.cost(plan) == pytest.approx(expected)
            checked += 1
    assert checked >= 12 * 66


@pytest.mark.parametrize(("trace", "reqs"), CASES)
def test_linearization_is_exact_on_encoded_plans(trace: str, reqs: str) -> None:
    for batch, fleet in captured(trace, reqs, 3, 12)[:6]:
        inst = make_instance(batch, fleet, BILLING, CATALOG.hourly)
        for symmetry in ("none", "order", "assign"):
            ipp = build_model(inst, symmetry=symmetry)
            for plan in all_heuristic_plans(batch, fleet, ["FCFS-SM", "LJF-LD", "STJF-CFH", "RR-Rnd"]):
                values = ipp.encode(plan)
                assert values is not None and ipp.model.violations(values) == [], "heuristic plans are feasible points"
                assert ipp.model.objective(values) == pytest.approx(inst.cost(plan))
                assert inst.cost(ipp.decode(values)) == pytest.approx(inst.cost(plan))


def brute_force(inst: IppInstance) -> float:
    n_vm, k = len(inst.vm_slot), len(inst.type_capacity)
    options = list(range(n_vm)) + [("new", t, kk) for kk in range(k) for t in range(inst.n_jobs)]
    best = np.inf
    for combo in itertools.product(options, repeat=inst.n_jobs):
        targets, new_types, new_ids = [], [], {}
        for o in combo:
            if isinstance(o, tuple):
                if o not in new_ids:
                    new_ids[o] = len(new_types)
                    new_types.append(o[2])
                targets.append(inst.n_slots + new_ids[o])
            else:
                targets.append(int(inst.vm_slot[o]))
        plan = Plan(jobs=np.arange(inst.n_jobs), targets=np.array(targets), new_types=np.array(new_types, dtype=int),
                    n_slots=inst.n_slots)
        best = min(best, inst.cost(plan))
    return best


@pytest.mark.parametrize(("trace", "reqs"), CASES)
@pytest.mark.parametrize("n", [1, 2])
def test_exact_fast_path_equals_brute_force(trace: str, reqs: str, n: int) -> None:
    cases = captured(trace, reqs, n, n, n_jobs=3000, every=3)[:25]
    assert cases
    for batch, fleet in cases:
        inst = reduce_vms(make_instance(batch, fleet, BILLING, CATALOG.hourly), max_vms=12)
        plan, cost = solve_exact(inst)
        assert inst.cost(plan) == pytest.approx(cost)
        assert cost == pytest.approx(brute_force(inst))


def _signature(inst: IppInstance, j: int) -> tuple:
    return (inst.vm_room[j].tobytes(), inst.vm_hourly[j], inst.vm_base[j], inst.vm_units[j].tobytes(),
            inst.vm_rows.of(j)[0].tobytes(), inst.vm_rows.of(j)[1].tobytes())


def test_reduction_keeps_at_most_m_identical_vms() -> None:
    for batch, fleet in captured("LCG-2005-1.swf.gz", "constant-100", 3, 20)[:10]:
        full = make_instance(batch, fleet, BILLING, CATALOG.hourly)
        reduced = reduce_vms(full, None)
        counts = collections.Counter(_signature(reduced, j) for j in range(len(reduced.vm_slot)))
        assert max(counts.values(), default=0) <= reduced.n_jobs
        assert len(reduce_vms(full, 5).vm_slot) <= 5


def test_reduction_drops_the_identical_vms_beyond_m_and_keeps_different_ones() -> None:
    rows = (np.ones((1, 2), dtype=bool), np.array([4.0]))
    other = (np.ones((1, 2), dtype=bool), np.array([3.0]))  # same room alone, less together
    inst = IppInstance(r=np.array([2.0, 2.0]), vm_slot=np.arange(5), vm_room=np.full((5, 2), 4.0),
                       vm_rows=CapacityRows.from_list((rows, rows, other, rows, rows), 2), vm_hourly=np.full(5, 0.1),
                       vm_base=np.ones(5, dtype=np.int64), vm_units=np.ones((5, 2), dtype=np.int64),
                       type_capacity=np.array([4.0]), type_hourly=np.array([0.1]), new_units=np.ones(2, dtype=np.int64),
                       type_rows=np.ones((1, 2), dtype=bool), n_slots=5)
    assert reduce_vms(inst, None).vm_slot.tolist() == [0, 1, 2]
    assert reduce_vms(inst, None, keep=np.array([4])).vm_slot.tolist() == [0, 1, 2, 4]


def test_reduction_keeps_the_warm_start_feasible() -> None:
    for batch, fleet in captured("LCG-2005-1.swf.gz", "heterogeneous", 3, 20)[:8]:
        plan = all_heuristic_plans(batch, fleet, ["FCFS-SM"])[0]
        keep = plan.targets[plan.targets < plan.n_slots]
        inst = make_instance(batch, fleet, BILLING, CATALOG.hourly, max_vms=2, keep=keep)
        assert set(keep.tolist()) <= set(inst.vm_slot.tolist())
        values = build_model(inst).encode(plan)
        assert values is not None and build_model(inst).model.violations(values) == []
