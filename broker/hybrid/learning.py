"""Q-learning over daily clones of the hybrid site (``SPEC.md`` §5, the Q-learning paper §3): the step function.

:func:`leasing_step` is the one step every learning policy and the Gymnasium environment
(``cloudbroker/Leasing-v0``) go through: run the site through one step under a cap ``V``, simulate a
clone of the step per *evaluated* ``V`` (every clone runs the same arriving jobs), and give each
evaluated ``V`` its *balance* for the step, ``twt_imp% - c%`` against the step's two references.

**The references** (:data:`REFERENCES`), where the paper says "two additional simulations (V = 0
and V -> inf) that are simulated during each evaluation step":

- ``clones``: two more clones of the step's starting state, run with ``V = 0`` and ``V``
  unbounded: the step's own wait with no cloud, and its cloud use with no limit.
- ``runs``: two runs over the whole trace, with ``V = 0`` and ``V`` unbounded throughout, stepped
  alongside the learner: a step's references are those runs' wait and cloud use *during that
  step*, and carry the backlog that ``V = 0`` builds up over months.

**The rewards** (:data:`REWARDS`): ``minmax`` (the paper: the step's balances mapped linearly so that
the best evaluated clone gets 1 and the worst 0, all 1 on a tie) or ``balance`` (the balance itself
over 100, on the same scale every step).

:class:`QLearner` keeps one value ``Q(V)`` per action ``V`` in ``0..M``. The cap ``V_t`` of a step is
chosen at its beginning (the highest ``Q``, ties: the smallest, so ``V = 0`` first); every
evaluated action is updated, ``Q(V) += a (r_V + g max Q - Q(V))`` with ``max Q`` taken before the
step's updates. The clone of ``V_t`` continues (the paper's §3.2: "the clone of the previous chosen
action serves as draft for the new clones"); ``continue_best`` continues the clone of the step's
best ``V`` instead, which chooses with hindsight of the step's own jobs (a reading of the paper's
summary that no site could run: kept to measure it, never a default).

Clones share the work they have in common (:func:`_shared_clones`): with the cap unbounded the
cloud never holds more than ``peak`` nodes during the step, so every ``V >= peak`` is the unbounded
run; a cap ``V`` below it follows the unbounded run until its first batch of events that used more
than ``V`` nodes and is simulated only from there; and caps that would take the same decisions as a
simulated clone (no blocked transfer that the larger cap would let go) are that clone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

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


def balance_rewards(balances: dict[int, float]) -> dict[int, float]:
    """The balances themselves over 100: the same scale every step."""
    return {v: b / 100.0 for v, b in balances.items()}


#: How a step's balances become rewards, by name.
REWARDS: dict[str, Callable[[dict[int, float]], dict[int, float]]] = {"minmax": rewards_of, "balance": balance_rewards}


class References(Protocol):
    """A step's two references: the wait with no cloud and the cloud use with no cap (module docstring)."""

    name: str
    #: Whether the step must simulate a clone with ``V = 0`` for them.
    clone_zero: bool
    #: Site runs of their own that each step advances (counted in the step's ``simulated``).
    runs_per_step: int

    def of_step(self, site: HybridWorld, until: float, zero: HybridWorld | None,
                unbounded: HybridWorld) -> tuple[float, float]:
        """``(twt_ref, c_ref)`` of the step from ``site`` (its state at the step's start) to ``until``."""
        ...


class CloneReferences:
    """The references are clones of the step's start run with ``V = 0`` and with ``V`` unbounded."""

    name = "clones"
    clone_zero = True
    runs_per_step = 0

    def of_step(self, site: HybridWorld, until: float, zero: HybridWorld | None,
                unbounded: HybridWorld) -> tuple[float, float]:
        """The ``V = 0`` clone's wait and the unbounded clone's cloud use during the step."""
        if zero is None:
            raise RuntimeError("clone references need the V = 0 clone of the step")
        return zero.wait_s - site.wait_s, unbounded.cloud_cpu_s - site.cloud_cpu_s


