"""The IPP member's solver path (``IppMember.plan`` past the exact paths), seen from the solvers it calls
(issue 19: the lower-bound shortcut, the warm start, the symmetry rows, the side-by-side rule and the
retry count survived a mutation run).

One tick: three new jobs of 10 that run at once, no running VM; a small VM (capacity 100, $0.065
for the one unit each job needs) holds all three. Every job's cheapest placement alone costs
$0.065, so the instance's lower bound is $0.065 and the optimum meets it. The solvers are CP-SAT
behind a recorder that writes what it was given to a file (it may run in a joblib worker).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from broker.coh.instance import make_instance
from broker.coh.ipp import build_model
from broker.coh.ipp_member import IppMember, IppOutcome
from heuristics.fleet import Batch, Plan
from solvers.base import Limit, SolveResult, Status, error_result, get_solver
from solvers.model import MipModel
from tests.broker.coh.ipp_cases import BILLING
from tests.broker.coh.small_cases import HOURLY, batch, fleet

JOBS = batch([1000.0] * 3, [100.0] * 3, [10.0] * 3)
NO_VMS = fleet([], [], [], [])
ONE_SMALL = Plan(jobs=np.arange(3), targets=np.zeros(3, np.int64), new_types=np.array([0]), n_slots=0)  # $0.065
THREE_SMALL = Plan(jobs=np.arange(3), targets=np.arange(3), new_types=np.zeros(3, np.int64), n_slots=0)  # $0.195
WALL = Limit.wall(30.0, threads=4)
WORK = Limit.deterministic(5.0)


class Recording:
    """CP-SAT that first writes its limit's threads, whether it got a start and the model's size to
    ``log``; with ``fail_with_start`` it answers ERROR when given a start (the race then retries)."""

    def __init__(self, log: Path, name: str, *, fail_with_start: bool = False) -> None:
        self.log, self.name, self.fail_with_start = str(log), name, fail_with_start

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        with open(self.log, "a") as f:
            f.write(json.dumps({"name": self.name, "threads": limit.threads, "work": limit.work,
                                "start": start is not None, "vars": model.n_vars, "rows": len(model.rows)}) + "\n")
        if start is not None and self.fail_with_start:
            return error_result(self.name, limit, 0.0, "crashed on the start")
        return get_solver("cpsat").solve(model, limit=limit, start=start)


def calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def member(log: Path, n: int = 1, *, limit: Limit = WORK, **options: object) -> IppMember:
    solvers = [Recording(log, f"rec{k}") for k in range(n)]
    return IppMember(solvers, limit, billing=BILLING, hourly=HOURLY, exact_jobs=0, **options)  # type: ignore[arg-type]


def test_a_plan_at_the_lower_bound_is_proven_without_a_solver(tmp_path: Path) -> None:
    log = tmp_path / "calls"
    ipp = member(log)
    assert ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), ONE_SMALL) is None  # $0.065 = the bound
    assert ipp.last is not None and (ipp.last.path, ipp.last.bound) == ("bound", 0.065) and calls(log) == []
    plan = ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), THREE_SMALL)  # $0.195 > the bound: solve
    assert plan is not None and plan.targets.tolist() == [0, 0, 0] and plan.new_types.tolist() == [0]
    assert ipp.last is not None and ipp.last.path == "cpsat" and len(calls(log)) == 1  # the backend that answered


@pytest.mark.parametrize(("warm_start", "incumbent", "started"),
                         [(True, THREE_SMALL, True), (False, THREE_SMALL, False), (True, None, False)])
def test_the_solver_is_warm_started_only_when_asked_and_given_a_plan(tmp_path: Path, warm_start: bool,
                                                                     incumbent: Plan | None, started: bool) -> None:
    log = tmp_path / "calls"
    plan = member(log, warm_start=warm_start).plan(JOBS, NO_VMS, np.random.default_rng(0), incumbent)
    assert plan is not None and plan.targets.tolist() == [0, 0, 0]
    assert [c["start"] for c in calls(log)] == [started]


@pytest.mark.parametrize("symmetry", ["none", "order", "assign"])
def test_the_solver_gets_the_model_of_the_members_symmetry_rule(tmp_path: Path, symmetry: str) -> None:
    sizes = {s: (m.n_vars, len(m.rows)) for s in ("none", "order", "assign")
             for m in [build_model(make_instance(JOBS, NO_VMS, BILLING, HOURLY, paid=True), symmetry=s).model]}
    assert len(set(sizes.values())) == 3  # the three rules give three different models here
    log = tmp_path / "calls"
    member(log, symmetry=symmetry).plan(JOBS, NO_VMS, np.random.default_rng(0), THREE_SMALL)
    assert [(c["vars"], c["rows"]) for c in calls(log)] == [sizes[symmetry]]


@pytest.mark.parametrize(("workers", "n", "race_jobs", "in_workers", "threads"), [
    (2, 2, 3, True, 2),  # side by side from 3 jobs, a 3-job tick: in workers, 4 threads shared by two
    (2, 2, 4, False, 4),  # from 4 jobs: here, one after another, each with all 4 threads
    (1, 2, 0, False, 4),  # one worker: here, whatever the size
    (2, 1, 0, False, 4),  # one solver: nothing to race
])
def test_the_race_runs_side_by_side_only_with_workers_solvers_and_jobs_enough(
        tmp_path: Path, workers: int, n: int, race_jobs: int, in_workers: bool, threads: int) -> None:
    log = tmp_path / "calls"
    ipp = member(log, n, limit=WALL, workers=workers, race_jobs=race_jobs)
    plan = ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), THREE_SMALL)
    assert plan is not None and plan.targets.tolist() == [0, 0, 0]
    assert ipp.last is not None and ipp.last.in_workers is in_workers
    seen = calls(log)  # in this process a wall race may stop after the first proven optimum
    assert seen and {c["threads"] for c in seen} == {threads}


def test_retries_without_the_start_add_up_over_ticks(tmp_path: Path) -> None:
    log = tmp_path / "calls"
    ipp = IppMember([Recording(log, "fragile", fail_with_start=True)], Limit.deterministic(5.0),
                    billing=BILLING, hourly=HOURLY, exact_jobs=0)
    for _ in range(2):  # each tick: ERROR with the start, then the optimum without it
        plan = ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), THREE_SMALL)
        assert plan is not None and plan.targets.tolist() == [0, 0, 0]
    assert ipp.retries == 2 and [c["start"] for c in calls(log)] == [True, False, True, False]


# --- what the member reports, tick by tick ------------------------------------------------------------------


def quick(outcome: IppOutcome | None) -> IppOutcome:
    """The outcome, checked for what every path reports the same way: no limit hit, a tick's own time."""
    assert outcome is not None and outcome.limit_hit is False and 0.0 <= outcome.wall_s < 60.0
    return outcome


