"""CoH, the portfolio scheduler (paper §3, ``SPEC.md`` §3), with heuristic members.

Each tick the policy takes the jobs arriving within its look-ahead (the paper's perfect predictor;
at least the boot time plus one tick, so that a VM started for a job is ready when it arrives and
jobs wait zero), lets every member of the portfolio plan them, scores each plan with the IPP
objective (:func:`broker.coh.objective.plan_cost`) and applies the cheapest (ties: the member listed
first). Idle VMs are released at their billing deadline, ``m`` seconds before the unit rolls over.

A member is anything with a ``name`` and a ``plan(batch, fleet, rng)`` returning a
:class:`~heuristics.fleet.Plan`: the 66 heuristics. The integer program
(:class:`broker.coh.ipp_member.IppMember`) runs after them, warm-started from the best heuristic plan,
when the batch has fewer than its ``max_jobs`` jobs; on a tie the IPP's plan is applied (unless
``ipp_wins_ties`` is off). A larger batch is also planned ``chunk_jobs`` jobs at a time (when set):
each chunk by the whole portfolio on the fleet the earlier chunks leave
(:func:`heuristics.fleet.placed`), the IPP with its share of the limit; the chunks' plans together
compete with the heuristics' plans of the whole batch. Every candidate is scored by the same
evaluator, never by the solver's own objective value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from broker.coh.ipp_member import IppMember
from broker.coh.objective import plan_cost
from broker.coh.policy import SimulationView
from heuristics.fleet import Batch, Fleet, Plan, placed
from solvers.base import Status


class Member(Protocol):
    """A portfolio member: returns a plan for every job of the batch."""

    @property
    def name(self) -> str:
        """Label used in win counts and records."""
        ...

    @property
    def needs_stats(self) -> bool:
        """Whether it reads the fleet's hosted-job statistics."""
        ...

    def plan(self, batch: Batch, fleet: Fleet, rng: np.random.Generator) -> Plan:
        """Place the batch."""
        ...


