"""Fitted Q iteration with extremely randomised trees, trained through ``cloudbroker/Elastic-v0`` (issue 34).

A standard batch reinforcement learner (Ernst, Geurts and Wehenkel, "Tree-based batch mode
reinforcement learning", JMLR 2005) plugged into the Gymnasium environment
(:class:`broker.elastic.env.ElasticEnv`) the way any agent would be: it sees only observations,
action masks and rewards. It shows how an outside agent is trained and judged against SARSA and
the rules on the same world.

- **Data**: ``episodes`` episodes of the environment; in each, a full slot is drawn at random with
  probability ``epsilon`` (every one in the first episode), else the current greedy slot. Each
  step gives a transition ``(observation, slot, reward, next observation, next mask, done)``.
- **Q**: an :class:`sklearn.ensemble.ExtraTreesRegressor` on rows ``[the observation's head, the
  slot's row, the slot's index one-hot (its kind, class and group)]``: a slot is described by what
  it holds, so the trees share what they learn across slots.
- **Iterations**: ``Q_0 = 0``; ``Q_k+1`` fits ``r + gamma max_a' Q_k(s', a')`` (the max over the
  next state's full slots; 0 after the last step), ``iterations`` times, after each episode.

Rigid pools only: the action is a slot (``Discrete``). Meant for the wait reward, whose reward is
the step's own; with the paper's late reward the targets still follow the environment's reward as
paid. Cost: per iteration one fit on ``n`` transitions and one prediction of ``n x slots`` rows.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from sklearn.ensemble import ExtraTreesRegressor

from broker.elastic.env import ElasticEnv
from workloads.errors import ConfigError


@dataclass(frozen=True, slots=True)
class FittedQConfig:
    """The learner's settings (see the module docstring)."""

    episodes: int = 2
    iterations: int = 8
    gamma: float = 0.8
    epsilon: float = 0.1
    trees: int = 30
    min_samples_leaf: int = 20

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.iterations < 1 or self.trees < 1 or self.min_samples_leaf < 1:
            raise ConfigError("fitted Q needs episodes, iterations, trees and min_samples_leaf >= 1")
        if not (0 <= self.gamma < 1 and 0 <= self.epsilon <= 1 and math.isfinite(self.gamma)):
            raise ConfigError(f"fitted Q needs gamma in [0, 1) and epsilon in [0, 1], got {self.gamma}, "
                              f"{self.epsilon}")

    def to_dict(self) -> dict[str, Any]:
        """Plain values."""
        return asdict(self)


class SlotRows:
    """Turns an observation of an environment into one row per slot (see the module docstring)."""

    def __init__(self, env: ElasticEnv) -> None:
        self.slots, self.columns = env.n_slots, env.columns
        self.head = len(env.high) - self.slots * self.columns
        self.identity = np.eye(self.slots)

    def __call__(self, obs: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """The rows of ``slots`` (indices) in observation ``obs``."""
        table = obs[self.head:].reshape(self.slots, self.columns)
        head = np.broadcast_to(obs[:self.head], (len(slots), self.head))
        return np.hstack([head, table[slots], self.identity[slots]])


class FittedQPolicy:
    """A slot for each observation: the full slot of the highest ``Q`` (the first among ties)."""

    def __init__(self, rows: SlotRows, model: ExtraTreesRegressor | None) -> None:
        self.rows, self.model = rows, model

    def q(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``Q`` of each full slot of ``mask`` (0 before any fit)."""
        full = np.flatnonzero(mask)
        if self.model is None:
            return np.zeros(len(full))
        return np.asarray(self.model.predict(self.rows(obs, full)))

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The greedy slot."""
        full = np.flatnonzero(mask)
        return int(full[int(np.argmax(self.q(obs, mask)))])


@dataclass
class Transitions:
    """What the episodes showed, as aligned arrays."""

    rows: list[np.ndarray]
    rewards: list[float]
    next_obs: list[np.ndarray]
    next_mask: list[np.ndarray]
    done: list[bool]


def play(env: ElasticEnv, policy: FittedQPolicy, epsilon: float, rng: np.random.Generator,
         data: Transitions | None = None) -> Transitions:
    """One episode: a random full slot with probability ``epsilon``, else ``policy``'s; the transitions added."""
    data = data or Transitions([], [], [], [], [])
    obs, info = env.reset()
    done = False
    while not done:
        mask = info["action_mask"]
        full = np.flatnonzero(mask)
        slot = int(rng.choice(full)) if rng.random() < epsilon else policy.act(obs, mask)
        nxt, reward, done, _, info = env.step(slot)
        data.rows.append(policy.rows(obs, np.array([slot]))[0])
        data.rewards.append(reward)
        data.next_obs.append(nxt)
        data.next_mask.append(info["action_mask"])
        data.done.append(done)
        obs = nxt
    return data


def next_rows(data: Transitions, rows: SlotRows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the full slots of every next state that is not terminal.

    Also the transitions they belong to, and where each transition's rows start (for
    ``np.maximum.reduceat``).
    """
    live = [k for k, d in enumerate(data.done) if not d and data.next_mask[k].any()]
    parts = [rows(data.next_obs[k], np.flatnonzero(data.next_mask[k])) for k in live]
    sizes = np.array([len(p) for p in parts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else np.empty(0, dtype=np.int64)
    return (np.vstack(parts) if parts else np.empty((0, 0))), np.array(live, dtype=np.int64), starts


def fit(data: Transitions, policy: FittedQPolicy, config: FittedQConfig, seed: int) -> FittedQPolicy:
    """``config.iterations`` rounds of fitted Q iteration from ``policy``'s ``Q``; the last policy."""
    x, r = np.array(data.rows), np.array(data.rewards)
    following, live, starts = next_rows(data, policy.rows)
    for _ in range(config.iterations):
        best = np.zeros(len(r))
        if policy.model is not None and len(live):
            best[live] = np.maximum.reduceat(policy.model.predict(following), starts)
        model = ExtraTreesRegressor(n_estimators=config.trees, min_samples_leaf=config.min_samples_leaf,
                                    random_state=seed, n_jobs=1)
        model.fit(x, r + config.gamma * best)
        policy = FittedQPolicy(policy.rows, model)
    return policy


def train_fitted_q(env: ElasticEnv, config: FittedQConfig | None = None, *, seed: int = 0) -> FittedQPolicy:
    """Train on ``config.episodes`` episodes of ``env`` (see the module docstring); the greedy policy."""
    config = config or FittedQConfig()
    if not isinstance(env.action_space, spaces.Discrete):
        raise ConfigError("fitted Q chooses a slot: use a rigid pool's environment (mode='rigid')")
    rng = np.random.default_rng(seed)
    policy = FittedQPolicy(SlotRows(env), None)
    data: Transitions | None = None
    for episode in range(config.episodes):
        data = play(env, policy, 1.0 if episode == 0 else config.epsilon, rng, data)
        policy = fit(data, policy, config, seed)
    return policy


def run_policy(env: ElasticEnv, policy: FittedQPolicy) -> ElasticEnv:
    """One greedy episode of ``policy`` on ``env``; the environment, its finished world in ``env.episode``."""
    obs, info = env.reset()
    done = False
    while not done:
        obs, _, done, _, info = env.step(policy.act(obs, info["action_mask"]))
    return env
