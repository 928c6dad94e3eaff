"""SARSA on the wait reward (``--reward wait``, issue 34): a job learner, and a size learner for what a size holds.

The paper's learner (:mod:`broker.elastic.sarsa`) with three changes, each for a cause found in
issue 34 (the paper's reward pays a dispatch its own job's ``W``, so passing a short job over
looks free; and a pool size is one more input of a joint action whose reward barely depends on it):

- **Reward**: :class:`broker.elastic.wait.WaitBook` charges each decision the ``W`` its step costs
  the waiting jobs (and, elastic, the idle cores held), so passing a job over costs at once.
- **Jobs**: the candidates are the slots with the urgent kind
  (:func:`broker.elastic.descriptors.slots` with ``wait=True``) and each is described by its wait so
  far, ``W`` now and urgency; the state gains what the waiting costs, the number of waiting jobs and
  the sum of their urgencies (:func:`broker.elastic.descriptors.encode` with ``wait``): without it
  the readout credits the dispatched job for losses that come from the queue (an urgent job is
  dispatched just when a fresh burst waits) and learns no preference. The job network is the
  paper's (an echo state network read out by ridge regression, batch SARSA, EDF pre-training).
- **Sizes** (elastic pools): the size is its own action with its own network and transitions. A
  *size decision* is taken at a decision at which the pool may change and either the last size
  decision is ``hold_s`` old or the demand (running + waiting jobs) exceeds the pool. Its reward
  is the sum of the step rewards until the next size decision — what the size held cost the
  waiting jobs and the idle cores — and its SARSA target discounts the next size decision's value
  by ``size_gamma``. The candidate sizes follow the demand ``d``: ``ceil(d (1 + h))`` for each
  ``headroom`` ``h``, and the current size (keep), clipped to what the decision allows; so a pool
  without a ceiling is sized as well as one with. Until ``size_pretrain`` size decisions have been
  taken the threshold autoscaler sizes the pool, with a random candidate with probability
  ``size_explore``; then the network decides (epsilon-greedy, the job learner's ``epsilon``),
  re-trained every ``size_retrain_every`` size decisions.

The size network's inputs: the state with what the waiting costs
(:func:`broker.elastic.descriptors.state_inputs` with ``wait``), the demand
and the candidate size over the nominal pool, the size's headroom over the demand ``(size - d) /
max(d, 1)`` (clipped to ``[-1, 4]``), the jobs submitted over the last ``hold_s`` over the nominal
pool, and whether the candidate keeps the size.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from broker.elastic.descriptors import encode, input_size, slots, state_inputs
from broker.elastic.esn import EchoStateNetwork
from broker.elastic.rules import RulePolicy, threshold_size
from broker.elastic.sarsa import SarsaConfig, Transitions
from broker.elastic.world import Action, Decision, ElasticWorld
from workloads.errors import ConfigError

#: Inputs of the size network besides the state.
SIZE_INPUTS = 5


@dataclass(frozen=True, slots=True)
class SizeConfig:
    """The size learner's settings (see the module docstring)."""

    headroom: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 1.0)
    size_gamma: float = 0.5
    size_pretrain: int = 100
    size_explore: float = 0.2
    size_retrain_every: int = 50
    size_sweeps: int = 5

    def __post_init__(self) -> None:
        if not self.headroom or not all(math.isfinite(h) and h >= 0 for h in self.headroom):
            raise ConfigError(f"headroom needs at least one finite value >= 0, got {self.headroom}")
        if not (0 <= self.size_gamma < 1 and 0 <= self.size_explore <= 1):
            raise ConfigError(f"need size_gamma in [0, 1) and size_explore in [0, 1], got {self.size_gamma}, "
                              f"{self.size_explore}")
        if self.size_pretrain < 1 or self.size_retrain_every < 1 or self.size_sweeps < 1:
            raise ConfigError("size_pretrain, size_retrain_every and size_sweeps must be >= 1")

    def to_dict(self) -> dict[str, Any]:
        """Plain values."""
        return asdict(self)


