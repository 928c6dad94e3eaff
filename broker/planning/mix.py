"""The three-way mix validated by replay (issue 36; ``docs/worlds/planning.md``, "The three-way mix").

The trace is replayed with the same CoH members, engine and seed:

- ``on_demand``: CoH on on-demand VMs only, no reservation, no spot (the demand replay itself);
- ``reserved_only``: CoH-R on the plan made without the market (today's plan), no spot;
- two candidate mixes, CoH-R with the market (:class:`~broker.coh.spot.SpotCohWorld`: a VM no
  reservation covers is spot while the market is open, else on-demand):

  - ``market_priced``: on the plan made with the market at its expected price;
  - ``reserved_base``: on the plan made without it (reserve for the base as if there were no
    market, spot for the rest);

- ``mix``: the candidate whose replay costs less (:func:`cheaper`; a tie goes to ``market_priced``).
  The planner's price of the market is a model (``broker/planning/market.py``); the replay is the
  run itself, so the candidates are judged by what they cost there.

Each replay's cost is what ``simulate`` reports: the VMs billed plus the reservations' upfront
prices spread over the run (``upfront * run hours / term hours``, as CoH-R's replay validation does).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from broker.coh.config import SimulationConfig
from broker.coh.metrics import CohSummary, RunResult, SpotCohSummary
from broker.coh.simulate import simulate
from broker.coh.spot import SpotConfig
from broker.pricing.book import PriceBook
from broker.pricing.reservations import ReservationPlan
from broker.sim.recorder import Recorder
from workloads.jobs import JobTable

#: The candidate mixes, in the order a tie between their replays is broken.
CANDIDATES = ("market_priced", "reserved_base")
#: The replays in the order they are reported.
REPLAYS = ("on_demand", "reserved_only", *CANDIDATES, "mix")


@dataclass(frozen=True, slots=True)
class Replayed:
    """One replay's cost ($) and how it was made up."""

    cost: float
    upfront_amortized: float
    cost_by_option: dict[str, float]
    reservations: int
    wait_mean_s: float
    preemptions: int = 0
    restarts: int = 0
    lost_s: float = 0.0

    @classmethod
    def of(cls, summary: CohSummary, plan: ReservationPlan | None) -> Replayed:
        """The figures of a run's summary (spot ones when the run had a market)."""
        base = cls(summary.cost, summary.upfront_amortized, dict(summary.cost_by_option),
                   plan.total if plan is not None else 0, summary.wait_mean_s)
        if not isinstance(summary, SpotCohSummary):
            return base
        return replace(base, preemptions=summary.preemptions, restarts=summary.restarts, lost_s=summary.lost_s)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"cost": self.cost, "upfront_amortized": self.upfront_amortized, "cost_by_option": self.cost_by_option,
                "reservations": self.reservations, "wait_mean_s": self.wait_mean_s, "preemptions": self.preemptions,
                "restarts": self.restarts, "lost_s": self.lost_s}


def replay_mix(jobs: JobTable, book: PriceBook, *, config: SimulationConfig, seed: int, on_demand: RunResult,
               reserved_only: ReservationPlan, mix: ReservationPlan, spot: SpotConfig,
               recorder: Recorder | None = None) -> dict[str, Replayed]:
    """The replays (module docstring); ``on_demand`` is the demand replay's result, run with ``config``.

    ``mix`` is the plan made with the market (``market_priced``); where it is the reserved-only plan,
    the two candidates are one replay.
    """
    coh_r = replace(config.coh, policy="coh-r")
    catalog = book.catalog()
    runs = {"on_demand": Replayed.of(on_demand.summary, None)}
    candidates = (("reserved_only", reserved_only, None), ("market_priced", mix, spot),
                  ("reserved_base", reserved_only, spot))
    for name, plan, market in candidates:
        if name == "reserved_base" and mix == reserved_only:
            runs[name] = runs["market_priced"]
            continue
        result = simulate(jobs, catalog, config=replace(config, coh=coh_r, reservations=plan), seed=seed,
                          recorder=recorder, book=book, spot=market)
        runs[name] = Replayed.of(result.summary, plan)
    runs["mix"] = runs[cheaper(runs)]
    return runs


def cheaper(runs: dict[str, Replayed]) -> str:
    """The candidate mix whose replay costs less (a tie: the first of :data:`CANDIDATES`)."""
    return min(CANDIDATES, key=lambda name: runs[name].cost)

