"""The IPP instance and model: objective agrees with the heuristics' evaluator; the linearization
is exact on encoded plans; the exact fast path equals brute force."""

from __future__ import annotations

import collections
import itertools
import math
from typing import Any

import numpy as np
import pytest

from broker.coh.exact import solve_exact
from broker.coh.instance import make_instance, reduce_vms
from broker.coh.ipp import CapacityRows, IppInstance, IppModel, build_model, essential
from broker.coh.objective import plan_cost
from heuristics.fleet import Plan
from solvers.base import Limit
from solvers.cbc import CbcSolver
from solvers.cpsat import CpSatSolver
from tests.broker.coh.ipp_cases import BILLING, CATALOG, all_heuristic_plans, captured
from tests.broker.coh.small_cases import one_vm

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


# --- hand-worked cases of the capacity rows: padding, heads, room for each job, essential rows ---------------------
# Every expected value is worked out by hand in the comment beside it. The instances are the small hand-made ones of
# tests/broker/coh/small_cases.py.


# --- CapacityRows, essential, IppInstance.vms_holding (broker.coh.ipp) ------------------------------------


def test_capacity_rows_pad_with_rows_that_hold_nothing_and_never_bind() -> None:
    empty = CapacityRows.empty(2, 3)
    assert empty.mask.shape == (2, 0, 3) and empty.mask.dtype == bool
    assert empty.head.shape == (2, 0) and empty.head.dtype == np.float64 and len(empty) == 2
    rows = CapacityRows.from_list([(np.array([[True, False], [True, True]]), np.array([50.0, 70.0])),
                                   (np.zeros((0, 2), bool), np.zeros(0)),
                                   (np.array([[False, True]]), np.array([30.0]))], 2)
    assert len(rows) == 3 and rows.mask.shape == (3, 2, 2) and rows.mask.dtype == bool
    assert rows.head.tolist() == [[50.0, 70.0], [np.inf, np.inf], [30.0, np.inf]]
    assert rows.mask[2].tolist() == [[False, True], [False, False]] and not rows.mask[1].any()
    assert rows.counts().tolist() == [2, 0, 1]
    mask, head = rows.of(2)
    assert mask.tolist() == [[False, True]] and head.tolist() == [30.0]
    mask, head = rows.of(1)
    assert mask.shape == (0, 2) and head.tolist() == []
    taken = rows.take(np.array([2, 0]))
    assert taken.head.tolist() == [[30.0, np.inf], [50.0, 70.0]] and taken.mask[1].tolist() == rows.mask[0].tolist()
    assert CapacityRows.from_list([], 4).mask.shape == (0, 0, 4)


def test_rows_hold_jobs_up_to_their_head_exactly() -> None:
    # VM 0: one row over jobs 0 and 1 leaving 80; VM 1: a row over job 1 alone leaving 40; VM 2: none.
    rows = CapacityRows.from_list([(np.array([[True, True, False]]), np.array([80.0])),
                                   (np.array([[False, True, False]]), np.array([40.0])),
                                   (np.zeros((0, 3), bool), np.zeros(0))], 3)
    r = np.array([40.0, 40.0, 40.5])
    assert rows.holding(r, [0, 1]).tolist() == [True, True, True]  # 80 <= 80; 40 <= 40
    r = np.array([40.0, 40.5, 0.0])
    assert rows.holding(r, [0, 1]).tolist() == [False, False, True]  # 80.5 > 80; 40.5 > 40
    assert rows.holding(r, [0]).tolist() == [True, True, True]  # job 0 is in no row of VM 1
    r = np.array([0.1, 0.2, 0.0])
    tight = CapacityRows.from_list([(np.array([[True, True, False]]), np.array([0.3]))], 3)
    assert tight.holding(r, [0, 1]).tolist() == [True]  # 0.1 + 0.2 = 0.30000000000000004: within 1e-9


def test_vms_holding_needs_room_for_each_job_alone_and_every_row() -> None:
    # Two VMs and two jobs of 40: VM 0 has room 40 (exactly) for each and a row of 80 over both;
    # VM 1 room 39.5 for job 1; VM 2 room 100 but a row of 79.5 over both.
    inst = one_vm(2, vm_slot=np.array([3, 4, 5]), r=np.array([40.0, 40.0]),
                  vm_room=np.array([[40.0, 40.0], [100.0, 39.5], [100.0, 100.0]]),
                  vm_rows=CapacityRows.from_list([(np.ones((1, 2), bool), np.array([80.0])),
                                                  (np.zeros((0, 2), bool), np.zeros(0)),
                                                  (np.ones((1, 2), bool), np.array([79.5]))], 2),
                  vm_hourly=np.ones(3), vm_base=np.zeros(3, np.int64), vm_units=np.ones((3, 2), np.int64))
    assert inst.vms_holding([0, 1]).tolist() == [True, False, False]
    assert inst.vms_holding([0]).tolist() == [True, True, True]
    assert inst.vms_holding([1]).tolist() == [True, False, True]
    assert [inst.vm_holds(j, [0, 1]) for j in range(3)] == [True, False, False]  # the VM-by-VM form agrees


