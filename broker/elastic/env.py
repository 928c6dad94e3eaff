"""``cloudbroker/Elastic-v0``: the elastic world as a Gymnasium environment, on the step function every policy uses.

One step per decision of :class:`~broker.elastic.world.ElasticWorld`, through
:meth:`broker.elastic.episode.Episode.step` — the step the built-in rules and the SARSA learner run
through, so an agent trained here faces exactly their world.

- **Action**: a slot (:func:`broker.elastic.descriptors.slots`: for each kind — oldest, shortest
  estimate —, class and group, one waiting job); for an elastic pool also a pool size, the index of
  one of ``levels`` sizes spread over ``[min_cores, max_cores]`` (clipped to what the decision
  allows; ignored while the pool must keep its size). An empty slot runs the oldest waiting job
  instead, and ``info["invalid_action"]`` says so; ``info["action_mask"]`` marks the full slots.
- **Observation**: the state descriptors as the learner's network sees them (times
  ``log1p(t / 60) / 10``, idle cores over the nominal pool, each group's share of the queue), the
  pool's size over the nominal, whether it may change now, and per slot: full or not, its job's
  estimated run time and how long it has waited (same time scale).
- **Reward** (``reward="paper"``): the sum of the rewards (``lambda W + (1 - lambda) F`` rigid,
  ``lambda W + (1 - lambda) U`` elastic) of the decisions whose reward became complete during the
  step — late, as a job's responsiveness is known when it ends; ``info["rewards"]`` lists them by
  decision number. With ``reward="wait"`` (:mod:`broker.elastic.wait`) the step's own reward, the
  ``W`` the waiting jobs lost over it (and, elastic, the idle cores), complete at once; the slots
  then include the urgent kind (``6 G``), each slot's row its job's urgency too, and the
  observation's head the waiting jobs and their summed urgency over the nominal pool.
- An episode is the whole job list; it terminates when the last job has ended.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from broker.elastic.descriptors import levels, n_slots, queue_cost, scale_time, slots, state, urgency
from broker.elastic.episode import REWARDS, Episode, Reward
from broker.elastic.estimate import Estimate
from broker.elastic.world import Action, Decision, ElasticWorld, PoolConfig
from workloads.cache import load_trace
from workloads.cores import CoreJobs, Parallel, cores_view
from workloads.errors import ConfigError

#: The observation's bound on a scaled time: ``log1p(t / 60) / 10`` stays below it for any t under 10^45 s.
TIME_HIGH = 10.0
#: The observation's bound on the waiting jobs (and their summed urgency) over the nominal pool (clipped to it).
QUEUE_HIGH = 1e6


class ElasticEnv(gym.Env[np.ndarray, Any]):
    """The elastic world as an environment (see the module docstring).

    Give a ``trace`` (path or registry name) or ``jobs``; ``limit_jobs`` keeps the first ones.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (Gymnasium's own attribute)

    def __init__(self, trace: str | None = None, *, jobs: CoreJobs | None = None, mode: str = "rigid",
                 cores: int = 81, lam: float = 0.5, estimate: Estimate = "oracle", min_cores: int = 30,
                 max_cores: int | None = None, hold_s: float = 900.0, levels: int = 17,
                 limit_jobs: int | None = None, parallel: Parallel = "expand", reward: Reward = "paper") -> None:
        if mode not in ("rigid", "elastic"):
            raise ConfigError(f"mode must be 'rigid' or 'elastic', got {mode!r}")
        if (trace is None) == (jobs is None):
            raise ConfigError("give a trace or jobs, not both")
        if reward not in REWARDS:
            raise ConfigError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        if jobs is None:
            swf = load_trace(str(trace))
            jobs, _ = cores_view(swf.frame, parallel=parallel, origin=float(swf.header.unix_start_time or 0))
        if limit_jobs is not None:
            jobs = jobs.head(limit_jobs)
        if not len(jobs):
            raise ConfigError("the environment needs at least one job")
        self.jobs, self.lam, self.reward, self.wait = jobs, lam, reward, reward == "wait"
        self.pool = PoolConfig(cores, elastic=mode == "elastic", min_cores=min_cores, max_cores=max_cores,
                               hold_s=hold_s, estimate=estimate)
        self.sizes = _levels(self.pool, levels)
        groups = jobs.n_groups
        self.n_slots = n_slots(groups, self.wait)
        self.columns = 4 if self.wait else 3  # per slot: full, estimate, wait (and urgency)
        self.action_space = (spaces.MultiDiscrete([self.n_slots, len(self.sizes)]) if self.pool.elastic
                             else spaces.Discrete(self.n_slots))
        ceiling = self.pool.ceiling / cores
        queue = [QUEUE_HIGH, QUEUE_HIGH] if self.wait else []
        row = [1.0, TIME_HIGH, TIME_HIGH, 1.0][:self.columns]
        high = np.concatenate([[TIME_HIGH] * 3, [ceiling], np.ones(groups), [ceiling, 1.0], queue,
                               np.tile(row, self.n_slots)])
        self.high = high
        self.observation_space = spaces.Box(np.zeros_like(high), high, dtype=np.float64)
        self.episode: Episode | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """A new episode from the first job: the observation of the first decision."""
        super().reset(seed=seed)
        self.episode = Episode(ElasticWorld(self.jobs, self.pool), self.lam, self.reward)
        decision = self.episode.start()
        return self._observe(decision), self._info(decision, [], False, -1)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Dispatch the slot's job (and size the pool); run to the next decision."""
        episode = self.episode
        if episode is None or episode.decision is None:
            raise RuntimeError("call reset() before step(), and again once an episode has terminated")
        decision, world = episode.decision, episode.world
        slot, level = (int(action[0]), int(action[1])) if self.pool.elastic else (int(action), -1)
        if not (0 <= slot < self.n_slots and (not self.pool.elastic or 0 <= level < len(self.sizes))):
            raise ConfigError(f"action {action!r} is outside the action space {self.action_space}")
        job = int(slots(world, decision, self.wait)[slot])
        invalid = job < 0
        if invalid:
            job = int(decision.queued[0])
        cores = None
        if self.pool.elastic and decision.resizable:
            cores = int(np.clip(self.sizes[level], decision.low, decision.high))
        nxt, rewards = episode.step(Action(job, cores))
        reward = float(sum(r for _, r in rewards))
        return self._observe(nxt), reward, nxt is None, False, self._info(nxt, rewards, invalid, job)

    def _observe(self, decision: Decision | None) -> np.ndarray:
        out = np.zeros(len(self.high), dtype=np.float64)
        if decision is None or self.episode is None:
            return out
        world = self.episode.world
        raw = state(world, decision)
        nominal = float(self.pool.cores)
        head = np.concatenate([scale_time(raw[:3]), [raw[3] / nominal], raw[4:],
                               [decision.size / nominal, float(decision.resizable)]])
        if self.wait:
            head = np.concatenate([head, np.minimum(queue_cost(world, decision), QUEUE_HIGH)])
        jobs = slots(world, decision, self.wait)
        full = jobs >= 0
        table = np.zeros((self.n_slots, self.columns))
        estimate, wait = world.est.of(jobs[full]), decision.now - world.jobs.submit[jobs[full]]
        table[full, 0] = 1.0
        table[full, 1] = scale_time(estimate)
        table[full, 2] = scale_time(wait)
        if self.wait:
            table[full, 3] = urgency(estimate, wait)
        out[:] = np.concatenate([head, table.ravel()])
        return out

    def _info(self, decision: Decision | None, rewards: list[tuple[int, float]], invalid: bool,
              job: int) -> dict[str, Any]:
        mask = np.zeros(self.n_slots, dtype=np.int8)
        if decision is not None and self.episode is not None:
            mask[slots(self.episode.world, decision, self.wait) >= 0] = 1
        return {"action_mask": mask, "rewards": rewards, "invalid_action": invalid, "job": job,
                "now": None if decision is None else decision.now}


def _levels(pool: PoolConfig, count: int) -> np.ndarray:
    if count < 1:
        raise ConfigError(f"levels must be >= 1, got {count}")
    return levels(pool.min_cores, pool.ceiling, count) if pool.elastic else np.array([pool.cores])
