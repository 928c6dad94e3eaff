"""Policies for jobs with deadlines on spot: each a small class with one hook, ``decide(decision, world)``.

- :class:`OnDemand`: on-demand from the start to the end.
- :class:`Greedy`: the paper's (§3.4): spot whenever a zone has it and kept until preempted, idle
  otherwise; the safety net (:func:`safety_net`): idle with time left < work left + 2d -> on-demand to
  the end.
- :class:`UniformProgress`: the paper's (Wu et al., NSDI 2024, §5.2), with expected progress
  ``ep(t) = W t / T``: idle and behind ``ep(t)`` -> on-demand; spot whenever available, kept until
  preempted; hysteresis: on-demand is left only for spot and only once progress >= ``ep(t + 2d)``;
  the safety net as greedy's. On-demand is never left for idle: so the authors' implementation
  does it (their ``rc_cr_threshold`` strategy keeps the on-demand instance while no spot is there).
- :class:`Failover`: SkyPilot's managed jobs: on a preemption, block that zone for ``block_s`` and
  relaunch in the next zone in price order; idle when none has spot, under greedy's safety net.
- :class:`Omniscient`: the optimum over the known trace (:mod:`broker.spot.optimum`), replayed.

A job on spot stays in its zone while it runs; a job that needs a zone takes the cheapest with a
free instance at this tick (ties to the lower index). The registry :data:`SPOT_POLICIES` builds them
by name; the CLI and the sweep go through it.
"""

from __future__ import annotations

import math
from typing import Protocol

from broker.spot.optimum import omniscient_plan
from broker.spot.world import IDLE, ON_DEMAND, Decision, JobState, SpotWorld, progress_after
from heuristics.registry import Registry
from workloads.errors import ConfigError


class SpotPolicy(Protocol):
    """The hook the driver calls at each tick: one choice per unfinished job."""

    def decide(self, decision: Decision, world: SpotWorld) -> tuple[int, ...]:
        """The choices for ``decision.jobs``, in order."""
        ...


class PerJob:
    """A policy deciding each job on its own; zones with free spot are shared out in job order."""

    def decide(self, decision: Decision, world: SpotWorld) -> tuple[int, ...]:
        """One :meth:`choose` per job, the free counts taken as jobs launch spot."""
        free = list(decision.free)
        out = []
        for job in decision.jobs:
            choice = self.choose(job, decision, free)
            if choice >= 0 and choice != job.using:
                free[choice] -= 1
            out.append(choice)
        return tuple(out)

    def choose(self, job: JobState, decision: Decision, free: list[int]) -> int:
        """The job's choice for the next tick."""
        raise NotImplementedError


def spot_zone(decision: Decision, free: list[int], blocked: frozenset[int] = frozenset()) -> int | None:
    """The cheapest zone with a free instance (not ``blocked``), else ``None``."""
    open_ = [z for z, n in enumerate(free) if n > 0 and z not in blocked]
    return min(open_, key=lambda z: (decision.prices[z], z)) if open_ else None


def safe(job: JobState, choice: int, decision: Decision) -> bool:
    """Whether on-demand launched one tick after ``choice`` (its overhead paid) still meets the deadline."""
    span = min(decision.gap_s, job.deadline_s - decision.now)
    after = progress_after(job, choice, span)
    if after >= job.work_s:
        return True
    return job.deadline_s - decision.now - span >= job.work_s - after + job.overhead_s


def safety_net(job: JobState, pick: int, decision: Decision) -> bool:
    """Whether a job not running spot must go on-demand to the end now rather than ``pick`` (spot or idle).

    The paper's Safety Net Rule: time left < work left + 2d (one changeover for a spot launch, one
    more should it be preempted); and, where a tick is longer than ``d``, ``pick`` for one more tick
    no longer :func:`safe`.
    """
    if job.deadline_s - decision.now < job.left_s + 2 * job.overhead_s:
        return True
    return not safe(job, pick, decision)


class OnDemand(PerJob):
    """On-demand only."""

    def choose(self, job: JobState, decision: Decision, free: list[int]) -> int:
        """Always on-demand."""
        return ON_DEMAND


