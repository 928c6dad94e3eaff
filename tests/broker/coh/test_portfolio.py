"""Hand-worked ticks of :class:`broker.coh.portfolio.CohPolicy`: its members, the IPP, chunks and its figures.

The policy is driven one ``decide`` at a time on hand-made fleets, with stand-in members and a stand-in
integer program (:class:`ScriptedIpp`, following :class:`~broker.coh.ipp_member.IppMember`'s interface) whose
outcomes, wall times included, are scripted: every count, cost, tally and recorded field below is worked out
by hand in the comment beside it. The cases sit on the policy's boundaries: a batch exactly at the IPP's
``max_jobs``, a chunk size equal to it, costs equal or exactly the tie tolerance (1e-9 $) apart.

Times: the tick is at 1,000 s, a VM boots 120 s, jobs arrive at 1,130 s and run 600 s, so on a new VM a job
departs at 1,730, one billing hour (3,600 s, counted from 1,000) after the VM started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from broker.coh.ipp_member import IppOutcome
from broker.coh.portfolio import CohPolicy
from broker.pricing.billing import Billing
from broker.sim.recorder import MemoryRecorder, Recorder
from heuristics.fleet import Batch, Fleet, Plan
from solvers.base import Status

NOW, BOOT, LOOKAHEAD = 1000.0, 120.0, 130.0
Planner = Callable[[Batch, Fleet], Plan]

# the stand-in catalog: type 0 $0.25 an hour, type 1 free, type 2 exactly the tie tolerance; capacity 100 each
PRICES = np.array([0.25, 0.0, 1e-9])
CAPACITY = np.full(3, 100.0)


# --- stand-ins ---------------------------------------------------------------------------------------


def batch(r: Sequence[float], first: int = 10) -> Batch:
    """Jobs of requirement ``r`` (run positions ``first``, ``first + 1``, ...) arriving at 1,130 for 600 s."""
    m = len(r)
    return Batch(index=np.arange(first, first + m), arrival=np.full(m, NOW + LOOKAHEAD), runtime=np.full(m, 600.0),
                 r=np.asarray(r, float), user=np.full(m, -1))


def fleet(prices: np.ndarray = PRICES, capacity: np.ndarray = CAPACITY,
          vms: Sequence[tuple[int, float]] = ()) -> Fleet:
    """A fleet at 1,000 s of ``vms`` (type, free capacity): each booted at 0 (billed from 0, ready at 120) and
    idle since, its last departure its boot start. Its first hour, 0 to 3,600, is paid."""
    k = len(vms)
    types = np.array([t for t, _ in vms], np.int64)
    return Fleet(now=NOW, boot_time=BOOT, free=np.array([f for _, f in vms], float), capacity=capacity[types],
                 vm_type=types, ready_at=np.full(k, BOOT), anchor=np.zeros(k), last_departure=np.zeros(k),
                 n_jobs=np.zeros(k, np.int64), arr_min=np.full(k, np.nan), arr_max=np.full(k, np.nan),
                 arr_sum=np.zeros(k), dep_min=np.full(k, np.nan), dep_max=np.full(k, np.nan), btu=3600.0,
                 new_rollover=3600.0, type_capacity=capacity, type_order=np.arange(len(capacity)), rate=prices[types])


class View:
    """The :class:`~broker.coh.policy.SimulationView` of one hand-made fleet."""

    def __init__(self, at: Fleet, prices: np.ndarray = PRICES, recorder: Recorder | None = None) -> None:
        self._fleet, self.now, self.boot_time = at, at.now, at.boot_time
        self.catalog = SimpleNamespace(hourly=prices)
        self.billing = Billing()
        self.recorder = recorder if recorder is not None else MemoryRecorder()

    def fleet(self, *, stats: bool) -> Fleet:
        return self._fleet

    def vm_idle(self, slot: int) -> bool:
        return True


def one_new(k: int) -> Planner:
    """Every job onto one new VM of type ``k``."""
    def make(b: Batch, f: Fleet) -> Plan:
        return Plan(np.arange(len(b)), np.full(len(b), len(f)), np.array([k]), len(f))
    return make


def own_new(k: int) -> Planner:
    """Each job onto a new VM of its own, of type ``k``."""
    def make(b: Batch, f: Fleet) -> Plan:
        return Plan(np.arange(len(b)), len(f) + np.arange(len(b)), np.full(len(b), k), len(f))
    return make


def on_slot(slot: int) -> Planner:
    """Every job onto the fleet's VM ``slot``."""
    def make(b: Batch, f: Fleet) -> Plan:
        return Plan(np.arange(len(b)), np.full(len(b), slot), np.zeros(0, np.int64), len(f))
    return make