class RunReferences:
    """The references are two whole-trace runs, ``V = 0`` and ``V`` unbounded, stepped alongside the learner."""

    name = "runs"
    clone_zero = False
    runs_per_step = 2

    def __init__(self) -> None:
        self.zero: HybridWorld | None = None
        self.unbounded: HybridWorld | None = None

    def of_step(self, site: HybridWorld, until: float, zero: HybridWorld | None,
                unbounded: HybridWorld) -> tuple[float, float]:
        """Those runs' wait and cloud use from the step's start to ``until`` (built at the first step)."""
        if self.zero is None or self.unbounded is None:
            if site.started or site.next_job:
                raise ConfigError("run references start with the run: give a fresh RunReferences to a new run")
            cluster = site.cluster
            self.zero = HybridWorld(site.jobs, cluster.m, cluster.discipline)
            self.unbounded = HybridWorld(site.jobs, cluster.m, cluster.discipline)
        wait, cpu = self.zero.wait_s, self.unbounded.cloud_cpu_s
        self.zero.run(until, 0.0)
        self.unbounded.run(until, math.inf)
        return self.zero.wait_s - wait, self.unbounded.cloud_cpu_s - cpu


#: The readings of the references, by name: each call gives a fresh object for one run.
REFERENCES: dict[str, Callable[[], References]] = {"clones": CloneReferences, "runs": RunReferences}


def references_of(name: str) -> References:
    """Fresh references of the reading ``name``."""
    if name not in REFERENCES:
        raise ConfigError(f"references must be one of {', '.join(REFERENCES)}, got {name!r}")
    return REFERENCES[name]()


@dataclass(frozen=True, slots=True)
class StepReport:
    """One step: the site that continues and its cap, the balance of every simulated ``V``, the references.

    ``balances`` holds every ``V`` the step simulated (the evaluated ones, the cap, and with clone
    references ``V = 0``); ``simulated`` counts the site runs the step needed (the references' own
    runs included).
    """

    site: HybridWorld
    cap: int
    balances: dict[int, float]
    twt_ref_s: float
    c_ref_s: float
    simulated: int


def leasing_step(site: HybridWorld, until: float, cap: int, references: References, *, evaluate: Iterable[int] = (),
                 free: bool = False, share: bool = True, continue_best: bool = False) -> StepReport:
    """Run the step to ``until`` under ``cap`` and a clone per evaluated ``V``; their balances (module docstring).

    ``free`` also evaluates every ``V`` at or above the unbounded clone's peak (they cost nothing:
    each is the unbounded run). ``share=False`` simulates every ``V`` from the step's start (the
    naive cost the paper names; kept for tests and benchmarks); the shared evaluation gives exactly
    the same clones.
    """
    batches: list[tuple[float, int]] = []
    unbounded = site.clone()
    unbounded.run(until, math.inf, batches)
    wanted = {cap, *evaluate}
    if references.clone_zero:
        wanted.add(0)
    if free:
        wanted.update(range(unbounded.peak_cloud, site.cluster.m + 1))
    order = sorted(wanted)
    clones = _shared_clones(site, until, order, unbounded, batches) if share else _every_clone(site, until, order)
    twt_ref, c_ref = references.of_step(site, until, clones.get(0), unbounded)
    balances = {v: balance(c.wait_s - site.wait_s, c.cloud_cpu_s - site.cloud_cpu_s, twt_ref, c_ref).balance
                for v, c in clones.items()}
    chosen = max(balances, key=lambda v: (balances[v], -v)) if continue_best else cap
    simulated = 1 + len({id(c) for c in clones.values()} - {id(unbounded)}) + references.runs_per_step
    return StepReport(clones[chosen], chosen, balances, twt_ref, c_ref, simulated)


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
        start = k  # a run to a batch's time also takes the later batches of that instant: start before them all
        while start > 0 and batches[start - 1][0] == batches[k][0]:
            start -= 1
        if start == 0:
            clone = site.clone()
        else:
            if walker is None:
                walker = site.clone()
            walker.run(batches[start - 1][0], math.inf)
            clone = walker.copy()
        clone.run(until, v)
        clones[v] = last = clone
    return clones