def test_essential_keeps_rows_of_two_jobs_that_no_other_row_implies() -> None:
    # One VM, five rows over jobs 0..2: p0 {0,1} head 50; p1 {0,1,2} head 40 (implies p0: its jobs
    # are among p1's and it leaves less room); p2 {1,2} head 60 (implied by p1 too); p3 {0} alone
    # (one job: never a row); p4 {0,1,2} head 40 again (equal to p1: the first, p1, stays).
    mask = np.array([[[1, 1, 0], [1, 1, 1], [0, 1, 1], [1, 0, 0], [1, 1, 1]]], dtype=bool)
    head = np.array([[50.0, 40.0, 60.0, 10.0, 40.0]])
    valid = np.ones((1, 5), dtype=bool)
    assert essential(mask, head, valid).tolist() == [[False, True, False, False, False]]
    # p0 with less room (30) than p1 is no longer implied; p2 at 40 (= p1's head) still is
    head2 = np.array([[30.0, 40.0, 40.0, 10.0, 40.0]])
    assert essential(mask, head2, valid).tolist() == [[True, True, False, False, False]]
    # a row that is not valid is neither kept nor implies another: without p1 and p4, p0 and p2 stay
    valid3 = np.array([[True, False, True, True, False]])
    assert essential(mask, head, valid3).tolist() == [[True, False, True, False, False]]
    # a single row of two jobs stays; a single row of one job does not
    one = essential(np.array([[[True, True]], [[True, False]]]), np.array([[5.0], [5.0]]), np.ones((2, 1), bool))
    assert one.tolist() == [[True], [False]]


def test_essential_compares_rows_beyond_eight_jobs() -> None:
    # Ten jobs (two bytes of packed bits): p0 {0, 9} head 10 and p1 {0, 1} head 5. p0's job 9 is not
    # among p1's, so p1 does not imply p0 although it leaves less room; both stay. p2 {0, 1, 9}
    # head 5 implies both.
    mask = np.zeros((1, 3, 10), dtype=bool)
    mask[0, 0, [0, 9]] = True
    mask[0, 1, [0, 1]] = True
    mask[0, 2, [0, 1, 9]] = True
    valid = np.array([[True, True, False]])
    assert essential(mask, np.array([[10.0, 5.0, 5.0]]), valid).tolist() == [[True, True, False]]
    assert essential(mask, np.array([[10.0, 5.0, 5.0]]), np.ones((1, 3), bool)).tolist() == [[False, False, True]]


# --- hand-worked cases: the instance's cost and bound, the rows of the model built for CBC and CP-SAT, and its ---
# decoding and encoding of plans.
#
# Every instance is in billing units (3,600-s units counted from each VM's anchor) and tiny; the
# expected value sits beside it, worked out by hand, never by a second run of the code under test.
# The price book's two types: small (capacity 100, $0.065 an hour) and large (410, $0.26).


SMALL, LARGE = 0.065, 0.26
N_SLOTS = 5  # fleet slots 0..4; new VMs are numbered from 5


def instance(r: list[float], **changes: Any) -> IppInstance:
    """Jobs of requirements ``r``, each one unit on a new VM, all running at once (one type row); no running VM."""
    m = len(r)
    fields: dict[str, Any] = {
        "r": np.array(r, dtype=float), "vm_slot": np.zeros(0, np.int64), "vm_room": np.zeros((0, m)),
        "vm_rows": CapacityRows.empty(0, m), "vm_hourly": np.zeros(0), "vm_base": np.zeros(0, np.int64),
        "vm_units": np.zeros((0, m), np.int64), "type_capacity": np.array([100.0, 410.0]),
        "type_hourly": np.array([SMALL, LARGE]), "new_units": np.ones(m, dtype=np.int64),
        "type_rows": np.ones((1, m), dtype=bool), "n_slots": N_SLOTS}
    fields.update(changes)
    return IppInstance(**fields)


