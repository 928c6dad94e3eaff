"""Real IPP instances: (batch, fleet) snapshots captured from replays of real trace slices."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np

from broker.coh.portfolio import CohPolicy
from broker.coh.world import CohWorld, EngineConfig, run
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.registry import HEURISTICS, PAPER_TRIO
from tests.conftest import trace_path
from workloads.cache import load_trace
from workloads.jobs import job_view

CATALOG = load_price_book().catalog()
BILLING = Billing()


def copy_fleet(fleet: Fleet) -> Fleet:
    arrays = {f.name: np.array(getattr(fleet, f.name), copy=True) for f in dataclasses.fields(fleet)
              if isinstance(getattr(fleet, f.name), np.ndarray)}
    occupancy = fleet.occupancy.frozen() if fleet.occupancy is not None else None
    return dataclasses.replace(fleet, occupancy=occupancy, **arrays)


class Capturing(CohPolicy):
    """CoH over the trio that keeps copies of the (batch, fleet) of ticks with enough jobs."""

    def __init__(self, min_jobs: int, max_jobs: int, every: int) -> None:
        super().__init__([HEURISTICS.get(n) for n in PAPER_TRIO], lookahead=130.0, seed=0)
        self.cases: list[tuple[Batch, Fleet]] = []
        self.min_jobs, self.max_jobs, self.every, self._seen = min_jobs, max_jobs, every, 0

    def decide(self, now, batch, sim):  # type: ignore[no-untyped-def]
        if self.min_jobs <= len(batch) <= self.max_jobs:
            self._seen += 1
            if self._seen % self.every == 0:
                self.cases.append((batch, copy_fleet(sim.fleet(stats=True))))
        return super().decide(now, batch, sim)


@cache
def captured(trace: str, reqs: str, min_jobs: int, max_jobs: int, n_jobs: int = 6000,
             every: int = 7, capacity: str = "interval") -> tuple[tuple[Batch, Fleet], ...]:
    swf = load_trace(trace_path(trace))
    jobs, _ = job_view(swf.frame, reqs=reqs, seed=4)
    policy = Capturing(min_jobs, max_jobs, every)
    engine = EngineConfig(capacity=capacity)  # type: ignore[arg-type]
    run(CohWorld(jobs.head(n_jobs), CATALOG, engine, lookahead=policy.lookahead), policy)
    return tuple(policy.cases)


def all_heuristic_plans(batch: Batch, fleet: Fleet, names: list[str] | None = None) -> list[Plan]:
    return [HEURISTICS.get(n).plan(batch, fleet, np.random.default_rng(1)) for n in names or HEURISTICS.names()]