def first_fit(k: int) -> Planner:
    """Each job, in order, onto the first VM whose free capacity holds it; the rest onto one new VM of type ``k``."""
    def make(b: Batch, f: Fleet) -> Plan:
        free, targets = f.free.copy(), []
        for r in b.r:
            fits = np.flatnonzero(free >= r)
            if len(fits):
                free[fits[0]] -= r
            targets.append(int(fits[0]) if len(fits) else len(f))
        return Plan(np.arange(len(b)), np.array(targets), np.array([k] if len(f) in targets else [], np.int64), len(f))
    return make


def last_or_smallest(b: Batch, f: Fleet) -> Plan:
    """All the jobs onto the fleet's last VM when its free capacity holds them, else onto one new VM of the
    smallest type that holds them."""
    total = float(b.r.sum())
    if len(f) and f.free[-1] >= total:
        return on_slot(len(f) - 1)(b, f)
    holds = np.flatnonzero(f.type_capacity >= total)
    return one_new(int(holds[np.argmin(f.type_capacity[holds])]))(b, f)


class Member:
    """A stand-in portfolio member; keeps the (run positions, fleet size) of each batch it planned."""

    needs_stats = False

    def __init__(self, name: str, planner: Planner) -> None:
        self.name, self.planner = name, planner
        self.calls: list[tuple[list[int], int]] = []

    def plan(self, b: Batch, f: Fleet, rng: np.random.Generator) -> Plan:
        self.calls.append((b.index.tolist(), len(f)))
        return self.planner(b, f)


def outcome(status: Status, path: str, *, bound: float | None = 0.0, gap: float | None = 0.0, wall_s: float = 0.0,
            limit_hit: bool = False, n_vars: int = 0, in_workers: bool = False) -> IppOutcome:
    return IppOutcome(status, bound, gap, wall_s, limit_hit, path, n_vars, in_workers)


SOLVED = outcome(Status.OPTIMAL, "cbc")


class ScriptedIpp:
    """The integer program's stand-in: IppMember's size rules (``None`` and no outcome from ``max_jobs`` jobs on,
    the exact path up to ``exact_jobs``), then the next scripted (outcome, planner) or else (SOLVED, ``planner``);
    a ``None`` planner gives no plan. Keeps the (run positions, fleet size, share) of each call."""

    name = "IPP"
    needs_stats = False
    fast_path = True

    def __init__(self, planner: Planner | None, script: Sequence[tuple[IppOutcome, Planner | None]] = (), *,
                 max_jobs: int = 50, exact_jobs: int = 0) -> None:
        self.planner, self.script, self.max_jobs, self.exact_jobs = planner, list(script), max_jobs, exact_jobs
        self.last: IppOutcome | None = None
        self.calls: list[tuple[list[int], int, float]] = []

    def exact_applies(self, n_jobs: int) -> bool:
        return self.fast_path and 0 < n_jobs <= self.exact_jobs and n_jobs < self.max_jobs

    def plan(self, b: Batch, f: Fleet, rng: np.random.Generator, incumbent: Plan | None = None, *,
             share: float = 1.0) -> Plan | None:
        self.calls.append((b.index.tolist(), len(f), share))
        self.last = None
        if len(b) >= self.max_jobs:
            return None
        self.last, planner = self.script.pop(0) if self.script else (SOLVED, self.planner)
        return planner(b, f) if planner is not None else None

    def describe(self) -> dict[str, Any]:
        return {"solver": "stand-in", "max_jobs": self.max_jobs}


def policy(members: Sequence[Member], ipp: ScriptedIpp | None = None, **kw: Any) -> CohPolicy:
    return CohPolicy(members, lookahead=LOOKAHEAD, seed=0, ipp=ipp, **kw)  # type: ignore[arg-type]


