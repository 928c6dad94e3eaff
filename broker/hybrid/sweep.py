"""Leasing sweeps: every constant V and repeated random-V runs as cells of :mod:`broker.sweep`, and their balances.

A cell is a pure function of its configuration and seed (:func:`sweep_cell`); a worker reads each
trace once (:data:`TRACES`, an explicit per-process memo). The summary normalizes every run by the
sweep's own references (``V = 0`` and ``V`` unbounded) as the paper does (:func:`summarize_sweep`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from broker.hybrid.metrics import normalized
from broker.hybrid.policies import DAY, LEASING_POLICIES, run_leasing
from broker.sweep import Cell, Memo, cells
from heuristics.backfill import Discipline
from workloads.cache import load_trace
from workloads.rigid import RigidJobs, rigid_view

#: The version of the cells' meaning (part of every cell's key): bump it when a cell computes something else.
CELL_NAME = "leasing-v3"
#: The rigid views this process has built for cells, by (trace, nodes) (at most four).
TRACES: Memo[RigidJobs] = Memo(size=4)


def rigid_trace(trace: str, nodes: int, limit: int | None = None, lenient: bool = False) -> RigidJobs:
    """The rigid view of ``trace`` for ``nodes`` local nodes (its first ``limit`` jobs), built once per process.

    ``lenient`` skips the trace's lines that cannot be parsed (:func:`workloads.swf.read_swf`).
    """
    def build() -> RigidJobs:
        jobs = rigid_view(load_trace(trace, lenient=lenient).frame, nodes=nodes)[0]
        return jobs if limit is None else jobs.head(limit)

    return TRACES.get((trace, nodes, limit, lenient), build)


def sweep_cell(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One leasing run as a sweep cell (:mod:`broker.sweep`): a pure function of config and seed.

    ``config``: ``trace`` (path or registry name), ``lenient`` (skip its malformed lines; optional), ``nodes``,
    ``limit`` (the first jobs only; optional),
    ``policy`` (a name of :data:`~broker.hybrid.policies.LEASING_POLICIES`), its ``params`` (``"inf"`` for an infinite
    number, as JSON has none: ``{"v": "inf"}``; a learner's readings among them: ``references``,
    ``reward``, ``continue_best``, ``alpha``, ``gamma``), ``step`` (s, a day by default), ``offset_s``
    (the step grid's shift, 0 by default) and ``discipline`` (``easy`` by default); the seed goes to
    the policy. Returns ``twt_s``, ``cloud_cpu_s``, ``simulated`` (site runs) and ``cap_mean``.
    """
    m = int(config["nodes"])
    limit = config.get("limit")
    jobs = rigid_trace(str(config["trace"]), m, None if limit is None else int(limit), bool(config.get("lenient")))
    params = {k: math.inf if v == "inf" else v for k, v in config.get("params", {}).items()}
    policy = LEASING_POLICIES.get(str(config["policy"]))(m, seed=seed, **params)
    discipline: Discipline = "conservative" if config.get("discipline") == "conservative" else "easy"
    run = run_leasing(jobs, m, policy, step=float(config.get("step", DAY)), offset_s=float(config.get("offset_s", 0.0)),
                      discipline=discipline)
    s = run.summary
    return {"twt_s": s.twt_s, "cloud_cpu_s": s.cloud_cpu_s, "simulated": s.clones_simulated,
            "cap_mean": float(np.mean(s.caps))}


@dataclass(frozen=True, slots=True)
class SweepSummary:
    """Balances of a constant-V and random-policy sweep (``SPEC.md`` §5 references).

    When a reference is 0 (the V = 0 run never waits, or the unbounded run uses no cloud node) the
    balances are undefined: ``None`` in every figure, ``best_v`` is ``None`` and ``undefined`` says why.
    """

    constant: dict[int, dict[str, float | None]]
    best_v: int | None
    random_balances: list[float | None]
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        rb = np.asarray([b for b in self.random_balances if b is not None], dtype=np.float64)
        out = {"constant": {str(v): b for v, b in self.constant.items()}, "best_v": self.best_v,
               "best_constant": None if self.best_v is None else self.constant[self.best_v],
               "random": {"runs": len(self.random_balances), "mean": float(rb.mean()) if len(rb) else None,
                          "std": float(rb.std()) if len(rb) else None, "best": float(rb.max()) if len(rb) else None}}
        return {**out, "undefined": self.undefined} if self.undefined else out


def sweep_configs(trace: str, nodes: int, v_values: Sequence[int], *, random_runs: int, root_seed: int = 1,
                  limit: int | None = None, step: float = DAY, discipline: str = "easy",
                  offset_s: float = 0.0, lenient: bool = False) -> tuple[list[Cell], list[Cell], list[Cell]]:
    """The sweep's cells: the unbounded reference, one per constant V, the random-policy repetitions (maybe none)."""
    base: dict[str, Any] = {"trace": trace, **({"lenient": True} if lenient else {}), "nodes": nodes,
                            **({} if limit is None else {"limit": limit}),
                            "step": step, "discipline": discipline, "offset_s": offset_s}
    ref = cells([{**base, "policy": "constant", "params": {"v": "inf"}}], name=CELL_NAME, root_seed=root_seed)
    const = cells([{**base, "policy": "constant", "params": {"v": v}} for v in v_values], name=CELL_NAME,
                  root_seed=root_seed)
    rand = cells([{**base, "policy": "random"}], name=CELL_NAME, root_seed=root_seed + 1,
                 repeats=random_runs) if random_runs else []
    return ref, const, rand


def summarize_sweep(ref: Mapping[str, Any], local: Mapping[str, Any], constant: Mapping[int, Mapping[str, Any]],
                    randoms: Sequence[Mapping[str, Any]]) -> SweepSummary:
    """Balances against V = 0 (``local``) and V unbounded (``ref``); the best V (ties: the smallest)."""
    def figures(r: Mapping[str, Any]) -> dict[str, Any]:
        return normalized(r["twt_s"], r["cloud_cpu_s"], local["twt_s"], ref["cloud_cpu_s"])

    undefined = figures(local)["undefined"]
    table = {v: {k: f[k] for k in ("twt_imp_pct", "cost_pct", "balance")}
             for v, f in ((v, figures(r)) for v, r in constant.items())}
    randoms_balance = [figures(r)["balance"] for r in randoms]
    if undefined:
        return SweepSummary(table, None, randoms_balance, undefined)
    best = max(table, key=lambda v: (cast(float, table[v]["balance"]), -v))
    return SweepSummary(table, best, randoms_balance)
