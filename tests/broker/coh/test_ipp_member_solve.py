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
from pathlib import Path

import numpy as np
import pytest

from broker.coh.instance import make_instance
from broker.coh.ipp import build_model
from broker.coh.ipp_member import IppMember
from heuristics.fleet import Plan
from solvers.base import Limit, SolveResult, error_result, get_solver
from solvers.model import MipModel
from tests.broker.coh.test_mutants_ipp17 import BILLING, HOURLY, batch, fleet

JOBS = batch([1000.0] * 3, [100.0] * 3, [10.0] * 3)
NO_VMS = fleet([], [], [], [])
ONE_SMALL = Plan(jobs=np.arange(3), targets=np.zeros(3, np.int64), new_types=np.array([0]), n_slots=0)  # $0.065
THREE_SMALL = Plan(jobs=np.arange(3), targets=np.arange(3), new_types=np.zeros(3, np.int64), n_slots=0)  # $0.195
WALL = Limit.wall(30.0, threads=4)


class Recording:
    """CP-SAT that first writes its limit's threads, whether it got a start and the model's size to
    ``log``; with ``fail_with_start`` it answers ERROR when given a start (the race then retries)."""

    def __init__(self, log: Path, name: str, *, fail_with_start: bool = False) -> None:
        self.log, self.name, self.fail_with_start = str(log), name, fail_with_start

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        with open(self.log, "a") as f:
            f.write(json.dumps({"name": self.name, "threads": limit.threads, "start": start is not None,
                                "vars": model.n_vars, "rows": len(model.rows)}) + "\n")
        if start is not None and self.fail_with_start:
            return error_result(self.name, limit, 0.0, "crashed on the start")
        return get_solver("cpsat").solve(model, limit=limit, start=start)


def calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def member(log: Path, n: int = 1, **options: object) -> IppMember:
    solvers = [Recording(log, f"rec{k}") for k in range(n)]
    return IppMember(solvers, options.pop("limit", Limit.deterministic(5.0)), billing=BILLING,  # type: ignore[arg-type]
                     hourly=HOURLY, exact_jobs=0, **options)  # type: ignore[arg-type]


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