def placement(plan: Plan) -> tuple[list[int], list[int], list[int], int]:
    return plan.jobs.tolist(), plan.targets.tolist(), plan.new_types.tolist(), plan.n_slots


# --- construction ------------------------------------------------------------------------------------


def test_an_empty_portfolio_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^a portfolio needs at least one member$"):
        CohPolicy([], lookahead=LOOKAHEAD, seed=0)


def test_a_policy_built_without_a_name_is_coh() -> None:
    assert CohPolicy([Member("m", one_new(0))], lookahead=LOOKAHEAD, seed=0).name == "coh"


def test_members_draw_from_one_generator_seeded_by_the_policy() -> None:
    draws: list[float] = []

    class Drawing(Member):
        def plan(self, b: Batch, f: Fleet, rng: np.random.Generator) -> Plan:
            draws.append(float(rng.random()))
            return super().plan(b, f, rng)

    p = CohPolicy([Drawing("a", one_new(0)), Drawing("b", one_new(0))], lookahead=LOOKAHEAD, seed=7)
    for _ in range(2):
        p.decide(NOW, batch([10]), View(fleet()))
    # two members on two ticks: the first four numbers of the seed-7 generator, in call order
    assert draws == np.random.default_rng(7).random(4).tolist()


# --- the choice between members and against the IPP --------------------------------------------------


@pytest.mark.parametrize(("a", "b", "winner", "new_types"), [
    (own_new(0), one_new(0), "b", [0]),  # a: two VMs, $0.50; b: one, $0.25
    (one_new(0), one_new(0), "a", [0]),  # $0.25 each: the member listed first
    (one_new(2), one_new(1), "a", [2]),  # b cheaper by exactly the tolerance (1e-9 - 1e-9 = 0, not < 0)
])
def test_between_members_the_cheaper_by_more_than_the_tolerance_wins(a: Planner, b: Planner, winner: str,
                                                                     new_types: list[int]) -> None:
    p = policy([Member("a", a), Member("b", b)])
    plan = p.decide(NOW, batch([10, 10]), View(fleet(), recorder=Recorder()))  # no records: scored all the same
    assert plan.new_types.tolist() == new_types
    assert p.stats() == {"portfolio_ticks": 1, "wins": {winner: 1}}


@pytest.mark.parametrize(("heuristic", "ipp", "kw", "winner"), [
    (one_new(0), one_new(0), {}, "IPP"),  # $0.25 each: ties go to the IPP by default
    (one_new(0), one_new(0), {"ipp_wins_ties": False}, "m"),  # ... or to the heuristic
    (one_new(0), own_new(0), {}, "m"),  # the IPP's $0.50 against $0.25
    (own_new(0), one_new(0), {"ipp_wins_ties": False}, "IPP"),  # the IPP's $0.25 against $0.50
    (one_new(1), one_new(2), {}, "m"),  # the IPP dearer by exactly the tolerance: 1e-9 is not < 0 + 1e-9
    (one_new(0), own_new(0), {"prefer_ipp": True}, "IPP"),  # the IPP's plan whenever it has one
])
def test_the_ipp_against_the_best_heuristic(heuristic: Planner, ipp: Planner, kw: dict[str, Any], winner: str) -> None:
    # one member and no records: the member's plan is scored all the same, against the IPP's
    p = policy([Member("m", heuristic)], ScriptedIpp(ipp), **kw)
    plan = p.decide(NOW, batch([10, 10]), View(fleet(), recorder=Recorder()))
    assert placement(plan) == placement((ipp if winner == "IPP" else heuristic)(batch([10, 10]), fleet()))
    ipp_wins = int(winner == "IPP")
    stats = p.stats()
    assert stats["wins"] == {winner: 1}
    assert (stats["ipp_wins"], stats["heuristic_wins"]) == (ipp_wins, 1 - ipp_wins)


