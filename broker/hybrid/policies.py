"""Leasing policies: how many cloud nodes ``V`` a hybrid site may use, step by step (``SPEC.md`` §5).

A policy is one small class with one hook, :meth:`LeasingPolicy.step`: carry the site through the
next step (a day by default) under its cap, and hand back the site that continues. :func:`run_leasing`
drives a policy over the whole trace.

- :class:`Constant`: one cap for the whole run.
- :class:`RandomCap`: ``V`` drawn uniformly from ``0..M`` each step.
- :class:`QLearning`: the cap of each step is the greedy action of a :class:`~broker.hybrid.learning.QLearner`
  that learns from a clone of the site per ``V`` (:func:`~broker.hybrid.learning.leasing_step`).
- :class:`EpsilonGreedy`: the paper's remedy for the cost of evaluating every ``V`` (its §8):
  epsilon-greedy action selection (a random ``V`` with probability ``epsilon``, else the greedy one)
  and ``k`` other ``V`` drawn at random evaluated beside it; only the evaluated ``V`` learn.
- :class:`Sampled`: the greedy ``V`` always, evaluated with ``k`` random others, ``V = 0`` and every
  ``V`` at or above the step's unbounded peak (those cost nothing); every simulated ``V`` learns.
  This was ``egreedy`` before it had an epsilon; kept, under its own name, to compare.

The learners take the readings of :mod:`broker.hybrid.learning` as options: ``references``
(``clones`` or ``runs``), ``reward`` (``minmax`` or ``balance``), ``continue_best`` (hindsight, to
measure it), ``alpha`` and ``gamma``. :data:`LEASING_POLICIES` names the policies (``constant``,
``random``, ``qlearning``, ``egreedy``, ``sampled``) with their parameters, for the CLI and the
contract suite. :func:`run_leasing` drives a policy over the whole trace in steps on a grid that
``offset_s`` shifts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from broker.hybrid.learning import REWARDS, QLearner, leasing_step, references_of
from broker.hybrid.metrics import LeasingResult, summarize
from broker.hybrid.world import HybridWorld, record
from broker.sim.recorder import Recorder
from heuristics.backfill import Discipline
from heuristics.registry import Registry
from workloads.errors import ConfigError
from workloads.rigid import RigidJobs

DAY = 86400.0
#: The largest site (local nodes M): the learners keep a value per cap 0..M.
MAX_NODES = 1_000_000


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

    def __init__(self, m: int, *, alpha: float = 0.1, gamma: float = 0.1, share: bool = True,
                 references: str = "runs", reward: str = "minmax", continue_best: bool = False) -> None:
        if reward not in REWARDS:
            raise ConfigError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        self.learner, self.share = QLearner(m, alpha, gamma), share
        self.references, self.reward, self.continue_best = references_of(references), REWARDS[reward], continue_best

    def step(self, site: HybridWorld, until: float) -> Step:
        """Run the step under the greedy ``V`` and a clone of every ``V``; learn from all of them."""
        return self._learn(site, until, self.learner.greedy(), range(self.learner.m + 1))

    def _learn(self, site: HybridWorld, until: float, cap: int, evaluate: Iterable[int],
               learn: Iterable[int] | None = None, **options: bool) -> Step:
        """One :func:`leasing_step` under ``cap``; the ``V`` in ``learn`` (default: every simulated one) learn."""
        report = leasing_step(site, until, cap, self.references, evaluate=evaluate, **options, share=self.share,
                              continue_best=self.continue_best)
        balances = report.balances if learn is None else {v: report.balances[v] for v in learn}
        self.learner.update(self.reward(balances))
        return Step(report.site, float(report.cap), report.simulated)


class EpsilonGreedy(QLearning):
    """Epsilon-greedy: a random ``V`` with probability ``epsilon``, else the greedy; ``k`` others evaluated too."""

    name = "egreedy"

    def __init__(self, m: int, *, epsilon: float = 0.1, k: int = 3, seed: int | np.random.SeedSequence | None = 0,
                 **options: object) -> None:
        if not 0 <= epsilon <= 1:
            raise ConfigError(f"epsilon-greedy needs epsilon in [0, 1], got {epsilon}")
        if k < 0:
            raise ConfigError(f"epsilon-greedy needs k >= 0 other V evaluated per step, got {k}")
        super().__init__(m, **options)  # type: ignore[arg-type]
        self.epsilon, self.k, self.rng = epsilon, k, np.random.default_rng(seed)

    def step(self, site: HybridWorld, until: float) -> Step:
        """Choose the step's ``V``, evaluate it and ``k`` others; update those alone."""
        m = self.learner.m
        cap = int(self.rng.integers(m + 1)) if self.rng.random() < self.epsilon else self.learner.greedy()
        others = [v for v in range(m + 1) if v != cap]
        drawn = self.rng.choice(others, size=min(self.k, len(others)), replace=False).tolist() if others else []
        evaluated = {cap, *drawn}
        return self._learn(site, until, cap, evaluated, learn=evaluated)