class Greedy(PerJob):
    """Spot whenever available, kept until preempted; on-demand to the end from the safety net on."""

    def choose(self, job: JobState, decision: Decision, free: list[int]) -> int:
        """Stay on on-demand once on it; keep a running spot instance while :func:`safe`; else the safety net."""
        if job.using == ON_DEMAND:
            return ON_DEMAND
        if job.using >= 0:
            return job.using if safe(job, job.using, decision) else ON_DEMAND
        zone = spot_zone(decision, free)
        pick = IDLE if zone is None else zone
        return ON_DEMAND if safety_net(job, pick, decision) else pick


class UniformProgress(PerJob):
    """Uniform Progress (see the module docstring for its four rules)."""

    def __init__(self) -> None:
        self.committed: set[int] = set()

    def choose(self, job: JobState, decision: Decision, free: list[int]) -> int:
        """The paper's rules: exploitation, safety net, hysteresis, taking risks, uniform progress."""
        if job.job in self.committed:
            return ON_DEMAND
        if job.using >= 0:
            return job.using
        zone = spot_zone(decision, free)
        if safety_net(job, IDLE if zone is None else zone, decision):
            self.committed.add(job.job)
            return ON_DEMAND
        if job.using == ON_DEMAND:
            ahead = job.progress_s >= self.expected(job, decision.now + 2 * job.overhead_s)
            return zone if zone is not None and ahead else ON_DEMAND
        if zone is not None:
            return zone
        return ON_DEMAND if job.progress_s < self.expected(job, decision.now) else IDLE

    @staticmethod
    def expected(job: JobState, t: float) -> float:
        """``ep(t) = W t / T`` (s)."""
        return job.work_s * t / job.deadline_s


class Failover(PerJob):
    """SkyPilot's managed-job failover: a preempted zone is blocked for ``block_s``, the next cheapest is tried."""

    def __init__(self, block_s: float = 3600.0) -> None:
        if not (math.isfinite(block_s) and block_s >= 0):
            raise ConfigError(f"failover's block time must be >= 0 s, got {block_s}")
        self.block_s = block_s
        self.last: dict[int, int] = {}
        self.blocked: dict[int, dict[int, float]] = {}

    def choose(self, job: JobState, decision: Decision, free: list[int]) -> int:
        """Block a zone just lost, then act as greedy over the zones not blocked."""
        blocked = self.blocked.setdefault(job.job, {})
        last = self.last.get(job.job, IDLE)
        if last >= 0 and job.using == IDLE:
            blocked[last] = decision.now + self.block_s
        if job.using == ON_DEMAND:
            choice = ON_DEMAND
        elif job.using >= 0:
            choice = job.using if safe(job, job.using, decision) else ON_DEMAND
        else:
            closed = frozenset(z for z, until in blocked.items() if until > decision.now)
            zone = spot_zone(decision, free, closed)
            pick = IDLE if zone is None else zone
            choice = ON_DEMAND if safety_net(job, pick, decision) else pick
        self.last[job.job] = choice
        return choice


class Omniscient(PerJob):
    """The optimum over the known trace (one job; per-second billing), computed at the first tick and replayed."""

    def __init__(self) -> None:
        self.choices: list[int] | None = None
        self.cost = math.inf

    def decide(self, decision: Decision, world: SpotWorld) -> tuple[int, ...]:
        """The plan's choice at this tick (on-demand past its end: an infeasible job is missed anyway)."""
        if self.choices is None:
            if len(world.jobs) != 1:
                raise ConfigError("the omniscient optimum is for one job at a time")
            self.cost, self.choices = omniscient_plan(world.market, world.window, world.jobs[0])
        k = decision.tick
        return tuple(self.choices[k] if k < len(self.choices) else ON_DEMAND for _ in decision.jobs)


def _build() -> Registry[type[PerJob]]:
    reg: Registry[type[PerJob]] = Registry("spot policy")
    for name, cls in (("on-demand", OnDemand), ("greedy", Greedy), ("uniform-progress", UniformProgress),
                      ("omniscient", Omniscient), ("failover", Failover)):
        reg.register(name, cls)
    return reg


#: Every spot policy by name (a fresh instance per run: the policies keep per-job state).
SPOT_POLICIES = _build()
