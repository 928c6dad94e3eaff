"""The elastic RL paper's Tables 2-5 on a trace, beside every baseline, and its Figure 9.

    python experiments/elastic_tables.py --store results/elastic-lpc            # the 8-week window (below)
    python experiments/elastic_tables.py --days 0 --seeds 2 --store results/elastic-lpc-whole   # the whole log
    python experiments/elastic_tables.py --trace ../shared/traces/LCG-2005-1.swf.gz --cores 3200 --days 0 \\
        --store results/elastic-lcg

Run from the repository root. Every run is a cell of the sweep runner (``broker/elastic/sweep.py``):
one JSON file per cell under ``--store``, so the command resumes where it stopped. The rules (FCFS,
SJF, EDF on the rigid pool; the threshold autoscaler with FCFS, SJF and EDF on the elastic one) run
once per run-time estimate; SARSA runs ``--seeds`` times per (mode, lambda, estimate) and the tables
give the mean and, in brackets, the spread (max - min) over seeds.

The window: with ``--first-day auto`` (default) the 8-week window, starting on a whole week from
the first job, whose load on ``--cores`` cores is nearest the paper's 0.56 (its LAL log: 81 cores,
utilization 0.56). ``--days 0`` takes the whole log. ``--figures DIR`` draws the pool's cores and
utilization over time (the paper's Figure 9) and the responsiveness of interactive jobs (Figures 4
and 8) for seed 0's runs. ``--frontier 40,60,...`` runs FCFS and SJF on rigid pools of those sizes:
what the simple rules buy with more cores, against which the elastic runs are placed (a figure
with ``--figures``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import parallel_config

from broker import cells, run_sweep
from broker.elastic import sweep as elastic_sweep
from broker.elastic.metrics import native_figures
from workloads.cores import CoreJobs

LPC = "../shared/traces/LPC-EGEE-2004-1.2-cln.swf.gz"
DAY = 86400.0
PAPER_LOAD = 0.56
RULES = {"rigid": ("fcfs", "sjf", "edf"), "elastic": ("threshold", "sjf", "edf")}


def auto_window(jobs: CoreJobs, cores: int, days: float) -> float:
    """The first day (a whole week) of the ``days``-long window whose load on ``cores`` is nearest the paper's."""
    t0, best = float(jobs.submit[0]), (np.inf, 0.0)
    span = float(jobs.submit[-1] - jobs.submit[0]) / DAY
    for first in np.arange(0.0, max(span - days, 0.0) + 1e-9, 7.0):
        window = jobs.window(t0 + first * DAY, days * DAY)
        load = float(window.runtime.sum()) / (days * DAY * cores)
        best = min(best, (abs(load - PAPER_LOAD), float(first)))
    return best[1]


def run_grid(trace: str, common: dict, seeds: int, store: Path, n_jobs: int, lams: list[float],
             estimates: list[str]) -> pd.DataFrame:
    """Every rule once per estimate and SARSA ``seeds`` times per (mode, lambda, estimate): one row per run."""
    rules = [c for mode, names in RULES.items()
             for c in elastic_sweep.configs(trace, modes=(mode,), policies=names, lams=lams[:1], estimates=estimates,
                                            **common)]
    learners = elastic_sweep.configs(trace, modes=("rigid", "elastic"), policies=("sarsa",), lams=lams,
                                     estimates=estimates, **common)
    todo = [*cells(rules, name=elastic_sweep.CELL_NAME, root_seed=1),
            *cells(learners, name=elastic_sweep.CELL_NAME, root_seed=1, repeats=seeds)]
    with parallel_config(backend="loky", n_jobs=n_jobs):
        results = run_sweep(elastic_sweep.elastic_cell, todo, store=store)
    return elastic_sweep.sweep_table(todo, results)


