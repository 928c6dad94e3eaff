"""The advisor's tables in docs/EXPERIMENTS.md: Table 5 (wait RMSE) and saved time on every shared trace with waits.

    python experiments/advisor_tables.py --store results/advisor [--traces SDSC-BLUE-2000-4.2-cln,...]

Run from the repository root (the cells name the traces as ``../shared/traces/T.swf.gz``, as the
README's commands do).
Each trace's four option sets (k-NN and boosting, without and with promises) are cells of the
advisor sweep (:mod:`broker.advisor.sweep`), all speeds inside a cell, stored one JSON file per cell
under ``--store/<trace>/cells`` so the command resumes where it stopped; the same cells as
``cloudbroker advise sweep --trace ../shared/traces/T.swf.gz --model knn,gbm --promises off,on --out
STORE/T`` (whose finished cells it reuses). It prints the two Markdown tables.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd
from joblib import parallel_config

from broker import cells, run_sweep
from broker.advisor.sweep import CELL_NAME, advise_cell, configs, sweep_table

WITH_WAITS = ("SDSC-BLUE-2000-4.2-cln", "KTH-SP2-1996-2.1-cln", "SDSC-SP2-1998-4.2-cln", "OSC-Clust-2000-3.1-cln",
              "LPC-EGEE-2004-1.2-cln")
SHOWN = ("linear:0.01", "linear:0.1", "linear:1", "linear:10")
LEARNERS = {("knn", False): "k-NN", ("knn", True): "k-NN + promises", ("gbm", False): "boosting",
            ("gbm", True): "boosting + promises"}


def trace_table(trace: str, store: Path, n_jobs: int) -> pd.DataFrame:
    """The tidy table of one trace's four cells (run or read from the store)."""
    grid = cells(configs(f"../shared/traces/{trace}.swf.gz", models=("knn", "gbm"), promises=(False, True)),
                 name=CELL_NAME, root_seed=1, paired=True)
    with parallel_config(backend="loky", n_jobs=n_jobs):
        results = run_sweep(advise_cell, grid, store=store / trace / "cells")
    return sweep_table(grid, results)


def cutoff_kind(row: pd.Series) -> str:
    """How the cutoff was fitted: a line in (s, log variance), a cut on s alone, or none."""
    if not row["cutoff_used"]:
        return "none"
    if isinstance(row["s_max"], float) and not math.isnan(row["s_max"]):
        return f"s < {row['s_max']:.3g}"
    return "line"


def table5(tables: dict[str, pd.DataFrame]) -> str:
    """Wait and run RMSE per trace and learner, with the cutoff each fitted."""
    lines = ["| trace | model | wait RMSE: baseline | promises alone | promises as a feature | run RMSE | "
             "cutoff (no promises / promises) |", "|---|---|---|---|---|---|---|"]
    for trace, table in tables.items():
        first = table.drop_duplicates(["model", "promises"]).set_index(["model", "promises"])
        for model in ("knn", "gbm"):
            off, on = first.loc[(model, False)], first.loc[(model, True)]
            lines.append(f"| {trace.split('-')[0]}-{trace.split('-')[1]} | {model} | {off['rmse_wait_s']:,.0f} | "
                         f"{on['rmse_wait_promises_alone_s']:,.0f} | {on['rmse_wait_s']:,.0f} | "
                         f"{off['rmse_run_s']:,.0f} | {cutoff_kind(off)} / {cutoff_kind(on)} |")
    return "\n".join(lines)


def saved(tables: dict[str, pd.DataFrame]) -> str:
    """Saved time (millions of s) of the advisor with its cutoff, without it, and of the oracle, at four speeds."""
    head = " | ".join(f"{s.split(':')[1]}: cutoff / none / oracle" for s in SHOWN)
    lines = [f"| trace | learner | {head} |", "|---|---|" + "---|" * len(SHOWN)]
    for trace, table in tables.items():
        for (model, promises), label in LEARNERS.items():
            rows = table[(table["model"] == model) & (table["promises"] == promises)].set_index("scenario")
            cells_ = [f"{rows.loc[s, 'saved_time_s'] / 1e6:.2f} / {rows.loc[s, 'no_cutoff_saved_time_s'] / 1e6:.2f}"
                      f" / {rows.loc[s, 'oracle_saved_time_s'] / 1e6:.2f}" for s in SHOWN]
            lines.append(f"| {trace.split('-')[0]}-{trace.split('-')[1]} | {label} | " + " | ".join(cells_) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default="results/advisor")
    parser.add_argument("--traces", default=",".join(WITH_WAITS))
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    tables = {t: trace_table(t, Path(args.store), args.n_jobs) for t in args.traces.split(",")}
    print(table5(tables))
    print()
    print(saved(tables))


if __name__ == "__main__":
    main()
