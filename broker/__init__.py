"""cloudbroker's public API: run a world, load a price book, read the result.

One import for notebooks, scripts and the README::

    from broker import CohConfig, SimulationConfig, load_price_book, simulate

- CoH and CoH-R (:mod:`broker.coh`): :func:`simulate` with a :class:`SimulationConfig`
  (:class:`CohConfig`, :class:`EngineConfig`, :class:`IppConfig`, a :class:`ReservationPlan`);
  :data:`COH_POLICIES` names the policies.
- Reserved instances (:mod:`broker.planning`): :func:`replay_demand`, :func:`plan_reservations`, :class:`Prices`.
- A local cluster leasing cloud nodes (:mod:`broker.hybrid`): :func:`run_leasing` with a policy of
  :data:`LEASING_POLICIES` (:class:`Constant`, :class:`RandomCap`, :class:`QLearning`,
  :class:`EpsilonGreedy`, :class:`Sampled`); :func:`balance` against the references; the Gymnasium
  environment ``cloudbroker/Leasing-v0``.
- A cluster run wholly on the cloud (:mod:`broker.cloudcluster`): :func:`simulate_cluster` with a
  :class:`ClusterPolicy` and :class:`CloudTerms`; :data:`CLUSTER_POLICIES` names one of each rule.
- Every world returns a :class:`Result` (``summary``, ``jobs``, ``instances``) and takes a
  :class:`Recorder` (:class:`MemoryRecorder` keeps records); sweeps go through :func:`run_sweep`.

- Elastic provisioning (:mod:`broker.elastic`): :func:`run_elastic` with a policy of :data:`ELASTIC_POLICIES`
  on a :class:`PoolConfig`; the Gymnasium environment ``cloudbroker/Elastic-v0``.
- Jobs with deadlines on spot (:mod:`broker.spot`): :func:`load_timeline` per zone into a :class:`SpotMarket`,
  :func:`run_spot` or :func:`run_starts` of a :class:`SpotJob` with a policy of :data:`SPOT_POLICIES`; the
  Gymnasium environment ``cloudbroker/Spot-v0``.

Names are imported on first use, so ``import broker`` (and the CLI) stays fast. Importing it
registers the ``cloudbroker/`` Gymnasium environments (:mod:`broker.envs`), without importing
Gymnasium before it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "simulate": "broker.coh.simulate",
    "SimulationConfig": "broker.coh.config", "CohConfig": "broker.coh.config", "EngineConfig": "broker.coh.config",
    "IppConfig": "broker.coh.config",
    "COH_POLICIES": "broker.coh.config",
    "CohSummary": "broker.coh.metrics",
    "replay_demand": "broker.planning.demand", "Demand": "broker.planning.demand",
    "plan_reservations": "broker.planning.planner", "Prices": "broker.planning.planner",
    "expected_cost": "broker.planning.planner", "lookback": "broker.planning.planner",
    "run_leasing": "broker.hybrid.policies", "run_constant": "broker.hybrid.policies",
    "LEASING_POLICIES": "broker.hybrid.policies", "Constant": "broker.hybrid.policies",
    "RandomCap": "broker.hybrid.policies", "QLearning": "broker.hybrid.policies",
    "EpsilonGreedy": "broker.hybrid.policies", "Sampled": "broker.hybrid.policies",
    "HybridWorld": "broker.hybrid.world",
    "balance": "broker.hybrid.metrics", "cumulative_balance": "broker.hybrid.metrics",
    "balance_vs_v": "broker.hybrid.plots", "balance_over_time": "broker.hybrid.plots",
    "LeasingResult": "broker.hybrid.metrics",
    "simulate_cluster": "broker.cloudcluster.simulate",
    "ClusterPolicy": "broker.cloudcluster.policies", "CLUSTER_POLICIES": "broker.cloudcluster.policies",
    "CloudTerms": "broker.cloudcluster.terms", "ClusterResult": "broker.cloudcluster.bill",
    "pareto": "broker.cloudcluster.plots", "cap_benefit": "broker.cloudcluster.plots",
    "load_price_book": "broker.pricing.book", "PriceBook": "broker.pricing.book",
    "ReservationPlan": "broker.pricing.reservations",
    "Result": "broker.sim.result",
    "Recorder": "broker.sim.recorder", "MemoryRecorder": "broker.sim.recorder",
    "run_sweep": "broker.sweep", "cells": "broker.sweep",
    "run_elastic": "broker.elastic.simulate", "ELASTIC_POLICIES": "broker.elastic.simulate",
    "PoolConfig": "broker.elastic.world", "ElasticSummary": "broker.elastic.metrics",
    "SarsaConfig": "broker.elastic.sarsa",
    "load_timeline": "broker.pricing.spot", "SpotMarket": "broker.pricing.spot", "SpotBilling": "broker.pricing.spot",
    "SpotJob": "broker.spot.world", "SpotWorld": "broker.spot.world", "SpotRun": "broker.spot.world",
    "SPOT_POLICIES": "broker.spot.policies", "run_spot": "broker.spot.simulate", "run_starts": "broker.spot.simulate",
    "start_ticks": "broker.spot.simulate",
}

__all__ = [
    "CLUSTER_POLICIES",
    "COH_POLICIES",
    "ELASTIC_POLICIES",
    "LEASING_POLICIES",
    "SPOT_POLICIES",
    "CloudTerms",
    "ClusterPolicy",
    "ClusterResult",
    "CohConfig",
    "CohSummary",
    "Constant",
    "Demand",
    "ElasticSummary",
    "EngineConfig",
    "EpsilonGreedy",
    "HybridWorld",
    "IppConfig",
    "LeasingResult",
    "MemoryRecorder",
    "PoolConfig",
    "PriceBook",
    "Prices",
    "QLearning",
    "RandomCap",
    "Recorder",
    "ReservationPlan",
    "Result",
    "Sampled",
    "SarsaConfig",
    "SimulationConfig",
    "SpotBilling",
    "SpotJob",
    "SpotMarket",
    "SpotRun",
    "SpotWorld",
    "balance",
    "balance_over_time",
    "balance_vs_v",
    "cap_benefit",
    "cells",
    "cumulative_balance",
    "expected_cost",
    "load_price_book",
    "load_timeline",
    "lookback",
    "pareto",
    "plan_reservations",
    "replay_demand",
    "run_constant",
    "run_elastic",
    "run_leasing",
    "run_spot",
    "run_starts",
    "run_sweep",
    "simulate",
    "simulate_cluster",
    "start_ticks",
]

if TYPE_CHECKING:
    from broker.cloudcluster.bill import ClusterResult
    from broker.cloudcluster.plots import cap_benefit, pareto
    from broker.cloudcluster.policies import CLUSTER_POLICIES, ClusterPolicy
    from broker.cloudcluster.simulate import simulate_cluster
    from broker.cloudcluster.terms import CloudTerms
    from broker.coh.config import COH_POLICIES, CohConfig, EngineConfig, IppConfig, SimulationConfig
    from broker.coh.metrics import CohSummary
    from broker.coh.simulate import simulate
    from broker.elastic.metrics import ElasticSummary
    from broker.elastic.sarsa import SarsaConfig
    from broker.elastic.simulate import ELASTIC_POLICIES, run_elastic
    from broker.elastic.world import PoolConfig
    from broker.hybrid.metrics import LeasingResult, balance, cumulative_balance
    from broker.hybrid.plots import balance_over_time, balance_vs_v
    from broker.hybrid.policies import (
        LEASING_POLICIES,
        Constant,
        EpsilonGreedy,
        QLearning,
        RandomCap,
        Sampled,
        run_constant,
        run_leasing,
    )
    from broker.hybrid.world import HybridWorld
    from broker.planning.demand import Demand, replay_demand
    from broker.planning.planner import Prices, expected_cost, lookback, plan_reservations
    from broker.pricing.book import PriceBook, load_price_book
    from broker.pricing.reservations import ReservationPlan
    from broker.pricing.spot import SpotBilling, SpotMarket, load_timeline
    from broker.sim.recorder import MemoryRecorder, Recorder
    from broker.sim.result import Result
    from broker.spot.policies import SPOT_POLICIES
    from broker.spot.simulate import run_spot, run_starts, start_ticks
    from broker.spot.world import SpotJob, SpotRun, SpotWorld
    from broker.sweep import cells, run_sweep


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'broker' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


from broker import envs as _envs  # noqa: E402 (after the exports: registering needs none of them)

_envs.install()
