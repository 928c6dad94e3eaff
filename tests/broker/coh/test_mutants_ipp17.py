"""Hand-worked cases of issue 17's code (the subset dynamic program, the vectorized instance builder and
the IPP's capacity rows) that a mutation run (mutmut 3) showed untested.

Every expected value below is worked out by hand in the comment beside it, or by an independent
reference (the enumeration of :mod:`tests.broker.coh.test_subsets`, the VM-by-VM builder of
:mod:`tests.broker.coh.instance_reference`), never by a second run of the code under test. The cases
sit on boundaries and ties: a load exactly equal to a capacity, the largest batch, equal costs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from broker.coh.instance import make_instance
from broker.coh.intervals import IntervalTable
from broker.coh.ipp import CapacityRows, IppInstance, essential
from broker.coh.subsets import MAX_SUBSET_JOBS, solve_subsets
from broker.pricing.billing import Billing
from heuristics.fleet import Batch, Fleet
from heuristics.occupancy import Occupancy
from tests.broker.coh.instance_reference import reference_instance

BILLING = Billing()  # one-hour units counted from the start (anchor(now) = now)
CAPACITY = np.array([100.0, 410.0])  # the price book's small and large VM types
HOURLY = np.array([0.065, 0.26])


def no_vms(m: int, **changes: Any) -> IppInstance:
    """``m`` jobs of r 10, each one unit on a new VM, all running at once (one type row); no running VM."""
    fields: dict[str, Any] = {
        "r": np.full(m, 10.0), "vm_slot": np.zeros(0, np.int64), "vm_room": np.zeros((0, m)),
        "vm_rows": CapacityRows.empty(0, m), "vm_hourly": np.zeros(0), "vm_base": np.zeros(0, np.int64),
        "vm_units": np.zeros((0, m), np.int64), "type_capacity": CAPACITY, "type_hourly": HOURLY,
        "new_units": np.ones(m, dtype=np.int64), "type_rows": np.ones((1, m), dtype=bool), "n_slots": 5}
    fields.update(changes)
    return IppInstance(**fields)


def one_vm(m: int, **changes: Any) -> IppInstance:
    """:func:`no_vms` plus one running VM (slot 3, $1 an hour, base 0, one unit for any job) with room 100
    for each job and no row."""
    fields: dict[str, Any] = {
        "vm_slot": np.array([3]), "vm_room": np.full((1, m), 100.0), "vm_rows": CapacityRows.empty(1, m),
        "vm_hourly": np.ones(1), "vm_base": np.zeros(1, np.int64), "vm_units": np.ones((1, m), np.int64)}
    fields.update(changes)
    return no_vms(m, **fields)


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


# --- make_instance ---------------------------------------------------------------------------------


def fleet(free: list[float], capacity: list[float], vm_type: list[int], rate: list[float], *, now: float = 870.0,
          occupancy: Occupancy | None = None) -> Fleet:
    """VMs billed from 0, ready, idle since 0; boot 120 s, one-hour units."""
    n = len(free)
    one, nan = np.ones(n), np.full(n, np.nan)
    return Fleet(now=now, boot_time=120.0, free=np.array(free), capacity=np.array(capacity),
                 vm_type=np.array(vm_type, np.int64), ready_at=0 * one, anchor=0 * one, last_departure=0 * one,
                 n_jobs=np.zeros(n, np.int64), arr_min=nan, arr_max=nan, arr_sum=0 * one, dep_min=nan, dep_max=nan,
                 btu=3600.0, new_rollover=3600.0, type_capacity=CAPACITY, type_order=np.array([1, 0]),
                 rate=np.array(rate), occupancy=occupancy)


def batch(arrival: list[float], runtime: list[float], r: list[float]) -> Batch:
    m = len(arrival)
    return Batch(index=np.arange(m), arrival=np.array(arrival, float), runtime=np.array(runtime, float),
                 r=np.array(r, float), user=np.zeros(m, np.int64))


def test_the_tick_rule_on_an_empty_batch_has_no_candidate_vm() -> None:
    inst = make_instance(batch([], [], []), fleet([400.0, 300.0], [410.0, 410.0], [1, 1], [0.26, 0.26]), BILLING,
                         HOURLY)
    assert inst.vm_slot.tolist() == [] and inst.vm_slot.dtype == np.int64
    assert inst.vm_room.shape == (0, 0) and inst.vm_rows.mask.shape == (0, 1, 0)


def test_the_tick_rule_gives_exactly_one_row_per_vm() -> None:
    # Free 400 and 300, jobs of 300 and 400: both VMs are candidates (300 >= 300), one row each
    # holding both jobs against the free capacity.
    f = fleet([400.0, 300.0], [410.0, 410.0], [1, 1], [0.26, 0.26])
    inst = make_instance(batch([1000.0, 1000.0], [100.0, 100.0], [300.0, 400.0]), f, BILLING, HOURLY)
    assert inst.vm_rows.mask.shape == (2, 1, 2) and inst.vm_rows.mask.all()
    assert inst.vm_rows.head.tolist() == [[400.0], [300.0]]


def test_a_hosted_job_starting_during_the_new_jobs_sets_their_row() -> None:
    # A small VM (type 0, capacity 100) hosts A [0, 5000) r 10 and B [1500, 5000) r 50. Two new jobs
    # [1000, 3000) r 30 each: each has room 100 - (10 + 50) = 40 >= 30 over its run. Rows at the
    # jobs' start 1000 (load 10, head 90) and at B's start 1500 (load 60, head 40); the first holds
    # the same jobs with more room, so only the second is kept.
    table = IntervalTable(1)
    table.add(0, 0, 0.0, 5000.0, 10.0)
    table.add(0, 1, 1500.0, 5000.0, 50.0)
    f = fleet([40.0], [100.0], [0], [0.065], occupancy=table.occupancy(1))
    jobs = batch([1000.0, 1000.0], [2000.0, 2000.0], [30.0, 30.0])
    inst = make_instance(jobs, f, BILLING, HOURLY)
    assert inst.vm_slot.tolist() == [0] and inst.vm_room.tolist() == [[40.0, 40.0]]
    mask, head = inst.vm_rows.of(0)
    assert mask.tolist() == [[True, True]] and head.tolist() == [40.0]
    ref = reference_instance(jobs, f, BILLING)  # the VM-by-VM oracle agrees
    assert ref.vm_rows[0][0].tolist() == [[True, True]] and ref.vm_rows[0][1].tolist() == [40.0]


def test_identical_vms_past_the_batch_size_are_dropped_unless_kept_or_not_reduced() -> None:
    # Tick rule: three identical large VMs (free 400, $0.26) and one job of 100: one VM per job is
    # enough (slot 0); reduce=False keeps all three; keep=[2] keeps slot 2 as well; with max_vms=1
    # the kept slot wins over the equally cheap slot 0.
    f = fleet([400.0] * 3, [410.0] * 3, [1] * 3, [0.26] * 3)
    jobs = batch([1000.0], [100.0], [100.0])
    assert make_instance(jobs, f, BILLING, HOURLY).vm_slot.tolist() == [0]
    assert make_instance(jobs, f, BILLING, HOURLY, reduce=False).vm_slot.tolist() == [0, 1, 2]
    assert make_instance(jobs, f, BILLING, HOURLY, keep=np.array([2])).vm_slot.tolist() == [0, 2]
    assert make_instance(jobs, f, BILLING, HOURLY, keep=np.array([2]), max_vms=1).vm_slot.tolist() == [2]


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