class CohPolicy:
    """The CoH portfolio policy over a list of members.

    Parameters
    ----------
    members : sequence of Member
        The portfolio, in tie-breaking order.
    lookahead : float
        Seconds before arrival at which a job is planned (>= boot time for zero waits).
    seed : int or SeedSequence
        Seed of the generator handed to members (the ``Rnd`` rule uses it).
    name : str
        Label for results.
    ipp : IppMember, optional
        The integer program, run after the heuristics.
    paid : bool
        Score with the units already paid counted as sunk (:mod:`broker.coh.objective`).
    prefer_ipp : bool
        Apply the IPP's plan whenever it has one (the IPP "alone", the heuristics only as fallback).
    ipp_wins_ties : bool
        On a tie between the IPP's plan and the best heuristic's, apply the IPP's (measured better
        over whole runs, EXPERIMENTS.md); False keeps the heuristic's.
    chunk_jobs : int
        Plan batches too large for the IPP this many jobs at a time (0: the heuristics alone).
    """

    def __init__(self, members: Sequence[Member], *, lookahead: float,
                 seed: int | np.random.SeedSequence | None, name: str = "coh", ipp: IppMember | None = None,
                 paid: bool = True, prefer_ipp: bool = False, ipp_wins_ties: bool = True, chunk_jobs: int = 0) -> None:
        if not members:
            raise ValueError("a portfolio needs at least one member")
        self.members, self.lookahead, self.name, self.ipp = tuple(members), lookahead, name, ipp
        self.rng = np.random.default_rng(seed)
        self.wins: Counter[str] = Counter()
        self.ticks = 0
        self._needs_stats = any(m.needs_stats for m in self.members)
        self._ipp = _IppTally()
        self.paid, self.prefer_ipp, self.ipp_wins_ties = paid, prefer_ipp, ipp_wins_ties
        self.chunk_jobs = chunk_jobs
        self.chunked_ticks = 0
        # one heuristic and no IPP: its plan is applied unscored (nothing to compare it with)
        self._alone = self.members[0] if len(self.members) == 1 and ipp is None else None
        self._alone_ticks = 0

    def decide(self, now: float, batch: Batch, sim: SimulationView) -> Plan:
        """Plan the batch with every member; apply the cheapest by the IPP objective."""
        fleet = sim.fleet(stats=self._needs_stats)
        if self._alone is not None and not sim.recorder.wants_records:
            self.ticks += 1
            self._alone_ticks += 1  # its wins, counted in stats()
            return self._alone.plan(batch, fleet, self.rng)
        costs: dict[str, float] = {}
        if self.ipp is not None and self._ipp_alone_decides(self.ipp, len(batch)):
            best = self._run_ipp(self.ipp, batch, fleet, sim, None, costs)
        else:
            best = self._run_members(batch, fleet, sim, costs)
            if self.ipp is not None and 0 < self.chunk_jobs < self.ipp.max_jobs <= len(batch):
                best = self._in_chunks(self.ipp, batch, fleet, sim, best, costs)
        self.wins[best[1]] += 1
        self.ticks += 1
        if sim.recorder.wants_records:
            self._record(sim, now, len(batch), best[1], costs)
        return best[2]

    def _ipp_alone_decides(self, ipp: IppMember, n_jobs: int) -> bool:
        """Whether the heuristics cannot change this tick's choice, so they need not run.

        The IPP's exact path is optimal; when ties (or everything) go to the IPP, no heuristic
        plan can be applied, so one- and two-job ticks skip the heuristics altogether.
        """
        return (self.ipp_wins_ties or self.prefer_ipp) and ipp.exact_applies(n_jobs)

    def _in_chunks(self, ipp: IppMember, batch: Batch, fleet: Fleet, sim: SimulationView,
                   best: tuple[float, str, Plan], costs: dict[str, float]) -> tuple[float, str, Plan]:
        """Plan the batch ``chunk_jobs`` jobs at a time; the IPP's plan if it beats ``best`` (module docstring)."""
        self.chunked_ticks += 1
        pieces: list[Plan] = []
        part_fleet, m = fleet, len(batch)
        anchor = sim.billing.anchor(fleet.now)
        for lo in range(0, m, self.chunk_jobs):
            part = batch.part(lo, min(lo + self.chunk_jobs, m))
            _, _, plan = self._run_members(part, part_fleet, sim, {}, share=len(part) / m)
            pieces.append(Plan(plan.jobs + lo, plan.targets, plan.new_types, len(fleet)))
            part_fleet = placed(part_fleet, part, plan, anchor=anchor, hourly=sim.catalog.hourly)
        whole = Plan(np.concatenate([p.jobs for p in pieces]), np.concatenate([p.targets for p in pieces]),
                     np.concatenate([p.new_types for p in pieces]), len(fleet))
        cost = plan_cost(whole, batch, fleet, sim.billing, sim.catalog.hourly, paid=self.paid)
        costs[ipp.name] = cost
        margin = 1e-9 if self.ipp_wins_ties else -1e-9
        return (cost, ipp.name, whole) if cost < best[0] + margin or self.prefer_ipp else best

    def _run_members(self, batch: Batch, fleet: Fleet, sim: SimulationView,
                     costs: dict[str, float], *, share: float = 1.0) -> tuple[float, str, Plan]:
        score = len(self.members) > 1 or self.ipp is not None or sim.recorder.wants_records
        best: tuple[float, str, Plan] | None = None
        for member in self.members:
            plan = member.plan(batch, fleet, self.rng)
            cost = plan_cost(plan, batch, fleet, sim.billing, sim.catalog.hourly, paid=self.paid) if score else 0.0
            costs[member.name] = cost
            if best is None or cost < best[0] - 1e-9:
                best = (cost, member.name, plan)
        assert best is not None
        if self.ipp is not None:
            best = self._run_ipp(self.ipp, batch, fleet, sim, best, costs, share=share)
        return best

    def _run_ipp(self, ipp: IppMember, batch: Batch, fleet: Fleet, sim: SimulationView,
                 best: tuple[float, str, Plan] | None, costs: dict[str, float], *,
                 share: float = 1.0) -> tuple[float, str, Plan]:
        plan = ipp.plan(batch, fleet, self.rng, incumbent=best[2] if best is not None else None, share=share)
        self._ipp.add(ipp)
        if plan is None:
            if best is None:
                raise RuntimeError("the IPP's exact path returned no plan")
            return best
        cost = plan_cost(plan, batch, fleet, sim.billing, sim.catalog.hourly, paid=self.paid)
        costs[ipp.name] = cost
        if best is None:
            return (cost, ipp.name, plan)
        margin = 1e-9 if self.ipp_wins_ties else -1e-9
        return (cost, ipp.name, plan) if cost < best[0] + margin or self.prefer_ipp else best

    def _record(self, sim: SimulationView, now: float, jobs: int, winner: str, costs: dict[str, float]) -> None:
        fields: dict[str, Any] = {"now": now, "jobs": jobs, "winner": winner,
                                  **{f"cost[{k}]": v for k, v in costs.items()}}
        outcome = self.ipp.last if self.ipp is not None else None
        if outcome is not None:
            fields.update(ipp_status=outcome.status.value, ipp_bound=outcome.bound, ipp_gap=outcome.gap,
                          ipp_wall_s=outcome.wall_s, ipp_limit_hit=outcome.limit_hit, ipp_path=outcome.path,
                          ipp_vars=outcome.n_vars)
        sim.recorder.record("portfolio", fields)

    def stats(self) -> dict[str, Any]:
        """Member win counts over the ticks that placed jobs, and the IPP's tallies."""
        wins = Counter(self.wins)
        if self._alone_ticks:
            wins[self.members[0].name] += self._alone_ticks
        out: dict[str, Any] = {"portfolio_ticks": self.ticks, "wins": dict(sorted(wins.items()))}
        if self.ipp is not None:
            ipp_wins = self.wins.get(self.ipp.name, 0)
            out.update(ipp_wins=ipp_wins, heuristic_wins=self.ticks - ipp_wins, **self._ipp.summary(),
                       ipp_chunked_ticks=self.chunked_ticks, ipp=self.ipp.describe())
        return out


