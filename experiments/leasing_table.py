"""The Q-learning paper's table: best constant V, the random policy, Q-learning, epsilon-greedy.

    python experiments/leasing_table.py --store results/leasing_kth [--random 1000] [--backend loky]
    python experiments/leasing_table.py --trace SDSC-SP2 --nodes 128 --name leasing-sdsc-sp2 \
        --store results/leasing_sdsc_sp2

Every run is a cell of the sweep runner (``broker/sweep.py``): a pure function of its configuration
and seed, stored as one JSON file, so the command resumes where it stopped and runs unchanged on a
Dask or Ray cluster (``--backend dask --address tcp://...``). Default: KTH-SP2 (100 nodes, 28,475
jobs, 11 months); EASY backfilling, one-day steps, balance against V = 0 (twt) and V unbounded (c).
Epsilon-greedy is random, so it runs ``--epsilon-seeds`` times per k and the table gives the mean.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from joblib import parallel_config

from broker import balance, cells, run_sweep
from broker.hybrid.sweep import summarize_sweep, sweep_cell

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TRACE = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--name", default="leasing-kth-v3", help="cell name (part of every stored key)")
    parser.add_argument("--store", default="results/leasing_kth")
    parser.add_argument("--random", type=int, default=1000)
    parser.add_argument("--epsilon-seeds", type=int, default=10)
    parser.add_argument("--backend", default="loky", help="a joblib backend (set up dask or ray yourself)")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    store = Path(args.store)
    store.mkdir(parents=True, exist_ok=True)
    m, name = args.nodes, args.name
    base = {"trace": args.trace, "nodes": m}
    configs = [{**base, "policy": "constant", "params": {"v": "inf"}},
               *({**base, "policy": "constant", "params": {"v": v}} for v in range(m + 1))]
    fixed = cells(configs, name=name, root_seed=1)
    epsilon = [{**base, "policy": "egreedy", "params": {"k": 3}}, {**base, "policy": "egreedy", "params": {"k": 10}}]
    learners = cells([{**base, "policy": "qlearning"}, *epsilon], name=name, root_seed=2)
    randoms = cells([{**base, "policy": "random"}], name=name, root_seed=3, repeats=args.random)
    more_epsilon = cells(epsilon, name=name, root_seed=4, repeats=max(args.epsilon_seeds - 1, 1))
    more_epsilon = more_epsilon if args.epsilon_seeds > 1 else []
    todo = [*fixed, *learners, *randoms, *more_epsilon]
    with parallel_config(backend=args.backend):
        results = run_sweep(sweep_cell, todo, store=store, n_jobs=args.n_jobs)
    by = dict(zip([c.key for c in todo], results, strict=True))
    ref, local = by[fixed[0].key], by[fixed[1].key]
    summary = summarize_sweep(ref, local, {int(c.config["params"]["v"]): by[c.key] for c in fixed[1:]},
                              [by[c.key] for c in randoms])
    if summary.best_v is None:
        raise SystemExit(f"the balances are undefined: {summary.undefined}")
    best = summary.constant[summary.best_v]
    print("| policy | twt_imp% | c% | balance | clones simulated |\n|---|---|---|---|---|")
    print(f"| best constant V = {summary.best_v} | {best['twt_imp_pct']:.2f} | {best['cost_pct']:.2f} "
          f"| {best['balance']:.2f} | 1 |")
    rb = np.array(summary.random_balances, dtype=np.float64)
    print(f"| random V per day, mean of {len(rb)} | | | {rb.mean():.2f} ± {rb.std():.2f} | 1 |")
    print(f"| random V per day, best of {len(rb)} | | | {rb.max():.2f} | 1 |")
    for c in learners:
        r = by[c.key]
        b = balance(r["twt_s"], r["cloud_cpu_s"], local["twt_s"], ref["cloud_cpu_s"])
        label = c.config["policy"] + (f" (k = {c.config['params']['k']})" if "params" in c.config else "")
        print(f"| {label} | {b.twt_imp_pct:.2f} | {b.c_pct:.2f} | {b.balance:.2f} | {r['simulated']:,} |")
    for eps in epsilon:
        runs = [by[c.key] for c in [*learners, *more_epsilon] if c.config == eps]
        bs = np.array([balance(r["twt_s"], r["cloud_cpu_s"], local["twt_s"], ref["cloud_cpu_s"]).balance for r in runs])
        clones = np.mean([r["simulated"] for r in runs])
        print(f"| epsilon (k = {eps['params']['k']}), mean of {len(bs)} seeds | | | {bs.mean():.2f} ± {bs.std():.2f} "
              f"(min {bs.min():.2f}, max {bs.max():.2f}) | {clones:,.0f} |")
    print("\nconstant V: " + ", ".join(f"{v}:{summary.constant[v]['balance']:.1f}" for v in range(0, m + 1, 10)))

if __name__ == "__main__":
    main()
