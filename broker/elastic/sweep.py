"""Elastic sweeps: runs over modes, policies, lambda, estimates and seeds as cells of :mod:`broker.sweep`.

A cell is one run (:func:`elastic_cell`): a pure function of its configuration, its seed (the
learner's) and the trace it names; a worker reads each trace once (:data:`VIEWS`). Configuration
keys (all JSON): ``trace`` (a path or registry name), ``parallel`` (``expand`` or ``one``),
``first_day`` and ``days`` (the window of submissions, in days from the first job; ``days`` null:
to the end), ``limit`` (the window's first jobs only; null: all), ``mode``, ``policy``, ``cores``,
``min_cores``, ``max_cores`` (null: twice ``cores``; ``"none"``: no ceiling), ``hold_s``, ``lam``,
``estimate``, ``trim``, ``reward`` (``paper`` when absent, so the cells of earlier sweeps keep their keys).
:func:`sweep_table` gives one row per cell; :func:`configs` builds a grid. ::

    grid = cells(configs(trace, modes=("rigid",), policies=("fcfs", "sarsa"), lams=(0.5, 1.0)),
                 name=CELL_NAME, root_seed=1, repeats=5)
    table = sweep_table(grid, run_sweep(elastic_cell, grid))
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from broker.elastic.estimate import ESTIMATES
from broker.elastic.metrics import JOB_FIGURES, native_figures
from broker.elastic.simulate import ELASTIC_POLICIES, run_elastic
from broker.elastic.world import PoolConfig
from broker.sweep import Cell, Memo, bounded
from workloads.cache import load_trace
from workloads.cores import CoreJobs, cores_view
from workloads.errors import ConfigError

#: The version of the cells' meaning (part of every cell's key): bump it when a cell computes something else.
CELL_NAME = "elastic-v1"
DAY = 86400.0
#: The one-core views this process has built, by (trace, parallel) (at most two).
VIEWS: Memo[CoreJobs] = Memo(size=2)
#: What a cell's row carries besides its configuration and seed.
FIGURES = (*JOB_FIGURES, "utilization", "mean_cores", "peak_cores", "core_hours", "jobs", "decisions", "trainings")
#: The figures that are counts.
INTEGERS = ("peak_cores", "jobs", "decisions", "trainings")


def window(trace: str, parallel: str = "expand", first_day: float = 0.0, days: float | None = None,
           limit: int | None = None, lenient: bool = False) -> CoreJobs:
    """The jobs submitted from ``first_day`` for ``days`` days after the trace's first job (the first ``limit``).

    ``lenient`` skips the trace's lines that cannot be parsed.
    """
    def build() -> CoreJobs:
        swf = load_trace(trace, lenient=lenient)
        return cores_view(swf.frame, parallel=parallel, origin=float(swf.header.unix_start_time or 0))[0]  # type: ignore[arg-type]

    jobs = VIEWS.get((trace, parallel, lenient), build)
    if len(jobs) and (first_day or days is not None):
        span = days * DAY if days is not None else float("inf")
        jobs = jobs.window(float(jobs.submit[0]) + first_day * DAY, span)
    return jobs if limit is None else jobs.head(limit)


def pool_of(config: Mapping[str, Any]) -> PoolConfig:
    """The pool a configuration describes."""
    unbounded = config.get("max_cores") == "none"
    return PoolConfig(int(config.get("cores", 81)), elastic=config.get("mode", "rigid") == "elastic",
                      min_cores=int(config.get("min_cores", 30)),
                      max_cores=None if unbounded else config.get("max_cores"),
                      hold_s=float(config.get("hold_s", 900.0)), estimate=config.get("estimate", "oracle"),
                      no_ceiling=unbounded)


def elastic_cell(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One run as a sweep cell: its figures (module docstring)."""
    jobs = window(str(config["trace"]), str(config.get("parallel", "expand")), float(config.get("first_day", 0.0)),
                  config.get("days"), config.get("limit"), bool(config.get("lenient")))
    result = run_elastic(jobs, pool_of(config), str(config["policy"]), lam=float(config.get("lam", 0.5)), seed=seed,
                         trim=int(config.get("trim", 500)), reward=config.get("reward", "paper"))
    summary = result.summary.to_dict()
    return {name: summary[name] for name in FIGURES}


def native_cell(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The log's own schedule over a configuration's window, as a cell (the seed is not used)."""
    jobs = window(str(config["trace"]), str(config.get("parallel", "expand")), float(config.get("first_day", 0.0)),
                  config.get("days"), config.get("limit"), bool(config.get("lenient")))
    figures, _, missing = native_figures(jobs, trim=int(config.get("trim", 500)))
    return {**figures, "jobs": len(jobs), "jobs_without_wait": missing}


def configs(trace: str, *, modes: Iterable[str] = ("rigid",), policies: Iterable[str] = ("sarsa",),
            lams: Iterable[float] = (0.5,), estimates: Iterable[str] = ("oracle",),
            **common: Any) -> list[dict[str, Any]]:
    """The product of the axes, each with the ``common`` settings; the threshold autoscaler only on elastic pools.

    Raises :class:`~workloads.errors.ConfigError` for an unknown mode, policy or estimate, or lambda outside [0, 1].
    """
    modes, policies, lams, estimates = list(modes), list(policies), list(lams), list(estimates)
    _check(modes, policies, lams, estimates)
    bounded(len(modes) * len(policies) * len(lams) * len(estimates), f"the grid ({len(modes)} modes x "
            f"{len(policies)} policies x {len(lams):,} lambdas x {len(estimates)} estimates)")
    out = []
    for mode, policy, lam, estimate in itertools.product(modes, policies, lams, estimates):
        if policy == "threshold" and mode != "elastic":
            continue
        out.append({"trace": trace, **common, "mode": mode, "policy": policy, "lam": float(lam),
                    "estimate": estimate})
    return out


def _check(modes: Sequence[str], policies: Sequence[str], lams: Sequence[float], estimates: Sequence[str]) -> None:
    if not modes or set(modes) - {"rigid", "elastic"}:
        raise ConfigError(f"modes must be rigid and/or elastic, got {modes}")
    unknown = [p for p in policies if p not in ELASTIC_POLICIES]
    if not policies or unknown:
        raise ConfigError(f"policies must be among {', '.join(ELASTIC_POLICIES)}, got {policies}")
    if not lams or not all(0 <= lam <= 1 for lam in lams):
        raise ConfigError(f"lambda must lie in [0, 1], got {lams}")
    if not estimates or set(estimates) - set(ESTIMATES):
        raise ConfigError(f"estimates must be among {', '.join(ESTIMATES)}, got {estimates}")


def sweep_table(grid: Sequence[Cell], results: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per cell: mode, policy, lambda, estimate, seed, then the figures."""
    rows = [{"mode": c.config["mode"], "policy": c.config["policy"], "lam": c.config["lam"],
             "estimate": c.config["estimate"], "seed": c.seed, **{k: r.get(k) for k in FIGURES}}
            for c, r in zip(grid, results, strict=True)]
    table = pd.DataFrame(rows, columns=["mode", "policy", "lam", "estimate", "seed", *FIGURES])
    # counts and seeds stay integers (nullable: a row may lack one), never floats that round a 63-bit seed
    return table.astype(dict.fromkeys(("seed", *INTEGERS), "Int64"))
