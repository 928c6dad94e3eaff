"""CoH, the portfolio scheduler (paper §3, ``SPEC.md`` §3), with heuristic members.

Each tick the policy takes the jobs arriving within its look-ahead (the paper's perfect predictor;
at least the boot time plus one tick, so that a VM started for a job is ready when it arrives and
jobs wait zero), lets every member of the portfolio plan them, scores each plan with the IPP
objective (:func:`broker.objective.plan_cost`) and applies the cheapest (ties: the member listed
first). Idle VMs are released at their billing deadline, ``m`` seconds before the unit rolls over.

A member is anything with a ``name`` and a ``plan(batch, fleet, rng)`` returning a
:class:`~heuristics.fleet.Plan`: the 66 heuristics now, the time-limited integer program later.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from broker.objective import plan_cost
from broker.policy import SimulationView
from heuristics.fleet import Batch, Fleet, Plan


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
    """

    def __init__(self, members: Sequence[Member], *, lookahead: float,
                 seed: int | np.random.SeedSequence | None, name: str = "coh") -> None:
        if not members:
            raise ValueError("a portfolio needs at least one member")
        self.members, self.lookahead, self.name = tuple(members), lookahead, name
        self.rng = np.random.default_rng(seed)
        self.wins: Counter[str] = Counter()
        self.ticks = 0
        self._needs_stats = any(m.needs_stats for m in self.members)

    def decide(self, now: float, batch: Batch, sim: SimulationView) -> Plan:
        """Plan the batch with every member; apply the cheapest by the IPP objective."""
        fleet = sim.fleet(stats=self._needs_stats)
        score = len(self.members) > 1 or sim.recorder.wants_records
        best: tuple[float, str, Plan] | None = None
        costs: dict[str, float] = {}
        for member in self.members:
            plan = member.plan(batch, fleet, self.rng)
            cost = plan_cost(plan, batch, fleet, sim.billing, sim.catalog.hourly) if score else 0.0
            costs[member.name] = cost
            if best is None or cost < best[0] - 1e-9:
                best = (cost, member.name, plan)
        assert best is not None
        self.wins[best[1]] += 1
        self.ticks += 1
        if sim.recorder.wants_records:
            sim.recorder.record("portfolio", {"now": now, "jobs": len(batch), "winner": best[1],
                                              **{f"cost[{k}]": v for k, v in costs.items()}})
        return best[2]

    def release_idle(self, now: float, slot: int, sim: SimulationView) -> bool:
        """CoH releases every idle VM at its billing deadline."""
        return True

    def wakeup(self, now: float, sim: SimulationView) -> float:
        """CoH needs no tick beyond the arrivals entering its look-ahead."""
        return math.inf

    def stats(self) -> dict[str, Any]:
        """Member win counts over the ticks that placed jobs."""
        return {"portfolio_ticks": self.ticks, "wins": dict(sorted(self.wins.items()))}
