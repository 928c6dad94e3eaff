"""Shared pieces of the IPP benchmarks: workloads, fleet snapshots from a CoH replay, scoring.

Used by ``benchmarks/ipp_study.py`` and ``benchmarks/portfolio_ticks.py`` (run from the repository
root; this file is imported from the scripts' own directory).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from broker.coh.instance import make_instance
from broker.coh.ipp import IppInstance, Symmetry, build_model
from broker.coh.objective import plan_cost
from broker.coh.policy import batch_of
from broker.coh.portfolio import CohPolicy
from broker.coh.world import CohWorld, EngineConfig, run
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book
from broker.sim.recorder import Recorder
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.registry import HEURISTICS, PAPER_TRIO
from solvers.base import Limit, SolveResult, get_solver
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view
from workloads.lublin import default_workload

LCG = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "LCG-2005-1.swf.gz"
CATALOG = load_price_book().catalog()
BILLING = Billing()
HOURLY = CATALOG.hourly
LOOKAHEAD = 130.0  # boot time 120 s + one 10 s tick, as SimulationConfig's default
#: Scoring: ``paid=True`` is the project's default (SimulationConfig.paid_scoring), False the paper's.
SCORING = {"paid": True}


def load_jobs(workload: str, *, n_jobs: int) -> JobTable:
    """``"lcg"``: LCG-2005-1, heterogeneous r (seed 1); ``"gen"``: the Lublin default workload (seed 1)."""
    if workload == "lcg":
        swf = load_trace(LCG)
        jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=1)
    elif workload == "gen":
        jobs, _ = job_view(default_workload(seed=1, n_jobs=n_jobs), reqs="heterogeneous", seed=1)
    else:
        raise ValueError(workload)
    return jobs.head(n_jobs)


def copy_fleet(fleet: Fleet) -> Fleet:
    """A deep copy (the engine's fleet arrays and intervals are views of its pool)."""
    arrays = {f.name: np.array(getattr(fleet, f.name), copy=True) for f in dataclasses.fields(fleet)
              if isinstance(getattr(fleet, f.name), np.ndarray)}
    occupancy = fleet.occupancy.frozen() if fleet.occupancy is not None else None
    return dataclasses.replace(fleet, occupancy=occupancy, **arrays)


class Capturing(CohPolicy):
    """CoH over the trio that hands (now, batch, fleet copy, tick number) to ``keep`` before deciding."""

    def __init__(self, keep: Callable[[int, Batch, Fleet], bool]) -> None:
        super().__init__([HEURISTICS.get(n) for n in PAPER_TRIO], lookahead=LOOKAHEAD, seed=0)
        self.keep, self.cases, self.n_ticks = keep, [], 0

    def decide(self, now, batch, sim):  # type: ignore[no-untyped-def]
        self.n_ticks += 1
        fleet = sim.fleet(stats=True)
        if self.keep(self.n_ticks, batch, fleet):
            self.cases.append((batch, copy_fleet(fleet)))
        return super().decide(now, batch, sim)


def replay_capture(jobs: JobTable, keep: Callable[[int, Batch, Fleet], bool]) -> list[tuple[Batch, Fleet]]:
    """Replay ``jobs`` with CoH over the trio; the (batch, fleet) of every tick ``keep`` accepts."""
    policy = Capturing(keep)
    run(CohWorld(jobs, CATALOG, EngineConfig(), lookahead=policy.lookahead), policy)
    return policy.cases


def next_jobs(jobs: JobTable, first: int, m: int) -> Batch:
    """The batch of the ``m`` jobs of the table from position ``first`` (their trace arrivals)."""
    index = np.arange(first, min(first + m, len(jobs)), dtype=np.int64)
    return batch_of(index, jobs.arrival, jobs.runtime, jobs.r, jobs.user)


def cost(plan: Plan, batch: Batch, fleet: Fleet, paid: bool | None = None) -> float:
    """THE evaluator: :func:`broker.coh.objective.plan_cost` (``paid`` defaults to ``SCORING``)."""
    return plan_cost(plan, batch, fleet, BILLING, HOURLY, paid=SCORING["paid"] if paid is None else paid)


def instance(batch: Batch, fleet: Fleet, max_vms: int | None = None, paid: bool | None = None) -> IppInstance:
    """:func:`broker.coh.instance.make_instance` with the benchmark's scoring."""
    return make_instance(batch, fleet, BILLING, HOURLY, max_vms=max_vms,
                         paid=SCORING["paid"] if paid is None else paid)


def heuristic_plans(batch: Batch, fleet: Fleet, names: list[str] | tuple[str, ...]) -> dict[str, Plan]:
    """Every named heuristic's plan (``Rnd`` rules get a fixed generator)."""
    return {n: HEURISTICS.get(n).plan(batch, fleet, np.random.default_rng(1)) for n in names}


def best_plan(plans: dict[str, Plan], batch: Batch, fleet: Fleet,
              paid: bool | None = None) -> tuple[str, Plan, float]:
    """The cheapest plan (first listed on ties) and its cost."""
    best: tuple[str, Plan, float] | None = None
    for name, plan in plans.items():
        c = cost(plan, batch, fleet, paid)
        if best is None or c < best[2] - 1e-9:
            best = (name, plan, c)
    assert best is not None
    return best


@dataclasses.dataclass(frozen=True, slots=True)
class SolveConfig:
    """One way to run the IPP: backend, options, limit, warm start, symmetry, candidate VMs."""

    solver: str = "cpsat"
    workers: int = 2
    presolve: bool = True
    seconds: float = 2.0
    work: float | None = None
    warm: bool = True
    symmetry: Symmetry = "order"
    max_vms: int | None = None

    def make_solver(self):  # type: ignore[no-untyped-def]
        if self.solver == "cpsat":
            return get_solver("cpsat", num_workers=None if self.work else self.workers, presolve=self.presolve)
        return get_solver("cbc")

    def limit(self, seconds: float | None = None) -> Limit:
        if self.work is not None:
            return Limit.deterministic(self.work)
        threads = self.workers if self.solver == "cpsat" else 1
        return Limit.wall(seconds if seconds is not None else self.seconds, threads=threads)


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """A solve's plan (None if none), status, proven bound ($, plan-dependent part) and wall time (s)."""

    plan: Plan | None
    status: str
    bound: float | None
    wall_s: float
    n_vars: int
    result: SolveResult | None = None


def solve_ipp(batch: Batch, fleet: Fleet, config: SolveConfig, incumbent: Plan | None,
              seconds: float | None = None) -> Outcome:
    """Build the instance and model, encode the warm start, solve; all of it timed (as IppMember does)."""
    t0 = time.perf_counter()
    inst = instance(batch, fleet, config.max_vms)
    return solve_instance(inst, config, incumbent, t0, seconds)


def solve_instance(inst: IppInstance, config: SolveConfig, incumbent: Plan | None, t0: float,
                   seconds: float | None = None) -> Outcome:
    ipp = build_model(inst, symmetry=config.symmetry)
    start = ipp.encode(incumbent) if (config.warm and incumbent is not None) else None
    result = config.make_solver().solve(ipp.model, limit=config.limit(seconds), start=start)
    plan = ipp.decode(result.values) if result.status.has_solution and result.values is not None else None
    return Outcome(plan, result.status.value, result.bound, time.perf_counter() - t0, ipp.model.n_vars, result)


def fmt(x: float | None, spec: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


class StubView:
    """A :class:`broker.coh.policy.SimulationView` over a captured fleet (for timing ``decide``)."""

    def __init__(self, fleet: Fleet) -> None:
        self._fleet, self.now, self.catalog, self.billing = fleet, fleet.now, CATALOG, BILLING
        self.boot_time, self.recorder = fleet.boot_time, Recorder()

    def fleet(self, *, stats: bool) -> Fleet:
        return self._fleet

    def vm_idle(self, slot: int) -> bool:
        return int(self._fleet.n_jobs[slot]) == 0


# -- portfolio members as top-level tasks (picklable for loky workers) -----------------------------------
def ipp_member(seconds: float = 2.0, workers: int = 2, paid: bool | None = None):  # type: ignore[no-untyped-def]
    """CoH's IPP member as in the portfolio: CP-SAT, ``workers`` workers, wall limit, symmetry "order"."""
    from broker.coh.ipp_member import IppMember

    solver = get_solver("cpsat", num_workers=workers)
    return IppMember(solver, Limit.wall(seconds, threads=workers), billing=BILLING, hourly=HOURLY,
                     paid=SCORING["paid"] if paid is None else paid)


def ipp_task(batch: Batch, fleet: Fleet, incumbent: Plan | None = None, seconds: float = 2.0,
             paid: bool | None = None) -> Plan | None:
    """The IPP member's plan (warm-started from ``incumbent`` when given)."""
    return ipp_member(seconds, paid=paid).plan(batch, fleet, np.random.default_rng(0), incumbent=incumbent)


def heuristics_task(batch: Batch, fleet: Fleet, paid: bool | None = None) -> tuple[str, Plan, float]:
    """The trio's best plan and its cost."""
    return best_plan(heuristic_plans(batch, fleet, PAPER_TRIO), batch, fleet, paid)