class WaitSarsaAgent:
    """The learner of one run on the wait reward (see the module docstring)."""

    name = "sarsa"

    def __init__(self, groups: int, elastic: bool, config: SarsaConfig | None = None,
                 sizing: SizeConfig | None = None, *, hold_s: float = 900.0,
                 seed: int | np.random.SeedSequence | None = 0) -> None:
        self.config = config = config or SarsaConfig()
        self.sizing = sizing or SizeConfig()
        if not (math.isfinite(hold_s) and hold_s >= 0):
            raise ConfigError(f"the hold time must be a finite number >= 0 s, got {hold_s}")
        root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        net_seed, draw_seed, teacher_seed, size_seed = root.spawn(4)
        self.elastic, self.hold_s = elastic, hold_s
        width = input_size(groups, False, wait=True)
        self.esn = self._network(width, net_seed)
        self.memory = Transitions(width + len(self.esn.read))
        self.rng = np.random.default_rng(draw_seed)
        self.teacher = RulePolicy("edf", seed=teacher_seed)
        self.decisions = self.trainings = 0
        size_width = 4 + groups + 2 + SIZE_INPUTS
        self.size_esn = self._network(size_width, size_seed)
        self.size_memory = Transitions(size_width + len(self.size_esn.read))
        self.size_decisions = 0
        self.first_size_step = -1  # the decision of the first size decision (its step's reward is the first it gets)
        self._size_next = -math.inf
        self._arrivals: deque[float] = deque()
        self._seen = 0  # jobs submitted so far, as decisions have seen them

    def _network(self, width: int, seed: np.random.SeedSequence) -> EchoStateNetwork:
        c = self.config
        return EchoStateNetwork(width, c.units, density=c.density, readout_density=c.readout_density,
                                spectral_radius=c.spectral_radius, ridge=c.ridge, seed=seed)

    # -- the hook ------------------------------------------------------------------------------------------
    def decide(self, decision: Decision, world: ElasticWorld) -> Action:
        """The job (teacher's while pre-training, then epsilon-greedy on ``Q``) and, at a size decision, the size."""
        job = self._job(decision, world)
        cores = self._size(decision, world) if self.elastic else None
        return Action(job, cores if cores is not None and cores != decision.size else None)

    def observe(self, rewards: list[tuple[int, float]]) -> None:
        """Each step's reward: the job transition's, and added to the open size decision's."""
        self.memory.observe(rewards)
        k = self.size_decisions - 1
        for _, r in rewards:
            if k >= 0:
                self.size_memory.rewards[k] = (0.0 if math.isnan(self.size_memory.rewards[k])
                                               else self.size_memory.rewards[k]) + r

    # -- jobs ----------------------------------------------------------------------------------------------
    def candidates(self, decision: Decision, world: ElasticWorld) -> np.ndarray:
        """The distinct slot jobs of ``decision`` (with the urgent kind)."""
        jobs = np.unique(slots(world, decision, wait=True))
        return jobs[jobs >= 0]

    def _job(self, decision: Decision, world: ElasticWorld) -> int:
        n, c = self.decisions, self.config
        if n < c.pretrain:
            job = self.teacher.decide(decision, world).job
            u = encode(world, decision, np.array([job]), wait=True)[0]
        else:
            jobs = self.candidates(decision, world)
            u_all = encode(world, decision, jobs, wait=True)
            i = int(self.rng.integers(len(jobs))) if self.rng.random() < c.epsilon else \
                int(np.argmax(self.esn.q(u_all)))
            job, u = int(jobs[i]), u_all[i]
        self.memory.remember(n, self.esn.features(u, self.esn.step(u))[0])
        self.decisions = n + 1
        if self.decisions == c.pretrain:
            self._train(c.sweeps)
        elif self.decisions > c.pretrain and (self.decisions - c.pretrain) % c.retrain_every == 0:
            self._train(1)
        return job

    def _train(self, sweeps: int) -> None:
        c = self.config
        if self.memory.train(self.esn, self.decisions, sweeps, gamma=c.gamma, eta=c.eta, ridge=c.ridge):
            self.trainings += sweeps

    # -- sizes ---------------------------------------------------------------------------------------------
    def size_candidates(self, decision: Decision) -> np.ndarray:
        """The candidate sizes of a size decision: the demand with each headroom, and the current size."""
        demand = decision.running + len(decision.queued)
        grown = [math.ceil(demand * (1.0 + h)) for h in self.sizing.headroom]
        return np.unique(np.clip([*grown, decision.size], decision.low, decision.high)).astype(np.int64)

    def size_inputs(self, decision: Decision, world: ElasticWorld, sizes: np.ndarray) -> np.ndarray:
        """The size network's inputs of each candidate size (module docstring)."""
        nominal = float(world.pool.cores)
        demand = decision.running + len(decision.queued)
        head = np.concatenate([state_inputs(world, decision, wait=True), [demand / nominal,
                                                                self._recent(decision, world) / nominal]])
        sizes = np.asarray(sizes, dtype=np.float64)
        own = np.column_stack([sizes / nominal, np.clip((sizes - demand) / max(demand, 1), -1.0, 4.0),
                               (sizes == decision.size).astype(np.float64)])
        return np.hstack([np.broadcast_to(head, (len(sizes), len(head))), own])

    def _recent(self, decision: Decision, world: ElasticWorld) -> int:
        """Jobs submitted over the last ``hold_s`` (s) before the decision."""
        submit = world.jobs.submit
        while self._seen < world.submitted:
            self._arrivals.append(float(submit[self._seen]))
            self._seen += 1
        while self._arrivals and self._arrivals[0] < decision.now - self.hold_s:
            self._arrivals.popleft()
        return len(self._arrivals)

    def _size(self, decision: Decision, world: ElasticWorld) -> int | None:
        demand = decision.running + len(decision.queued)
        if not decision.resizable or (decision.now < self._size_next and demand <= decision.size):
            self._recent(decision, world)
            return None
        sizes = self.size_candidates(decision)
        u_all = self.size_inputs(decision, world, sizes)
        k, s = self.size_decisions, self.sizing
        if k < s.size_pretrain:  # the autoscaler's size (the nearest candidate), or a random one
            target = threshold_size(decision, self.hold_s)
            i = int(self.rng.integers(len(sizes))) if self.rng.random() < s.size_explore else \
                int(np.argmin(np.abs(sizes - (decision.size if target is None else target))))
        elif self.rng.random() < self.config.epsilon:
            i = int(self.rng.integers(len(sizes)))
        else:
            i = int(np.argmax(self.size_esn.q(u_all)))
        u = u_all[i]
        if k == 0:
            self.first_size_step = self.decisions - 1
        self.size_memory.remember(k, self.size_esn.features(u, self.size_esn.step(u))[0])
        self.size_memory.rewards[k] = 0.0
        self.size_decisions = k + 1
        self._size_next = decision.now + self.hold_s
        if self.size_decisions == s.size_pretrain:
            self._train_sizes(s.size_sweeps)
        elif self.size_decisions > s.size_pretrain and (self.size_decisions - s.size_pretrain) % \
                s.size_retrain_every == 0:
            self._train_sizes(1)
        return int(sizes[i])

    def _train_sizes(self, sweeps: int) -> None:
        self.size_memory.train(self.size_esn, self.size_decisions, sweeps, gamma=self.sizing.size_gamma,
                               eta=self.config.eta, ridge=self.config.ridge)