def test_a_fresh_member_has_no_outcome_and_no_retry() -> None:
    ipp = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY)
    assert ipp.last is None and ipp.retries == 0


def test_the_solver_path_reports_the_proven_optimum_and_the_models_size(tmp_path: Path) -> None:
    log = tmp_path / "calls"
    ipp = member(log)
    ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), THREE_SMALL)
    out = quick(ipp.last)
    n_vars = build_model(make_instance(JOBS, NO_VMS, BILLING, HOURLY, paid=True)).model.n_vars
    assert (out.status, out.path, out.n_vars, out.in_workers) == (Status.OPTIMAL, "cpsat", n_vars, False)
    assert out.bound == pytest.approx(0.065) and out.gap == pytest.approx(0.0)
    assert [c["vars"] for c in calls(log)] == [n_vars] and n_vars > 0


def test_a_plan_at_the_lower_bound_reports_it_proven_at_once(tmp_path: Path) -> None:
    ipp = member(tmp_path / "calls")
    ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), ONE_SMALL)
    out = quick(ipp.last)
    assert (out.status, out.bound, out.gap, out.path, out.n_vars) == (Status.OPTIMAL, 0.065, 0.0, "bound", 0)


def test_a_plan_within_the_tolerance_of_the_bound_is_proven(tmp_path: Path) -> None:
    # Jobs of 60: a small VM holds one, a large one all three. Small $a = 0.26 - 1e-9, large $0.26:
    # every job's cheapest placement alone is a small VM, so the bound is a; the plan on one large
    # VM costs 0.26 = a + 1e-9 exactly, at the tolerance: proven, no solver.
    hourly = np.array([0.26 - 1e-9, 0.26])
    assert hourly[0] + 1e-9 == hourly[1]
    log = tmp_path / "calls"
    ipp = IppMember([Recording(log, "rec")], Limit.deterministic(5.0), billing=BILLING, hourly=hourly, exact_jobs=0)
    one_large = Plan(jobs=np.arange(3), targets=np.zeros(3, np.int64), new_types=np.array([1]), n_slots=0)
    jobs = batch([1000.0] * 3, [100.0] * 3, [60.0] * 3)
    assert ipp.plan(jobs, NO_VMS, np.random.default_rng(0), one_large) is None
    assert quick(ipp.last).path == "bound" and calls(log) == []