def run_frontier(trace: str, common: dict, sizes: list[int], store: Path, n_jobs: int) -> pd.DataFrame:
    """The rules a site runs on rigid pools of each size (the oracle's estimates for SJF): one row per run."""
    configs = [c for size in sizes for c in elastic_sweep.configs(trace, modes=("rigid",), policies=("fcfs", "sjf"),
                                                                  **{**common, "cores": size})]
    todo = cells(configs, name=elastic_sweep.CELL_NAME, root_seed=1)
    with parallel_config(backend="loky", n_jobs=n_jobs):
        results = run_sweep(elastic_sweep.elastic_cell, todo, store=store)
    table = elastic_sweep.sweep_table(todo, results)
    table["cores"] = [c.config["cores"] for c in todo]
    return table


def frontier_table(frontier: pd.DataFrame) -> str:
    """Markdown: responsiveness and waiting of the rules on each rigid pool size."""
    head = ["| cores | policy | w_interactive_mean | w_batch_mean | share_interactive_wait_over_120s | utilization |",
            "|---|---|---|---|---|---|"]
    rows = [f"| {row.cores} | {row.policy} | {row.w_interactive_mean:.3f} | {row.w_batch_mean:.3f} | "
            f"{row.share_interactive_wait_over_120s:.3f} | {row.utilization:.3f} |"
            for row in frontier.itertuples(index=False)]
    return "\n".join(head + rows)


