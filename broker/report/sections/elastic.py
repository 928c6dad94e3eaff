"""A pool of cores for the trace's jobs: the site's fixed pool, the threshold autoscaler and SARSA sizing it.

``cloudbroker elastic``'s runs on the trace's jobs, each processor a one-core job (``--parallel
expand``): a rigid pool of the site's M cores run first come first served, an elastic pool sized
by the threshold autoscaler, and one sized by SARSA with an echo state network. The figures are
the responsiveness of interactive jobs (run time under 15 minutes): their mean ``w``
(wait / (wait + run)) and the share that wait over two minutes, beside the cores paid for.
A long trace is cut to its first jobs to stay in the budget (``--limit-jobs``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from broker.elastic.simulate import run_elastic
from broker.elastic.world import PoolConfig
from broker.report import figures
from broker.report.budget import Budget, estimate
from broker.report.model import Figure, ReportInput, Section
from workloads.cores import cores_view

#: The windows tried, longest first (core-jobs). SARSA's cost grows faster than the jobs (its queue grows on a
#: busy site: 9 s for KTH-SP2's first 20,000 core-jobs, 31 s for 50,000), so no window is longer than 50,000.
WINDOWS = (50_000, 20_000, 10_000, 5_000)
RUNS = (("rigid", "fcfs"), ("elastic", "threshold"), ("elastic", "sarsa"))
SHOWN = ("w_interactive_mean", "share_interactive_wait_over_120s", "wait_interactive_mean_s", "w_batch_mean",
         "utilization", "mean_cores", "core_hours")


def _cost(n: int) -> float:
    return estimate("elastic_rule", n, runs=2) + estimate("elastic_sarsa", n)


def run(inp: ReportInput, budget: Budget) -> Section:
    """The elastic section."""
    section = Section("elastic", "An elastic pool of cores")
    every, _ = cores_view(inp.frame, parallel="expand", origin=float(inp.origin))
    if len(every) < WINDOWS[-1]:
        section.status, section.why = "not applicable", f"{len(every):,} core-jobs, fewer than {WINDOWS[-1]:,}"
        return section
    windows = sorted({min(len(every), w) for w in WINDOWS}, reverse=True)
    n = next((w for w in windows if _cost(w) <= budget.left), windows[-1])
    if not budget.allow(f"the elastic pool ({n:,} core-jobs)", _cost(n)):
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    jobs = every.head(n)
    m = inp.nodes
    trim = 500  # jobs left out of the figures at each end; every window holds at least 5,000
    floor = max(1, min(30, m // 4))
    rows: list[dict[str, Any]] = []
    for mode, policy in RUNS:
        pool = PoolConfig(m, elastic=mode == "elastic", min_cores=floor)
        s = run_elastic(jobs, pool, policy, seed=inp.seed, trim=trim).summary.to_dict()
        rows.append({"run": f"{policy} ({mode})", **{k: s.get(k) for k in SHOWN}})
        section.commands.append((f"{policy} ({mode})", f"cloudbroker elastic --trace {inp.trace_arg} --mode {mode} "
                                                       f"--policy {policy} --cores {m} --min-cores {floor} "
                                                       f"--limit-jobs {n} --trim {trim} --seed {inp.seed} --json"))
    table = pd.DataFrame(rows)
    section.tables["elastic_runs"] = table
    section.numbers = {"core_jobs": n, "core_jobs_in_trace": len(every), "cores": m, "min_cores": floor,
                       "runs": {r["run"]: {k: v for k, v in r.items() if k != "run"} for r in rows}}
    if n < len(every):
        why = "at most 50,000: SARSA's cost grows faster than the jobs" if n == WINDOWS[0] else "the budget"
        section.skipped_parts.append(f"the elastic pool ran the first {n:,} of {len(every):,} core-jobs ({why})")
    section.figures.append(_figure(table))
    section.summary, section.recommendation = _texts(table)
    return section


def _figure(table: pd.DataFrame) -> Figure:
    fig, (resp, cost) = figures.new(2)
    resp.bar(table["run"], table["w_interactive_mean"].astype(float), color="tab:blue")
    resp.set(ylabel="mean w of interactive jobs", title="responsiveness (lower is better)")
    cost.bar(table["run"], table["core_hours"].astype(float), color="tab:gray")
    cost.set(ylabel="core-hours paid", title="cores paid for")
    for ax in (resp, cost):
        ax.tick_params(axis="x", labelsize=7, rotation=15)
    return Figure("elastic_runs.svg", "Interactive jobs' mean w = wait / (wait + run) and the core-hours each pool "
                                      "paid for.", figures.svg(fig))


def _texts(table: pd.DataFrame) -> tuple[str, str]:
    by = table.set_index("run")
    summary = "; ".join(f"{run}: w {row['w_interactive_mean']:.3f}, {row['core_hours']:,.0f} core-hours"
                        for run, row in by.iterrows() if not pd.isna(row["w_interactive_mean"]))
    sarsa, rule, fixed = by.loc["sarsa (elastic)"], by.loc["threshold (elastic)"], by.loc["fcfs (rigid)"]
    if pd.isna([sarsa["w_interactive_mean"], rule["w_interactive_mean"], fixed["w_interactive_mean"]]).any():
        return summary + ".", "No interactive job was counted: the responsiveness cannot be compared."
    if fixed["w_interactive_mean"] < min(sarsa["w_interactive_mean"], rule["w_interactive_mean"]):
        summary += (". The site's fixed pool is the most responsive of the three: an elastic pool saves core-hours "
                    "here, not waits")
    better = sarsa["w_interactive_mean"] < rule["w_interactive_mean"]
    cheaper = sarsa["core_hours"] <= rule["core_hours"]
    if better and cheaper:
        advice = "Let SARSA size the pool: more responsive than the threshold autoscaler for no more core-hours."
    elif better:
        advice = (f"SARSA is more responsive but pays {sarsa['core_hours'] / rule['core_hours'] - 1:.0%} more "
                  f"core-hours than the threshold autoscaler: choose by which matters more.")
    else:
        advice = "Keep the threshold autoscaler: SARSA is not more responsive here, so the learner loses to the rule."
    return summary + ".", advice
