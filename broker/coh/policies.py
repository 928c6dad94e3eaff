"""The builders of the CoH world's policies (``SPEC.md`` §3-§4), as :data:`broker.coh.config.COH_POLICIES` names them.

``coh`` is the portfolio over the configured heuristics (plus the integer program when one is
configured; ``coh-r`` and ``coh-onetype`` are the same over reserved instances); ``ipp`` the integer
program alone, its first heuristic only as the fallback when it has no plan or the batch is too
large; and each of the 66 heuristics alone (``FCFS-SM``, ...). A builder is a function of
``(config, seed, billing, catalog)``.
"""

from __future__ import annotations

import numpy as np

from broker.coh.config import COH_POLICIES, IppConfig, SimulationConfig
from broker.coh.ipp_member import IppMember
from broker.coh.portfolio import CohPolicy
from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from heuristics.registry import HEURISTICS
from solvers.base import make_solver

Seed = int | np.random.SeedSequence | None


def ipp_member(ipp: IppConfig, billing: Billing, catalog: Catalog, *, paid: bool) -> IppMember:
    """The integer program as a portfolio member, as ``ipp`` configures it (one backend, or a race)."""
    solvers = [make_solver(name, presolve=ipp.presolve) for name in ipp.solvers]
    return IppMember(solvers, [ipp.limit(name) for name in ipp.solvers], billing=billing, hourly=catalog.hourly,
                     max_jobs=ipp.max_jobs, max_vms=ipp.max_vms, warm_start=ipp.warm_start, fast_path=ipp.fast_path,
                     symmetry=ipp.symmetry, paid=paid, exact_jobs=ipp.exact_jobs, workers=ipp.workers,
                     race_jobs=ipp.race_jobs)


def portfolio(config: SimulationConfig, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
    """CoH: the portfolio over ``config.coh.heuristics``, the integer program too when configured."""
    c = config.coh
    ipp = ipp_member(config.ipp, billing, catalog, paid=c.paid_scoring) if config.ipp is not None else None
    return CohPolicy([HEURISTICS.get(h) for h in c.heuristics], lookahead=config.lookahead, seed=seed, name=c.policy,
                     ipp=ipp, paid=c.paid_scoring, ipp_wins_ties=c.ipp_wins_ties, chunk_jobs=_chunk(config))


def ipp_alone(config: SimulationConfig, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
    """The integer program applied whenever it has a plan; the first heuristic otherwise."""
    assert config.ipp is not None  # checked by the configuration
    c = config.coh
    return CohPolicy([HEURISTICS.get(c.heuristics[0])], lookahead=config.lookahead, seed=seed, name="ipp",
                     ipp=ipp_member(config.ipp, billing, catalog, paid=c.paid_scoring), paid=c.paid_scoring,
                     prefer_ipp=True, chunk_jobs=_chunk(config))


def _chunk(config: SimulationConfig) -> int:
    return config.ipp.chunk_jobs if config.ipp is not None else 0


def heuristic(config: SimulationConfig, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
    """One heuristic alone (the policy's name is the heuristic's)."""
    name = config.coh.policy
    return CohPolicy([HEURISTICS.get(name)], lookahead=config.lookahead, seed=seed, name=name)


def build_policy(config: SimulationConfig, *, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
    """The policy ``config.coh.policy`` names."""
    policy: CohPolicy = COH_POLICIES.get(config.coh.policy).build()(config, seed, billing, catalog)
    return policy
