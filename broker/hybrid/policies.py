"""Leasing policies: how many cloud nodes ``V`` a hybrid site may use, step by step (``SPEC.md`` §5).

A policy is one small class with one hook, :meth:`LeasingPolicy.step`: carry the site through the
next step (a day by default) under its cap, and hand back the site that continues. :func:`run_leasing`
drives a policy over the whole trace.

- :class:`Constant`: one cap for the whole run.
- :class:`RandomCap`: ``V`` drawn uniformly from ``0..M`` each step.
- :class:`QLearning`: the cap of each step is the greedy action of a :class:`~broker.hybrid.learning.QLearner`
  that learns from a clone of the site per candidate ``V`` (:func:`~broker.hybrid.learning.learn_step`).
- :class:`EpsilonGreedy`: the paper's remedy for the cost of evaluating every ``V``: the greedy ``V``,
  ``V = 0``, every ``V`` at or above the unbounded peak (free) and ``k`` others drawn at random.

:data:`LEASING_POLICIES` names them (``constant``, ``random``, ``qlearning``, ``egreedy``) with their
parameters, for the CLI and the contract suite.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from broker.hybrid.learning import QLearner, learn_step
from broker.hybrid.metrics import LeasingResult, summarize
from broker.hybrid.world import HybridWorld, record
from broker.sim.recorder import Recorder
from heuristics.backfill import Discipline
from heuristics.registry import Registry
from workloads.errors import ConfigError
from workloads.rigid import RigidJobs

DAY = 86400.0


@dataclass(frozen=True, slots=True)
class Step:
    """What a policy did in one step: the site that continues, the cap it used, the site runs it needed."""

    site: HybridWorld
    cap: float
    simulated: int


class LeasingPolicy(Protocol):
    """A leasing policy of the hybrid world: one hook."""

    name: str

    def step(self, site: HybridWorld, until: float) -> Step:
        """Carry ``site`` to ``until`` (a pass there included) under this policy's cap."""
        ...


class Constant:
    """A fixed cap ``V`` (``math.inf``: unbounded; 0: the local cluster alone)."""

    def __init__(self, v: float) -> None:
        if not v >= 0:
            raise ConfigError(f"a constant cap needs V >= 0 (or inf), got {v}")
        self.v, self.name = float(v), f"constant:{v:g}"

    def step(self, site: HybridWorld, until: float) -> Step:
        """Run the step under ``V``."""
        site.run(until, self.v)
        return Step(site, self.v, 1)


class RandomCap:
    """``V`` drawn uniformly from ``0..m`` at each step (the paper's random policy)."""

    name = "random"

    def __init__(self, m: int, *, seed: int | np.random.SeedSequence | None = 0) -> None:
        if m < 0:
            raise ConfigError(f"the random policy needs m >= 0, got {m}")
        self.m, self.rng = m, np.random.default_rng(seed)

    def step(self, site: HybridWorld, until: float) -> Step:
        """Draw ``V`` and run the step under it."""
        v = float(self.rng.integers(0, self.m + 1))
        site.run(until, v)
        return Step(site, v, 1)


class QLearning:
    """Q-learning over every ``V`` in ``0..m`` each step (:mod:`broker.hybrid.learning`)."""

    name = "qlearning"

    def __init__(self, m: int, *, alpha: float = 0.1, gamma: float = 0.1, share: bool = True) -> None:
        self.learner, self.share = QLearner(m, alpha, gamma), share

    def candidates(self) -> list[int]:
        """The ``V`` evaluated this step: all of them."""
        return list(range(self.learner.m + 1))

    def step(self, site: HybridWorld, until: float) -> Step:
        """Run the step under the greedy ``V`` and its clones; learn from them."""
        greedy = self.learner.greedy()
        outcome = learn_step(site, until, self.learner, self.candidates(), greedy, share=self.share)
        return Step(outcome.site, float(greedy), outcome.simulated)


class EpsilonGreedy(QLearning):
    """Q-learning evaluating the greedy ``V`` and ``k`` random others each step (plus the free ones)."""

    name = "egreedy"

    def __init__(self, m: int, *, k: int = 3, seed: int | np.random.SeedSequence | None = 0, alpha: float = 0.1,
                 gamma: float = 0.1, share: bool = True) -> None:
        if k < 1:
            raise ConfigError(f"epsilon-greedy needs k >= 1 random V per step, got {k}")
        super().__init__(m, alpha=alpha, gamma=gamma, share=share)
        self.k, self.rng = k, np.random.default_rng(seed)

    def candidates(self) -> list[int]:
        """The greedy ``V`` and ``k`` drawn without replacement from ``0..m``."""
        m = self.learner.m
        return [self.learner.greedy(), *self.rng.choice(m + 1, size=min(self.k, m + 1), replace=False).tolist()]


def run_leasing(jobs: RigidJobs, m: int, policy: LeasingPolicy, *, step: float = DAY,
                discipline: Discipline = "easy", recorder: Recorder | None = None,
                validate: bool = False) -> LeasingResult:
    """Run ``policy`` over the whole trace on an ``m``-node site, in steps of ``step`` seconds."""
    if not step > 0:
        raise ConfigError(f"the policy step must be > 0 s, got {step}")
    site = HybridWorld(jobs, m, discipline, recorder=recorder, validate=validate)
    start, where = record(len(jobs), [])
    rows: list[tuple[float, float, float, float, int]] = []
    simulated, t = 0, site.now
    while not site.finished():
        until = t + step
        done = policy.step(site, until)
        if done.site is not site:
            done.site.succeed(site)
        site, simulated = done.site, simulated + done.simulated
        rows.append((t, done.cap, site.wait_s, site.cloud_cpu_s, done.simulated))
        record(len(jobs), site.drain_log(), start, where)
        t = until
    if site._validator is not None:
        site._validator.at_end()
    steps = pd.DataFrame(rows, columns=["start_s", "cap", "twt_s", "cloud_cpu_s", "simulated"])
    learner = getattr(policy, "learner", None)  # a learning policy's action values, reported with the run
    q = learner.q.copy() if isinstance(learner, QLearner) else None
    return summarize(site, start, where, steps, policy=policy.name, step_s=step, simulated=simulated, q=q)


def _registry() -> Registry[Callable[..., LeasingPolicy]]:
    reg: Registry[Callable[..., LeasingPolicy]] = Registry("leasing policy")
    reg.register("constant", lambda m, *, v=0.0, seed=0: Constant(v))
    reg.register("random", lambda m, *, seed=0: RandomCap(m, seed=seed))
    reg.register("qlearning", lambda m, *, seed=0, share=True: QLearning(m, share=share))
    reg.register("egreedy", lambda m, *, k=3, seed=0, share=True: EpsilonGreedy(m, k=k, seed=seed, share=share))
    return reg


#: The leasing policies by name: ``LEASING_POLICIES.get("egreedy")(m, k=3, seed=1)``.
LEASING_POLICIES = _registry()


def run_constant(jobs: RigidJobs, m: int, cap: float, *, discipline: Discipline = "easy") -> LeasingResult:
    """The whole trace with one cap ``V`` in one step (0: local only; ``math.inf``: unbounded)."""
    return run_leasing(jobs, m, Constant(cap), step=math.inf, discipline=discipline)
