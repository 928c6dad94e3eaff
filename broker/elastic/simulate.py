"""One call from one-core jobs to an elastic-pool result: a policy by name, a world, the one step loop.

:data:`ELASTIC_POLICIES` names every policy: ``fcfs``, ``sjf``, ``edf`` (job orders; on an elastic
pool with the threshold autoscaler), ``threshold`` (FCFS with the autoscaler, elastic pools only)
and ``sarsa`` (the learner). Each is built for a world by ``builder(groups, elastic, seed=,
config=)`` and has one hook, ``decide(decision, world) -> Action``; a learner also has
``observe(rewards)``. Every policy runs through :func:`broker.elastic.episode.run_episode`, the step
function the Gymnasium environment uses too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from broker.elastic.episode import run_episode
from broker.elastic.metrics import ElasticSummary, summarize
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.world import Action, Decision, ElasticWorld, PoolConfig
from broker.sim.recorder import Recorder
from broker.sim.result import Result
from heuristics.registry import Registry
from workloads.cores import CoreJobs
from workloads.errors import ConfigError


class ElasticPolicy(Protocol):
    """A policy of the elastic world: one hook."""

    name: str

    def decide(self, decision: Decision, world: ElasticWorld) -> Action:
        """The job to run (and the pool's size) at ``decision``."""
        ...


Builder = Callable[..., ElasticPolicy]


def _order(order: str) -> Builder:
    def build(groups: int, elastic: bool, *, seed: Any = 0, config: Any = None) -> ElasticPolicy:
        return RulePolicy(order, sizing=elastic, seed=seed)
    return build


def _threshold(groups: int, elastic: bool, *, seed: Any = 0, config: Any = None) -> ElasticPolicy:
    if not elastic:
        raise ConfigError("the threshold autoscaler sizes an elastic pool: use --mode elastic (or fcfs on a rigid one)")
    return RulePolicy("fcfs", sizing=True, seed=seed)


def _sarsa(groups: int, elastic: bool, *, seed: Any = 0, config: SarsaConfig | None = None) -> ElasticPolicy:
    return SarsaAgent(groups, elastic, config, seed=seed)


def _registry() -> Registry[Builder]:
    reg: Registry[Builder] = Registry("elastic policy")
    for order in ("fcfs", "sjf", "edf"):
        reg.register(order, _order(order))
    reg.register("threshold", _threshold)
    reg.register("sarsa", _sarsa)
    return reg


#: The elastic-world policies by name: ``ELASTIC_POLICIES.get("sarsa")(groups, elastic, seed=1)``.
ELASTIC_POLICIES = _registry()


def run_elastic(jobs: CoreJobs, pool: PoolConfig, policy: str = "fcfs", *, lam: float = 0.5,
                seed: int | np.random.SeedSequence | None = 0, sarsa: SarsaConfig | None = None, trim: int = 500,
                recorder: Recorder | None = None, validate: bool = False) -> Result[ElasticSummary]:
    """Replay ``jobs`` on ``pool`` under the named ``policy`` (``lam``: the reward's weight of responsiveness).

    ``seed`` seeds the learner (network, exploration); ``trim`` jobs at each end are left out of the
    statistics; ``validate`` checks the world's invariants after every instant and dispatch.
    """
    if trim < 0:
        raise ConfigError(f"trim must be >= 0 jobs, got {trim}")
    agent = ELASTIC_POLICIES.get(policy)(jobs.n_groups, pool.elastic, seed=seed, config=sarsa)
    world = ElasticWorld(jobs, pool, recorder=recorder, validate=validate)
    observe = getattr(agent, "observe", None)
    run_episode(world, lam, agent.decide, observe)
    return summarize(world, policy=agent.name, lam=lam, trim=trim, trainings=getattr(agent, "trainings", 0))