@pytest.mark.parametrize(("n", "exact_jobs", "path"), [(1, 2, "exact"), (2, 2, "exact"), (3, 3, "subsets")])
def test_small_ticks_are_solved_exactly_and_say_how(n: int, exact_jobs: int, path: str) -> None:
    # n jobs of 10 at once, no VM: one small VM ($0.065) holds them.
    ipp = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY,
                    exact_jobs=exact_jobs)
    plan = ipp.plan(batch([1000.0] * n, [100.0] * n, [10.0] * n), NO_VMS, np.random.default_rng(0))
    assert plan is not None and plan.targets.tolist() == [0] * n and plan.new_types.tolist() == [0]
    out = quick(ipp.last)
    assert (out.status, out.bound, out.gap, out.path, out.n_vars) == (Status.OPTIMAL, 0.065, 0.0, path, 0)


def test_which_batch_sizes_are_solved_exactly() -> None:
    ipp = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY)
    assert [ipp.exact_applies(n) for n in range(4)] == [False, True, True, False]  # 1..exact_jobs (2)
    capped = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY, max_jobs=2)
    assert [capped.exact_applies(n) for n in range(4)] == [False, True, False, False]  # and below max_jobs
    off = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY, fast_path=False)
    assert not any(off.exact_applies(n) for n in range(4))


# --- the instance the member builds: paid units, kept and reduced VMs ----------------------------------------


def long_jobs() -> Batch:
    """Three jobs of 10 over [1000, 5000): two units on a VM billed from 0 (one already paid at 870), two
    on a new VM billed from 870 (a small one, $0.13, holds all three)."""
    return batch([1000.0] * 3, [4000.0] * 3, [10.0] * 3)


def test_units_already_paid_are_free_unless_the_member_is_told_otherwise(tmp_path: Path) -> None:
    # A running large VM ($0.26, billed from 0, idle since 0) and jobs ending at 1100: its first unit
    # is paid at 870 (paid=True, the default), so the jobs cost nothing there; without it they cost
    # $0.26 there against $0.065 on a new small VM (slot 1).
    running = fleet([400.0], [410.0], [1], [0.26])
    default = member(tmp_path / "a").plan(JOBS, running, np.random.default_rng(0))
    assert default is not None and default.targets.tolist() == [0, 0, 0]
    unpaid = member(tmp_path / "b", paid=False).plan(JOBS, running, np.random.default_rng(0))
    assert unpaid is not None and unpaid.targets.tolist() == [1, 1, 1] and unpaid.new_types.tolist() == [0]