class Sampled(QLearning):
    """The greedy ``V``, evaluated with ``k`` random others, ``V = 0`` and the free ``V``; all of them learn."""

    name = "sampled"

    def __init__(self, m: int, *, k: int = 3, seed: int | np.random.SeedSequence | None = 0,
                 **options: object) -> None:
        if k < 1:
            raise ConfigError(f"the sampled policy needs k >= 1 random V per step, got {k}")
        super().__init__(m, **options)  # type: ignore[arg-type]
        self.k, self.rng = k, np.random.default_rng(seed)

    def step(self, site: HybridWorld, until: float) -> Step:
        """Run the step under the greedy ``V``; evaluate it, ``k`` random ``V`` and the free ones; learn from all."""
        m, greedy = self.learner.m, self.learner.greedy()
        drawn = self.rng.choice(m + 1, size=min(self.k, m + 1), replace=False).tolist()
        evaluate = [0, *drawn] if self.references.clone_zero else drawn
        return self._learn(site, until, greedy, evaluate, free=True)


def run_leasing(jobs: RigidJobs, m: int, policy: LeasingPolicy, *, step: float = DAY, offset_s: float = 0.0,
                discipline: Discipline = "easy", recorder: Recorder | None = None,
                validate: bool = False) -> LeasingResult:
    """Run ``policy`` over the whole trace on an ``m``-node site, in steps of ``step`` seconds.

    The steps end on the grid ``first submission + offset_s + k step``: with ``offset_s`` in ``(0,
    step)`` the first step is that much shorter (the grid shifted, e.g. by 6 hours).
    """
    if not step > 0:
        raise ConfigError(f"the policy step must be > 0 s, got {step}")
    if not 0 <= offset_s < step:
        raise ConfigError(f"the step grid's offset must lie in [0, step) = [0, {step:g}) s, got {offset_s}")
    site = HybridWorld(jobs, m, discipline, recorder=recorder, validate=validate)
    start, where = record(len(jobs), [])
    rows: list[tuple[float, float, float, float, int]] = []
    simulated, t = 0, site.now
    until = first_step_end(t, step, offset_s)
    while not site.finished():
        done = policy.step(site, until)
        if done.site is not site:
            done.site.succeed(site)
        site, simulated = done.site, simulated + done.simulated
        rows.append((t, done.cap, site.wait_s, site.cloud_cpu_s, done.simulated))
        record(len(jobs), site.drain_log(), start, where)
        t, until = until, until + step
    if site._validator is not None:
        site._validator.at_end()
    steps = pd.DataFrame(rows, columns=["start_s", "cap", "twt_s", "cloud_cpu_s", "simulated"])
    learner = getattr(policy, "learner", None)  # a learning policy's action values, reported with the run
    q = learner.q.copy() if isinstance(learner, QLearner) else None
    return summarize(site, start, where, steps, policy=policy.name, step_s=step, simulated=simulated, q=q)


def first_step_end(start: float, step: float, offset_s: float) -> float:
    """The end of the first step on the grid ``start + offset_s + k step`` (a whole step when not shifted)."""
    return start + (offset_s if offset_s > 0 else step)


#: The learners' options (besides their own parameters): the readings of :mod:`broker.hybrid.learning`.
LEARNING_OPTIONS = ("alpha", "gamma", "references", "reward", "continue_best", "share")


def _registry() -> Registry[Callable[..., LeasingPolicy]]:
    reg: Registry[Callable[..., LeasingPolicy]] = Registry("leasing policy")
    reg.register("constant", lambda m, *, v=0.0, seed=0: Constant(v))
    reg.register("random", lambda m, *, seed=0: RandomCap(m, seed=seed))
    reg.register("qlearning", lambda m, *, seed=0, **options: QLearning(m, **options))
    reg.register("egreedy", lambda m, *, seed=0, epsilon=0.1, k=3, **options: EpsilonGreedy(
        m, epsilon=epsilon, k=k, seed=seed, **options))
    reg.register("sampled", lambda m, *, seed=0, k=3, **options: Sampled(m, k=k, seed=seed, **options))
    return reg


#: The leasing policies by name: ``LEASING_POLICIES.get("egreedy")(m, k=3, seed=1)``.
LEASING_POLICIES = _registry()


def run_constant(jobs: RigidJobs, m: int, cap: float, *, discipline: Discipline = "easy") -> LeasingResult:
    """The whole trace with one cap ``V`` in one step (0: local only; ``math.inf``: unbounded)."""
    return run_leasing(jobs, m, Constant(cap), step=math.inf, discipline=discipline)
