"""One call from a job table to a result: build the policy, run the world, summarize.

``simulate(jobs, catalog, config=SimulationConfig(CohConfig("coh")), seed=1)`` is what the CLI, the
notebooks and the benchmarks call.
"""

from __future__ import annotations

from broker.coh.config import SimulationConfig
from broker.coh.metrics import RunResult, summarize
from broker.coh.policies import build_policy
from broker.coh.spot import SpotCohWorld, SpotConfig
from broker.coh.world import CohWorld, RunRecord, run
from broker.pricing.book import Catalog, PriceBook, load_price_book
from broker.pricing.reservations import ReservedCapacity
from broker.sim.recorder import Recorder
from workloads.jobs import JobTable

_DEFAULT = SimulationConfig()


def simulate(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig = _DEFAULT, seed: int | None = 0,
             recorder: Recorder | None = None, book: PriceBook | None = None, spot: SpotConfig | None = None
             ) -> RunResult:
    """Replay ``jobs`` through the configured policy and summarize the run.

    ``book`` gives the reserved prices of ``config.reservations`` (default: the book the plan names);
    ``spot`` adds spot VMs from a market (:mod:`broker.coh.spot`).
    """
    record, name = replay(jobs, catalog, config=config, seed=seed, recorder=recorder, book=book, spot=spot)
    return summarize(record, catalog, config.engine.billing(jobs.origin), policy=name)


def replay(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig = _DEFAULT, seed: int | None = 0,
           recorder: Recorder | None = None, book: PriceBook | None = None, spot: SpotConfig | None = None
           ) -> tuple[RunRecord, str]:
    """Run the world; returns the raw record and the policy's name."""
    billing = config.engine.billing(jobs.origin)
    policy = build_policy(config, seed=seed, billing=billing, catalog=catalog)
    reserved = None
    if config.reservations is not None:
        book = book if book is not None else load_price_book(config.reservations.price_book)
        reserved = ReservedCapacity(config.reservations, book, catalog)
    if spot is None:
        world = CohWorld(jobs, catalog, config.engine, lookahead=policy.lookahead, recorder=recorder,
                         reservations=reserved)
    else:
        world = SpotCohWorld(jobs, catalog, config.engine, **spot.rules(),  # type: ignore[arg-type]
                             lookahead=policy.lookahead, recorder=recorder, reservations=reserved)
    return run(world, policy), policy.name
