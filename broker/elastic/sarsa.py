"""SARSA with an echo state network for ``Q`` (the elastic RL paper §3.1, §3.3, §4.1).

At each decision the learner scores every candidate action — a slot's job
(:func:`broker.elastic.descriptors.slots`) and, for an elastic pool whose size may change, a pool
size among ``levels`` sizes spread over the allowed range — by the network's ``Q`` from its current
reservoir state, and takes the best with probability ``1 - epsilon`` (ties: the first), a random
one otherwise. The reservoir then moves with the action taken.

Learning is batch SARSA: decision ``n``'s target is ``Q_n + eta (r_n + gamma Q_n+1 - Q_n)``, with
``Q_n+1`` the value of the action actually taken next (on-policy) and ``r_n`` its reward once it is
complete (late: a job's responsiveness is known when it terminates); the readout is re-trained from
scratch on every complete transition every ``retrain_every`` decisions.

Before it decides, the network is pre-trained: the first ``pretrain`` decisions are taken by the
earliest-deadline-first rule (and, for an elastic pool, the threshold autoscaler, with a random size
with probability ``epsilon`` so that sizes are explored), the learner records them and their
rewards, then makes ``sweeps`` learning sweeps over what it has before taking over.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from broker.elastic.descriptors import encode, input_size, levels, slots
from broker.elastic.esn import EchoStateNetwork, Gram
from broker.elastic.rules import RulePolicy
from broker.elastic.world import Action, Decision, ElasticWorld
from workloads.errors import ConfigError


@dataclass(frozen=True, slots=True)
class SarsaConfig:
    """The learner's settings: the paper's epsilon, discount, learning rate and network, and our batch choices."""

    epsilon: float = 0.05
    gamma: float = 0.8
    eta: float = 0.2
    units: int = 100
    density: float = 0.1
    readout_density: float = 0.15
    spectral_radius: float | None = 0.9
    ridge: float = 1e-2
    pretrain: int = 1000
    sweeps: int = 5
    retrain_every: int = 500
    levels: int = 17

    def __post_init__(self) -> None:
        if not (0 <= self.epsilon <= 1 and 0 <= self.gamma < 1 and 0 < self.eta <= 1):
            raise ConfigError(f"SARSA needs epsilon in [0, 1], gamma in [0, 1) and eta in (0, 1], got "
                              f"{self.epsilon}, {self.gamma}, {self.eta}")
        if self.pretrain < 1 or self.sweeps < 1 or self.retrain_every < 1 or self.levels < 1:
            raise ConfigError("SARSA needs pretrain, sweeps, retrain_every and levels >= 1")

    def to_dict(self) -> dict[str, Any]:
        """Plain values."""
        return asdict(self)


class SarsaAgent:
    """The learner of one run (see the module docstring)."""

    name = "sarsa"

    def __init__(self, groups: int, elastic: bool, config: SarsaConfig | None = None, *,
                 seed: int | np.random.SeedSequence | None = 0) -> None:
        self.config = config = config or SarsaConfig()
        root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        net_seed, draw_seed, teacher_seed = root.spawn(3)
        self.elastic = elastic
        self.esn = EchoStateNetwork(input_size(groups, elastic), config.units, density=config.density,
                                    readout_density=config.readout_density, spectral_radius=config.spectral_radius,
                                    ridge=config.ridge, seed=net_seed)
        self.rng = np.random.default_rng(draw_seed)
        self.teacher = RulePolicy("edf", sizing=elastic, explore=config.epsilon, seed=teacher_seed)
        self.memory = Transitions(input_size(groups, elastic) + len(self.esn.read))
        self.decisions = 0
        self.trainings = 0

    def decide(self, decision: Decision, world: ElasticWorld) -> Action:
        """The action for ``decision``: the teacher's while pre-training, then epsilon-greedy on ``Q``."""
        n = self.decisions
        if n < self.config.pretrain:
            action = self.teacher.decide(decision, world)
            cores = decision.size if action.cores is None else action.cores
            u = encode(world, decision, np.array([action.job]), np.array([cores]) if self.elastic else None)[0]
        else:
            jobs, sizes = self.candidates(decision, world)
            u_all = encode(world, decision, jobs, sizes)
            if self.rng.random() < self.config.epsilon:
                i = int(self.rng.integers(len(jobs)))
            else:
                i = int(np.argmax(self.esn.q(u_all)))
            u = u_all[i]
            resize = self.elastic and sizes is not None and int(sizes[i]) != decision.size
            action = Action(int(jobs[i]), int(sizes[i]) if resize and sizes is not None else None)
        self.memory.remember(n, self.esn.features(u, self.esn.step(u))[0])
        self.decisions = n + 1
        if self.decisions == self.config.pretrain:
            self.train(self.config.sweeps)
        elif self.decisions > self.config.pretrain and (self.decisions - self.config.pretrain) % \
                self.config.retrain_every == 0:
            self.train(1)
        return action

    def observe(self, rewards: list[tuple[int, float]]) -> None:
        """Rewards of earlier decisions that became complete."""
        self.memory.observe(rewards)

    def candidates(self, decision: Decision, world: ElasticWorld) -> tuple[np.ndarray, np.ndarray | None]:
        """Every (slot job, pool size) pair offered at ``decision``, as two aligned arrays (sizes ``None``: rigid)."""
        jobs = np.unique(slots(world, decision))
        jobs = jobs[jobs >= 0]
        if not self.elastic:
            return jobs, None
        sizes = np.unique(np.clip(levels(world.pool.min_cores, world.pool.ceiling, self.config.levels),
                                  decision.low, decision.high)) if decision.resizable else np.array([decision.size])
        return np.repeat(jobs, len(sizes)), np.tile(sizes, len(jobs))

    def train(self, sweeps: int) -> int:
        """Re-train the readout ``sweeps`` times on every complete transition; returns how many there were."""
        used = self.memory.train(self.esn, self.decisions, sweeps, gamma=self.config.gamma, eta=self.config.eta,
                                 ridge=self.config.ridge)
        self.trainings += sweeps if used else 0
        return used


