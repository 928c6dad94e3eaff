"""Hand-worked cases of :mod:`broker.coh.ipp` that a mutation run (mutmut 3) showed untested: the
instance's cost and bound, the rows of the model built for CBC and CP-SAT, and its decoding and
encoding of plans.

Every instance is in billing units (3,600-s units counted from each VM's anchor) and tiny; the
expected value sits beside it, worked out by hand, never by a second run of the code under test.
The price book's two types: small (capacity 100, $0.065 an hour) and large (410, $0.26).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from broker.coh.ipp import CapacityRows, IppInstance, IppModel, build_model
from heuristics.fleet import Plan
from solvers.base import Limit
from solvers.cbc import CbcSolver
from solvers.cpsat import CpSatSolver

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