@pytest.mark.parametrize(("kw", "cost"), [({}, 0.0), ({"paid": True}, 0.0), ({"paid": False}, 0.25)])
def test_costs_count_the_unit_a_running_vm_has_paid(kw: dict[str, Any], cost: float) -> None:
    # VM 0 (type 0, $0.25) was billed from 0 and has hosted nothing: its first hour, to 3,600, is paid. A job
    # on it departs at 1,730: paid scoring (the default) charges nothing more; the paper's reading charges the
    # unit from its last departure (0) to 1,730: $0.25. Member and IPP both place the job there.
    recorder = MemoryRecorder()
    p = policy([Member("m", on_slot(0))], ScriptedIpp(on_slot(0)), **kw)
    p.decide(NOW, batch([10]), View(fleet(vms=[(0, 100.0)]), recorder=recorder))
    (rec,) = recorder.records["portfolio"]
    assert (rec["cost[m]"], rec["cost[IPP]"], rec["winner"]) == (cost, cost, "IPP")


@pytest.mark.parametrize(("kw", "alone"), [
    ({}, True), ({"ipp_wins_ties": False, "prefer_ipp": True}, True), ({"prefer_ipp": True}, True),
    ({"ipp_wins_ties": False}, False),
])
def test_the_ipp_alone_decides_exact_ticks_that_it_wins_on_a_tie(kw: dict[str, Any], alone: bool) -> None:
    # One job (the exact path: one or two jobs). Member and IPP both plan one new VM, $0.25: on a tie that goes
    # to the IPP, the heuristics cannot change the choice and do not run; when it goes to the heuristic, they do.
    recorder = MemoryRecorder()
    m, ipp = Member("m", one_new(0)), ScriptedIpp(one_new(0), exact_jobs=2)
    p = policy([m], ipp, **kw)
    p.decide(NOW, batch([10]), View(fleet(), recorder=recorder))
    assert m.calls == ([] if alone else [([10], 0)])
    assert ipp.calls == [([10], 0, 1.0)]
    (rec,) = recorder.records["portfolio"]
    assert rec["winner"] == ("IPP" if alone else "m")
    assert {k for k in rec if k.startswith("cost[")} == ({"cost[IPP]"} if alone else {"cost[m]", "cost[IPP]"})


def test_an_exact_path_without_a_plan_is_an_error() -> None:
    p = policy([Member("m", one_new(0))], ScriptedIpp(None, exact_jobs=2))
    with pytest.raises(RuntimeError, match=r"^the IPP's exact path returned no plan$"):
        p.decide(NOW, batch([10]), View(fleet()))


# --- large ticks in chunks ---------------------------------------------------------------------------


def test_a_large_tick_is_planned_in_chunks_on_the_fleet_the_earlier_chunks_leave() -> None:
    # Five jobs of 10 (positions 10..14), the IPP's max_jobs: it skips the whole batch, which is then planned
    # two jobs at a time: [10, 11], [12, 13], [14], the IPP's limit shared 2/5, 2/5, 1/5. VM 0 (type 0, $0.25,
    # paid to 3,600) has 25 free. The member gives each job a new VM: $1.25 for the whole batch; the IPP fits
    # first: chunk 1 on VM 0 ($0, 5 left); chunk 2 on one new VM (slot 1 of the chunk's fleet, $0.25); chunk 3
    # on that VM (80 free, busy to 1,730 already: $0). The IPP wins each chunk, then the whole tick: $0.25.
    recorder = MemoryRecorder()
    m, ipp = Member("own", own_new(0)), ScriptedIpp(first_fit(0), max_jobs=5)
    p = policy([m], ipp, chunk_jobs=2)
    plan = p.decide(NOW, batch([10] * 5), View(fleet(vms=[(0, 25.0)]), recorder=recorder))
    assert placement(plan) == ([0, 1, 2, 3, 4], [0, 0, 1, 1, 1], [0], 1)
    assert ipp.calls == [([10, 11, 12, 13, 14], 1, 1.0), ([10, 11], 1, 2 / 5), ([12, 13], 1, 2 / 5), ([14], 2, 1 / 5)]
    assert m.calls == [([10, 11, 12, 13, 14], 1), ([10, 11], 1), ([12, 13], 1), ([14], 2)]
    (rec,) = recorder.records["portfolio"]
    # the paper's reading would also charge VM 0's hour from its last departure: $0.50
    assert (rec["jobs"], rec["winner"], rec["cost[own]"], rec["cost[IPP]"]) == (5, "IPP", 1.25, 0.25)
    stats = p.stats()
    assert (stats["ipp_chunked_ticks"], stats["ipp_calls"], stats["wins"]) == (1, 3, {"IPP": 1})
    assert stats["ipp_status"] == {"optimal": 3, "skipped (too many jobs)": 1}