def frontier_figure(runs: pd.DataFrame, frontier: pd.DataFrame, path: Path, title: str) -> None:
    """Interactive responsiveness against mean cores: the rigid rules' curves, the elastic runs as points."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for policy, rows in frontier.groupby("policy"):
        ax.plot(rows["mean_cores"], rows["w_interactive_mean"], marker="o", label=f"rigid {policy}, pool sizes")
    markers = iter("sD^vP*Xh")
    for (policy, lam, estimate), rows in runs[runs["mode"] == "elastic"].groupby(["policy", "lam", "estimate"]):
        label = f"elastic {policy}" + (f" λ={lam:g}" if policy == "sarsa" else "") + f" {estimate}"
        ax.scatter(rows["mean_cores"], rows["w_interactive_mean"], marker=next(markers, "o"), label=label)
    ax.set_xlabel("mean cores")
    ax.set_ylabel("mean W of interactive jobs")
    ax.legend(fontsize="x-small")
    ax.set_title(title)
    fig.savefig(path, dpi=110)


def _cell(values: pd.Series, digits: int = 3) -> str:
    values = values.astype(float)
    text = f"{values.mean():,.{digits}f}"
    return text + (f" ({values.max() - values.min():,.{digits}f})" if len(values) > 1 else "")


def table(runs: pd.DataFrame, native: dict) -> str:
    """Markdown: one row per (mode, policy, lambda, estimate), the paper's figures and the pool's."""
    figures = [("w_interactive_mean", 3), ("w_interactive_std", 3), ("w_batch_mean", 3), ("w_batch_std", 3),
               ("wait_interactive_mean_s", 0), ("wait_interactive_std_s", 0), ("share_interactive_wait_over_120s", 3),
               ("share_interactive_w_over_0_9", 3), ("share_batch_w_over_0_9", 3), ("utilization", 3),
               ("mean_cores", 1)]
    head = "| mode | policy | λ | estimate | " + " | ".join(name for name, _ in figures) + " |"
    lines = [head, "|" + "---|" * (4 + len(figures))]
    for (mode, policy, lam, estimate), rows in runs.groupby(["mode", "policy", "lam", "estimate"], sort=False):
        shown_lam = f"{lam:g}" if policy == "sarsa" else "-"
        lines.append(f"| {mode} | {policy} | {shown_lam} | {estimate} | "
                     + " | ".join(_cell(rows[name], digits) for name, digits in figures) + " |")
    nat = [f"{native[name]:,.{digits}f}" if native.get(name) is not None else "-" for name, digits in figures[:9]]
    lines.append("| log | native | - | - | " + " | ".join(nat) + " | - | - |")
    return "\n".join(lines)


def figures(trace: str, common: dict, folder: Path) -> None:
    """Figure 9 (cores, utilization over time) and the responsiveness of interactive jobs, seed 0."""
    from broker.elastic import plots
    from broker.elastic.simulate import run_elastic

    jobs = elastic_sweep.window(trace, common["parallel"], common["first_day"], common["days"], common["limit"])
    folder.mkdir(parents=True, exist_ok=True)
    runs = {}
    for label, mode, policy, lam, estimate in (("rigid fcfs", "rigid", "fcfs", 0.5, "oracle"),
                                                ("rigid sarsa 0.5 est", "rigid", "sarsa", 0.5, "median"),
                                                ("elastic threshold", "elastic", "threshold", 0.5, "median"),
                                                ("elastic sarsa 0.5 est", "elastic", "sarsa", 0.5, "median"),
                                                ("elastic sarsa 1 est", "elastic", "sarsa", 1.0, "median")):
        pool = elastic_sweep.pool_of({**common, "mode": mode, "estimate": estimate})
        runs[label] = run_elastic(jobs, pool, policy, lam=lam, seed=0, trim=common["trim"])
    name = Path(trace).name.split(".")[0]
    plots.cores_and_utilization({k: (r.jobs, r.instances) for k, r in runs.items() if k.startswith("elastic")
                                 or k == "rigid fcfs"}, title=f"{name}: the pool over time").savefig(
        folder / f"elastic-{name}-pool.png", dpi=110)
    plots.responsiveness_cdf({k: r.jobs for k, r in runs.items()}, title=f"{name}: interactive jobs").savefig(
        folder / f"elastic-{name}-responsiveness.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=LPC)
    parser.add_argument("--cores", type=int, default=81)
    parser.add_argument("--first-day", default="auto", help="a number of days, or auto (see the docstring)")
    parser.add_argument("--days", type=float, default=56.0, help="0: the whole log")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--lambdas", default="0.5,1")
    parser.add_argument("--estimates", default="oracle,median")
    parser.add_argument("--store", default="results/elastic")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--figures", default=None, help="directory for the figures (seed 0)")
    parser.add_argument("--frontier", default="", help="rigid pool sizes for the rules' frontier, e.g. 40,60,81,120")
    args = parser.parse_args()
    days = None if args.days == 0 else args.days
    jobs = elastic_sweep.window(args.trace)
    if days is None:
        first = 0.0
    else:
        first = auto_window(jobs, args.cores, days) if args.first_day == "auto" else float(args.first_day)
    common = {"parallel": "expand", "first_day": first, "days": days, "limit": None, "cores": args.cores,
              "min_cores": 30, "max_cores": None, "hold_s": 900.0, "trim": 500}
    window = elastic_sweep.window(args.trace, "expand", first, days)
    load = float(window.runtime.sum()) / (float(window.submit[-1] - window.submit[0]) * args.cores)
    print(f"{args.trace}: days {first:g} to {first + (days or 0):g} ({len(window):,} jobs, load {load:.3f} on "
          f"{args.cores} cores, interactive {(window.runtime < 900).mean():.3f})")
    runs = run_grid(args.trace, common, args.seeds, Path(args.store), args.n_jobs,
                    [float(v) for v in args.lambdas.split(",")], args.estimates.split(","))
    native, _, missing = native_figures(window, trim=500)
    print(table(runs, native))
    if missing:
        print(f"(the log records no wait for {missing:,} counted jobs: left out of the native row)")
    if args.frontier:
        frontier = run_frontier(args.trace, common, [int(v) for v in args.frontier.split(",")], Path(args.store),
                                args.n_jobs)
        print()
        print(frontier_table(frontier))
        if args.figures:
            Path(args.figures).mkdir(parents=True, exist_ok=True)
            name = Path(args.trace).name.split(".")[0]
            frontier_figure(runs, frontier, Path(args.figures) / f"elastic-{name}-frontier.png",
                            f"{name}: responsiveness against cores")
    if args.figures:
        figures(args.trace, common, Path(args.figures))


if __name__ == "__main__":
    main()