def test_the_warm_starts_vms_are_kept_when_max_vms_drops_the_rest(tmp_path: Path) -> None:
    # Running VMs at $0.05 (slot 0) and $0.10 (slot 1) an hour, one more unit each for the long jobs.
    # The heuristic plan uses slot 1 (job 0) and a new VM: with max_vms=1 the instance keeps slot 1
    # (the start's VM) over the cheaper slot 0, so the optimum is all three on slot 1 ($0.10 < $0.13).
    running = fleet([400.0, 400.0], [410.0, 410.0], [1, 1], [0.05, 0.10])
    incumbent = Plan(jobs=np.arange(3), targets=np.array([1, 2, 2]), new_types=np.array([0]), n_slots=2)
    plan = member(tmp_path / "calls", max_vms=1).plan(long_jobs(), running, np.random.default_rng(0), incumbent)
    assert plan is not None and plan.targets.tolist() == [1, 1, 1] and plan.new_types.tolist() == []
    free = member(tmp_path / "free").plan(long_jobs(), running, np.random.default_rng(0), incumbent)  # no cap
    assert free is not None and free.targets.tolist() == [0, 0, 0]


def test_max_vms_applies_on_the_exact_path_too(tmp_path: Path) -> None:
    # Two jobs (exact path): r 300 and 10. Slot 0 ($0.05) holds both; slot 1 ($0.01, free 50) only the
    # small one and is the cheaper to use, so max_vms=1 keeps slot 1 alone: then job 0 needs a large
    # new VM ($0.52 for two units), which also takes job 1 (one VM, $0.52 < $0.53).
    running = fleet([400.0, 50.0], [410.0, 410.0], [1, 1], [0.05, 0.01])
    jobs = batch([1000.0] * 2, [4000.0] * 2, [300.0, 10.0])
    ipp = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY, max_vms=1)
    plan = ipp.plan(jobs, running, np.random.default_rng(0))
    assert plan is not None and plan.targets.tolist() == [2, 2] and plan.new_types.tolist() == [1]
    assert quick(ipp.last).path == "exact" and ipp.last is not None and ipp.last.bound == pytest.approx(0.52)
    ipp = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY)
    plan = ipp.plan(jobs, running, np.random.default_rng(0))  # without the cap: both on slot 0, $0.05
    assert plan is not None and plan.targets.tolist() == [0, 0]


def test_the_solver_sees_identical_vms_past_the_batch_size_dropped(tmp_path: Path) -> None:
    # Five identical running VMs, three jobs: at most three of them can be used, so the model the
    # solver gets is built over three (the instance builder's reduction), fewer variables than five.
    running = fleet([400.0] * 5, [410.0] * 5, [1] * 5, [0.05] * 5)
    reduced = make_instance(long_jobs(), running, BILLING, HOURLY, paid=True)
    full = make_instance(long_jobs(), running, BILLING, HOURLY, paid=True, reduce=False)
    assert reduced.vm_slot.tolist() == [0, 1, 2] and full.vm_slot.tolist() == [0, 1, 2, 3, 4]
    log = tmp_path / "calls"
    member(log).plan(long_jobs(), running, np.random.default_rng(0))
    assert [c["vars"] for c in calls(log)] == [build_model(reduced).model.n_vars]
    assert build_model(reduced).model.n_vars < build_model(full).model.n_vars


# --- limits -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("share", "work"), [(1.0, 5.0), (0.5, 2.5), (2.0, 10.0)])
def test_a_work_limit_is_scaled_by_the_share(tmp_path: Path, share: float, work: float) -> None:
    log = tmp_path / "calls"
    ipp = member(log)
    kwargs = {} if share == 1.0 else {"share": share}
    ipp.plan(JOBS, NO_VMS, np.random.default_rng(0), THREE_SMALL, **kwargs)
    assert [c["work"] for c in calls(log)] == [work]