@pytest.mark.parametrize(("chunk_jobs", "max_jobs", "n_jobs", "chunks"), [
    (1, 2, 2, 2),  # the batch exactly at max_jobs is chunked, one job at a time
    (2, 2, 2, 0),  # chunks as large as max_jobs would be skipped too: no chunking
    (1, 2, 1, 0),  # below max_jobs the IPP plans the whole batch
    (1, 3, 4, 4),
    (0, 2, 2, 0),  # 0: the heuristics alone
    (None, 2, 2, 0),  # the default: no chunks
])
def test_which_ticks_are_chunked(chunk_jobs: int | None, max_jobs: int, n_jobs: int, chunks: int) -> None:
    kw = {} if chunk_jobs is None else {"chunk_jobs": chunk_jobs}
    ipp = ScriptedIpp(None, max_jobs=max_jobs)
    p = policy([Member("own", own_new(0))], ipp, **kw)
    p.decide(NOW, batch([10] * n_jobs), View(fleet(), recorder=Recorder()))
    assert len(ipp.calls) == 1 + chunks and p.stats()["ipp_chunked_ticks"] == int(chunks > 0)


@pytest.mark.parametrize(("prices", "kw", "winner"), [
    ((1.0, 0.5, 0.25), {"ipp_wins_ties": False}, "IPP"),  # chunks $0.75 against $1: cheaper by less than $1
    ((0.5, 0.25, 0.25), {"ipp_wins_ties": False}, "fit"),  # $0.50 each: the tie to the heuristic
    ((0.5, 0.25, 0.25), {}, "IPP"),  # ... or to the IPP
    ((0.25, 0.25, 1e-9), {}, "fit"),  # chunks 0.25 + 1e-9, dearer by exactly the tolerance
    ((0.25, 0.5, 0.5), {"prefer_ipp": True}, "IPP"),  # the chunks' plan although dearer ($1 against $0.25)
])
def test_the_chunks_plan_against_the_heuristics_plan_of_the_whole_batch(prices: tuple[float, float, float],
                                                                        kw: dict[str, Any], winner: str) -> None:
    # VM types of 100, 60 and 40; jobs of 30, 30, 30, 10. The member puts a batch on the last VM when it holds
    # it all, else on a new VM of the smallest type that does: the whole batch (100) on a type 0; in chunks of
    # two, [30, 30] on a type 1 (60, then full), [30, 10] on a type 2. The IPP plans nothing (max_jobs 4 skips
    # the batch; the chunks are the member's), so the chunks cost prices[1] + prices[2] against prices[0].
    hourly, capacity = np.array(prices), np.array([100.0, 60.0, 40.0])
    p = policy([Member("fit", last_or_smallest)], ScriptedIpp(None, max_jobs=4), chunk_jobs=2, **kw)
    plan = p.decide(NOW, batch([30, 30, 30, 10]), View(fleet(hourly, capacity), hourly))
    chunked = ([0, 1, 2, 3], [0, 0, 1, 1], [1, 2], 0)
    whole = ([0, 1, 2, 3], [0, 0, 0, 0], [0], 0)
    assert placement(plan) == (chunked if winner == "IPP" else whole)
    assert p.stats()["wins"] == {winner: 1}


# --- the run's figures: stats() and the per-tick records ---------------------------------------------


