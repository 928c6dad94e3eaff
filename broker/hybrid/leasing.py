"""Leasing policies: how many cloud nodes ``V`` a hybrid site may use, step by step (``SPEC.md`` §5).

A policy is run over the whole trace in steps of ``step`` seconds (a day by default). Constant ``V``
is one cap for the whole run; the random policy draws ``V`` uniformly from ``0..M`` each step.
Q-learning (the paper's §3) keeps one value ``Q(V)`` per action ``V`` in ``0..M``. The cap ``V_t``
of a step is chosen at its beginning: the ``V`` with the highest ``Q`` (ties: the smallest; so ``V =
0`` first). During the step the site is cloned once per candidate ``V``, every clone runs through
the step with the same arriving jobs, and each clone's balance becomes a reward: its twt and c over
the step are normalized by the clone with ``V = 0`` (twt) and the one with ``V`` unbounded (c),
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
simulated clone (no blocked transfer that the larger cap would let go) are that clone. The paper's
own remedy for the cost of evaluating every ``V``, epsilon-greedy evaluation, runs the greedy
``V``, ``V = 0``, every ``V`` at or above the unbounded peak (free) and ``k`` others drawn at
random each step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from broker.hybrid.site import HybridResult, HybridSite, balance, record
from broker.sweep import Cell, cells
from heuristics.backfill import Discipline
from workloads.cache import load_trace
from workloads.rigid import RigidJobs, rigid_view

DAY = 86400.0


@dataclass(slots=True)
class QLearner:
    """Action values over ``V = 0..m`` (one state), the paper's alpha = gamma = 0.1."""

    m: int
    alpha: float = 0.1
    gamma: float = 0.1
    q: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.q = np.zeros(self.m + 1)

    def update(self, rewards: dict[int, float]) -> int:
        """Update every evaluated action; return the greedy ``V`` (ties: the smallest)."""
        best = float(self.q.max())
        for v, r in rewards.items():
            self.q[v] += self.alpha * (r + self.gamma * best - self.q[v])
        return int(np.argmax(self.q))


def rewards_of(balances: dict[int, float]) -> dict[int, float]:
    """Balances mapped linearly to [0, 1]: the best 1, the worst 0 (all 1 on a tie)."""
    lo, hi = min(balances.values()), max(balances.values())
    return {v: 1.0 if hi == lo else (b - lo) / (hi - lo) for v, b in balances.items()}


@dataclass(slots=True)
class StepOutcome:
    """One step of the learner: the cap chosen for the next step, the state that continues, clones run."""

    cap: int
    site: HybridSite
    simulated: int


def learn_step(site: HybridSite, until: float, learner: QLearner, candidates: Sequence[int], cap: int, *,
               share: bool = True) -> StepOutcome:
    """Run the step under ``cap`` and a clone per candidate ``V``; update ``learner``; next cap = its greedy V.

    ``share=False`` simulates every candidate from the step's start (the naive cost the paper names;
    kept for tests and benchmarks); the shared evaluation gives exactly the same clones.
    """
    batches: list[tuple[float, int]] = []
    unbounded = _clone(site)
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


def _every_clone(site: HybridSite, until: float, wanted: Sequence[int]) -> dict[int, HybridSite]:
    clones = {v: _clone(site) for v in wanted}
    for v, clone in clones.items():
        clone.run(until, v)
    return clones


def _shared_clones(site: HybridSite, until: float, wanted: Sequence[int], unbounded: HybridSite,
                   batches: list[tuple[float, int]]) -> dict[int, HybridSite]:
    """The clones of ``wanted`` caps, each simulated only where it can differ from another.

    The unbounded clone (run first) lists the cloud nodes in use after each batch of events. A cap
    ``V`` follows it exactly until the first batch that used more than ``V`` nodes, so its clone
    starts from the unbounded run's state just before that batch (a walker replays the unbounded run
    up to each such point). Caps at or above the unbounded peak are the unbounded clone. A clone run
    under ``V`` also records the smallest cap that would have let one of its blocked transfers go
    (``need``): every cap in ``[V, need)`` takes the same decisions, so shares the clone.
    """
    clones: dict[int, HybridSite] = {}
    usage = [u for _, u in batches]
    walker: HybridSite | None = None
    last: HybridSite | None = None
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
            clone = _clone(site)
        else:
            if walker is None:
                walker = _clone(site)
            walker.run(batches[k - 1][0], math.inf)
            clone = walker.copy()
        clone.run(until, v)
        clones[v] = last = clone
    return clones


def _clone(site: HybridSite) -> HybridSite:
    clone = site.copy()
    clone.log, clone.peak_cloud, clone.need = [], clone.cloud_used, math.inf
    return clone


@dataclass(frozen=True, slots=True)
class LeasingRun:
    """A stepped run: the result, clones simulated, the final Q values, cumulative (twt, cost) per step."""

    result: HybridResult
    simulated: int
    q: np.ndarray | None = None
    cumulative: list[tuple[float, float]] = field(default_factory=list)


