"""The one step function of the elastic world: every policy, the SARSA learner and the Gymnasium environment use it.

:class:`Episode` drives an :class:`~broker.elastic.world.ElasticWorld` decision by decision and keeps
the :class:`~broker.elastic.rewards.RewardBook`: :meth:`Episode.start` runs to the first decision,
:meth:`Episode.step` dispatches a job (and sizes the pool), runs to the next decision and returns it
with the rewards that became complete meanwhile — late, as a job's responsiveness is known only
when it terminates. :func:`run_episode` is the loop every built-in policy runs through.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.elastic.rewards import RewardBook, target_shares
from broker.elastic.world import Action, Decision, ElasticWorld


class Episode:
    """A world driven decision by decision, with its rewards (see the module docstring)."""

    def __init__(self, world: ElasticWorld, lam: float) -> None:
        jobs = world.jobs
        self.world = world
        self.book = RewardBook(len(jobs), lam, elastic=world.pool.elastic,
                               shares=target_shares(jobs.runtime, jobs.group, jobs.n_groups))
        self.decision: Decision | None = None

    def start(self) -> Decision | None:
        """Run to the first decision."""
        self.decision = self.world.advance()
        return self.decision

    def step(self, action: Action) -> tuple[Decision | None, list[tuple[int, float]]]:
        """Act, run to the next decision (``None``: the run is over); the ``(decision, reward)`` pairs completed."""
        world, book = self.world, self.book
        job = action.job
        book.chose(job, int(world.jobs.group[job]), world.est.one(job), world.service())
        world.act(action)
        self.decision = world.advance()
        for j in world.drain_completed():
            book.terminated(j, float(world.jobs.runtime[j]), float(world.start[j] - world.jobs.submit[j]))
        book.reached(world.utilization())
        return self.decision, book.take()


#: A policy's decision rule: the action for a decision of a world.
Rule = Callable[[Decision, ElasticWorld], Action]


def run_episode(world: ElasticWorld, lam: float, decide: Rule,
                observe: Callable[[list[tuple[int, float]]], None] | None = None) -> Episode:
    """Drive ``world`` to its end with ``decide``; ``observe`` gets each step's completed rewards."""
    episode = Episode(world, lam)
    decision = episode.start()
    while decision is not None:
        decision, rewards = episode.step(decide(decision, world))
        if observe is not None:
            observe(rewards)
    return episode