def plan(targets: list[int], new_types: list[int], n_slots: int = N_SLOTS) -> Plan:
    return Plan(jobs=np.arange(len(targets)), targets=np.array(targets, dtype=np.int64),
                new_types=np.array(new_types, dtype=np.int64), n_slots=n_slots)


def assignment(m: IppModel, ones: dict[int, float]) -> np.ndarray:
    values = np.zeros(m.model.n_vars)
    for v, value in ones.items():
        values[v] = value
    return values


def three_small_vms() -> IppInstance:
    """Three jobs of 60 at once on the small type only: any two exceed 100, so each needs its own VM."""
    return instance([60.0, 60.0, 60.0], type_capacity=np.array([100.0]), type_hourly=np.array([SMALL]))


# --- the instance: cost, bound, rooms ----------------------------------------------------------------


def test_the_lower_bound_is_the_dearest_jobs_cheapest_placement() -> None:
    # job 0 (r 10, 1 unit): small $0.065 or large $0.26 -> cheapest 0.065
    # job 1 (r 200, 2 units): small has no room, large 2 x 0.26 = $0.52 -> cheapest 0.52
    # the bound is the dearest of the cheapest: 0.52 (not the cheapest of all, 0.065; not 0)
    inst = instance([10.0, 200.0], new_units=np.array([1, 2]))
    assert inst.lower_bound() == pytest.approx(0.52)


def test_no_job_costs_nothing_and_has_bound_zero() -> None:
    inst = instance([], type_rows=np.ones((1, 0), dtype=bool))
    assert inst.lower_bound() == 0.0
    assert inst.cost(plan([], [])) == 0.0


def test_a_job_bigger_than_a_type_does_not_fit_it_even_without_a_row() -> None:
    # Under the interval rule a job running alone on a new VM is in no type row: only the capacity
    # test refuses it. Job of 200 > 100 on a small VM: infeasible; on a large one, one unit $0.26.
    inst = instance([200.0], type_rows=np.zeros((0, 1), dtype=bool))
    assert not inst.type_holds(0, [0]) and inst.type_holds(1, [0])
    assert inst.cost(plan([N_SLOTS], [0])) == math.inf
    assert inst.cost(plan([N_SLOTS], [1])) == pytest.approx(LARGE)


def test_a_plan_on_a_fleet_slot_that_is_not_a_candidate_costs_inf() -> None:
    # Slot 3 is the only candidate running VM; slot 1 (< n_slots) is not one: inf, not an error.
    inst = instance([10.0], vm_slot=np.array([3]), vm_room=np.full((1, 1), 100.0), vm_rows=CapacityRows.empty(1, 1),
                    vm_hourly=np.ones(1), vm_base=np.zeros(1, np.int64), vm_units=np.ones((1, 1), np.int64))
    assert inst.cost(plan([1], [])) == math.inf
    assert inst.cost(plan([3], [])) == pytest.approx(1.0)  # one new unit at $1


def test_a_load_over_the_room_by_exactly_the_tolerance_still_fits_on_every_path() -> None:
    # One row holds jobs 0 and 1 with room 100; their load is 100 + 1e-9, exactly the 1e-9 the rows
    # allow for rounding. vm_holds (one VM) and vms_holding (all at once) say the same: it fits.
    r1 = 100.0 + 1e-9 - 40.0
    assert 40.0 + r1 == 100.0 + 1e-9  # the boundary is exact in floating point
    rows = CapacityRows(np.ones((1, 1, 2), dtype=bool), np.array([[100.0]]))
    assert rows.holding(np.array([40.0, r1]), [0, 1]).tolist() == [True]
    inst = instance([40.0, r1], vm_slot=np.array([3]), vm_room=np.full((1, 2), 100.0), vm_rows=rows,
                    vm_hourly=np.ones(1), vm_base=np.zeros(1, np.int64), vm_units=np.ones((1, 2), np.int64))
    assert inst.vm_holds(0, [0, 1])
    assert inst.vms_holding([0, 1]).tolist() == [True]
    # ... and 1e-9 more does not
    assert rows.holding(np.array([40.0, r1 + 1e-9]), [0, 1]).tolist() == [False]


# --- decode ---------------------------------------------------------------------------------------


def test_decoding_a_solution_that_leaves_a_job_out_is_refused() -> None:
    m = build_model(instance([10.0, 10.0]))
    with pytest.raises(ValueError, match=r"^solution leaves a job unassigned$"):
        m.decode(np.zeros(m.model.n_vars))
    # job 1 placed, job 0 not
    with pytest.raises(ValueError, match=r"^solution leaves a job unassigned$"):
        m.decode(assignment(m, {m.x[(0, 0, 1)]: 1, m.y[(0, 0)]: 1, m.h[(0, 0)]: 1}))


