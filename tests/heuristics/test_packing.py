"""The job orders, the VM rules and the packing loop, case by case, worked out by hand.

Every packing case runs on a fleet of 48 slots (``SMALL_FLEET``: the engine packs it over Python
lists) and of 49 (over arrays): the same live VMs in the first slots, dead slots after them, so both
paths, and the model (:mod:`heuristics.packing`), must make the plan worked out in the comments.
Times are seconds; the tick rule (no occupancy), so a VM has room for a
job when its ``free`` holds the job's ``r``. ``now`` is 1000 and a new VM boots for 100 s: a job put on
an existing VM starts at ``max(arrival, 1000)``, on a new one at 1100, and departs ``runtime`` later.
VM type 0 (capacity 100) is the Cost-Efficient type for every job here.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from heuristics import fastpack, packing, rules
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import Occupancy
from heuristics.registry import HEURISTICS
from heuristics.rules import JOB_ORDERS, VM_RULES, with_one_more

NOW, BOOT, BTU = 1000.0, 100.0, 3600.0
TYPE_CAPACITY = np.array([100.0, 400.0])
TYPE_ORDER = np.array([0, 1])  # type 0 (100) holds every job of these cases
SIZES = [pytest.param(48, id="lists-48"), pytest.param(49, id="arrays-49")]
STAT_RULES = ["LA", "EA", "LD", "ED", "LAA", "EAA"]


@dataclass
class Vm:
    """A live VM of type 0: its room now, the (arrival, departure) of the jobs it hosts, its rollover."""

    free: float
    jobs: tuple[tuple[float, float], ...] = ()
    rollover: float = BTU


def fleet(vms: list[Vm], size: int) -> Fleet:
    """The VMs in slots ``0 ..``, then dead slots up to ``size`` slots."""
    n, k = len(vms), size - len(vms)
    nan = math.nan

    def column(live: list[float], dead: float, dtype: type = float) -> np.ndarray:
        return np.array(live + [dead] * k, dtype=dtype)

    arr = [[a for a, _ in vm.jobs] for vm in vms]
    dep = [[d for _, d in vm.jobs] for vm in vms]
    return Fleet(
        now=NOW, boot_time=BOOT, free=column([vm.free for vm in vms], -1.0),
        capacity=column([100.0] * n, 0.0), vm_type=column([0] * n, -1, np.int64), ready_at=np.zeros(size),
        anchor=column([NOW - (BTU - vm.rollover) for vm in vms], NOW), last_departure=np.zeros(size),
        n_jobs=column([len(vm.jobs) for vm in vms], 0, np.int64),
        arr_min=column([min(a) if a else nan for a in arr], nan),
        arr_max=column([max(a) if a else nan for a in arr], nan), arr_sum=column([float(sum(a)) for a in arr], 0.0),
        dep_min=column([min(d) if d else nan for d in dep], nan),
        dep_max=column([max(d) if d else nan for d in dep], nan),
        btu=BTU, new_rollover=BTU, type_capacity=TYPE_CAPACITY, type_order=TYPE_ORDER, rate=np.full(size, 0.1))


def batch(*jobs: tuple[float, float, float], user: list[int] | None = None) -> Batch:
    """Jobs as ``(arrival, runtime, r)``, in this position order."""
    a, t, r = (np.array(c, dtype=float) for c in zip(*jobs, strict=True))
    u = np.array(user if user is not None else [0] * len(jobs), dtype=np.int64)
    return Batch(index=np.arange(len(jobs)), arrival=a, runtime=t, r=r, user=u)


def plan(name: str, b: Batch, f: Fleet, seed: int = 0) -> Plan:
    """The engine's plan, checked equal to the model's."""
    heuristic = HEURISTICS.get(name)
    fast = heuristic.plan(b, f, np.random.default_rng(seed))
    model = packing.pack(b, f, heuristic.job_order, heuristic.vm_rule, rng=np.random.default_rng(seed))
    for field in ("jobs", "targets", "new_types"):
        assert getattr(fast, field).tolist() == getattr(model, field).tolist(), (name, field)
        assert getattr(model, field).dtype == np.int64, (name, field)
    return fast


def check(p: Plan, size: int, jobs: list[int], targets: list[int | str], new_types: list[int]) -> None:
    """``targets`` name a new VM ``"N0"``, ``"N1"``, ...: slot ``size + i``."""
    want = [t if isinstance(t, int) else size + int(t[1:]) for t in targets]
    assert p.n_slots == size
    assert p.jobs.tolist() == jobs
    assert p.targets.tolist() == want
    assert p.new_types.tolist() == new_types


def test_the_sizes_straddle_small_fleet() -> None:
    assert fastpack.SMALL_FLEET == 48  # 48 slots go over lists, 49 over arrays


# --- job orders ---------------------------------------------------------------------------------------------------


def test_fcfs_keeps_position_order_among_equal_arrivals() -> None:
    # 20 jobs arriving at 5, 3, 5, 3, ...: those at 3 (odd positions) first, then those at 5, each in position
    # order. Twenty keys with ties: an unstable sort (NumPy's default) mixes the positions.
    b = batch(*[(5.0 if p % 2 == 0 else 3.0, 10.0, 1.0) for p in range(20)])
    want = list(range(1, 20, 2)) + list(range(0, 20, 2))
    assert rules.fcfs(b).tolist() == want
    assert JOB_ORDERS["FCFS"](b).tolist() == want


@pytest.mark.parametrize("size", SIZES)
def test_fcfs_plan_lists_jobs_in_that_order(size: int) -> None:
    # One VM with room 100 takes all 20 jobs of r = 1: the plan's jobs are the FCFS order above, all on slot 0.
    b = batch(*[(5.0 if p % 2 == 0 else 3.0, 10.0, 1.0) for p in range(20)])
    p = plan("FCFS-SM", b, fleet([Vm(100.0)], size))
    check(p, size, list(range(1, 20, 2)) + list(range(0, 20, 2)), [0] * 20, [])


def test_round_robin_takes_each_users_first_job_then_second_in_arrival_order() -> None:
    # Users 0, 0, 1, 1, ..., 9, 9 arriving in position order: round 1 is every user's first job (even positions),
    # round 2 every second job (odd positions), each round in arrival order.
    b = batch(*[(float(p), 10.0, 1.0) for p in range(20)], user=[p // 2 for p in range(20)])
    assert JOB_ORDERS["RR"](b).tolist() == list(range(0, 20, 2)) + list(range(1, 20, 2))


def test_round_robin_counts_rounds_by_arrival_not_position() -> None:
    # Positions 0..3 arrive at 40, 30, 20, 10, users 3, 7, 7, 7. By arrival: 3 (u7), 2 (u7), 1 (u7), 0 (u3).
    # Round 1: user 7's first job (3), user 3's (0); round 2: user 7's second (2); round 3: its third (1).
    b = batch((40.0, 1.0, 1.0), (30.0, 1.0, 1.0), (20.0, 1.0, 1.0), (10.0, 1.0, 1.0), user=[3, 7, 7, 7])
    assert JOB_ORDERS["RR"](b).tolist() == [3, 0, 2, 1]


# Positions: r 30, 10, 30, 10, 50 (runtime the same values), arrivals 5, 4, 3, 4, 1.
# Ascending: 10 -> positions 1, 3 (both arrive at 4: position order), 30 -> 2 (at 3), 0 (at 5), 50 -> 4.
# Descending: 50 -> 4, 30 -> 2, 0, 10 -> 1, 3 (ties by arrival, ascending, then position).
ASCENDING, DESCENDING = [1, 3, 2, 0, 4], [4, 2, 0, 1, 3]
SIZED = ((5.0, 30.0, 30.0), (4.0, 10.0, 10.0), (3.0, 30.0, 30.0), (4.0, 10.0, 10.0), (1.0, 50.0, 50.0))


@pytest.mark.parametrize(("name", "want"), [("SJF", ASCENDING), ("LJF", DESCENDING), ("STJF", ASCENDING),
                                            ("LTJF", DESCENDING)])
def test_size_and_runtime_orders_break_ties_by_arrival_then_position(name: str, want: list[int]) -> None:
    assert JOB_ORDERS[name](batch(*SIZED)).tolist() == want


@pytest.mark.parametrize(("field", "descending", "want"), [("r", False, ASCENDING), ("r", True, DESCENDING),
                                                           ("runtime", False, ASCENDING),
                                                           ("runtime", True, DESCENDING)])
def test_by_builds_those_orders(field: str, descending: bool, want: list[int]) -> None:
    order = rules._by(lambda b: getattr(b, field), descending=descending)
    assert order(batch(*SIZED)).tolist() == want


# --- a VM's statistic as jobs join --------------------------------------------------------------------------------


@pytest.mark.parametrize(("agg", "old", "n", "x", "want"), [
    ("min", 5.0, 2, 3.0, 3.0), ("min", 5.0, 2, 7.0, 5.0), ("min", 5.0, 1, 7.0, 5.0),
    ("max", 5.0, 2, 7.0, 7.0), ("max", 5.0, 2, 3.0, 5.0), ("max", 5.0, 1, 3.0, 5.0),
    ("mean", 4.0, 2, 10.0, 6.0),  # (4 + 4 + 10) / 3
    ("mean", 4.0, 1, 10.0, 7.0),  # (4 + 10) / 2
    ("mean", 6.0, 3, 2.0, 5.0),  # (18 + 2) / 4
    ("min", math.nan, 0, 8.0, 8.0), ("max", math.nan, 0, 8.0, 8.0), ("mean", math.nan, 0, 8.0, 8.0),
    ("max", math.nan, 3, 8.0, 8.0),  # NaN: a VM hosting none, whatever its count says
    ("min", 5.0, 0, 7.0, 7.0),  # no job yet: the statistic of the joining job alone
])
def test_with_one_more(agg: str, old: float, n: int, x: float, want: float) -> None:
    assert with_one_more(agg, old, n, x) == want


# --- VM rules: ties, new VMs, idle VMs ----------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("rule", "targets"), [("SM", ["N0", 0, 1]), ("LM", ["N0", "N0", 0])])
def test_free_rules_ties_to_the_lower_slot(size: int, rule: str, targets: list[int | str]) -> None:
    # Slots 0 and 1 have room 40. Job 0 (r 50) fits neither: new VM N0, room 50 left.
    # Job 1 (r 40): rooms 40, 40, 50. SM: smallest 40, tie -> slot 0. LM: largest -> N0 (10 left).
    # Job 2 (r 40): SM: rooms 1: 40, N0: 50 -> slot 1. LM: rooms 0: 40, 1: 40 (N0 has 10) -> tie -> slot 0.
    b = batch((900.0, 100.0, 50.0), (910.0, 100.0, 40.0), (920.0, 100.0, 40.0))
    check(plan(f"FCFS-{rule}", b, fleet([Vm(40.0), Vm(40.0)], size)), size, [0, 1, 2], targets, [0])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rule", ["CFH", "FFH"])
def test_billing_rules_rank_a_new_vm_by_a_full_billing_unit(size: int, rule: str) -> None:
    # Slot 0: room 20, 1000 s to its rollover. Job 0 (r 30) fits nowhere: new VM N0, a whole unit (3600 s) left.
    # Job 1 (r 20) fits slot 0 and N0. CFH (closest rollover): 1000 < 3600 -> slot 0. FFH (farthest) -> N0.
    b = batch((900.0, 100.0, 30.0), (910.0, 100.0, 20.0))
    p = plan(f"FCFS-{rule}", b, fleet([Vm(20.0, rollover=1000.0)], size))
    check(p, size, [0, 1], ["N0", 0 if rule == "CFH" else "N0"], [0])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rule", ["CFH", "FFH"])
def test_billing_rules_put_an_old_vm_before_a_new_one_on_a_tie(size: int, rule: str) -> None:
    # As above, but slot 0 was started at now: 3600 s to its rollover, as N0. A tie: the old VM (slot 0) wins.
    b = batch((900.0, 100.0, 30.0), (910.0, 100.0, 20.0))
    check(plan(f"FCFS-{rule}", b, fleet([Vm(20.0, rollover=BTU)], size)), size, [0, 1], ["N0", 0], [0])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rule", STAT_RULES)
def test_idle_vms_rank_after_busy_ones_and_among_them_the_lower_slot(size: int, rule: str) -> None:
    # Slots 0 and 2 host no job (NaN statistics), slot 1 one job (arrived 900, leaves 2000); room 100 each.
    # Job 0 (r 10): every slot fits; the busy VM first -> slot 1 (90 left).
    # Job 1 (r 95): only the idle slots 0 and 2 fit -> the lower, slot 0 (5 left).
    # Job 2 (r 10): slots 1 (90) and 2 (100) fit; slot 1 is busy -> slot 1.
    f = fleet([Vm(100.0), Vm(100.0, ((900.0, 2000.0),)), Vm(100.0)], size)
    b = batch((950.0, 100.0, 10.0), (960.0, 100.0, 95.0), (970.0, 100.0, 10.0))
    check(plan(f"FCFS-{rule}", b, f), size, [0, 1, 2], [1, 0, 1], [])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rule", STAT_RULES)
def test_stat_rules_tie_to_the_lower_slot(size: int, rule: str) -> None:
    # Slots 0 and 1 each host one job (arrived 900, leaves 2000), room 50: equal keys under every rule.
    # Job 0 (r 50) -> slot 0 (tie; 0 left). Job 1 (r 50) -> slot 1, the only one with room.
    # Job 2 (r 10) fits nowhere -> new VM N0.
    f = fleet([Vm(50.0, ((900.0, 2000.0),)), Vm(50.0, ((900.0, 2000.0),))], size)
    b = batch((950.0, 100.0, 50.0), (960.0, 100.0, 50.0), (970.0, 100.0, 10.0))
    check(plan(f"FCFS-{rule}", b, f), size, [0, 1, 2], [0, 1, "N0"], [0])


# --- VM rules: keys updated by the jobs placed earlier in the call -----------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_ld_counts_the_departure_of_a_job_placed_in_the_call(size: int) -> None:
    # Slot 0: room 20, latest departure 3000. Slot 1: room 60, latest departure 2000.
    # Job 0 (r 30, 3000 s) fits slot 1 only; it starts at 1000 and leaves at 4000: slot 1's latest departure 4000.
    # Job 1 (r 20) fits slot 0 (3000) and slot 1 (4000): the later -> slot 1.
    f = fleet([Vm(20.0, ((900.0, 3000.0),)), Vm(60.0, ((900.0, 2000.0),))], size)
    b = batch((950.0, 3000.0, 30.0), (960.0, 100.0, 20.0))
    check(plan("FCFS-LD", b, f), size, [0, 1], [1, 1], [])


@pytest.mark.parametrize("size", SIZES)
def test_ed_counts_the_departure_not_the_arrival(size: int) -> None:
    # Slot 0: room 20, earliest departure 1050. Slot 1: room 60, earliest departure 2000.
    # Job 0 (arrives 950, r 30, 200 s) fits slot 1 only; it leaves at 1200: slot 1's earliest departure 1200.
    # Job 1 (r 20) fits slot 0 (1050) and slot 1 (1200): the earlier -> slot 0.
    f = fleet([Vm(20.0, ((900.0, 1050.0),)), Vm(60.0, ((900.0, 2000.0),))], size)
    b = batch((950.0, 200.0, 30.0), (960.0, 100.0, 20.0))
    check(plan("FCFS-ED", b, f), size, [0, 1], [1, 0], [])


@pytest.mark.parametrize("size", SIZES)
def test_la_counts_the_arrival_not_the_departure(size: int) -> None:
    # Slot 0: room 20, latest arrival 990. Slot 1: room 60, latest arrival 500.
    # Job 0 (arrives 950, r 30, leaves 1100) fits slot 1 only: slot 1's latest arrival 950.
    # Job 1 (r 20) fits slot 0 (990) and slot 1 (950): the later -> slot 0.
    f = fleet([Vm(20.0, ((990.0, 5000.0),)), Vm(60.0, ((500.0, 5000.0),))], size)
    b = batch((950.0, 100.0, 30.0), (960.0, 100.0, 20.0))
    check(plan("FCFS-LA", b, f), size, [0, 1], [1, 0], [])


@pytest.mark.parametrize("size", SIZES)
def test_ea_counts_the_arrival_of_a_job_placed_in_the_call(size: int) -> None:
    # Slot 0: room 20, earliest arrival 700. Slot 1: room 60, earliest arrival 800.
    # Job 0 (arrives 600, r 30) fits slot 1 only: slot 1's earliest arrival 600.
    # Job 1 (r 20) fits slot 0 (700) and slot 1 (600): the earlier -> slot 1.
    f = fleet([Vm(20.0, ((700.0, 5000.0),)), Vm(60.0, ((800.0, 5000.0),))], size)
    b = batch((600.0, 100.0, 30.0), (960.0, 100.0, 20.0))
    check(plan("FCFS-EA", b, f), size, [0, 1], [1, 1], [])


@pytest.mark.parametrize("size", SIZES)
def test_laa_counts_every_job_on_an_existing_vm(size: int) -> None:
    # Slot 0: room 100, one job arrived at 100 (mean 100). Slot 1: room 20, one job arrived at 380 (mean 380).
    # Job 0 (arrives 400, r 30) fits slot 0 only: mean (100 + 400) / 2 = 250, two jobs, room 70.
    # Job 1 (arrives 700, r 30) fits slot 0 only: mean (250 * 2 + 700) / 3 = 400, three jobs, room 40.
    # Job 2 (arrives 800, r 20) fits slot 0 (mean 400) and slot 1 (380): the later -> slot 0.
    f = fleet([Vm(100.0, ((100.0, 5000.0),)), Vm(20.0, ((380.0, 5000.0),))], size)
    b = batch((400.0, 100.0, 30.0), (700.0, 100.0, 30.0), (800.0, 100.0, 20.0))
    check(plan("FCFS-LAA", b, f), size, [0, 1, 2], [0, 0, 0], [])


@pytest.mark.parametrize("size", SIZES)
def test_laa_counts_every_job_on_a_new_vm(size: int) -> None:
    # Slot 0: room 20, one job arrived at 380 (mean 380).
    # Job 0 (arrives 100, r 30) fits nowhere: new VM N0, mean 100 (one job), room 70.
    # Job 1 (arrives 700, r 30) fits N0 only: mean (100 + 700) / 2 = 400, room 40.
    # Job 2 (arrives 800, r 20) fits slot 0 (380) and N0 (400): the later -> N0.
    f = fleet([Vm(20.0, ((380.0, 5000.0),))], size)
    b = batch((100.0, 100.0, 30.0), (700.0, 100.0, 30.0), (800.0, 100.0, 20.0))
    check(plan("FCFS-LAA", b, f), size, [0, 1, 2], ["N0", "N0", "N0"], [0])


@pytest.mark.parametrize("size", SIZES)
def test_eaa_counts_every_job_on_an_existing_vm(size: int) -> None:
    # Slot 0: room 100, one job arrived at 900 (mean 900). Slot 1: room 20, one job arrived at 690 (mean 690).
    # Job 0 (arrives 300, r 30) fits slot 0 only: mean (900 + 300) / 2 = 600, room 70.
    # Job 1 (arrives 900, r 30) fits slot 0 only: mean (600 * 2 + 900) / 3 = 700, room 40.
    # Job 2 (arrives 950, r 20) fits slot 0 (700) and slot 1 (690): the earlier -> slot 1.
    f = fleet([Vm(100.0, ((900.0, 5000.0),)), Vm(20.0, ((690.0, 5000.0),))], size)
    b = batch((300.0, 100.0, 30.0), (900.0, 100.0, 30.0), (950.0, 100.0, 20.0))
    check(plan("FCFS-EAA", b, f), size, [0, 1, 2], [0, 0, 1], [])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_rule_picks_among_the_vms_with_room_only(size: int, seed: int) -> None:
    # Slot 0: room 20, slot 1: room 60. Job 0 (r 30) fits slot 1 only (30 left); job 1 (r 50) fits nowhere: N0.
    b = batch((900.0, 100.0, 30.0), (910.0, 100.0, 50.0))
    check(plan("FCFS-Rnd", b, fleet([Vm(20.0), Vm(60.0)], size), seed), size, [0, 1], [1, "N0"], [0])


# --- the states themselves ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", list(VM_RULES))
def test_states_answer_minus_one_when_no_vm_has_room(rule: str) -> None:
    # Two VMs with room 10 and 20 and one slot for a new VM (not started: room -1); a job of r 50 fits none.
    f = fleet([Vm(10.0, ((900.0, 2000.0),)), Vm(20.0, ((900.0, 2000.0),))], 2)
    rng = np.random.default_rng(0)
    state = VM_RULES[rule].ranking(f, 1)
    assert state.choose_among(np.array([10.0, 20.0, -1.0]), 50.0, rng) == -1
    assert VM_RULES[rule].ranking(f, 0).choose([], rng) == -1


@pytest.mark.parametrize("rule", ["LD", "ED"])
def test_a_started_vm_without_jobs_ranks_after_busy_ones(rule: str) -> None:
    # Slot 0 hosts a job (leaves 2000); a VM started in slot 1 hosts none yet: both have room, slot 0 first.
    f = fleet([Vm(50.0, ((900.0, 2000.0),))], 1)
    rng = np.random.default_rng(0)
    small = VM_RULES[rule].ranking(f, 0)
    small.opened()
    assert small.choose([(0, 50.0), (1, 100.0)], rng) == 0
    state = VM_RULES[rule].ranking(f, 1)
    free = np.array([50.0, 100.0])
    state.opened()
    assert state.choose_among(free, 10.0, rng) == 0


@pytest.mark.parametrize(("rule", "first"), [("CFH", 0), ("FFH", 1), ("LA", 0), ("EAA", 0), ("SM", 0), ("LM", 1)])
def test_keys_read_after_vms_were_started_rank_the_started_ones_too(rule: str, first: int) -> None:
    # Slot 0 (20 min to its rollover, a job) has room 50; two VMs started in the call before any key was read
    # (slots 1, 2: a full hour to go, no job, room 100). CFH takes the VM closest to its rollover, FFH the
    # farthest (the first started); LA and EAA rank VMs without jobs last; SM the least room, LM the most.
    f = fleet([Vm(50.0, ((900.0, 2000.0),), rollover=1200.0)], 1)
    state = VM_RULES[rule].ranking(f, 0)
    state.opened()
    state.opened()
    assert state.choose([(0, 50.0), (1, 100.0), (2, 100.0)], np.random.default_rng(0)) == first
    state.placed(1, 950.0, 3000.0)  # slot 1 now hosts a job; the keys were made with both new VMs in them
    assert state.choose([(1, 90.0), (2, 100.0)], np.random.default_rng(0)) == (2 if rule == "LM" else 1)


@pytest.mark.parametrize(("rule", "then"), [("CFH", 1), ("FFH", 2)])
def test_a_vm_started_after_the_keys_were_read_gets_a_full_hour_to_its_rollover(rule: str, then: int) -> None:
    # Slots 0 and 1 (20 and 33 min to their rollovers) both have room: the keys are read. Then a VM is
    # started (slot 2, a full hour to go): CFH still takes slot 1 over it, FFH takes it.
    f = fleet([Vm(50.0, ((900.0, 2000.0),), rollover=1200.0), Vm(50.0, ((900.0, 2000.0),), rollover=2000.0)], 2)
    rng = np.random.default_rng(0)
    state = VM_RULES[rule].ranking(f, 0)
    assert state.choose([(0, 50.0), (1, 50.0)], rng) == (0 if rule == "CFH" else 1)
    state.opened()
    assert state.choose([(1, 50.0), (2, 100.0)], rng) == then


def test_a_vm_started_after_the_statistics_were_read_ranks_last_then_by_its_own_jobs_mean() -> None:
    # LAA (the latest mean arrival first). Slot 0's jobs arrived at 1300 and 1500 (mean 1400), slot 1's at 900.
    f = fleet([Vm(50.0, ((1300.0, 2000.0), (1500.0, 2000.0))), Vm(50.0, ((900.0, 2000.0),))], 2)
    rng = np.random.default_rng(0)
    state = VM_RULES["LAA"].ranking(f, 0)
    assert state.choose([(0, 50.0), (1, 50.0)], rng) == 0  # the means are read
    state.placed(1, 950.0, 3000.0)  # slot 1: mean 925 over 2 jobs (the job counts are read)
    state.opened()  # slot 2: no job yet, so it ranks after both
    assert state.choose([(1, 50.0), (2, 100.0)], rng) == 1
    state.placed(2, 1000.0, 4000.0)
    state.placed(2, 2000.0, 5000.0)  # slot 2: mean (1000 + 2000) / 2 = 1500, later than slot 0's 1400
    assert state.choose([(0, 50.0), (2, 80.0)], rng) == 2


@pytest.mark.parametrize("rule", list(VM_RULES))
def test_packing_warns_of_nothing(rule: str) -> None:
    # Over arrays (49 slots, 48 dead) with slots for new VMs: no division by zero or other warning on the way.
    f = fleet([Vm(20.0, ((900.0, 2000.0),))], 49)
    b = batch((900.0, 100.0, 30.0), (910.0, 100.0, 20.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        VM_RULES[rule].ranking(f, 2).choose_among(np.array([20.0] + [-1.0] * 50), 30.0, np.random.default_rng(0))
        p = plan(f"FCFS-{rule}", b, f)
    assert len(p) == 2


# --- the packing loop (heuristics/packing.py) ---------------------------------------------------------------------
# Issue 19, the mutation run of packing.py. Same fleets (48 slots over lists, 49 over arrays); the cases under the
# interval capacity rule give the VMs' hosted jobs as (start, end, r) intervals.


def interval_fleet(hosted: list[tuple[tuple[float, float, float], ...]], size: int,
                   free: list[float] | None = None) -> Fleet:
    """VMs hosting the jobs ``(start, end, r)``, under the interval rule; room now 100 less their ``r`` unless given."""
    frees = free if free is not None else [100.0 - sum(r for _, _, r in jobs) for jobs in hosted]
    f = fleet([Vm(room, tuple((s, e) for s, e, _ in jobs)) for room, jobs in zip(frees, hosted, strict=True)], size)
    return dataclasses.replace(f, occupancy=Occupancy.of([list(jobs) for jobs in hosted] + [[]] * (size - len(hosted)),
                                                         width=2))


def check_dtypes(p: Plan) -> None:
    assert [a.dtype.name for a in (p.jobs, p.targets, p.new_types)] == ["int64"] * 3


@pytest.mark.parametrize("size", SIZES)
def test_a_job_on_a_new_vm_starts_when_the_vm_has_booted(size: int) -> None:
    # Slot 0: room 20, one job leaving at 1150. Job 0 (arrives 900, r 30, 100 s) fits nowhere: new VM N0, ready at
    # now + boot = 1100, so the job runs 1100 -> 1200 (not from now, 1000, nor from now - boot): N0's earliest
    # departure 1200. Job 1 (r 20) fits slot 0 (1150) and N0 (1200): ED takes the earlier -> slot 0.
    f = fleet([Vm(20.0, ((900.0, 1150.0),))], size)
    b = batch((900.0, 100.0, 30.0), (910.0, 100.0, 20.0))
    check(plan("FCFS-ED", b, f), size, [0, 1], ["N0", 0], [0])


@pytest.mark.parametrize("size", SIZES)
def test_a_job_that_arrived_before_now_starts_now(size: int) -> None:
    # Slot 0: room 20, earliest departure 1050. Slot 1: room 60, earliest departure 2000; both booted (ready at 0).
    # Job 0 (arrived 900, r 30, 100 s) fits slot 1 only; it starts now (1000, not at its arrival) and leaves at 1100:
    # slot 1's earliest departure 1100. Job 1 (r 20) fits slot 0 (1050) and slot 1 (1100): ED -> slot 0.
    f = fleet([Vm(20.0, ((900.0, 1050.0),)), Vm(60.0, ((900.0, 2000.0),))], size)
    b = batch((900.0, 100.0, 30.0), (910.0, 100.0, 20.0))
    check(plan("FCFS-ED", b, f), size, [0, 1], [1, 0], [])


@pytest.mark.parametrize("size", SIZES)
def test_each_new_vm_takes_the_next_slot_after_the_fleet(size: int) -> None:
    # Slot 0 is full (room 0). Jobs 0 and 1 (r 60 each) fit nowhere, nor does job 1 on N0 (40 left): N0 in slot
    # size, N1 in slot size + 1. Job 2 (r 40) fits N0 (40) and N1 (40): SM, a tie -> N0.
    b = batch((900.0, 100.0, 60.0), (910.0, 100.0, 60.0), (920.0, 100.0, 40.0))
    p = plan("FCFS-SM", b, fleet([Vm(0.0)], size))
    check(p, size, [0, 1, 2], ["N0", "N1", "N0"], [0, 0])
    check_dtypes(p)


@pytest.mark.parametrize("size", SIZES)
def test_a_plan_without_new_vms_keeps_integer_arrays(size: int) -> None:
    # Slot 0 (room 100) takes the one job: no new VM, an empty new_types that is still int64.
    p = plan("FCFS-SM", batch((900.0, 100.0, 30.0)), fleet([Vm(100.0)], size))
    check(p, size, [0], [0], [])
    check_dtypes(p)


@pytest.mark.parametrize("size", SIZES)
def test_an_empty_batch_gives_an_empty_integer_plan(size: int) -> None:
    # No job: no target, no new VM, every array empty and int64.
    empty = Batch(index=np.zeros(0, np.int64), arrival=np.zeros(0), runtime=np.zeros(0), r=np.zeros(0),
                  user=np.zeros(0, np.int64))
    for f in (fleet([Vm(100.0)], size), interval_fleet([((900.0, 5000.0, 10.0),)], size)):
        p = plan("FCFS-SM", empty, f)
        check(p, size, [], [], [])
        check_dtypes(p)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("rule", "target"), [("SM", 1), ("LM", 0)])
def test_free_rules_rank_by_the_room_over_the_jobs_interval(size: int, rule: str, target: int) -> None:
    # Interval rule. Slot 0 hosts a job of r 60 over [900, 1050): room now 40. Slot 1 a job of r 50 over
    # [900, 5000): room now 50. The job (arrives 1100, r 30, 100 s) runs [1100, 1200): slot 0's job has left by
    # then, so its room is 100; slot 1's is 50. SM (smallest room) -> slot 1, LM (largest) -> slot 0; ranked by the
    # room now (40 and 50) they would swap.
    f = interval_fleet([((900.0, 1050.0, 60.0),), ((900.0, 5000.0, 50.0),)], size)
    check(plan(f"FCFS-{rule}", batch((1100.0, 100.0, 30.0)), f), size, [0], [target], [])


@pytest.mark.parametrize("size", SIZES)
def test_a_hosted_job_ending_exactly_at_the_start_leaves_its_room(size: int) -> None:
    # Interval rule. Slot 0 hosts a job of r 60 over [900, 1100): room now 40. The job (arrives 1100, r 50, 100 s)
    # starts at 1100, when the hosted one has left ([start, end) is half open): room 100 -> slot 0, no new VM.
    f = interval_fleet([((900.0, 1100.0, 60.0),)], size)
    check(plan("FCFS-CFH", batch((1100.0, 100.0, 50.0)), f), size, [0], [0], [])


# --- the interval rule in the packing loop ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_a_job_that_arrived_before_now_is_checked_over_its_run_from_now(size: int) -> None:
    # Interval rule. Slot 0 hosts a job of r 60 over [950, 5000): room now 40. The job (arrived 900, r 50, 30 s)
    # starts now, 1000, so it runs [1000, 1030) beside the hosted job: room 40 < 50 -> new VM N0 (CFH). Over
    # [900, 930), from its arrival, the hosted job would not have started yet: room 100.
    f = interval_fleet([((950.0, 5000.0, 60.0),)], size)
    check(plan("FCFS-CFH", batch((900.0, 30.0, 50.0)), f), size, [0], ["N0"], [0])


@pytest.mark.parametrize("size", SIZES)
def test_a_job_on_a_booting_vm_is_checked_over_its_run_from_when_it_is_ready(size: int) -> None:
    # Interval rule, no live VM. Job 0 (arrives 1000, r 60, 100 s) starts VM N0, ready at 1100: it runs
    # [1100, 1200), N0's room now 40. Job 1 (arrives 1000, r 50, 50 s) would start on N0 at 1100 too: room 40 < 50
    # -> new VM N1 (CFH). Over [1000, 1050), from its arrival, job 0 would not have started yet: room 100.
    b = batch((1000.0, 100.0, 60.0), (1000.0, 50.0, 50.0))
    check(plan("FCFS-CFH", b, interval_fleet([], size)), size, [0, 1], ["N0", "N1"], [0, 0])


@pytest.mark.parametrize("size", SIZES)
def test_a_vm_started_before_any_room_was_read_takes_its_room_now_while_all_its_jobs_run(size: int) -> None:
    # Interval rule, no live VM, so no slot's bounds are read before job 0 starts N0 (ready at 1100). Jobs 0 (r 70)
    # and 1 (r 10, LM: N0 is the only VM with room) run [1100, 5100): N0's latest start 1100. Job 2 (r 20, 100 s)
    # runs [1100, 1200) while both run: its room is the room now, which holds it exactly -> N0, no second VM.
    b = batch((1000.0, 4000.0, 70.0), (1000.0, 4000.0, 10.0), (1000.0, 100.0, 20.0))
    check(plan("FCFS-LM", b, interval_fleet([], size)), size, [0, 1, 2], ["N0", "N0", "N0"], [0])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("rule", "target"), [("FCFS-CFH", 0), ("FCFS-SM", 0), ("FCFS-LD", 0)])
def test_a_job_of_the_call_that_leaves_before_the_next_one_starts_leaves_it_room(size: int, rule: str,
                                                                                  target: int) -> None:
    # Interval rule. Slot 0 hosts 60 over [900, 5000): room now 40. Job 0 (r 40, 1000 for 50 s) fills it -> slot 0,
    # [1000, 1050). Job 1 (r 40, arrives 1060) finds no free capacity now, but job 0 left by its start: room 40 ->
    # slot 0 again, no new VM.
    f = interval_fleet([((900.0, 5000.0, 60.0),)], size)
    b = batch((1000.0, 50.0, 40.0), (1060.0, 100.0, 40.0))
    check(plan(rule, b, f), size, [0, 1], [target, target], [])


@pytest.mark.parametrize("size", SIZES)
def test_a_job_of_the_fleet_that_leaves_by_the_start_leaves_room_and_one_that_starts_later_takes_it(size: int) -> None:
    # Interval rule. Slot 0 hosts 60 over [900, 1050) and 30 over [1200, 4000): room now 10. A job of r 80 over
    # [1050, 1150) fits (the first has left, the second not started); over [1050, 1250) it does not (80 + 30 from
    # 1200). A job of r 40 over [1049, 1149) fits exactly (60 + 40 at 1049), one of r 50 does not.
    f = interval_fleet([((900.0, 1050.0, 60.0), (1200.0, 4000.0, 30.0))], size)
    check(plan("FCFS-CFH", batch((1050.0, 100.0, 80.0)), f), size, [0], [0], [])
    check(plan("FCFS-CFH", batch((1050.0, 200.0, 80.0)), f), size, [0], ["N0"], [0])
    check(plan("FCFS-SM", batch((1049.0, 100.0, 40.0)), f), size, [0], [0], [])
    check(plan("FCFS-SM", batch((1049.0, 100.0, 50.0)), f), size, [0], ["N0"], [0])


@pytest.mark.parametrize("size", SIZES)
def test_a_new_vm_of_a_type_past_the_shared_arrays(size: int) -> None:
    # Tick rule, 193 VM types of capacity 100, type 192 the most cost-efficient. Slot 0 is full: the job (r 50)
    # starts a VM of type 192 -> new_types [192], one value past the shared one-value arrays (0 .. 191).
    assert len(fastpack._ONE) == 192
    f = dataclasses.replace(fleet([Vm(0.0)], size), type_capacity=np.full(193, 100.0),
                            type_order=np.array([192, *range(192)]))
    p = plan("FCFS-CFH", batch((1000.0, 100.0, 50.0)), f)
    check(p, size, [0], ["N0"], [192])
    check_dtypes(p)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rule", ["FCFS-CFH", "FCFS-SM"])
def test_a_job_of_the_call_holds_its_vm_from_its_arrival_not_from_now(size: int, rule: str) -> None:
    # Interval rule. Slot 0 hosts 60 over [900, 5000): room now 40. Job 0 (arrives 1100, r 40, 50 s) -> slot 0,
    # [1100, 1150): it starts at its arrival, later than now (1000). Job 1 (arrives 1120, r 40, 100 s) meets it
    # there: no room -> new VM N0. Held from now, [1000, 1050), job 0 would have left by 1120.
    f = interval_fleet([((900.0, 5000.0, 60.0),)], size)
    b = batch((1100.0, 50.0, 40.0), (1120.0, 100.0, 40.0))
    check(plan(rule, b, f), size, [0, 1], [0, "N0"], [0])


@pytest.mark.parametrize("size", SIZES)
def test_a_released_slot_has_no_room_whatever_its_row_still_holds(size: int) -> None:
    # Interval rule. Slot 0 is released (vm_type -1, free -1) but its row still lists a job leaving at 1000; slot 1
    # hosts 90 until 5000, slot 2 90 from 2000 (so a job may start after the run's start: the peak is looked at).
    # A job of r 50 from 1000 for 1500 s: slot 0 is no VM, slots 1 and 2 have 10 -> new VM N0.
    f = interval_fleet([((900.0, 1000.0, 60.0),), ((900.0, 5000.0, 90.0),), ((2000.0, 5000.0, 90.0),)], size)
    f = dataclasses.replace(f, vm_type=np.where(np.arange(size) == 0, -1, f.vm_type),
                            free=np.where(np.arange(size) == 0, -1.0, f.free))
    for rule in ("FCFS-SM", "FCFS-LM", "FCFS-CFH", "FCFS-Rnd"):
        check(plan(rule, batch((1000.0, 1500.0, 50.0)), f), size, [0], ["N0"], [0])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("runtime", "vms"), [(100.0, 1), (101.0, 2)])
def test_a_job_placed_later_in_the_order_but_earlier_in_time_meets_the_calls_jobs_on_a_new_vm(
        size: int, runtime: float, vms: int) -> None:
    # Interval rule, no live VM. LJF places X (r 60, [2000, 2500)) first on new VM N0 (ready 1100), then Y (r 50,
    # arrives 1900): over [1900, 2000) Y ends as X starts and shares N0; over [1900, 2001) it meets X (110 > 100)
    # and needs a second VM. N0 holds a job starting after Y's start: its room over Y's run is its peak's.
    b = batch((1900.0, runtime, 50.0), (2000.0, 500.0, 60.0))
    targets: list[int | str] = ["N0", "N0"] if vms == 1 else ["N0", "N1"]
    check(plan("LJF-FFH", b, interval_fleet([], size)), size, [1, 0], targets, [0] * vms)


@pytest.mark.parametrize("size", SIZES)
def test_under_the_tick_rule_a_new_vm_has_its_free_capacity_as_room(size: int) -> None:
    # Tick rule, no live VM. LJF places X (r 60, [2000, 2500)) first on new VM N0, then Y (r 50, arrives 1900, 100 s):
    # over its own run Y would share N0 (it ends as X starts), but the tick rule holds X from now: N0's room is 40
    # -> new VM N1.
    b = batch((1900.0, 100.0, 50.0), (2000.0, 500.0, 60.0))
    check(plan("LJF-FFH", b, fleet([], size)), size, [1, 0], ["N0", "N1"], [0, 0])


OPEN_FIRST = [("opened", ()), ("choose", ()), ("placed", (2.0, 1200.0, 1500.0)), ("choose", ())]
PLACE_FIRST = [
    ("placed", (0.0, 2900.0, 9500.0)), ("placed", (1.0, 1100.0, 5000.0)), ("opened", ()), ("choose", ()),
    ("placed", (2.0, 1200.0, 1500.0)), ("choose", ()), ("opened", ()), ("placed", (0.0, 1300.0, 6000.0)),
    ("choose", ()), ("placed", (3.0, 900.0, 9000.0)), ("choose", ())]


@pytest.mark.parametrize("rule", list(VM_RULES))
@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("steps", [OPEN_FIRST, PLACE_FIRST], ids=["open-first", "place-first"])
def test_a_ranking_chooses_alike_over_pairs_and_over_arrays_whatever_the_order_of_its_calls(
        rule: str, seed: int, steps: list[tuple[str, tuple[float, ...]]]) -> None:
    # Two fleet VMs (rollovers 20 and 33 min; jobs arriving 900 and 950 / 1000), two slots for new VMs. The same
    # calls go to two rankings, one asked over (slot, room) pairs, one over an array of rooms: VMs opened, jobs
    # placed before any choice, between choices, on new VMs and on old ones. Every choice must be the same.
    f = fleet([Vm(50.0, ((900.0, 2000.0),), rollover=1200.0),
               Vm(60.0, ((950.0, 3000.0), (1000.0, 2500.0)), rollover=2000.0)], 2)
    pairs, arrays = VM_RULES[rule].ranking(f, 2), VM_RULES[rule].ranking(f, 2)
    rooms = [50.0, 60.0, 100.0, 80.0]
    opened = 2
    rng_pairs, rng_arrays = np.random.default_rng(seed), np.random.default_rng(seed)
    chosen = []
    for what, args in steps:
        if what == "opened":
            pairs.opened()
            arrays.opened()
            opened += 1
        elif what == "placed":
            j, arrival, departure = args
            pairs.placed(int(j), arrival, departure)
            arrays.placed(int(j), arrival, departure)
        else:
            fits = [(j, rooms[j]) for j in range(opened) if rooms[j] >= 10.0]
            room = np.array([rooms[j] if j < opened else -np.inf for j in range(4)])
            chosen.append(pairs.choose(fits, rng_pairs))
            assert arrays.choose_among(room, 10.0, rng_arrays) == chosen[-1], (rule, len(chosen))
    assert all(0 <= j < 4 for j in chosen)


@pytest.mark.parametrize("size", SIZES)
def test_sm_ranks_a_vm_whose_free_capacity_holds_the_job_by_its_room_over_the_run(size: int) -> None:
    # Interval rule. Slot 0 hosts 60 from 2000 (free 40, but nothing runs over [1000, 1100): room 100); slot 1 hosts
    # 50 until 5000 (room 50). A job of r 30 over [1000, 1100): SM takes the least room, slot 1's 50; read as its
    # free capacity, slot 0's 40 would win. LM takes slot 0 (100).
    f = interval_fleet([((2000.0, 5000.0, 60.0),), ((900.0, 5000.0, 50.0),)], size)
    check(plan("FCFS-SM", batch((1000.0, 100.0, 30.0)), f), size, [0], [1], [])
    check(plan("FCFS-LM", batch((1000.0, 100.0, 30.0)), f), size, [0], [0], [])


@pytest.mark.parametrize("size", SIZES)
def test_a_job_of_the_call_ending_at_the_latest_start_the_call_asks_about_leaves_room_then(size: int) -> None:
    # Interval rule, now 1000, boot 100. Slot 0 hosts 40 until 5000: room 60. Job 0 (arrives 1000, r 60, 100 s) fills
    # it over [1000, 1100); job 1 (arrives 1100, r 60) starts exactly as job 0 leaves -> slot 0 again.
    f = interval_fleet([((900.0, 5000.0, 40.0),)], size)
    check(plan("FCFS-CFH", batch((1000.0, 100.0, 60.0), (1100.0, 100.0, 60.0)), f), size, [0, 1], [0, 0], [])


@pytest.mark.parametrize("size", SIZES)
def test_the_room_over_a_run_is_never_kept_as_the_free_capacity_of_the_next_job(size: int) -> None:
    # Interval rule. Slot 0 hosts 60 from 2000: free 40, room over [1000, 1100) 100. Job A (r 50, [1000, 1100)) ->
    # slot 0 (free now -10). Job B (r 50, [1000, 2500)) meets A at 1000 and the hosted job from 2000: peak 60, room
    # 40 -> new VM N0. Had A's room (100) become slot 0's free capacity, B would have fitted it unread.
    f = interval_fleet([((2000.0, 5000.0, 60.0),)], size)
    b = batch((1000.0, 100.0, 50.0), (1000.0, 1500.0, 50.0))
    check(plan("FCFS-CFH", b, f), size, [0, 1], [0, "N0"], [0])


@pytest.mark.parametrize("size", SIZES)
def test_a_vm_opened_after_the_fleets_bounds_were_read_is_looked_at_like_the_others(size: int) -> None:
    # Interval rule. Slot 0 is full until 5000: job A (r 60, [1000, 1050)) reads the fleet's bounds, finds no room
    # and opens N0 (ready 1100: A runs [1100, 1150)). Job B (r 60, arrives 1200) finds N0's free capacity short (40)
    # but A has left by then: N0's room is 100 -> N0, no second VM.
    f = interval_fleet([((900.0, 5000.0, 100.0),)], size)
    b = batch((1000.0, 50.0, 60.0), (1200.0, 100.0, 60.0))
    check(plan("FCFS-CFH", b, f), size, [0, 1], ["N0", "N0"], [0])


@pytest.mark.parametrize("size", SIZES)
def test_vms_with_later_jobs_of_unequal_number_are_each_ranked_by_their_own_peak(size: int) -> None:
    # Interval rule. Slot 0 hosts 60 from 2000; slot 1 hosts 30 from 2000 and 30 from 2500: both have jobs starting
    # after the run's start, so both rooms are peaks over their own rows (one entry and two). A job of r 30 over
    # [1000, 3000): slot 0's peak 60 (room 40), slot 1's 60 (room 40): SM ties to slot 0. Over [1000, 2400): slot 1's
    # peak is 30 (room 70), so LM takes slot 1 and SM slot 0.
    f = interval_fleet([((2000.0, 5000.0, 60.0),), ((2000.0, 5000.0, 30.0), (2500.0, 5000.0, 30.0))], size)
    check(plan("FCFS-SM", batch((1000.0, 2000.0, 30.0)), f), size, [0], [0], [])
    check(plan("FCFS-LM", batch((1000.0, 1400.0, 30.0)), f), size, [0], [1], [])
    check(plan("FCFS-SM", batch((1000.0, 1400.0, 30.0)), f), size, [0], [0], [])
