"""The CoH world's policies by name, registered like the heuristics (``SPEC.md`` §3-§4).

``coh`` is the portfolio over the configured heuristics (plus the integer program when one is
configured); ``ipp`` the integer program alone, its first heuristic only as the fallback when it has
no plan or the batch is too large; ``coh-r`` the portfolio over reserved instances (CoH-R) and
``coh-onetype`` the same with heavy reservations only; and each of the 66 heuristics alone
(``FCFS-SM``, ...). A :class:`PolicySpec` says what the policy needs (reservations, the integer
program) so the configuration checks it once; :meth:`PolicySpec.build` makes the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from broker.coh.ipp_member import IppMember
from broker.coh.portfolio import CohPolicy
from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from heuristics.registry import HEURISTICS, Registry
from solvers.base import get_solver

if TYPE_CHECKING:
    from broker.coh.config import IppConfig, SimulationConfig

Seed = int | np.random.SeedSequence | None


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """A named CoH policy: how to build it and what its configuration must give."""

    build: Callable[[SimulationConfig, Seed, Billing, Catalog], CohPolicy]
    reserved: bool = False
    heavy_only: bool = False
    needs_ipp: bool = False
    takes_ipp: bool = True


def ipp_member(ipp: IppConfig, billing: Billing, catalog: Catalog, *, paid: bool) -> IppMember:
    """The integer program as a portfolio member, as ``ipp`` configures it."""
    options = {"presolve": ipp.presolve} if ipp.solver == "cpsat" else {}
    return IppMember(get_solver(ipp.solver, **options), ipp.limit(), billing=billing, hourly=catalog.hourly,
                     max_jobs=ipp.max_jobs, max_vms=ipp.max_vms, warm_start=ipp.warm_start, fast_path=ipp.fast_path,
                     symmetry=ipp.symmetry, paid=paid)


def _portfolio(name: str) -> Callable[[SimulationConfig, Seed, Billing, Catalog], CohPolicy]:
    def build(config: SimulationConfig, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
        c = config.coh
        ipp = ipp_member(config.ipp, billing, catalog, paid=c.paid_scoring) if config.ipp is not None else None
        return CohPolicy([HEURISTICS.get(h) for h in c.heuristics], lookahead=config.lookahead, seed=seed, name=name,
                         ipp=ipp, paid=c.paid_scoring, ipp_wins_ties=c.ipp_wins_ties)
    return build


def _ipp_alone(config: SimulationConfig, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
    assert config.ipp is not None  # checked by the configuration
    c = config.coh
    return CohPolicy([HEURISTICS.get(c.heuristics[0])], lookahead=config.lookahead, seed=seed, name="ipp",
                     ipp=ipp_member(config.ipp, billing, catalog, paid=c.paid_scoring), paid=c.paid_scoring,
                     prefer_ipp=True)


def _heuristic(name: str) -> Callable[[SimulationConfig, Seed, Billing, Catalog], CohPolicy]:
    def build(config: SimulationConfig, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
        return CohPolicy([HEURISTICS.get(name)], lookahead=config.lookahead, seed=seed, name=name)
    return build


def _registry() -> Registry[PolicySpec]:
    reg: Registry[PolicySpec] = Registry("CoH policy")
    reg.register("coh", PolicySpec(_portfolio("coh")))
    reg.register("ipp", PolicySpec(_ipp_alone, needs_ipp=True))
    reg.register("coh-r", PolicySpec(_portfolio("coh-r"), reserved=True))
    reg.register("coh-onetype", PolicySpec(_portfolio("coh-onetype"), reserved=True, heavy_only=True))
    for name in HEURISTICS:
        reg.register(name, PolicySpec(_heuristic(name), takes_ipp=False))
    return reg


#: Every CoH policy by name: the portfolio, the IPP alone, CoH-R, CoH-oneType and the 66 heuristics.
COH_POLICIES = _registry()


def build_policy(config: SimulationConfig, *, seed: Seed, billing: Billing, catalog: Catalog) -> CohPolicy:
    """The policy ``config.coh.policy`` names."""
    return COH_POLICIES.get(config.coh.policy).build(config, seed, billing, catalog)