class Transitions:
    """A SARSA learner's transitions: each one's readout features and reward, and the readout's Gram matrix.

    Transition ``n`` (the ``n``-th action) is complete once its reward is known and action ``n + 1``
    was taken. Its features never change, so they join the Gram matrix once; the targets are
    recomputed with the current readout at every sweep.
    """

    def __init__(self, width: int) -> None:
        self.phi = np.empty((0, width))
        self.rewards = np.empty(0)
        self.gram = Gram(width)
        self.learnt = np.empty(0, dtype=np.int64)  # the transitions in the Gram matrix, in the order added

    def remember(self, n: int, phi: np.ndarray) -> None:
        """Action ``n`` was taken with readout features ``phi``."""
        if n >= len(self.phi):
            grow = max(1024, len(self.phi))
            self.phi = np.vstack([self.phi, np.empty((grow, self.phi.shape[1]))])
            self.rewards = np.concatenate([self.rewards, np.full(grow, math.nan)])
        self.phi[n] = phi

    def observe(self, rewards: list[tuple[int, float]]) -> None:
        """Rewards of earlier actions, by number."""
        for n, r in rewards:
            self.rewards[n] = r

    def train(self, esn: EchoStateNetwork, taken: int, sweeps: int, *, gamma: float, eta: float,
              ridge: float) -> int:
        """Fit ``esn``'s readout ``sweeps`` times to the SARSA targets; returns how many transitions there were.

        The targets are ``Q_n + eta (r_n + gamma Q_n+1 - Q_n)`` of the complete transitions among the
        first ``taken`` actions.
        """
        n = taken
        phi, r = self.phi[:n], self.rewards[:n]
        complete = np.zeros(n, dtype=bool)
        if n > 1:
            complete[:-1] = ~np.isnan(r[:-1])
        fresh = complete.copy()
        fresh[self.learnt] = False
        with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only contend
            if fresh.any():
                self.gram.add(phi[fresh])
                self.learnt = np.concatenate([self.learnt, np.flatnonzero(fresh)])
            usable = self.learnt
            if not len(usable):
                return 0
            for _ in range(sweeps):
                q = esn.value(phi)
                target = q[usable] + eta * (r[usable] + gamma * q[usable + 1] - q[usable])
                esn.coef, esn.intercept = self.gram.solve(phi[usable], target, ridge)
        return len(usable)
