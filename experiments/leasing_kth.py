"""The Q-learning paper's KTH table: best constant V, the random policy, Q-learning, epsilon-greedy.

    python experiments/leasing_kth.py --store results/leasing_kth [--random 1000] [--backend loky]

Every run is a cell of the sweep runner (``broker/sweep.py``): a pure function of its configuration
and seed, stored as one JSON file, so the command resumes where it stopped and runs unchanged on a
Dask or Ray cluster (``--backend dask --address tcp://...``). KTH-SP2 (100 nodes, 28,475 jobs, 11
months), EASY backfilling, one-day steps, balance against V = 0 (twt) and V unbounded (c).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from broker.hybrid import balance
from broker.leasing import summarize_sweep, sweep_cell
from broker.sweep import cells, run_sweep

TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
M = 100


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--store", default="results/leasing_kth")
    parser.add_argument("--random", type=int, default=1000)
    parser.add_argument("--backend", default="loky")
    parser.add_argument("--address", default=None)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    store = Path(args.store)
    store.mkdir(parents=True, exist_ok=True)
    base = {"trace": args.trace, "nodes": M}
    configs = [{**base, "policy": "constant", "cap": "inf"}, *({**base, "policy": "constant", "cap": v}
                                                                 for v in range(M + 1))]
    fixed = cells(configs, name="leasing-kth-v2", root_seed=1)
    learners = cells([{**base, "policy": "qlearning"}, {**base, "policy": "epsilon", "epsilon_k": 3},
                      {**base, "policy": "epsilon", "epsilon_k": 10}], name="leasing-kth-v2", root_seed=2)
    randoms = cells([{**base, "policy": "random"}], name="leasing-kth-v2", root_seed=3, repeats=args.random)
    todo = [*fixed, *learners, *randoms]
    results = run_sweep(sweep_cell, todo, store=store, backend=args.backend, n_jobs=args.n_jobs,
                        address=args.address)
    by = dict(zip([c.key for c in todo], results, strict=True))
    ref, local = by[fixed[0].key], by[fixed[1].key]
    summary = summarize_sweep(ref, local, {int(c.config["cap"]): by[c.key] for c in fixed[1:]},
                              [by[c.key] for c in randoms])
    best = summary.constant[summary.best_v]
    print("| policy | twt_imp% | c% | balance | clones simulated |\n|---|---|---|---|---|")
    print(f"| best constant V = {summary.best_v} | {best['twt_imp_pct']:.2f} | {best['cost_pct']:.2f} "
          f"| {best['balance']:.2f} | 1 |")
    rb = np.array(summary.random_balances)
    print(f"| random V per day, mean of {len(rb)} | | | {rb.mean():.2f} ± {rb.std():.2f} | 1 |")
    print(f"| random V per day, best of {len(rb)} | | | {rb.max():.2f} | 1 |")
    for c in learners:
        r = by[c.key]
        b = balance(r["twt"], r["cost"], local["twt"], ref["cost"])
        label = c.config["policy"] + (f" (k = {c.config['epsilon_k']})" if "epsilon_k" in c.config else "")
        print(f"| {label} | {b.twt_imp_pct:.2f} | {b.c_pct:.2f} | {b.balance:.2f} | {r['simulated']:,} |")
    print("\nconstant V: " + ", ".join(f"{v}:{summary.constant[v]['balance']:.1f}" for v in range(0, M + 1, 10)))

if __name__ == "__main__":
    main()