def run_policy(jobs: RigidJobs, m: int, policy: str, *, step: float = DAY, seed: int | None = 0,
               cap: float = 0.0, epsilon_k: int | None = None, discipline: Discipline = "easy",
               share: bool = True) -> LeasingRun:
    """Run ``policy`` ("constant" with ``cap``, "random", "qlearning", "epsilon") over the whole trace."""
    if policy not in ("constant", "random", "qlearning", "epsilon"):
        raise ValueError(f"unknown leasing policy {policy!r}: constant, random, qlearning or epsilon")
    rng = np.random.default_rng(seed)
    learner = QLearner(m)
    site = HybridSite.empty(jobs, m, discipline)
    start, where = record(len(jobs), [])
    caps: list[float] = []
    simulated, t, greedy = 0, site.now, 0
    cumulative: list[tuple[float, float]] = []
    while not site.finished():
        until = t + step
        if policy in ("qlearning", "epsilon"):
            candidates = range(m + 1) if policy == "qlearning" else _epsilon(learner, rng, epsilon_k or 3)
            v = float(greedy)
            outcome = learn_step(site, until, learner, candidates, greedy, share=share)
            site, simulated, greedy = outcome.site, simulated + outcome.simulated, outcome.cap
        else:
            v = cap if policy == "constant" else float(rng.integers(0, m + 1))
            site.run(until, v)
            simulated += 1
        caps.append(v)
        cumulative.append((site.wait_s, site.cloud_cpu_s))
        record(len(jobs), site.drain_log(), start, where)
        t = until
    q = learner.q.copy() if policy in ("qlearning", "epsilon") else None
    return LeasingRun(HybridResult(site.wait_s, site.cloud_cpu_s, start, where, caps), simulated, q, cumulative)


def _epsilon(learner: QLearner, rng: np.random.Generator, k: int) -> list[int]:
    greedy = int(np.argmax(learner.q))
    others = rng.choice(learner.m + 1, size=min(k, learner.m + 1), replace=False).tolist()
    return [greedy, *others]


@functools.lru_cache(maxsize=4)
def _rigid_trace(path: str, nodes: int) -> RigidJobs:
    jobs, _ = rigid_view(load_trace(path).frame, nodes=nodes)
    return jobs


def sweep_cell(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One leasing run as a sweep cell (:mod:`broker.sweep`): a pure function of config and seed.

    ``config``: ``trace`` (path or registry name), ``nodes``, ``policy`` and, for "constant", ``cap``
    (a number or "inf"); for "epsilon", ``epsilon_k``. Returns twt, cost, clones simulated, mean cap.
    """
    m = int(config["nodes"])
    jobs = _rigid_trace(str(config["trace"]), m)
    cap = math.inf if config.get("cap") == "inf" else float(config.get("cap", 0))
    run = run_policy(jobs, m, str(config["policy"]), seed=seed, cap=cap, epsilon_k=config.get("epsilon_k"),
                     step=float(config.get("step", DAY)))
    return {"twt": run.result.twt, "cost": run.result.cost, "simulated": run.simulated,
            "cap_mean": float(np.mean(run.result.caps))}


@dataclass(frozen=True, slots=True)
class SweepSummary:
    """Balances of a constant-V and random-policy sweep (``SPEC.md`` §5 references)."""

    constant: dict[int, dict[str, float]]
    best_v: int
    random_balances: list[float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        rb = np.asarray(self.random_balances)
        return {"constant": {str(v): b for v, b in self.constant.items()}, "best_v": self.best_v,
                "best_constant": self.constant[self.best_v],
                "random": {"runs": len(rb), "mean": float(rb.mean()) if len(rb) else None,
                           "std": float(rb.std()) if len(rb) else None, "best": float(rb.max()) if len(rb) else None}}


def sweep_configs(trace: str, nodes: int, v_values: Sequence[int], *, random_runs: int,
                  root_seed: int = 1) -> tuple[list[Cell], list[Cell], list[Cell]]:
    """The sweep's cells: the unbounded reference, one per constant V, and the random-policy repetitions."""
    base = {"trace": trace, "nodes": nodes}
    ref = cells([{**base, "policy": "constant", "cap": "inf"}], name="leasing", root_seed=root_seed)
    const = cells([{**base, "policy": "constant", "cap": v} for v in v_values], name="leasing", root_seed=root_seed)
    rand = cells([{**base, "policy": "random"}], name="leasing", root_seed=root_seed + 1, repeats=random_runs)
    return ref, const, rand


def summarize_sweep(ref: dict[str, Any], local: dict[str, Any], constant: Mapping[int, dict[str, Any]],
                    randoms: Sequence[dict[str, Any]]) -> SweepSummary:
    """Balances against V = 0 (``local``) and V unbounded (``ref``); the best V (ties: the smallest)."""
    def figures(r: Mapping[str, Any]) -> dict[str, float]:
        b = balance(r["twt"], r["cost"], local["twt"], ref["cost"])
        return {"twt_imp_pct": b.twt_imp_pct, "cost_pct": b.c_pct, "balance": b.balance}

    table = {v: figures(r) for v, r in constant.items()}
    best = max(table, key=lambda v: (table[v]["balance"], -v))
    return SweepSummary(table, best, [figures(r)["balance"] for r in randoms])


def cumulative_balance(run: LeasingRun, ref0: LeasingRun, refinf: LeasingRun) -> np.ndarray:
    """The balance of ``run`` so far after each step, against the references so far (Figure 6)."""
    steps = min(len(run.cumulative), len(ref0.cumulative), len(refinf.cumulative))
    return np.array([balance(run.cumulative[i][0], run.cumulative[i][1], ref0.cumulative[i][0],
                             refinf.cumulative[i][1]).balance for i in range(steps)])