def test_the_ipp_tally_of_a_scripted_run() -> None:
    # max_jobs 4, the exact path for one job. The member gives each job a new VM ($0.25 each), the IPP's plans
    # put all on one ($0.25). Ticks of 1, 2, 2, 3, 3, 2, 4, 5 jobs:
    #   1  exact    optimal      gap 0     0.25 s           plan  -> IPP (alone: the heuristics do not run)
    #   2  subsets  optimal      gap 0     0.5 s            plan  -> IPP ($0.25 < $0.50)
    #   3  bound    optimal      gap 0     0.125 s          none  -> member
    #   4  cbc      feasible     gap 0.75  1 s, limit hit, raced in workers, plan -> IPP
    #   5  cbc      feasible     gap 0.5   2 s              plan  -> IPP
    #   6  cpsat    no solution  no gap    1 s, limit hit   none  -> member
    #   7, 8  skipped (4 and 5 jobs)                              -> member
    # 6 calls; optimal 3; exact paths 2 (exact, subsets); bound 1; limit hit 2; in workers 1;
    # mean gap (0 + 0 + 0 + 0.75 + 0.5) / 5 = 0.25; wall time 0.25 + 0.5 + 0.125 + 1 + 2 + 1 = 4.875 s.
    plan = one_new(0)
    script = [(outcome(Status.OPTIMAL, "exact", wall_s=0.25), plan),
              (outcome(Status.OPTIMAL, "subsets", wall_s=0.5), plan),
              (outcome(Status.OPTIMAL, "bound", wall_s=0.125), None),
              (outcome(Status.FEASIBLE, "cbc", gap=0.75, wall_s=1.0, limit_hit=True, in_workers=True), plan),
              (outcome(Status.FEASIBLE, "cbc", gap=0.5, wall_s=2.0), plan),
              (outcome(Status.NO_SOLUTION, "cpsat", bound=None, gap=None, wall_s=1.0, limit_hit=True), None)]
    m, ipp = Member("own", own_new(0)), ScriptedIpp(None, script, max_jobs=4, exact_jobs=1)
    p = policy([m], ipp)
    view = View(fleet(), recorder=Recorder())
    for n in (1, 2, 2, 3, 3, 2, 4, 5):
        p.decide(NOW, batch([10] * n), view)
    assert len(m.calls) == 7  # every tick but the first
    stats = p.stats()
    assert stats == {
        "portfolio_ticks": 8, "wins": {"IPP": 4, "own": 4}, "ipp_wins": 4, "heuristic_wins": 4,
        "ipp_calls": 6, "ipp_optimal_ticks": 3, "ipp_exact_ticks": 2, "ipp_bound_ticks": 1, "ipp_limit_hit_ticks": 2,
        "ipp_status": {"feasible": 2, "no_solution": 1, "optimal": 3, "skipped (too many jobs)": 2},
        "ipp_paths": {"bound": 1, "cbc": 2, "cpsat": 1, "exact": 1, "subsets": 1}, "ipp_raced_in_workers": 1,
        "mean_gap": 0.25, "ipp_wall_s": 4.875, "ipp_chunked_ticks": 0, "ipp": {"solver": "stand-in", "max_jobs": 4}}
    assert list(stats["ipp_status"]) == sorted(stats["ipp_status"]) and list(stats["ipp_paths"]) == sorted(
        stats["ipp_paths"])


def test_stats_when_the_ipp_never_ran_nor_won() -> None:
    # max_jobs 2 and two ticks of 2 jobs: the IPP skips both, the member wins both; no call, so no gap.
    p = policy([Member("own", own_new(0))], ScriptedIpp(one_new(0), max_jobs=2))
    for _ in range(2):
        p.decide(NOW, batch([10, 10]), View(fleet(), recorder=Recorder()))
    assert p.stats() == {
        "portfolio_ticks": 2, "wins": {"own": 2}, "ipp_wins": 0, "heuristic_wins": 2, "ipp_calls": 0,
        "ipp_optimal_ticks": 0, "ipp_exact_ticks": 0, "ipp_bound_ticks": 0, "ipp_limit_hit_ticks": 0,
        "ipp_status": {"skipped (too many jobs)": 2}, "ipp_paths": {}, "ipp_raced_in_workers": 0, "mean_gap": None,
        "ipp_wall_s": 0.0, "ipp_chunked_ticks": 0, "ipp": {"solver": "stand-in", "max_jobs": 2}}


