"""A cluster run wholly on the cloud: a grid of the keep-alive, cap and delay policies, its Pareto front and a pick.

The grid is written beside the report (``cluster_grid.toml``) and run through the same cells as
``cloudbroker cluster sweep`` (one instance per job, the ``ec2-2013-cluster`` prices); the front is
the cells no other beats on both cost and mean overhead. The recommended point is the cheapest
cell whose mean overhead (a job's wait for an instance, boot included) is at most ten minutes
(:data:`MAX_OVERHEAD_S`), the service a site would promise its users; when no cell keeps it, the
one with the lowest overhead. (A geometric knee of the front was tried first: a cap that starves the
queue for days drags it to overheads of hours, on KTH-SP2 to a cap with 8.8 hours.)
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from broker.cloudcluster.sweep import CELL_NAME, SETTINGS, cluster_cell, grid, sweep_table, workload_of
from broker.report import figures
from broker.report.budget import LEAST_JOBS, Budget, estimate, limit_flag, sliced
from broker.report.model import Figure, ReportInput, Section
from broker.report.units import HOUR, dollars, hours
from broker.sweep import cells, run_sweep

GRID_FILE = "cluster_grid.toml"


def families(peak: int) -> list[dict[str, Any]]:
    """The grid's policy families; the caps are fractions of the peak of jobs running at once."""
    caps = sorted({max(1, round(f * peak)) for f in (0.1, 0.25, 0.5)})
    return [{"name": "end of the paid hour"},
            {"name": "P1 cap", "cap": caps},
            {"name": "P3 keep-alive", "keepalive": ["fixed:0.1", "fixed:0.3", "fixed:0.5"]},
            {"name": "P4 delay", "delay_min": [1, 5, 15]},
            {"name": "P6 next hour", "wait_next_hour_min": [5, 15]},
            {"name": "baseline: idle timeout", "idle_timeout_min": [5, 30]}]


#: The mean overhead (s) the recommended policy may cost a job: ten minutes.
MAX_OVERHEAD_S = 600.0


def recommend(cost: np.ndarray, overhead: np.ndarray, limit: float = MAX_OVERHEAD_S) -> int:
    """Index of the cheapest point with ``overhead <= limit`` (ties: the lower overhead), else the lowest overhead."""
    within = np.flatnonzero(overhead <= limit)
    if len(within):
        return int(within[np.lexsort((overhead[within], cost[within]))[0]])
    return int(np.lexsort((cost, overhead))[0])


def run(inp: ReportInput, budget: Budget) -> Section:
    """The cloud-cluster section."""
    section = Section("cluster", "A cluster run wholly on the cloud")
    every, view = workload_of(str(inp.path), None, None, inp.seed, lenient=inp.lenient)
    if not len(every):
        section.status = "not applicable"
        section.why = f"no job of the trace is left to run on instances ({view.describe()})"
        return section
    runs = len(grid({"workload": {"synthetic": 1.0}, "family": families(_peak(every.submit, every.runtime))}))
    n = budget.slice("the cloud-cluster grid", lambda m: estimate("cluster_cell", m, runs=runs), len(every),
                     least=LEAST_JOBS)
    if n is None:
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    jobs = every.head(n)
    if n < len(every):
        section.skipped_parts.append(sliced(n, len(every)))
    workload = {"trace": str(inp.path.resolve()), "seed": inp.seed, **({"lenient": True} if inp.lenient else {}),
                **({"limit": n} if n < len(every) else {})}
    spec: dict[str, Any] = {"name": "report", "workload": workload, "family": families(_peak(jobs.submit,
                                                                                             jobs.runtime))}
    configs = grid(spec)
    todo = cells(configs, name=f"{CELL_NAME}-report", root_seed=inp.seed, paired=True)
    table = sweep_table(configs, run_sweep(cluster_cell, todo, n_jobs=-1))
    section.files[GRID_FILE] = toml({**spec, "workload": {**spec["workload"], "trace": inp.trace_arg}})
    strict = " --strict" if "--strict" in inp.reading.split() else ""
    section.commands.append(("every cell of the grid", f"cloudbroker cluster sweep {GRID_FILE} --out cluster-sweep "
                                                       f"--seed {inp.seed}{strict} --json"))
    front = table[table["pareto"]].sort_values("cost")
    pick = front.iloc[recommend(front["cost"].to_numpy(float), front["overhead_mean_s"].to_numpy(float))]
    compact = table.assign(settings=[_settings(row) for _, row in table.iterrows()])
    columns = ["family", "settings", "cost", "instance_cost", "egress_cost", "overhead_mean_s", "overhead_p95_s",
               "instances", "pareto"]
    section.tables["cluster_grid"] = compact[[c for c in columns if c in compact]]
    section.numbers = {"jobs": n, "jobs_in_trace": len(every), "cells": len(table),
                       "on_front": int(table["pareto"].sum()),
                       "recommended": {"family": pick["family"], "settings": _settings(pick),
                                       "cost": float(pick["cost"]), "overhead_mean_s": float(pick["overhead_mean_s"])},
                       "cheapest_cost": float(table["cost"].min()),
                       "lowest_overhead_s": float(table["overhead_mean_s"].min())}
    section.figures.append(_figure(table, pick))
    section.summary = (f"{len(table)} policies on {n:,} jobs; {int(table['pareto'].sum())} are on the front of cost "
                       f"against the mean overhead a job sees (its wait for an instance and the boot).")
    kept = float(pick["overhead_mean_s"]) <= MAX_OVERHEAD_S
    section.recommendation = (f"Run {pick['family']} ({_settings(pick) or 'its defaults'}): {dollars(pick['cost'])} "
                              f"with {hours(pick['overhead_mean_s'])} of mean overhead, "
                              + ("the cheapest policy that keeps a job's mean overhead within ten minutes." if kept
                                 else "the lowest overhead of the grid: no policy keeps it within ten minutes."))
    limit = limit_flag(n, len(every))
    section.commands.append(("the recommended point", f"cloudbroker cluster --trace {inp.trace_cli} --seed {inp.seed}"
                                                      f"{limit} {_flags(pick)}--json"))
    return section


