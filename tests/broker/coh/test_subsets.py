"""The subset dynamic program (:mod:`broker.coh.subsets`): the optimum of the integer program, by an
independent enumeration on small instances and by CP-SAT on real ticks, and its tie rules by hand."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.coh.instance import make_instance
from broker.coh.ipp import CapacityRows, IppInstance, build_model
from broker.coh.subsets import MAX_SUBSET_JOBS, solve_subsets
from heuristics.fleet import Plan
from solvers.base import Limit, Status, get_solver
from tests.broker.coh.ipp_cases import BILLING, CATALOG, captured
from tests.broker.coh.small_cases import no_vms, one_vm


def partitions(items: list[int]) -> Any:
    """Every set partition of ``items`` (as lists of blocks)."""
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for part in partitions(rest):
        for k in range(len(part)):
            yield [*part[:k], [head, *part[k]], *part[k + 1:]]
        yield [[head], *part]


def enumerate_optimum(inst: IppInstance) -> float:
    """The cheapest plan by trying every split of the jobs and every target of every block."""
    best = np.inf
    n_vm, n_types = len(inst.vm_slot), len(inst.type_capacity)
    for blocks in partitions(list(range(inst.n_jobs))):
        options = list(range(n_vm)) + [n_vm + k for k in range(n_types)]
        for choice in itertools.product(options, repeat=len(blocks)):
            running = [c for c in choice if c < n_vm]
            if len(running) != len(set(running)):
                continue  # a running VM takes one block
            targets = np.zeros(inst.n_jobs, dtype=np.int64)
            new_types = []
            for block, c in zip(blocks, choice, strict=True):
                if c < n_vm:
                    targets[block] = inst.vm_slot[c]
                else:
                    targets[block] = inst.n_slots + len(new_types)
                    new_types.append(c - n_vm)
            plan = Plan(np.arange(inst.n_jobs), targets, np.array(new_types, dtype=np.int64), inst.n_slots)
            best = min(best, inst.cost(plan))
    return best


@st.composite
def instances(draw: Any) -> IppInstance:
    """Small random instances: 1-4 jobs, 0-3 running VMs with rows, two VM types."""
    m = draw(st.integers(1, 4))
    n = draw(st.integers(0, 3))
    r = np.array(draw(st.lists(st.sampled_from([10.0, 20.0, 30.0, 50.0, 60.0]), min_size=m, max_size=m)))
    room = np.array(draw(st.lists(st.sampled_from([0.0, 20.0, 50.0, 60.0, 100.0]), min_size=n * m, max_size=n * m)),
                    dtype=float).reshape(n, m)
    rows = []
    for _ in range(n):
        k = draw(st.integers(0, 2))
        mask = np.array(draw(st.lists(st.booleans(), min_size=k * m, max_size=k * m)), dtype=bool).reshape(k, m)
        head = np.array(draw(st.lists(st.sampled_from([30.0, 60.0, 80.0]), min_size=k, max_size=k)), dtype=float)
        rows.append((mask, head))
    units = np.array(draw(st.lists(st.integers(0, 3), min_size=n * m, max_size=n * m)), dtype=np.int64).reshape(n, m)
    base = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64)
    hourly = np.array(draw(st.lists(st.sampled_from([0.0, 0.065, 0.26]), min_size=n, max_size=n)), dtype=float)
    n_rows = draw(st.integers(0, 2))
    type_rows = np.array(draw(st.lists(st.booleans(), min_size=n_rows * m, max_size=n_rows * m)),
                         dtype=bool).reshape(n_rows, m)
    new_units = np.array(draw(st.lists(st.integers(1, 3), min_size=m, max_size=m)), dtype=np.int64)
    return IppInstance(r=r, vm_slot=np.arange(2, 2 + n), vm_room=room, vm_rows=CapacityRows.from_list(rows, m),
                       vm_hourly=hourly, vm_base=base, vm_units=units, type_capacity=np.array([60.0, 120.0]),
                       type_hourly=np.array([0.065, 0.26]), new_units=new_units, type_rows=type_rows, n_slots=6)


@settings(max_examples=300, deadline=None)
@given(instances())
def test_the_dynamic_program_finds_the_enumerated_optimum(inst: IppInstance) -> None:
    plan, cost = solve_subsets(inst)
    assert inst.cost(plan) == pytest.approx(cost, abs=1e-12)
    assert cost == pytest.approx(enumerate_optimum(inst), abs=1e-12)


CASES = [("LCG-2005-1.swf.gz", "heterogeneous", 3, 5), ("LCG-2005-1.swf.gz", "heterogeneous", 6, 10),
         ("LCG-2005-1.swf.gz", "constant-10", 3, 10), ("KTH-SP2-1996-2.1-cln.swf.gz", "constant-100", 3, 6),
         ("LPC-EGEE-2004-1.2-cln.swf.gz", "heterogeneous", 3, 6)]


@pytest.mark.parametrize(("trace", "reqs", "low", "high"), CASES)
def test_the_dynamic_program_finds_cp_sats_proven_optimum_on_real_ticks(trace: str, reqs: str, low: int,
                                                                       high: int) -> None:
    solver = get_solver("cpsat")
    cases = captured(trace, reqs, low, high, n_jobs=6000, every=2)[:12]
    assert len(cases) >= 5
    for paid in (False, True):
        for batch, fleet in cases:
            inst = make_instance(batch, fleet, BILLING, CATALOG.hourly, paid=paid)
            plan, cost = solve_subsets(inst)
            assert inst.cost(plan) == pytest.approx(cost, abs=1e-9)
            model = build_model(inst)
            result = solver.solve(model.model, limit=Limit.deterministic(30.0))
            assert result.status is Status.OPTIMAL
            assert cost == pytest.approx(result.objective, abs=1e-9)


# --- hand-worked instances ---------------------------------------------------------------------------


def instance(**changes: Any) -> IppInstance:
    """Three jobs of r 40 that all run at once; two running VMs (slots 4, 7) with room 100 for each
    job and 80 for the three together (one row), so two of them at most, $1 an hour, base 1, each
    job needs 2 units (one unit more); types small (capacity 100, $0.065) and large (410, $0.26), a
    new VM needs 1 unit."""
    fields: dict[str, Any] = {
        "r": np.full(3, 40.0), "vm_slot": np.array([4, 7]), "vm_room": np.full((2, 3), 100.0),
        "vm_rows": CapacityRows.from_list([(np.ones((1, 3), bool), np.array([80.0]))] * 2, 3), "vm_hourly": np.ones(2),
        "vm_base": np.ones(2, dtype=np.int64), "vm_units": np.full((2, 3), 2, dtype=np.int64),
        "type_capacity": np.array([100.0, 410.0]), "type_hourly": np.array([0.065, 0.26]),
        "new_units": np.ones(3, dtype=np.int64), "type_rows": np.ones((1, 3), dtype=bool), "n_slots": 9}
    fields.update(changes)
    return IppInstance(**fields)


def test_the_last_vm_takes_the_lowest_block_and_the_earlier_ones_the_rest() -> None:
    # Each job needs no unit beyond the base on either VM ($0), each VM holds two of them (80). From
    # the last VM back: slot 7 takes the lowest block that keeps the optimum (job 0 alone), slot 4
    # jobs 1 and 2; nothing new.
    plan, cost = solve_subsets(instance(vm_units=np.ones((2, 3), dtype=np.int64)))
    assert cost == 0.0
    assert plan.targets.tolist() == [7, 4, 4]
    assert plan.new_types.tolist() == []


def test_a_running_vm_is_left_unused_when_it_costs_no_less_than_a_new_one() -> None:
    # One extra unit on a running VM costs $1; three jobs of 40 hold 120 > 100: two small VMs
    # ($0.13) beat one large VM ($0.26) and any running VM.
    plan, cost = solve_subsets(instance())
    assert cost == pytest.approx(0.13)
    assert plan.new_types.tolist() == [0, 0]
    # of the equal splits, the one whose block with job 0 is the lowest subset: job 0 alone, then
    # jobs 1 and 2; new VMs are numbered as the jobs first use them
    assert plan.targets.tolist() == [9, 10, 10]


def test_of_equal_types_the_first_is_taken_and_blocks_go_to_the_lowest_subset() -> None:
    # Two types of the same price and capacity, no running VM: one VM of type 0 holds all three.
    none = {"vm_slot": np.zeros(0, np.int64), "vm_room": np.zeros((0, 3)), "vm_rows": CapacityRows.empty(0, 3),
            "vm_hourly": np.zeros(0), "vm_base": np.zeros(0, np.int64), "vm_units": np.zeros((0, 3), np.int64)}
    plan, cost = solve_subsets(instance(type_capacity=np.array([410.0, 410.0]), type_hourly=np.array([0.26, 0.26]),
                                        **none))
    assert cost == pytest.approx(0.26)
    assert plan.targets.tolist() == [9, 9, 9] and plan.new_types.tolist() == [0]


def test_a_block_needs_one_of_its_few_cheapest_vms_even_when_they_are_shared() -> None:
    # Three jobs that cannot share (rows of 40 < 80): each needs its own VM. Five running VMs, all
    # with room; the job costs are such that the three cheapest VMs for every job are the same
    # three (slots 10, 11, 12, at $0, $0, $0.5); slots 13 and 14 cost $5, a new VM $1. A reduction
    # that kept only the cheapest VM of each block (slot 10) would put two jobs on new VMs ($2); one
    # that kept two, one job ($1).
    n = 5
    rows = CapacityRows.from_list([(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]], bool), np.full(3, 40.0))] * n, 3)
    inst = instance(vm_slot=np.arange(10, 15), vm_room=np.full((n, 3), 100.0), vm_rows=rows,
                    vm_hourly=np.array([1.0, 1.0, 0.5, 5.0, 5.0]), vm_base=np.ones(n, dtype=np.int64),
                    vm_units=np.array([[1] * 3, [1] * 3, [2] * 3, [2] * 3, [2] * 3], dtype=np.int64),
                    type_hourly=np.array([1.0, 2.0]))
    plan, cost = solve_subsets(inst)
    assert cost == pytest.approx(0.5)
    assert sorted(plan.targets.tolist()) == [10, 11, 12]


def test_a_plan_no_vm_can_hold_is_refused_and_sizes_are_checked() -> None:
    with pytest.raises(ValueError, match="no feasible placement"):
        solve_subsets(instance(r=np.array([40.0, 40.0, 500.0])))
    with pytest.raises(ValueError, match=r"1\.\.12"):
        solve_subsets(instance(r=np.zeros(0), vm_room=np.zeros((2, 0)), vm_units=np.zeros((2, 0), np.int64),
                               vm_rows=CapacityRows.empty(2, 0), new_units=np.zeros(0, np.int64),
                               type_rows=np.zeros((1, 0), bool)))
    assert MAX_SUBSET_JOBS == 12


# --- hand-worked cases on boundaries and ties: a load exactly equal to a capacity, the largest batch, equal costs --
# Every expected value is worked out by hand in the comment beside it, or by the enumeration above, never by a second
# run of the code under test. The instances are the small hand-made ones of tests/broker/coh/small_cases.py.


# --- solve_subsets -----------------------------------------------------------------------------------


def test_twelve_jobs_are_the_most_and_split_at_the_lowest_block() -> None:
    # 12 jobs of 10 at once: 120 > 100, so two small VMs ($0.13) beat one large ($0.26). Of the
    # splits of that cost, the block holding job 0 is the lowest subset with the other ten in one
    # small VM (exactly 100 = its capacity): {0, 1}; jobs 2..11 on the second VM.
    plan, cost = solve_subsets(no_vms(MAX_SUBSET_JOBS))
    assert MAX_SUBSET_JOBS == 12 and cost == pytest.approx(0.13)
    assert plan.targets.tolist() == [5, 5] + [6] * 10 and plan.new_types.tolist() == [0, 0]
    with pytest.raises(ValueError, match=r"1\.\.12 jobs, got 13"):
        solve_subsets(no_vms(13))


def test_the_refusal_says_exactly_why() -> None:
    with pytest.raises(ValueError, match=r"^no feasible placement for the jobs$"):
        solve_subsets(no_vms(2, r=np.array([10.0, 500.0])))  # 500 > 410, the largest type


def test_plans_are_integer_arrays_even_without_new_vms() -> None:
    # One job of 10 on the running VM ($1, one unit) or a new small VM ($0.065): the new VM.
    plan, cost = solve_subsets(one_vm(1))
    assert cost == pytest.approx(0.065) and plan.targets.tolist() == [5] and plan.targets.dtype == np.int64
    # ... and at $0.01 an hour the running VM: no new VM, still an integer (empty) type list
    plan, cost = solve_subsets(one_vm(1, vm_hourly=np.array([0.01])))
    assert cost == pytest.approx(0.01) and plan.targets.tolist() == [3]
    assert plan.new_types.tolist() == [] and plan.new_types.dtype == np.int64 and plan.targets.dtype == np.int64


def test_new_vms_of_two_types_keep_their_own_types() -> None:
    # r 400 and 90 at once: 490 > 410, so two VMs: a large one for job 0 (400 > 100) and a small one
    # for job 1: $0.26 + $0.065. New VMs are numbered as the jobs first use them: 5 (large), 6 (small).
    plan, cost = solve_subsets(no_vms(2, r=np.array([400.0, 90.0])))
    assert cost == pytest.approx(0.325)
    assert plan.targets.tolist() == [5, 6] and plan.new_types.tolist() == [1, 0]



def test_a_row_over_by_half_a_unit_does_not_hold() -> None:
    # Two jobs of 40 and 40.5 at once on the running VM ($0, room 100 each) whose one row leaves 80:
    # 80.5 > 80, so they cannot share it. Types of capacity 60 ($0.065) and 120 ($0.26): one job
    # there and the other on a new small VM ($0.065); of the two such splits, the lowest subset on
    # the running VM, job 0.
    rows = CapacityRows.from_list([(np.ones((1, 2), bool), np.array([80.0]))], 2)
    inst = one_vm(2, r=np.array([40.0, 40.5]), vm_rows=rows, vm_hourly=np.zeros(1),
                  type_capacity=np.array([60.0, 120.0]))
    plan, cost = solve_subsets(inst)
    assert cost == pytest.approx(0.065) and plan.targets.tolist() == [3, 5]
    # the same on new VMs: 60 + 40.5 = 100.5 > 100 at once, so a small VM cannot take both: two small
    # ($0.13) beat one large ($0.26)
    plan, cost = solve_subsets(no_vms(2, r=np.array([60.0, 40.5])))
    assert cost == pytest.approx(0.13) and plan.targets.tolist() == [5, 6]
    # ... while at exactly 100 one small VM holds both
    plan, cost = solve_subsets(no_vms(2, r=np.array([60.0, 40.0])))
    assert cost == pytest.approx(0.065) and plan.targets.tolist() == [5, 5]


def test_a_job_larger_than_a_type_needs_a_larger_type_even_outside_every_row() -> None:
    # Jobs 1 and 2 (r 10) run together (the only type row); job 0 (r 400) runs with neither, but
    # 400 > 100: a small VM cannot hold it. One large VM ($0.26) holds all three.
    inst = no_vms(3, r=np.array([400.0, 10.0, 10.0]), type_rows=np.array([[False, True, True]]))
    plan, cost = solve_subsets(inst)
    assert cost == pytest.approx(0.26) and plan.targets.tolist() == [5, 5, 5] and plan.new_types.tolist() == [1]


def test_a_job_of_no_unit_costs_nothing_on_a_new_vm() -> None:
    # A new VM billed for 0 units costs $0: both jobs (0 units each, r 60 and 50: 110 > 100 at once)
    # go to new VMs for nothing, rather than the running VM ($1 an hour, 1 unit): two small VMs,
    # the first of the cheapest types.
    plan, cost = solve_subsets(one_vm(2, r=np.array([60.0, 50.0]), new_units=np.zeros(2, np.int64)))
    assert cost == 0.0 and plan.targets.tolist() == [5, 6] and plan.new_types.tolist() == [0, 0]


def test_of_equally_cheap_running_vms_the_first_is_taken() -> None:
    # One job of 10; slot 2 costs $2 (one unit beyond its base), slot 3 has no room, slots 4 and 5
    # cost nothing (the job ends within their base): the first of the free ones, slot 4.
    inst = one_vm(1, vm_slot=np.array([2, 3, 4, 5]), vm_room=np.array([[100.0], [0.0], [100.0], [100.0]]),
                  vm_rows=CapacityRows.empty(4, 1), vm_hourly=np.array([2.0, 1.0, 1.0, 1.0]),
                  vm_base=np.array([0, 0, 1, 1]), vm_units=np.ones((4, 1), np.int64))
    plan, cost = solve_subsets(inst)
    assert cost == 0.0 and plan.targets.tolist() == [4]
