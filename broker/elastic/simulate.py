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

from broker.elastic.episode import REWARDS, Reward, run_episode
from broker.elastic.metrics import ElasticSummary, summarize
from broker.elastic.rules import ORDERS, RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.waitsarsa import SizeConfig, WaitSarsaAgent
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
    def build(groups: int, elastic: bool, *, seed: Any = 0, config: Any = None, **_: Any) -> ElasticPolicy:
        return RulePolicy(order, sizing=elastic, seed=seed)
    return build


def _threshold(groups: int, elastic: bool, *, seed: Any = 0, config: Any = None, **_: Any) -> ElasticPolicy:
    if not elastic:
        raise ConfigError("the threshold autoscaler sizes an elastic pool: use --mode elastic (or fcfs on a rigid one)")
    return RulePolicy("fcfs", sizing=True, seed=seed)


def _sarsa(groups: int, elastic: bool, *, seed: Any = 0, config: SarsaConfig | None = None,
           reward: Reward = "paper", hold_s: float = 900.0, sizing: SizeConfig | None = None) -> ElasticPolicy:
    if reward == "wait":
        return WaitSarsaAgent(groups, elastic, config, sizing, hold_s=hold_s, seed=seed)
    return SarsaAgent(groups, elastic, config, seed=seed)


def _registry() -> Registry[Builder]:
    reg: Registry[Builder] = Registry("elastic policy")
    for order in ORDERS:
        reg.register(order, _order(order))
    reg.register("threshold", _threshold)
    reg.register("sarsa", _sarsa)
    return reg


#: The elastic-world policies by name: ``ELASTIC_POLICIES.get("sarsa")(groups, elastic, seed=1)``.
ELASTIC_POLICIES = _registry()


def run_elastic(jobs: CoreJobs, pool: PoolConfig, policy: str = "fcfs", *, lam: float = 0.5,
                seed: int | np.random.SeedSequence | None = 0, sarsa: SarsaConfig | None = None, trim: int = 500,
                reward: Reward = "paper", sizing: SizeConfig | None = None, recorder: Recorder | None = None,
                validate: bool = False) -> Result[ElasticSummary]:
    """Replay ``jobs`` on ``pool`` under the named ``policy`` (``lam``: the reward's weight of responsiveness).

    ``reward`` is the paper's or the wait reward (:mod:`broker.elastic.episode`; a learner learns from
    it, a rule ignores it); ``seed`` seeds the learner (network, exploration); ``sizing`` sets the
    wait learner's size learner; ``trim`` jobs at each end are left out of the statistics;
    ``validate`` checks the world's invariants after every instant and dispatch.
    """
    if trim < 0:
        raise ConfigError(f"trim must be >= 0 jobs, got {trim}")
    if reward not in REWARDS:
        raise ConfigError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
    if policy == "sarsa" and reward == "paper" and pool.no_ceiling:
        raise ConfigError("the paper's learner spreads its pool sizes over [min_cores, max_cores]: give a ceiling "
                          "(or use the wait reward, whose sizes follow the demand)")
    agent = ELASTIC_POLICIES.get(policy)(jobs.n_groups, pool.elastic, seed=seed, config=sarsa, reward=reward,
                                         hold_s=pool.hold_s, sizing=sizing)
    world = ElasticWorld(jobs, pool, recorder=recorder, validate=validate)
    observe = getattr(agent, "observe", None)
    run_episode(world, lam, agent.decide, observe, reward)
    return summarize(world, policy=agent.name, lam=lam, trim=trim, trainings=getattr(agent, "trainings", 0),
                     reward=reward)
