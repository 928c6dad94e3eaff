"""The interval capacity rule on its boundaries, by hand: the engine's interval table and the integer program's rows.

Every expected value below is worked out by hand in the comment beside it, never by the code under
test. The cases sit on the rule's boundaries: a job that starts exactly when another ends (the
interval is ``[start, end)``), a VM's free capacity exactly equal to the need, equal capacity rows.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from broker.coh.exact import solve_exact
from broker.coh.instance import make_instance, reduce_vms
from broker.coh.intervals import IntervalTable
from broker.coh.ipp import CapacityRows, IppInstance, build_model, essential_rows
from broker.coh.validate import Validator
from broker.pricing.billing import Billing
from broker.sim.validate import EPS, InvariantError
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import Occupancy, peaks
from solvers.base import Limit, get_solver

INF = np.inf
BILLING = Billing()  # one-hour units counted from the start (anchor(now) = now)
CAPACITY = np.array([100.0, 410.0])  # the price book's small and large VM types
HOURLY = np.array([0.065, 0.26])


# --- IntervalTable ---------------------------------------------------------------------------------


def test_a_fresh_table_holds_nothing_and_its_summaries_follow_add_and_remove() -> None:
    t = IntervalTable(2, width=2)
    assert t.start.tolist() == [[-INF, -INF], [-INF, -INF]]  # unused entry: (-inf, inf, 0)
    assert t.end.tolist() == [[INF, INF], [INF, INF]]
    assert t.r.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert t.dep_min.tolist() == [INF, INF]
    assert t.start_max.tolist() == [-INF, -INF]
    t.add(0, job=7, start=5.0, end=20.0, r=3.0)
    assert (t.dep_min[0], t.start_max[0]) == (20.0, 5.0)
    t.add(0, job=8, start=10.0, end=15.0, r=4.0)
    assert (t.dep_min[0], t.start_max[0]) == (15.0, 10.0)  # earliest end 15, latest start 10
    assert (t.dep_min[1], t.start_max[1]) == (INF, -INF)  # the other slot is untouched
    t.remove(8)  # back to job 7 alone: its column is unused again
    assert t.start[0].tolist() == [5.0, -INF]
    assert t.end[0].tolist() == [20.0, INF]
    assert t.r[0].tolist() == [3.0, 0.0]
    assert (t.dep_min[0], t.start_max[0]) == (20.0, 5.0)
    t.remove(7)
    assert t.start[0].tolist() == [-INF, -INF]
    assert t.r[0].tolist() == [0.0, 0.0]
    assert (t.dep_min[0], t.start_max[0]) == (INF, -INF)


def test_a_removed_job_holds_nothing_in_the_peaks() -> None:
    # Slot 0: job 1 (r=3) over [0, 10) and job 2 (r=4) over [0, 10); job 2 leaves. Over [2, 8) the
    # load is job 1's 3 alone (a leftover entry holding anything would show here).
    t = IntervalTable(1, width=2)
    t.add(0, job=1, start=0.0, end=10.0, r=3.0)
    t.add(0, job=2, start=0.0, end=10.0, r=4.0)
    assert peaks(t.start, t.end, t.r, np.array([2.0]), np.array([8.0])).tolist() == [7.0]
    t.remove(2)
    assert peaks(t.start, t.end, t.r, np.array([2.0]), np.array([8.0])).tolist() == [3.0]


def test_jobs_leaving_as_the_window_opens_or_starting_as_it_closes_hold_nothing_in_it() -> None:
    # Row 0, window [10, 20): X and Y (r 5 each) over [0, 10) leave at 10; Z (r 1) over [15, 18)
    # starts inside: the peak is Z's 1 (the 10 held just before 10 is not in the window).
    # Row 1, the same jobs over [9, 20): X and Y run at 9, peak 10.
    # Row 2, window [10, 15): W (r 2) over [12, 13) inside, V (r 7) from 15 starts as it closes: 2.
    start = np.array([[0.0, 0.0, 15.0, -INF], [0.0, 0.0, 15.0, -INF], [12.0, 15.0, -INF, -INF]])
    end = np.array([[10.0, 10.0, 18.0, INF], [10.0, 10.0, 18.0, INF], [13.0, 30.0, INF, INF]])
    r = np.array([[5.0, 5.0, 1.0, 0.0], [5.0, 5.0, 1.0, 0.0], [2.0, 7.0, 0.0, 0.0]])
    assert peaks(start, end, r, np.array([10.0, 9.0, 10.0]), np.array([20.0, 20.0, 15.0])).tolist() == [1.0, 10.0, 2.0]


def test_grow_adds_exactly_the_missing_empty_rows() -> None:
    t = IntervalTable(1, width=2)
    t.add(0, job=0, start=1.0, end=2.0, r=5.0)
    t.grow(3)  # 1 row -> 3 rows: two more, both empty
    assert t.start.shape == t.end.shape == t.r.shape == (3, 2)
    assert len(t.dep_min) == len(t.start_max) == 3
    assert t.start[1:].tolist() == [[-INF, -INF], [-INF, -INF]]
    assert t.end[1:].tolist() == [[INF, INF], [INF, INF]]
    assert t.r[1:].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert t.dep_min.tolist() == [2.0, INF, INF]
    assert t.start_max.tolist() == [1.0, -INF, -INF]
    t.add(2, job=1, start=3.0, end=9.0, r=1.0)
    assert (t.dep_min[2], t.start_max[2]) == (9.0, 3.0)


def test_a_full_row_doubles_the_width_and_keeps_every_job() -> None:
    # Width 1: the 2nd job widens to 2, the 3rd to 4 (never more than needed). Jobs (r) over
    # [0, 10) 1, [2, 8) 2, [4, 6) 4: the peak over [0, 10) is 1 + 2 + 4 = 7 during [4, 6).
    t = IntervalTable(1, width=1)
    t.add(0, job=0, start=0.0, end=10.0, r=1.0)
    assert t.start.shape == (1, 1)
    t.add(0, job=1, start=2.0, end=8.0, r=2.0)
    assert t.start.shape == (1, 2)
    t.add(0, job=2, start=4.0, end=6.0, r=4.0)
    assert t.start.shape == (1, 4)
    assert t.start[0].tolist() == [0.0, 2.0, 4.0, -INF]  # the 4th column is unused
    assert t.end[0].tolist() == [10.0, 8.0, 6.0, INF]
    assert peaks(t.start, t.end, t.r, np.array([0.0]), np.array([10.0])).tolist() == [7.0]
    t.add(0, job=3, start=9.0, end=12.0, r=8.0)  # the unused 4th column: no widening
    assert t.start.shape == (1, 4)
    t.remove(2)
    t.remove(3)
    assert (t.dep_min[0], t.start_max[0]) == (8.0, 2.0)  # left: [0, 10) and [2, 8)


def test_a_frozen_snapshot_keeps_the_values_of_its_tick() -> None:
    t = IntervalTable(2, width=2)
    t.add(0, job=0, start=0.0, end=10.0, r=3.0)
    t.add(1, job=1, start=4.0, end=6.0, r=2.0)
    live, snap = t.occupancy(2), t.occupancy(2).frozen()
    t.remove(0)
    t.add(1, job=2, start=5.0, end=7.0, r=1.0)
    assert live.r[0].tolist() == [0.0, 0.0]  # the view follows the table...
    assert snap.start.tolist() == [[0.0, -INF], [4.0, -INF]]  # ...the snapshot does not
    assert snap.end.tolist() == [[10.0, INF], [6.0, INF]]
    assert snap.r.tolist() == [[3.0, 0.0], [2.0, 0.0]]
    assert snap.dep_min.tolist() == [10.0, 6.0]
    assert snap.start_max.tolist() == [0.0, 4.0]


def test_hosted_lists_only_the_jobs_on_the_slot() -> None:
    t = IntervalTable(2, width=4)
    t.add(0, job=0, start=0.0, end=10.0, r=3.0)
    t.add(0, job=1, start=2.0, end=5.0, r=2.0)
    t.add(0, job=2, start=4.0, end=9.0, r=1.0)
    t.add(1, job=3, start=1.0, end=2.0, r=7.0)
    t.remove(1)  # leaves an unused column between jobs 0 and 2
    assert t.occupancy(2).hosted(0) == [(0.0, 10.0, 3.0), (4.0, 9.0, 1.0)]
    assert t.occupancy(2).hosted(1) == [(1.0, 2.0, 7.0)]
    assert IntervalTable(1).occupancy(1).hosted(0) == []


# --- capacity rows of the integer program ----------------------------------------------------------


def b(r: np.ndarray) -> list[bool]:
    return [bool(v) for v in r]


def test_essential_rows_drop_a_row_whose_jobs_a_tighter_row_also_holds() -> None:
    # Row 0 {0, 1} room 10 is implied by row 1 {0, 1, 2} room 10 (same room, more jobs): only row 1.
    mask, head = essential_rows(np.array([[1, 1, 0], [1, 1, 1]], dtype=bool), np.array([10.0, 10.0]))
    assert [b(row) for row in mask] == [[True, True, True]]
    assert head.tolist() == [10.0]
    # The same with the larger row first.
    mask, head = essential_rows(np.array([[1, 1, 1], [1, 1, 0]], dtype=bool), np.array([10.0, 10.0]))
    assert [b(row) for row in mask] == [[True, True, True]]
    assert head.tolist() == [10.0]
    # Row 0 {0, 1} room 12 is implied by row 1 {0, 1, 2} room 10 (10 <= 12).
    mask, head = essential_rows(np.array([[1, 1, 0], [1, 1, 1]], dtype=bool), np.array([12.0, 10.0]))
    assert [b(row) for row in mask] == [[True, True, True]]
    assert head.tolist() == [10.0]


def test_essential_rows_keep_a_smaller_row_with_less_room_and_rows_not_inside_another() -> None:
    # {0, 1} room 5 is not implied by {0, 1, 2} room 10 (more room); {1, 2} room 4 and {0, 2} room 9
    # are inside {0, 1, 2} but tighter; the single-job row {2} goes (the room filter holds it); a row
    # with exactly two jobs stays.
    mask = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1], [0, 0, 1], [1, 0, 1]], dtype=bool)
    out, head = essential_rows(mask, np.array([5.0, 10.0, 4.0, 0.0, 9.0]))
    assert [b(row) for row in out] == [[True, True, False], [True, True, True], [False, True, True],
                                       [True, False, True]]
    assert head.tolist() == [5.0, 10.0, 4.0, 9.0]
    # Two rows, neither inside the other: both stay.
    out, head = essential_rows(np.array([[1, 1, 0], [0, 1, 1]], dtype=bool), np.array([3.0, 3.0]))
    assert [b(row) for row in out] == [[True, True, False], [False, True, True]]


def test_essential_rows_keep_one_of_two_equal_rows() -> None:
    mask, head = essential_rows(np.array([[1, 1], [1, 1]], dtype=bool), np.array([7.0, 7.0]))
    assert [b(row) for row in mask] == [[True, True]]
    assert head.tolist() == [7.0]
    # of the same jobs, the row with less room stays whatever the order
    for heads, kept in (([7.0, 6.0], 6.0), ([6.0, 7.0], 6.0)):
        mask, head = essential_rows(np.array([[1, 1], [1, 1]], dtype=bool), np.array(heads))
        assert head.tolist() == [kept]


def instance(**changes: Any) -> IppInstance:
    """Two jobs (r 50, 30) that run at the same time, a running VM (slot 3 of 5) with room 100 for
    either and one row {0, 1} against 100, $1 an hour, base 1 unit, each job 1 unit; types small
    and large, a new VM needs 1 unit."""
    fields: dict[str, Any] = {
        "r": np.array([50.0, 30.0]), "vm_slot": np.array([3]), "vm_room": np.array([[100.0, 100.0]]),
        "vm_rows": CapacityRows.from_list([(np.array([[True, True]]), np.array([100.0]))], 2),
        "vm_hourly": np.array([1.0]),
        "vm_base": np.array([1]), "vm_units": np.array([[1, 1]]), "type_capacity": CAPACITY,
        "type_hourly": HOURLY, "new_units": np.array([1, 1]), "type_rows": np.array([[True, True]]), "n_slots": 5}
    fields.update(changes)
    return IppInstance(**fields)


def test_a_row_is_full_at_its_room_and_over_it_a_unit_later() -> None:
    # small VM (100): 50 + 50 fills it exactly; 50 + 51 is one unit over
    assert instance(r=np.array([50.0, 50.0])).type_holds(0, [0, 1])
    assert not instance(r=np.array([50.0, 51.0])).type_holds(0, [0, 1])
    assert instance(r=np.array([50.0, 51.0])).type_holds(1, [0, 1])  # large VM (410)
    assert instance(r=np.array([50.0, 50.0])).vm_holds(0, [0, 1])
    assert not instance(r=np.array([50.0, 51.0])).vm_holds(0, [0, 1])
    # jobs that never run at the same time on a new VM: no row holds both
    apart = instance(r=np.array([60.0, 60.0]), type_rows=np.zeros((0, 2), dtype=bool))
    assert apart.type_holds(0, [0, 1])


def test_an_exact_fill_holds_at_any_capacity_scale() -> None:
    # 2**24 + 2**24 fills a VM of 2**25 exactly: it holds (there the 1e-9 tolerance is below the
    # spacing of floats, so only "<=" lets the exact fill through); one unit more does not.
    big = float(2**25)
    fill = instance(r=np.array([2.0**24, 2.0**24]), type_capacity=np.array([big]), type_hourly=np.array([1.0]))
    assert fill.type_holds(0, [0, 1])
    over = instance(r=np.array([2.0**24, 2.0**24 + 1]), type_capacity=np.array([big]), type_hourly=np.array([1.0]))
    assert not over.type_holds(0, [0, 1])


def test_the_evaluator_rejects_a_plan_whose_jobs_and_targets_differ_in_length() -> None:
    with pytest.raises(ValueError, match="zip"):
        instance().cost(Plan(jobs=np.array([0, 1]), targets=np.array([3]), new_types=np.array([], np.int64),
                             n_slots=5))


def test_a_job_of_no_billed_unit_costs_nothing() -> None:
    # A job that ends where the VM's units are counted from needs 0 units: on the running VM
    # (base 0) or on a new VM it adds nothing.
    inst = instance(r=np.array([10.0]), vm_room=np.array([[100.0]]),
                    vm_rows=CapacityRows.from_list([(np.ones((1, 1), bool), np.array([100.0]))], 1),
                    vm_base=np.array([0]),
                    vm_units=np.array([[0]]), new_units=np.array([0]), type_rows=np.ones((1, 1), bool))
    on_vm = Plan(jobs=np.array([0]), targets=np.array([3]), new_types=np.array([], np.int64), n_slots=5)
    on_new = Plan(jobs=np.array([0]), targets=np.array([5]), new_types=np.array([0]), n_slots=5)
    assert inst.cost(on_vm) == 0.0
    assert inst.cost(on_new) == 0.0


def rows_named(model: Any, prefix: str) -> dict[str, tuple[list[str], list[float], float]]:
    m = model.model
    return {row.name: ([m.names[i] for i in row.idx], list(row.coef), row.rhs)
            for row in m.rows if row.name.split("[")[0] == prefix}


def test_the_models_capacity_rows_for_running_and_new_vms() -> None:
    # Three jobs r 60, 50, 40: 0 and 1 run together, then 1 and 2 (never 0 and 2).
    # Running VM 0 (slot 3): rows {0, 1} room 100 and {1, 2} room 90; running VM 1 (slot 4): one row
    # {0, 1, 2} room 150 (as under the tick rule). New VMs: the rows {0, 1} and {1, 2}; the small type
    # (100) holds every job alone. With "assign", the t-th new small VM may hold jobs t.. only.
    r = np.array([60.0, 50.0, 40.0])
    inst = instance(
        r=r, vm_slot=np.array([3, 4]), vm_room=np.array([[100.0, 100.0, 100.0], [150.0, 150.0, 150.0]]),
        vm_rows=CapacityRows.from_list([(np.array([[1, 1, 0], [0, 1, 1]], bool), np.array([100.0, 90.0])),
                                        (np.ones((1, 3), bool), np.array([150.0]))], 3),
        vm_hourly=np.array([1.0, 1.0]), vm_base=np.array([1, 1]), vm_units=np.ones((2, 3), np.int64),
        type_capacity=np.array([100.0]), type_hourly=np.array([0.065]), new_units=np.array([1, 1, 1]),
        type_rows=np.array([[1, 1, 0], [0, 1, 1]], bool))
    model = build_model(inst, symmetry="assign")
    assert rows_named(model, "cap") == {
        "cap[0,0]": (["z[0,0]", "z[0,1]"], [60.0, 50.0], 100.0),
        "cap[0,1]": (["z[0,1]", "z[0,2]"], [50.0, 40.0], 90.0),
        "cap[1]": (["z[1,0]", "z[1,1]", "z[1,2]"], [60.0, 50.0, 40.0], 150.0),
    }
    # new VM t = 0 holds any job, t = 1 jobs 1 and 2 (only row {1, 2} has two of them), t = 2 job 2
    # alone (no row: a job alone fits by the type filter)
    assert rows_named(model, "newcap") == {
        "newcap[0,0,0]": (["x[0,0,0]", "x[0,0,1]", "y[0,0]"], [60.0, 50.0, -100.0], 0.0),
        "newcap[0,0,1]": (["x[0,0,1]", "x[0,0,2]", "y[0,0]"], [50.0, 40.0, -100.0], 0.0),
        "newcap[1,0,1]": (["x[1,0,1]", "x[1,0,2]", "y[1,0]"], [50.0, 40.0, -100.0], 0.0),
    }
    # one row for new VMs (the tick rule): named without the row, every job the VM may hold
    model = build_model(instance(type_capacity=np.array([100.0]), type_hourly=np.array([0.065])), symmetry="none")
    assert rows_named(model, "newcap") == {
        "newcap[0,0]": (["x[0,0,0]", "x[0,0,1]", "y[0,0]"], [50.0, 30.0, -100.0], 0.0),
        "newcap[1,0]": (["x[1,0,0]", "x[1,0,1]", "y[1,0]"], [50.0, 30.0, -100.0], 0.0),
    }


def test_the_integer_program_keeps_two_jobs_that_overlap_apart_on_new_vms() -> None:
    # Empty fleet, small VMs only ($0.065 an hour, capacity 100), one unit each: jobs 60, 50, 40
    # where 0 and 1 overlap (110 > 100) and 1 and 2 overlap (90). One VM for all three would hold 110
    # while 0 and 1 run: two VMs, $0.13, with 0 and 1 apart (2 shares a VM with either).
    inst = IppInstance(
        r=np.array([60.0, 50.0, 40.0]), vm_slot=np.zeros(0, np.int64), vm_room=np.zeros((0, 3)),
        vm_rows=CapacityRows.empty(0, 3),
        vm_hourly=np.zeros(0), vm_base=np.zeros(0, np.int64), vm_units=np.zeros((0, 3), np.int64),
        type_capacity=np.array([100.0]), type_hourly=np.array([0.065]), new_units=np.array([1, 1, 1]),
        type_rows=np.array([[1, 1, 0], [0, 1, 1]], bool), n_slots=0)
    model = build_model(inst)
    result = get_solver("cpsat").solve(model.model, limit=Limit.deterministic(5.0))
    assert result.values is not None
    plan = model.decode(result.values)
    assert inst.cost(plan) == pytest.approx(0.13)
    assert len(plan.new_types) == 2
    assert plan.targets[0] != plan.targets[1]


def test_a_running_vm_with_room_for_no_job_leaves_the_next_ones_in_the_model() -> None:
    # VM 0 (slot 3) has room 20 (< 30 and 50), VM 1 (slot 4) room 100: only VM 1 gets variables.
    inst = instance(vm_slot=np.array([3, 4]), vm_room=np.array([[20.0, 20.0], [100.0, 100.0]]),
                    vm_rows=CapacityRows.from_list([(np.zeros((0, 2), bool), np.zeros(0)),
                                                    (np.ones((1, 2), bool), np.array([100.0]))], 2),
                    vm_hourly=np.array([1.0, 1.0]), vm_base=np.array([1, 1]), vm_units=np.ones((2, 2), np.int64))
    model = build_model(inst)
    assert sorted(model.z) == [(1, 0), (1, 1)]
    assert sorted(model.g) == [1]


# --- the exact path: both jobs together ------------------------------------------------------------


def test_together_picks_the_running_vm_whose_own_units_cost_least() -> None:
    # VMs (slots 3, 4) hold both jobs; VM 0 needs 3 units for either job (base 1: $2 more), VM 1 one
    # (base 1: nothing more). No VM type holds a job (capacity 1). Apart: VM 1 + VM 0 = $2; together
    # on VM 1: $0.
    inst = instance(vm_slot=np.array([3, 4]), vm_room=np.full((2, 2), 100.0),
                    vm_rows=CapacityRows.from_list([(np.ones((1, 2), bool), np.array([100.0]))] * 2, 2),
                    vm_hourly=np.array([1.0, 1.0]),
                    vm_base=np.array([1, 1]), vm_units=np.array([[3, 3], [1, 1]]), type_capacity=np.array([1.0]),
                    type_hourly=np.array([1.0]))
    plan, cost = solve_exact(inst)
    assert cost == 0.0
    assert plan.targets.tolist() == [4, 4]


def test_together_on_a_running_vm_costs_its_extra_units_times_its_price() -> None:
    # One VM (slot 3) needs 2 units for either job, base 1, $0.25 an hour: together $0.25. Apart: the
    # VM and a new small VM ($1 a unit here): $1.25; together on a new small VM: $1.
    inst = instance(vm_units=np.array([[2, 2]]), vm_hourly=np.array([0.25]), type_capacity=np.array([100.0]),
                    type_hourly=np.array([1.0]))
    plan, cost = solve_exact(inst)
    assert cost == pytest.approx(0.25)
    assert plan.targets.tolist() == [3, 3]


def test_together_on_a_new_vm_needs_room_for_both_jobs_and_is_one_vm() -> None:
    # No running VM. Jobs 80 and 30 run at the same time: 110 > 100, not together on a small VM.
    # Apart on two small VMs $0.13 beats together on a large VM $0.26.
    none: dict[str, Any] = {"vm_slot": np.zeros(0, np.int64), "vm_room": np.zeros((0, 2)),
                            "vm_rows": CapacityRows.empty(0, 2),
                            "vm_hourly": np.zeros(0), "vm_base": np.zeros(0, np.int64),
                            "vm_units": np.zeros((0, 2), np.int64), "n_slots": 2}
    plan, cost = solve_exact(instance(r=np.array([80.0, 30.0]), **none))
    assert cost == pytest.approx(0.13)
    assert plan.targets.tolist() == [2, 3]
    assert plan.new_types.tolist() == [0, 0]
    # Jobs 50 and 30: together on one small VM, $0.065: one new VM for both.
    plan, cost = solve_exact(instance(r=np.array([50.0, 30.0]), **none))
    assert cost == pytest.approx(0.065)
    assert plan.targets.tolist() == [2, 2]
    assert plan.new_types.tolist() == [0]


# --- the validator: peaks over the jobs' intervals -------------------------------------------------


def world(start: list[float], end: list[float], r: list[float], slot: list[int], capacity: list[float]) -> Any:
    return SimpleNamespace(job_slot=np.array(slot), job_start=np.array(start), job_end=np.array(end),
                           jobs=SimpleNamespace(r=np.array(r)),
                           pool=SimpleNamespace(capacity=np.array(capacity), vm_id=np.array([7, 9])))


def check(w: Any) -> None:
    Validator(w)._check_peaks(1.0, np.arange(len(w.job_slot)))


def test_the_validator_flags_the_first_instant_over_capacity() -> None:
    # VM 7 (capacity 5): A r=3 over [0, 4), B r=3 over [2, 6): 6 > 5 over [2, 4). VM 9 (capacity 9)
    # holds C r=9 over [0, 10), full but not over.
    w = world([0.0, 2.0, 0.0], [4.0, 6.0, 10.0], [3.0, 3.0, 9.0], [0, 0, 1], [5.0, 9.0])
    with pytest.raises(InvariantError, match=r"^t=1\.0: VM 7 holds 6\.0 > capacity 5\.0 from t=2\.0$"):
        check(w)


def test_the_validator_lets_a_job_start_as_another_leaves_and_a_load_within_eps() -> None:
    check(world([0.0, 4.0, 0.0], [4.0, 6.0, 10.0], [3.0, 3.0, 9.0], [0, 0, 1], [5.0, 9.0]))  # B from 4
    check(world([0.0], [4.0], [5.0 + EPS], [0], [5.0, 9.0]))  # exactly EPS over: within the tolerance
    with pytest.raises(InvariantError, match="VM 7 holds"):
        check(world([0.0], [4.0], [5.0 + 2 * EPS], [0], [5.0, 9.0]))


# --- make_instance ---------------------------------------------------------------------------------


def fleet(free: list[float], capacity: list[float], vm_type: list[int], rate: list[float], *, now: float = 870.0,
          last_departure: float = 0.0, occupancy: Occupancy | None = None) -> Fleet:
    n = len(free)
    one, nan = np.ones(n), np.full(n, np.nan)
    return Fleet(now=now, boot_time=120.0, free=np.array(free), capacity=np.array(capacity),
                 vm_type=np.array(vm_type, np.int64), ready_at=0 * one, anchor=0 * one,
                 last_departure=last_departure * one, n_jobs=np.zeros(n, np.int64), arr_min=nan, arr_max=nan,
                 arr_sum=0 * one, dep_min=nan, dep_max=nan, btu=3600.0, new_rollover=3600.0,
                 type_capacity=CAPACITY, type_order=np.array([1, 0]), rate=np.array(rate), occupancy=occupancy)


def batch(arrival: list[float], runtime: list[float], r: list[float]) -> Batch:
    m = len(arrival)
    return Batch(index=np.arange(m), arrival=np.array(arrival, float), runtime=np.array(runtime, float),
                 r=np.array(r, float), user=np.zeros(m, np.int64))


def test_unpaid_base_counts_to_the_last_departure_and_paid_base_to_now() -> None:
    # An idle large VM (anchor 0) whose last job left at 3000; now 3700. Unpaid (the default): base
    # ceil(3000 / 3600) = 1; paid: ceil(3700 / 3600) = 2. The job [3800, 3900) needs 2 units.
    f = fleet([410.0], [410.0], [1], [0.26], now=3700.0, last_departure=3000.0,
              occupancy=IntervalTable(1).occupancy(1))
    jobs = batch([3800.0], [100.0], [400.0])
    assert make_instance(jobs, f, BILLING, HOURLY).vm_base.tolist() == [1]
    assert make_instance(jobs, f, BILLING, HOURLY, paid=True).vm_base.tolist() == [2]
    assert make_instance(jobs, f, BILLING, HOURLY).vm_units.tolist() == [[2]]


def test_a_new_vm_starts_after_booting() -> None:
    # now 870, boot 120: a job arriving at 900 starts on a new VM at 990 and ends at 990 + 3540 =
    # 4530, 3660 s after 870: 2 units. Under the interval rule it meets a job arriving at 1000.
    f = fleet([-1.0], [410.0], [-1], [0.26], occupancy=IntervalTable(1).occupancy(1))
    inst = make_instance(batch([900.0, 1000.0], [3540.0, 10.0], [10.0, 10.0]), f, BILLING, HOURLY)
    assert inst.new_units.tolist() == [2, 1]  # the 2nd: [1000, 1010), 140 s after 870
    assert [b(row) for row in inst.type_rows] == [[True, True]]
    assert len(inst.vm_slot) == 0


def test_the_tick_rule_gives_each_vm_one_row_against_its_free_capacity() -> None:
    # Tick rule: VM 0 free 400, VM 1 free 300 exactly the smaller job's 300: both candidates.
    f = fleet([400.0, 300.0], [410.0, 410.0], [1, 1], [0.26, 0.26])
    inst = make_instance(batch([1000.0, 1000.0], [100.0, 100.0], [300.0, 400.0]), f, BILLING, HOURLY)
    assert inst.vm_slot.tolist() == [0, 1]
    assert inst.vm_room.tolist() == [[400.0, 400.0], [300.0, 300.0]]
    assert [([b(row) for row in mask], head.tolist()) for mask, head in map(inst.vm_rows.of, range(2))] == [
        ([[True, True]], [400.0]), ([[True, True]], [300.0])]
    assert [b(row) for row in inst.type_rows] == [[True, True]]
    assert inst.vm_holds(0, [1]) and inst.vm_holds(1, [0])  # exactly full
    assert not inst.vm_holds(0, [0, 1])  # 700 > 400
    assert not inst.vm_holds(1, [1])


@pytest.mark.parametrize("interval", [True, False])
def test_an_empty_batch_gives_an_empty_instance(interval: bool) -> None:
    f = fleet([400.0], [410.0], [1], [0.26], occupancy=IntervalTable(1).occupancy(1) if interval else None)
    inst = make_instance(batch([], [], []), f, BILLING, HOURLY)
    assert inst.n_jobs == 0
    assert inst.vm_slot.tolist() == []
    assert inst.vm_room.shape == (0, 0)
    assert len(inst.vm_rows) == 0


def test_max_vms_keeps_the_vm_cheapest_to_use() -> None:
    # A large VM ($0.26) and a small one ($0.065), both idle with room for the job (r 50), base 0:
    # the job costs one unit on either; max_vms=1 keeps the small VM (slot 1).
    f = fleet([410.0, 100.0], [410.0, 100.0], [1, 0], [0.26, 0.065])
    jobs = batch([1000.0], [100.0], [50.0])
    assert make_instance(jobs, f, BILLING, HOURLY).vm_slot.tolist() == [0, 1]
    assert make_instance(jobs, f, BILLING, HOURLY, max_vms=1).vm_slot.tolist() == [1]
    # max_vms=0 keeps none, even of a single VM
    assert reduce_vms(instance(), 0).vm_slot.tolist() == []
    assert reduce_vms(instance(), 1).vm_slot.tolist() == [3]
