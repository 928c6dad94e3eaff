"""The integer program as a CoH portfolio member (paper §3.1-3.2).

:class:`IppMember` builds each tick's instance (:func:`broker.coh.instance.make_instance`) and
solves it exactly without a solver up to ``exact_jobs`` jobs (one or two by enumeration,
:mod:`broker.coh.exact`; more by dynamic programming over subsets of the jobs,
:mod:`broker.coh.subsets`), and larger ones, up to ``max_jobs``, with time- or work-limited
solvers (one, or several in a race, :mod:`solvers.race`), warm-started from the best heuristic plan.
When that plan already costs the instance's lower bound
(:meth:`~broker.coh.ipp.IppInstance.lower_bound`) it is optimal and no solver is called: the member
returns ``None`` and records the tick as OPTIMAL ("bound"). It also returns ``None`` when no
solver finds a plan: the heuristics are the safety net.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
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
from solvers.race import Entrant, race


@dataclass(frozen=True, slots=True)
class IppOutcome:
    """What the IPP did at one tick: status, proven bound ($), gap, wall time (s), path taken.

    ``path`` is ``exact`` or ``subsets`` (solved without a solver), ``bound`` (the heuristics' plan
    meets the lower bound) or the backend whose plan won; ``in_workers``: a race run side by side.
    """

    status: Status
    bound: float | None
    gap: float | None
    wall_s: float
    limit_hit: bool
    path: str
    n_vars: int = 0
    in_workers: bool = False


class IppMember:
    """The time-limited integer program as a portfolio member (see the module docstring).

    ``solver`` is one backend or several that race on the ticks a solver decides, with ``limit``
    for all or one each (:mod:`solvers.race`); the race runs in ``workers`` joblib workers on ticks
    of at least ``race_jobs`` jobs and in this process on smaller ones.
    """

    name = "IPP"
    needs_stats = False

    def __init__(self, solver: Solver | Sequence[Solver], limit: Limit | Sequence[Limit], *, billing: Billing,
                 hourly: np.ndarray, max_jobs: int = 50, max_vms: int | None = None, warm_start: bool = True,
                 fast_path: bool = True, symmetry: Symmetry = "order", paid: bool = True, exact_jobs: int = MAX_JOBS,
                 workers: int = 1, race_jobs: int = 0) -> None:
        if not 0 <= exact_jobs <= MAX_SUBSET_JOBS:
            raise ValueError(f"exact_jobs must be in 0..{MAX_SUBSET_JOBS}, got {exact_jobs}")
        solvers = (solver,) if isinstance(solver, Solver) else tuple(solver)
        limits = (limit,) * len(solvers) if isinstance(limit, Limit) else tuple(limit)
        if not solvers or len(limits) != len(solvers):
            raise ValueError(f"the IPP needs one or more solvers and a limit for all or one each, got "
                             f"{len(solvers)} solver(s) and {len(limits)} limit(s)")
        self.entrants = tuple(Entrant(s, lim) for s, lim in zip(solvers, limits, strict=True))
        self.exact_jobs, self.workers, self.race_jobs = exact_jobs, workers, race_jobs
        self.billing, self.hourly = billing, hourly
        self.max_jobs, self.max_vms, self.warm_start, self.fast_path = max_jobs, max_vms, warm_start, fast_path
        self.symmetry: Symmetry = symmetry
        self.paid = paid
        self.last: IppOutcome | None = None
        self.retries = 0

    @property
    def solver_name(self) -> str:
        """The backends' names, comma separated."""
        return ",".join(e.solver.name for e in self.entrants)

    def exact_applies(self, n_jobs: int) -> bool:
        """Whether a batch of ``n_jobs`` is solved exactly without a solver call."""
        return self.fast_path and 0 < n_jobs <= self.exact_jobs and n_jobs < self.max_jobs

    def plan(self, batch: Batch, fleet: Fleet, rng: np.random.Generator, incumbent: Plan | None = None, *,
             share: float = 1.0) -> Plan | None:
        """Solve the tick's IPP; ``None`` if the batch is too large or no solution was found.

        ``share`` scales the solvers' limits (a chunk of a large batch gets its share of the tick's).
        """
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
        return self._solve(inst, incumbent, started, share)

    @staticmethod
    def _incumbent_proven(inst: IppInstance, incumbent: Plan) -> bool:
        """Whether the heuristics' plan already meets the instance's lower bound (so it is optimal)."""
        return inst.cost(incumbent) <= inst.lower_bound() + 1e-9

    def _solve(self, inst: IppInstance, incumbent: Plan | None, started: float, share: float) -> Plan | None:
        ipp = build_model(inst, symmetry=self.symmetry)
        start = ipp.encode(incumbent) if (self.warm_start and incumbent is not None) else None
        side_by_side = self.workers > 1 and len(self.entrants) > 1 and inst.n_jobs >= self.race_jobs
        entrants = [Entrant(e.solver, self._remaining(e.limit, started, share, len(self.entrants) if side_by_side
                                                      else 1)) for e in self.entrants]
        outcome = race(entrants, ipp.model, start=start, workers=self.workers if side_by_side else 1)
        self.retries += sum(outcome.retried)
        result = outcome.result
        self.last = IppOutcome(result.status, result.bound, result.gap, time.perf_counter() - started,
                               result.limit_hit, result.backend, ipp.model.n_vars, outcome.in_workers)
        if not result.status.has_solution or result.values is None:
            return None
        return ipp.decode(result.values)

    @staticmethod
    def _remaining(limit: Limit, started: float, share: float, sharing: int) -> Limit:
        """``share`` of ``limit``; of a wall limit, less the time spent on this tick so far.

        A wall limit's threads are shared out between ``sharing`` backends running side by side.
        """
        if limit.work is not None:
            return Limit.deterministic(limit.work * share) if share != 1.0 else limit
        assert limit.seconds is not None
        left = max(0.01, limit.seconds * share - (time.perf_counter() - started))
        return Limit.wall(left, threads=max(1, limit.threads // sharing))

    def describe(self) -> dict[str, Any]:
        """Settings, for results."""
        return {"solver": self.solver_name, "limit": ", ".join(str(e.limit) for e in self.entrants),
                "max_jobs": self.max_jobs, "exact_jobs": self.exact_jobs, "workers": self.workers,
                "race_jobs": self.race_jobs, "retries_without_start": self.retries,
                "max_vms": self.max_vms, "warm_start": self.warm_start, "fast_path": self.fast_path,
                "symmetry": self.symmetry, "paid": self.paid}