def test_a_value_of_exactly_one_half_does_not_place_a_job() -> None:
    # One job, one running VM (slot 3) and the new types: a half on z or on x is no placement.
    inst = instance([10.0], vm_slot=np.array([3]), vm_room=np.full((1, 1), 100.0), vm_rows=CapacityRows.empty(1, 1),
                    vm_hourly=np.ones(1), vm_base=np.zeros(1, np.int64), vm_units=np.ones((1, 1), np.int64))
    m = build_model(inst)
    for v in (m.z[(0, 0)], m.x[(0, 0, 0)]):
        with pytest.raises(ValueError, match="unassigned"):
            m.decode(assignment(m, {v: 0.5}))
    # just above one half it does
    assert m.decode(assignment(m, {m.z[(0, 0)]: 0.5 + 1e-9})).targets.tolist() == [3]


def test_new_vms_are_numbered_in_the_order_of_their_first_job() -> None:
    # Job 0 (r 200) on a large VM (the first VM of type 1), job 1 (r 10) on a small one (the first of
    # type 0). Job 0 comes first, so its VM is new VM 0 (slot 5) of type 1, job 1's new VM 1 of type 0.
    inst = instance([200.0, 10.0], new_units=np.array([1, 2]))
    m = build_model(inst)
    got = m.decode(assignment(m, {m.x[(0, 1, 0)]: 1, m.y[(0, 1)]: 1, m.h[(0, 1)]: 1,
                                  m.x[(0, 0, 1)]: 1, m.y[(0, 0)]: 1, m.h[(0, 0)]: 2}))
    assert got.targets.tolist() == [5, 6] and got.new_types.tolist() == [1, 0]
    assert got.targets.dtype == np.int64


@pytest.mark.parametrize("solver", [CbcSolver(), CpSatSolver(num_workers=1)], ids=["cbc", "cpsat"])
def test_the_solvers_split_a_big_short_job_from_a_small_long_one(solver: Any) -> None:
    # Both on one large VM: max(1, 2) = 2 units x $0.26 = $0.52. Apart: job 0 on a large VM for one
    # unit ($0.26) and job 1 on a small one for two ($0.13): $0.39, the optimum.
    inst = instance([200.0, 10.0], new_units=np.array([1, 2]))
    m = build_model(inst)
    result = solver.solve(m.model, limit=Limit(seconds=10.0, threads=1))
    got = m.decode(result.values)
    assert result.objective == pytest.approx(0.39) and inst.cost(got) == pytest.approx(0.39)
    assert got.targets.tolist() == [5, 6] and got.new_types.tolist() == [1, 0]


# --- encode ---------------------------------------------------------------------------------------


def test_three_new_vms_of_one_type_are_encoded_as_its_first_three() -> None:
    # Each job of 60 on its own small VM: new VMs 5, 6, 7 are VMs t = 0, 1, 2 of type 0, each one unit.
    inst = three_small_vms()
    for symmetry in ("none", "order", "assign"):
        m = build_model(inst, symmetry=symmetry)  # type: ignore[arg-type]
        values = m.encode(plan([5, 6, 7], [0, 0, 0]))
        assert values is not None
        expected = assignment(m, {m.x[(t, 0, t)]: 1 for t in range(3)}
                              | {m.y[(t, 0)]: 1 for t in range(3)} | {m.h[(t, 0)]: 1 for t in range(3)})
        assert values.tolist() == expected.tolist()
        assert m.model.violations(values) == [] and m.model.objective(values) == pytest.approx(3 * SMALL)


def test_a_plan_on_a_fleet_slot_that_is_not_a_candidate_has_no_encoding() -> None:
    # Candidate running VMs at slots 0 and 2 (indices 0 and 1); slot 1 is not one of them.
    inst = instance([10.0], vm_slot=np.array([0, 2]), vm_room=np.full((2, 1), 100.0),
                    vm_rows=CapacityRows.empty(2, 1), vm_hourly=np.ones(2), vm_base=np.zeros(2, np.int64),
                    vm_units=np.ones((2, 1), np.int64), n_slots=3)
    m = build_model(inst)
    assert m.encode(plan([1], [], n_slots=3)) is None
    values = m.encode(plan([2], [], n_slots=3))
    assert values is not None and values[m.z[(1, 0)]] == 1 and values[m.z[(0, 0)]] == 0