def test_stats_without_an_ipp_are_the_ticks_and_wins_sorted_by_name() -> None:
    # tick 1: a's one VM ($0.25) beats b's two; tick 2 (one job): $0.25 each, the tie to b, listed first;
    # tick 3 as tick 1
    p = policy([Member("b", own_new(0)), Member("a", one_new(0))])
    for n in (2, 1, 2):
        p.decide(NOW, batch([10] * n), View(fleet()))
    stats = p.stats()
    assert stats == {"portfolio_ticks": 3, "wins": {"a": 2, "b": 1}} and list(stats["wins"]) == ["a", "b"]


def test_the_recorded_fields_of_each_tick() -> None:
    # max_jobs 3. Tick 1 (2 jobs): the member's two VMs cost $0.50, the IPP's one $0.25 (its outcome: feasible,
    # bound $0.125, gap 0.5, 0.75 s, limit hit, by cbc, 12 variables). Tick 2 (3 jobs): the IPP skips it (no
    # outcome, so no IPP field), the member's three VMs, $0.75. A policy without IPP records its members' costs.
    recorder = MemoryRecorder()
    ran = outcome(Status.FEASIBLE, "cbc", bound=0.125, gap=0.5, wall_s=0.75, limit_hit=True, n_vars=12,
                  in_workers=True)
    p = policy([Member("own", own_new(0))], ScriptedIpp(None, [(ran, one_new(0))], max_jobs=3))
    p.decide(NOW, batch([10, 10]), View(fleet(), recorder=recorder))
    p.decide(NOW + 10, batch([10] * 3), View(fleet(), recorder=recorder))
    alone = policy([Member("own", own_new(0))])
    alone.decide(NOW + 20, batch([10]), View(fleet(), recorder=recorder))
    assert recorder.records["portfolio"] == [
        {"now": NOW, "jobs": 2, "winner": "IPP", "cost[own]": 0.5, "cost[IPP]": 0.25, "ipp_status": "feasible",
         "ipp_bound": 0.125, "ipp_gap": 0.5, "ipp_wall_s": 0.75, "ipp_limit_hit": True, "ipp_path": "cbc",
         "ipp_vars": 12},
        {"now": NOW + 10, "jobs": 3, "winner": "own", "cost[own]": 0.75},
        {"now": NOW + 20, "jobs": 1, "winner": "own", "cost[own]": 0.25}]


class StatsView(View):
    """A view that keeps the ``stats`` each snapshot was asked with."""

    def __init__(self, at: Fleet, recorder: Recorder | None = None) -> None:
        super().__init__(at, recorder=recorder)
        self.asked: list[object] = []

    def fleet(self, *, stats: bool) -> Fleet:
        self.asked.append(stats)
        return self._fleet


class Drawing(Member):
    """A member that draws from the generator it is handed (as the Rnd rule does)."""

    def plan(self, b: Batch, f: Fleet, rng: np.random.Generator) -> Plan:
        self.draws = [*getattr(self, "draws", []), int(rng.integers(1000))]
        return super().plan(b, f, rng)


@pytest.mark.parametrize(("needs", "recorder"), [(True, Recorder()), (False, Recorder()), (True, MemoryRecorder())])
def test_a_snapshot_is_asked_for_statistics_exactly_when_a_member_reads_them(needs: bool, recorder: Recorder) -> None:
    member = Member("a", one_new(0))
    member.needs_stats = needs  # type: ignore[misc]
    view = StatsView(fleet(), recorder=recorder)
    policy([member]).decide(NOW, batch([10]), view)
    policy([Member("b", one_new(0)), member]).decide(NOW, batch([10]), view)
    assert view.asked == [needs, needs] and all(type(s) is bool for s in view.asked)


def test_one_heuristic_without_records_plans_alone_with_the_policys_generator_and_wins_every_tick() -> None:
    # no records wanted, one member, no IPP: its plan as it is; three ticks, three wins
    member = Drawing("a", one_new(0))
    p = policy([member])
    plans = [p.decide(NOW, batch([10] * n), View(fleet(), recorder=Recorder())) for n in (1, 2, 1)]
    assert [placement(x)[1] for x in plans] == [[0], [0, 0], [0]]  # one new VM each tick
    assert member.draws == np.random.default_rng(0).integers(1000, size=3).tolist()  # seed 0, one draw a tick
    assert p.stats() == {"portfolio_ticks": 3, "wins": {"a": 3}} and p.ticks == 3