def _peak(submit: np.ndarray, runtime: np.ndarray) -> int:
    """Most jobs running at once if each started at its submission."""
    times = np.concatenate((submit, submit + runtime))
    steps = np.concatenate((np.ones(len(submit)), -np.ones(len(submit))))
    order = np.lexsort((steps, times))  # an end before a start at the same instant
    return int(np.cumsum(steps[order]).max()) if len(order) else 0


def _settings(row: pd.Series) -> str:
    return ", ".join(f"{k} = {_value(row[k])}" for k in SETTINGS if k in row and row[k] is not None
                     and not pd.isna(row[k]))


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _flags(row: pd.Series) -> str:
    names = {"cap": "--cap", "keepalive": "--keepalive", "idle_timeout_min": "--idle-timeout", "delay_min": "--delay",
             "burst_ratio": "--burst-ratio", "wait_next_hour_min": "--wait-next-hour"}
    return "".join(f"{flag} {_value(row[k])} " for k, flag in names.items() if k in row and row[k] is not None
                   and not pd.isna(row[k]))


def toml(spec: dict[str, Any]) -> str:
    """The grid as a ``cluster sweep`` TOML file."""
    def value(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)

    lines = [f"name = {value(spec['name'])}", "[workload]"]
    lines += [f"{k} = {value(v)}" for k, v in spec["workload"].items()]
    for family in spec["family"]:
        lines += ["", "[[family]]"] + [f"{k} = {value(v)}" for k, v in family.items()]
    return "\n".join(lines) + "\n"


def _figure(table: pd.DataFrame, pick: pd.Series) -> Figure:
    fig, ax = figures.new()
    for family, rows in table.groupby("family", sort=False):
        ax.scatter(rows["overhead_mean_s"] / HOUR, rows["cost"], s=18, label=str(family))
    front = table[table["pareto"]].sort_values("overhead_mean_s")
    ax.plot(front["overhead_mean_s"] / HOUR, front["cost"], "k-", lw=0.8, label="Pareto front")
    ax.scatter([pick["overhead_mean_s"] / HOUR], [pick["cost"]], s=120, facecolors="none", edgecolors="tab:red", lw=1.5,
               label="recommended")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set(xlabel="mean overhead per job (h, logarithmic above 0.01 h)", ylabel="cost ($)",
           title="cloud cluster: cost against overhead")
    ax.legend(fontsize=6, ncol=2)
    return Figure("cluster_front.svg", "Every policy of the grid: its cost and the mean overhead a job sees; the "
                                       "line joins the Pareto front, the circle marks the recommended point.",
                  figures.svg(fig))