def test_a_plan_with_fewer_targets_than_jobs_is_an_error() -> None:
    m = build_model(instance([10.0, 10.0]))
    broken = Plan(jobs=np.array([0, 1]), targets=np.array([5]), new_types=np.array([0]), n_slots=N_SLOTS)
    with pytest.raises(ValueError):
        m.encode(broken)


# --- the rows of the model ------------------------------------------------------------------------


def test_a_new_vm_that_holds_a_job_is_in_use() -> None:
    # Row (5): x_tki <= y_tk. A job on new VM (0, 0) with y = 0 breaks it, and so does y = 1/2
    # (the LP relaxation CBC bounds with is part of the model).
    m = build_model(three_small_vms())
    base = {m.x[(0, 0, 0)]: 1, m.h[(0, 0)]: 1}
    assert "use[0,0,0]" in m.model.violations(assignment(m, base))
    assert "use[0,0,0]" in m.model.violations(assignment(m, base | {m.y[(0, 0)]: 0.5}))
    assert "use[0,0,0]" not in m.model.violations(assignment(m, base | {m.y[(0, 0)]: 1}))


@pytest.mark.parametrize("symmetry", ["order", "assign"])
def test_symmetry_breaking_uses_the_new_vms_of_a_type_in_order(symmetry: str) -> None:
    # y_0 >= y_1 >= y_2: using VM 1 of the type without VM 0 breaks order[1,0], as does y_0 = 1/2.
    m = build_model(three_small_vms(), symmetry=symmetry)  # type: ignore[arg-type]
    assert sorted(row.name for row in m.model.rows if row.name.startswith("order")) == ["order[1,0]", "order[2,0]"]
    job = 1  # job 1 may use VM 1 under "assign" too
    vm1 = {m.x[(1, 0, job)]: 1, m.y[(1, 0)]: 1, m.h[(1, 0)]: 1}
    assert "order[1,0]" in m.model.violations(assignment(m, vm1))
    assert "order[1,0]" in m.model.violations(assignment(m, vm1 | {m.y[(0, 0)]: 0.5}))
    assert "order[1,0]" not in m.model.violations(assignment(m, vm1 | {m.y[(0, 0)]: 1}))
    vm2 = {m.x[(2, 0, 2)]: 1, m.y[(2, 0)]: 1, m.h[(2, 0)]: 1, m.y[(0, 0)]: 1}  # VMs 0 and 2 but not 1
    assert [v for v in m.model.violations(assignment(m, vm2)) if v.startswith("order")] == ["order[2,0]"]


def test_without_symmetry_breaking_any_new_vm_of_a_type_may_be_used_alone() -> None:
    m = build_model(three_small_vms(), symmetry="none")
    assert not [row.name for row in m.model.rows if row.name.startswith("order")]
    vm1 = {m.x[(1, 0, 1)]: 1, m.y[(1, 0)]: 1, m.h[(1, 0)]: 1}
    assert [v for v in m.model.violations(assignment(m, vm1)) if v.startswith("order")] == []


def test_the_default_symmetry_is_order() -> None:
    rows = [row.name for row in build_model(three_small_vms()).model.rows if row.name.startswith("order")]
    assert rows == ["order[1,0]", "order[2,0]"]


def test_the_model_and_its_variables_and_rows_are_named_for_diagnosis() -> None:
    # One running VM (slot 3, base 0) on which job 0 needs two units: g[0] in [0, 2] covers it
    # through cover[0,0]: g - 2 z >= 0. The new VMs' units h[t,k] are at most one.
    inst = instance([10.0], vm_slot=np.array([3]), vm_room=np.full((1, 1), 100.0), vm_rows=CapacityRows.empty(1, 1),
                    vm_hourly=np.ones(1), vm_base=np.zeros(1, np.int64), vm_units=np.full((1, 1), 2, np.int64))
    m = build_model(inst)
    assert m.model.name == "coh-ipp"
    assert m.model.names[m.g[0]] == "g[0]" and m.model.names[m.h[(0, 1)]] == "h[0,1]"
    assert m.model.violations(assignment(m, {m.z[(0, 0)]: 1, m.g[0]: 1})) == ["cover[0,0]"]
    assert m.model.violations(assignment(m, {m.z[(0, 0)]: 1, m.g[0]: 3})) == ["bounds of g[0]"]
    assert m.model.violations(assignment(m, {m.z[(0, 0)]: 1, m.g[0]: 2, m.h[(0, 1)]: 2})) == ["bounds of h[0,1]"]
