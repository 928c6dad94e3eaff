"""The one step function of the elastic world: every policy, the SARSA learner and the Gymnasium environment use it.

:class:`Episode` drives an :class:`~broker.elastic.world.ElasticWorld` decision by decision and keeps
the book of its rewards: :meth:`Episode.start` runs to the first decision, :meth:`Episode.step`
dispatches a job (and sizes the pool), runs to the next decision and returns it with the rewards
that became complete meanwhile. Two rewards (``reward``):

- ``"paper"``: the paper's, :class:`~broker.elastic.rewards.RewardBook` — late, as a job's
  responsiveness is known only when it terminates.
- ``"wait"``: :class:`~broker.elastic.wait.WaitBook` — each decision is charged the loss of ``W`` of
  the jobs that wait over the step that follows it (and, elastic, the idle cores it held),
  complete at the next decision.

:func:`run_episode` is the loop every built-in policy runs through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from broker.elastic.rewards import RewardBook, target_shares
from broker.elastic.wait import WaitBook
from broker.elastic.world import Action, Decision, ElasticWorld
from workloads.errors import ConfigError

Reward = Literal["paper", "wait"]
REWARDS: tuple[Reward, ...] = ("paper", "wait")


class Episode:
    """A world driven decision by decision, with its rewards (see the module docstring)."""

    def __init__(self, world: ElasticWorld, lam: float, reward: Reward = "paper") -> None:
        if reward not in REWARDS:
            raise ConfigError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        jobs = world.jobs
        self.world, self.reward = world, reward
        self.book = RewardBook(len(jobs), lam, elastic=world.pool.elastic,
                               shares=target_shares(jobs.runtime, jobs.group, jobs.n_groups))
        self.waits = WaitBook(jobs.runtime, jobs.submit, lam, elastic=world.pool.elastic) if reward == "wait" \
            else None
        self.decision: Decision | None = None

    def start(self) -> Decision | None:
        """Run to the first decision."""
        self.decision = self.world.advance()
        return self.decision

    def step(self, action: Action) -> tuple[Decision | None, list[tuple[int, float]]]:
        """Act, run to the next decision (``None``: the run is over); the ``(decision, reward)`` pairs completed."""
        if self.waits is not None:
            return self._step_wait(action, self.waits)
        world, book = self.world, self.book
        job = action.job
        book.chose(job, int(world.jobs.group[job]), world.est.one(job), world.service())
        world.act(action)
        self.decision = world.advance()
        for j in world.drain_completed():
            book.terminated(j, float(world.jobs.runtime[j]), float(world.start[j] - world.jobs.submit[j]))
        book.reached(world.utilization())
        return self.decision, book.take()

    def _step_wait(self, action: Action, waits: WaitBook) -> tuple[Decision | None, list[tuple[int, float]]]:
        world = self.world
        t0 = world.now
        world.act(action)  # a resize counts from t0: the core-seconds are read after it
        core_s, busy = world.core_seconds(), world.busy_core_seconds()
        self.decision = world.advance()
        world.drain_completed()
        waiting = self.decision.queued if self.decision is not None else np.empty(0, dtype=np.int64)
        idle = (world.core_seconds() - core_s) - (world.busy_core_seconds() - busy)
        return self.decision, [waits.charge(t0, world.now, waiting, idle)]


#: A policy's decision rule: the action for a decision of a world.
Rule = Callable[[Decision, ElasticWorld], Action]


def run_episode(world: ElasticWorld, lam: float, decide: Rule,
                observe: Callable[[list[tuple[int, float]]], None] | None = None,
                reward: Reward = "paper") -> Episode:
    """Drive ``world`` to its end with ``decide``; ``observe`` gets each step's completed rewards."""
    episode = Episode(world, lam, reward)
    decision = episode.start()
    while decision is not None:
        decision, rewards = episode.step(decide(decision, world))
        if observe is not None:
            observe(rewards)
    return episode
