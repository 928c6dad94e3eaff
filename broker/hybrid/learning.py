"""Q-learning over daily clones of the hybrid site (``SPEC.md`` §5, the Q-learning paper §3).

:class:`QLearner` keeps one value ``Q(V)`` per action ``V`` in ``0..M``. The cap ``V_t`` of a step is
chosen at its beginning: the ``V`` with the highest ``Q`` (ties: the smallest; so ``V = 0`` first).
During the step the site is cloned once per candidate ``V``, every clone runs through the step with
the same arriving jobs, and each clone's balance becomes a reward: its twt and c over the step are
normalized by the clone with ``V = 0`` (twt) and the one with ``V`` unbounded (c),
``balance = twt_imp% - c%``, mapped linearly so that the best clone gets 1 and the worst 0 (all 1
when they tie). Every evaluated action is updated, ``Q(V) += a (r_V + g max Q - Q(V))`` with ``max
Q`` taken before the step's updates. The clone of ``V_t`` continues, and the highest new ``Q`` is
the next step's cap (the paper's §3.2: "the clone of the previous chosen action serves as draft for
the new clones"). The clone of the best ``V`` of the step does *not* continue: that would choose
with hindsight of the step's own jobs.

Clones share the work they have in common (:func:`_shared_clones`): with the cap unbounded the
cloud never holds more than ``peak`` nodes during the step, so every ``V >= peak`` is the unbounded
run; a cap ``V`` below it follows the unbounded run until its first batch of events that used more
than ``V`` nodes and is simulated only from there; and caps that would take the same decisions as a
simulated clone (no blocked transfer that the larger cap would let go) are that clone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from broker.hybrid.metrics import balance
from broker.hybrid.world import HybridWorld
from workloads.errors import ConfigError


@dataclass(slots=True)
class QLearner:
    """Action values over ``V = 0..m`` (one state), the paper's alpha = gamma = 0.1."""

    m: int
    alpha: float = 0.1
    gamma: float = 0.1
    q: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if self.m < 0:
            raise ConfigError(f"Q-learning needs m >= 0 actions above V = 0, got {self.m}")
        if not (0 < self.alpha <= 1 and 0 <= self.gamma < 1):
            raise ConfigError(f"Q-learning needs alpha in (0, 1] and gamma in [0, 1), got {self.alpha}, {self.gamma}")
        self.q = np.zeros(self.m + 1)

    def update(self, rewards: dict[int, float]) -> int:
        """Update every evaluated action; return the greedy ``V`` (ties: the smallest)."""
        best = float(self.q.max())
        for v, r in rewards.items():
            self.q[v] += self.alpha * (r + self.gamma * best - self.q[v])
        return self.greedy()

    def greedy(self) -> int:
        """The ``V`` with the highest value (ties: the smallest)."""
        return int(np.argmax(self.q))


def rewards_of(balances: dict[int, float]) -> dict[int, float]:
    """Balances mapped linearly to [0, 1]: the best 1, the worst 0 (all 1 on a tie)."""
    lo, hi = min(balances.values()), max(balances.values())
    return {v: 1.0 if hi == lo else (b - lo) / (hi - lo) for v, b in balances.items()}


@dataclass(slots=True)
class StepOutcome:
    """One step of the learner: the cap chosen for the next step, the world that continues, clones run."""

    cap: int
    site: HybridWorld
    simulated: int


def learn_step(site: HybridWorld, until: float, learner: QLearner, candidates: Sequence[int], cap: int, *,
               share: bool = True) -> StepOutcome:
    """Run the step under ``cap`` and a clone per candidate ``V``; update ``learner``; next cap = its greedy V.

    ``share=False`` simulates every candidate from the step's start (the naive cost the paper names;
    kept for tests and benchmarks); the shared evaluation gives exactly the same clones.
    """
    batches: list[tuple[float, int]] = []
    unbounded = site.clone()
    unbounded.run(until, math.inf, batches)
    # every V at or above the unbounded peak is the unbounded run: evaluated for free
    wanted = sorted({0, *candidates, cap, *range(unbounded.peak_cloud, learner.m + 1)})
    clones = _shared_clones(site, until, wanted, unbounded, batches) if share else _every_clone(site, until, wanted)
    twt_ref, c_ref = clones[0].wait_s - site.wait_s, unbounded.cloud_cpu_s - site.cloud_cpu_s
    balances = {v: balance(c.wait_s - site.wait_s, c.cloud_cpu_s - site.cloud_cpu_s, twt_ref, c_ref).balance
                for v, c in clones.items()}
    chosen = learner.update(rewards_of(balances))
    simulated = 1 + len({id(c) for c in clones.values()} - {id(unbounded)})
    return StepOutcome(chosen, clones[cap], simulated)


def _every_clone(site: HybridWorld, until: float, wanted: Sequence[int]) -> dict[int, HybridWorld]:
    clones = {v: site.clone() for v in wanted}
    for v, clone in clones.items():
        clone.run(until, v)
    return clones


def _shared_clones(site: HybridWorld, until: float, wanted: Sequence[int], unbounded: HybridWorld,
                   batches: list[tuple[float, int]]) -> dict[int, HybridWorld]:
    """The clones of ``wanted`` caps, each simulated only where it can differ from another.

    The unbounded clone (run first) lists the cloud nodes in use after each batch of events. A cap
    ``V`` follows it exactly until the first batch that used more than ``V`` nodes, so its clone
    starts from the unbounded run's state just before that batch (a walker replays the unbounded run
    up to each such point). Caps at or above the unbounded peak are the unbounded clone. A clone run
    under ``V`` also records the smallest cap that would have let one of its blocked transfers go
    (``need``): every cap in ``[V, need)`` takes the same decisions, so shares the clone.
    """
    clones: dict[int, HybridWorld] = {}
    usage = [u for _, u in batches]
    walker: HybridWorld | None = None
    last: HybridWorld | None = None
    k = 0
    for v in wanted:
        if v >= unbounded.peak_cloud:
            clones[v] = unbounded
            continue
        if last is not None and v < last.need:
            clones[v] = last
            continue
        while usage[k] <= v:
            k += 1
        if k == 0:
            clone = site.clone()
        else:
            if walker is None:
                walker = site.clone()
            walker.run(batches[k - 1][0], math.inf)
            clone = walker.copy()
        clone.run(until, v)
        clones[v] = last = clone
    return clones