class _IppTally:
    """Counts of the IPP's outcomes over a run."""

    def __init__(self) -> None:
        self.calls = self.optimal = self.limit_hit = self.exact = self.by_bound = 0
        self.gaps: list[float] = []
        self.wall_s = 0.0
        self.status: Counter[str] = Counter()
        self.paths: Counter[str] = Counter()
        self.in_workers = 0

    def add(self, ipp: IppMember) -> None:
        outcome = ipp.last
        if outcome is None:
            self.status["skipped (too many jobs)"] += 1
            return
        self.calls += 1
        self.status[outcome.status.value] += 1
        self.optimal += outcome.status is Status.OPTIMAL
        self.limit_hit += outcome.limit_hit
        self.exact += outcome.path in ("exact", "subsets")
        self.paths[outcome.path] += 1
        self.in_workers += outcome.in_workers
        self.by_bound += outcome.path == "bound"
        self.wall_s += outcome.wall_s
        if outcome.gap is not None:
            self.gaps.append(outcome.gap)

    def summary(self) -> dict[str, Any]:
        return {"ipp_calls": self.calls, "ipp_optimal_ticks": self.optimal, "ipp_exact_ticks": self.exact,
                "ipp_bound_ticks": self.by_bound,
                "ipp_limit_hit_ticks": self.limit_hit, "ipp_status": dict(sorted(self.status.items())),
                "ipp_paths": dict(sorted(self.paths.items())), "ipp_raced_in_workers": self.in_workers,
                "mean_gap": float(np.mean(self.gaps)) if self.gaps else None, "ipp_wall_s": self.wall_s}
