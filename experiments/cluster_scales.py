"""The cloud-cluster paper's Table 3 and its merging figures on the synthetic load at scales 1-5.

    python experiments/cluster_scales.py [--store results/cluster/store-scales] [--n-jobs 2]

For each scale (10 x scale bursty users, 14 days): instance hours under exact and wall-clock
charging with no cap, mean overhead, and cost; and the extra cost of per-user instances over one
merged pool with no cap and under a cap of 300 instances (the paper used 500 for its larger log).
Every run is a cell of the sweep runner (resumable store).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from broker.cloudcluster.sweep import cluster_cell
from broker.sweep import cells, run_sweep

SCALES = (1, 2, 3, 4, 5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default="results/cluster/store-scales")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    configs = [{"workload": {"synthetic": float(s), "seed": 1}, "cap": cap, "merge": merge, "charging": charging}
               for s in SCALES for cap in (None, 300) for merge in (True, False)
               for charging in ("exact", "wall-clock")]
    todo = cells(configs, name="cluster-scales-v2", root_seed=1, paired=True)
    results = run_sweep(cluster_cell, todo, store=Path(args.store), n_jobs=args.n_jobs)
    by = {(c["workload"]["synthetic"], c["cap"], c["merge"], c["charging"]): r for c, r in zip(configs, results,
                                                                                                   strict=True)}
    print("| load | jobs | hours, exact | hours, wall-clock | wall-clock extra | mean overhead (s) "
          "| cost exact ($) | cost wall-clock ($) | per-user extra, no cap | per-user extra, cap 300 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in SCALES:
        e, w = by[(float(s), None, True, "exact")], by[(float(s), None, True, "wall-clock")]
        extra = {cap: by[(float(s), cap, False, "exact")]["cost"] / by[(float(s), cap, True, "exact")]["cost"] - 1
                 for cap in (None, 300)}
        print(f"| S{s} | {e['jobs']:,} | {e['instance_hours']:,} | {w['instance_hours']:,} "
              f"| {w['instance_hours'] / e['instance_hours'] - 1:.1%} | {e['overhead_mean_s']:.2f} "
              f"| {e['cost']:,.0f} | {w['cost']:,.0f} | {extra[None]:.2%} | {extra[300]:.2%} |")


if __name__ == "__main__":
    main()