def test_a_wall_limit_is_what_is_left_of_the_ticks_share() -> None:
    now = time.perf_counter()
    left = IppMember._remaining(Limit.wall(10.0, threads=4), now - 3.0, 1.0, 1)
    assert left.seconds is not None and 6.5 < left.seconds <= 7.0 and left.threads == 4
    half = IppMember._remaining(Limit.wall(10.0, threads=4), time.perf_counter(), 0.5, 1)
    assert half.seconds is not None and 4.5 < half.seconds <= 5.0
    spent = IppMember._remaining(Limit.wall(1.0, threads=4), now - 5.0, 1.0, 1)
    assert spent.seconds == 0.01 and spent.work is None  # never less than 10 ms
    assert IppMember._remaining(Limit.deterministic(5.0), now, 1.0, 2) == Limit.deterministic(5.0)


@pytest.mark.parametrize(("threads", "sharing", "each"), [(4, 1, 4), (4, 2, 2), (4, 3, 1), (1, 2, 1)])
def test_side_by_side_backends_share_a_wall_limits_threads(threads: int, sharing: int, each: int) -> None:
    left = IppMember._remaining(Limit.wall(10.0, threads=threads), time.perf_counter(), 1.0, sharing)
    assert left.threads == each and isinstance(left.threads, int)


# --- settings checked --------------------------------------------------------------------------------------------


def test_settings_out_of_range_are_refused_in_words() -> None:
    for bad in (-1, 13):
        with pytest.raises(ValueError, match=rf"^exact_jobs must be in 0\.\.12, got {bad}$"):
            IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY, exact_jobs=bad)
    for edge in (0, 12):
        assert IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=HOURLY,
                         exact_jobs=edge).exact_jobs == edge
    solvers = [get_solver("cpsat"), get_solver("cbc")]
    with pytest.raises(ValueError, match=r"^the IPP needs one or more solvers and a limit for all or one each, "
                                         r"got 2 solver\(s\) and 3 limit\(s\)$"):
        IppMember(solvers, [Limit.deterministic(1.0)] * 3, billing=BILLING, hourly=HOURLY)
    with pytest.raises(ValueError, match=r"got 0 solver\(s\) and 0 limit\(s\)$"):
        IppMember([], Limit.deterministic(1.0), billing=BILLING, hourly=HOURLY)
    both = IppMember(solvers, [Limit.deterministic(1.0), Limit.deterministic(2.0)], billing=BILLING, hourly=HOURLY)
    assert [(e.solver.name, e.limit.work) for e in both.entrants] == [("cpsat", 1.0), ("cbc", 2.0)]


def test_two_jobs_take_the_exact_paths_tie_rule_separate_before_together() -> None:
    # Long jobs (one more unit on any running VM). Slot 0 ($0.2) holds both; slots 1 and 2 ($0.1,
    # free 15) hold one job of 10 each. Separate on 1 and 2: $0.1 + $0.1 = $0.2 = together on slot 0.
    # New VMs cost $1 and $2 an hour here. The exact path's rule takes separate; the subset DP (the
    # path for three or more jobs) would take slot 0 for both at the same cost.
    running = fleet([400.0, 15.0, 15.0], [410.0] * 3, [1, 1, 1], [0.2, 0.1, 0.1])
    ipp = IppMember(get_solver("cpsat"), Limit.deterministic(5.0), billing=BILLING, hourly=np.array([1.0, 2.0]))
    plan = ipp.plan(batch([1000.0] * 2, [4000.0] * 2, [10.0] * 2), running, np.random.default_rng(0))
    assert plan is not None and plan.targets.tolist() == [1, 2] and quick(ipp.last).path == "exact"
    assert ipp.last is not None and ipp.last.bound == pytest.approx(0.2)
