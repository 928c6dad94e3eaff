"""Q-learning leasing under each reading the paper leaves open, on a shifted day grid: what each does.

    python experiments/leasing_readings.py --store results/leasing-readings-kth
    python experiments/leasing_readings.py --trace ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz --nodes 128 \\
        --store results/leasing-readings-sdsc-sp2

Run from the repository root. The readings (``broker/hybrid/learning.py``): the references a step's
balance is normalised by (``clones`` of the step, or two whole ``runs`` stepped alongside), the
reward mapping (``minmax``, the paper's, or the ``balance`` itself), and which clone continues (the
chosen cap's, or the step's best: hindsight, measured only). Each runs with the one-day grid
shifted by 0, 6, 12 and 18 hours, to show how much of a difference is noise. Beside them: the best
constant V (every V in 0..M), the random policy (``--random`` runs), epsilon-greedy (epsilon 0.1,
k = 3, ``--seeds`` seeds) and the sampled policy (the former ``egreedy``), under the default
reading. Every run is a cell of the sweep runner (one JSON file per cell under ``--store``:
resumable). Figures are the whole run's, against the whole-run references (V = 0 for the wait,
V unbounded for the cloud use): twt_imp%, c%, balance, and the mean cap.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
from joblib import parallel_config

from broker import balance, cells, run_sweep
from broker.hybrid.sweep import sweep_cell

KTH = "../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"
OFFSETS_H = (0, 6, 12, 18)
READINGS = [{"references": r, "reward": w, "continue_best": b}
            for r, w, b in itertools.product(("clones", "runs"), ("minmax", "balance"), (False, True))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=KTH)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--store", default="results/leasing-readings")
    parser.add_argument("--random", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--default", default="clones", help="the references of the epsilon-greedy and sampled rows")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    m, base = args.nodes, {"trace": args.trace, "nodes": args.nodes}
    fixed = cells([{**base, "policy": "constant", "params": {"v": "inf"}},
                   *({**base, "policy": "constant", "params": {"v": v}} for v in range(m + 1))],
                  name="readings", root_seed=1)
    learners = cells([{**base, "policy": "qlearning", "params": reading, "offset_s": h * 3600.0}
                      for reading in READINGS for h in OFFSETS_H], name="readings", root_seed=2)
    others = cells([{**base, "policy": "egreedy", "params": {"epsilon": 0.1, "k": 3, "references": args.default}},
                    {**base, "policy": "sampled", "params": {"k": 3, "references": args.default}}],
                   name="readings", root_seed=3, repeats=args.seeds)
    randoms = cells([{**base, "policy": "random"}], name="readings", root_seed=4, repeats=args.random)
    todo = [*fixed, *learners, *others, *randoms]
    with parallel_config(backend="loky", n_jobs=args.n_jobs):
        results = run_sweep(sweep_cell, todo, store=Path(args.store))
    by = {c.key: r for c, r in zip(todo, results, strict=True)}
    twt0, cinf = by[fixed[1].key]["twt_s"], by[fixed[0].key]["cloud_cpu_s"]

    def figures(r: dict) -> tuple[float, float, float, float]:
        b = balance(r["twt_s"], r["cloud_cpu_s"], twt0, cinf)
        return b.twt_imp_pct, b.c_pct, b.balance, r["cap_mean"]

    constant = {int(c.config["params"]["v"]): figures(by[c.key]) for c in fixed[1:]}
    best = max(constant, key=lambda v: (constant[v][2], -v))
    print(f"{args.trace}, M = {m}: references twt(V=0) = {twt0:,.0f} s, c(V=inf) = {cinf:,.0f} node-s")
    print("| policy | reading | grid offset | twt_imp% | c% | balance | mean V |\n|---|---|---|---|---|---|---|")
    t, c, b, _ = constant[best]
    print(f"| best constant V = {best} | | | {t:.2f} | {c:.2f} | {b:.2f} | {best} |")
    rb = np.array([figures(by[x.key])[2] for x in randoms])
    print(f"| random V per day, mean of {len(rb)} | | | | | {rb.mean():.2f} ± {rb.std():.2f} | |")
    for reading in READINGS:
        label = f"{reading['references']}, {reading['reward']}, {'best' if reading['continue_best'] else 'chosen'}"
        rows = [figures(by[x.key]) for x in learners if x.config["params"] == reading]
        for h, (t, c, b, v) in zip(OFFSETS_H, rows, strict=True):
            print(f"| Q-learning | {label} | {h} h | {t:.2f} | {c:.2f} | {b:.2f} | {v:.1f} |")
        bs = np.array([r[2] for r in rows])
        print(f"| Q-learning | {label} | mean (spread) | | | {bs.mean():.2f} ({bs.max() - bs.min():.2f}) | |")
    for policy in ("egreedy", "sampled"):
        rows = np.array([figures(by[x.key]) for x in others if x.config["policy"] == policy])
        t, c, b, v = rows.mean(axis=0)
        print(f"| {policy}, {len(rows)} seeds | {args.default}, minmax, chosen | 0 h | {t:.2f} | {c:.2f} | "
              f"{b:.2f} ± {rows[:, 2].std():.2f} | {v:.1f} |")


if __name__ == "__main__":
    main()
