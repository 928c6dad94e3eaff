"""The integer program as a CoH portfolio member (paper §3.1-3.2).

:class:`IppMember` builds each tick's instance (:func:`broker.coh.instance.make_instance`) and
solves it exactly without a solver up to ``exact_jobs`` jobs (one or two by enumeration,
:mod:`broker.coh.exact`; more by dynamic programming over subsets of the jobs,
:mod:`broker.coh.subsets`), and larger ones, up to ``max_jobs``, with a time- or work-limited
solver, warm-started from the best heuristic plan. When that plan already costs the instance's lower bound
(:meth:`~broker.coh.ipp.IppInstance.lower_bound`) it is optimal and no solver is called: the member
returns ``None`` and records the tick as OPTIMAL ("bound"). It also returns ``None`` when the
solver finds no plan: the heuristics are the safety net.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from broker.coh.exact import MAX_JOBS, solve_exact
from broker.coh.instance import make_instance
from broker.coh.ipp import IppInstance, Symmetry, build_model
from broker.coh.subsets import MAX_SUBSET_JOBS, solve_subsets
from broker.pricing.billing import Billing
from heuristics.fleet import Batch, Fleet, Plan
from solvers.base import Limit, Solver, Status

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IppOutcome:
    """What the IPP did at one tick: status, proven bound ($), gap, wall time (s), path taken."""

    status: Status
    bound: float | None
    gap: float | None
    wall_s: float
    limit_hit: bool
    path: str
    n_vars: int = 0


class IppMember:
    """The time-limited integer program as a portfolio member (see the module docstring)."""

    name = "IPP"
    needs_stats = False

    def __init__(self, solver: Solver, limit: Limit, *, billing: Billing, hourly: np.ndarray, max_jobs: int = 50,
                 max_vms: int | None = None, warm_start: bool = True, fast_path: bool = True,
                 symmetry: Symmetry = "order", paid: bool = True, exact_jobs: int = MAX_JOBS) -> None:
        if not 0 <= exact_jobs <= MAX_SUBSET_JOBS:
            raise ValueError(f"exact_jobs must be in 0..{MAX_SUBSET_JOBS}, got {exact_jobs}")
        self.exact_jobs = exact_jobs
        self.solver, self.limit, self.billing, self.hourly = solver, limit, billing, hourly
        self.max_jobs, self.max_vms, self.warm_start, self.fast_path = max_jobs, max_vms, warm_start, fast_path
        self.symmetry: Symmetry = symmetry
        self.paid = paid
        self.last: IppOutcome | None = None
        self.retries = 0

    def exact_applies(self, n_jobs: int) -> bool:
        """Whether a batch of ``n_jobs`` is solved exactly without a solver call."""
        return self.fast_path and 0 < n_jobs <= self.exact_jobs and n_jobs < self.max_jobs

    def plan(self, batch: Batch, fleet: Fleet, rng: np.random.Generator, incumbent: Plan | None = None) -> Plan | None:
        """Solve the tick's IPP; ``None`` if the batch is too large or no solution was found."""
        self.last = None
        if len(batch) >= self.max_jobs:
            return None
        started = time.perf_counter()
        keep = incumbent.targets[incumbent.targets < incumbent.n_slots] if incumbent is not None else None
        exact = self.exact_applies(len(batch))
        inst = make_instance(batch, fleet, self.billing, self.hourly, max_vms=self.max_vms, paid=self.paid, keep=keep,
                             reduce=not exact or self.max_vms is not None)
        if exact:
            small = len(batch) <= MAX_JOBS
            plan, cost = solve_exact(inst) if small else solve_subsets(inst)
            self.last = IppOutcome(Status.OPTIMAL, cost, 0.0, time.perf_counter() - started, False,
                                   "exact" if small else "subsets")
            return plan
        if self.fast_path and incumbent is not None and self._incumbent_proven(inst, incumbent):
            self.last = IppOutcome(Status.OPTIMAL, inst.lower_bound(), 0.0, time.perf_counter() - started, False,
                                   "bound")
            return None
        return self._solve(inst, incumbent, started)

    @staticmethod
    def _incumbent_proven(inst: IppInstance, incumbent: Plan) -> bool:
        """Whether the heuristics' plan already meets the instance's lower bound (so it is optimal)."""
        return inst.cost(incumbent) <= inst.lower_bound() + 1e-9

    def _solve(self, inst: IppInstance, incumbent: Plan | None, started: float) -> Plan | None:
        ipp = build_model(inst, symmetry=self.symmetry)
        start = ipp.encode(incumbent) if (self.warm_start and incumbent is not None) else None
        result = self.solver.solve(ipp.model, limit=self._remaining(started), start=start)
        if result.status is Status.ERROR and start is not None:
            # the bundled CBC 2.10.3 crashes on some MIP starts (BENCHMARKS.md): try once more without
            log.warning("%s failed with a warm start (%s); retrying without it", self.solver.name, result.message)
            self.retries += 1
            result = self.solver.solve(ipp.model, limit=self._remaining(started))
        wall = time.perf_counter() - started
        self.last = IppOutcome(result.status, result.bound, result.gap, wall, result.limit_hit, self.solver.name,
                               ipp.model.n_vars)
        if not result.status.has_solution or result.values is None:
            return None
        return ipp.decode(result.values)

    def _remaining(self, started: float) -> Limit:
        """The wall limit less the time already spent on this tick (work limits are kept whole)."""
        if self.limit.is_deterministic or self.limit.seconds is None:
            return self.limit
        left = max(0.01, self.limit.seconds - (time.perf_counter() - started))
        return Limit.wall(left, threads=self.limit.threads)

    def describe(self) -> dict[str, Any]:
        """Settings, for results."""
        return {"solver": self.solver.name, "limit": str(self.limit), "max_jobs": self.max_jobs,
                "exact_jobs": self.exact_jobs,
                "retries_without_start": self.retries,
                "max_vms": self.max_vms, "warm_start": self.warm_start, "fast_path": self.fast_path,
                "symmetry": self.symmetry, "paid": self.paid}
