"""CoH (heuristic portfolio) against its members on a trace, for the three requirement models.

    python experiments/coh_lcg.py [--trace PATH] [--seeds 1,2,...] [--limit N]

Prints one Markdown table row per (requirement model, policy): mean and standard deviation over
the seeds of cost, cost/LB and utilization. The seed drives the requirement draw and the policy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from broker import CohConfig, SimulationConfig, simulate
from broker.pricing.book import load_price_book
from heuristics.registry import PAPER_TRIO
from workloads.cache import load_trace
from workloads.jobs import job_view

TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "LCG-2005-1.swf.gz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    swf = load_trace(args.trace)
    catalog = load_price_book().catalog()
    print("| requirements | policy | cost ($) | cost / LB | utilization |")
    print("|---|---|---|---|---|")
    for reqs in ("heterogeneous", "constant-100", "constant-10"):
        for policy in (*PAPER_TRIO, "coh"):
            rows = []
            for seed in seeds:
                jobs, _ = job_view(swf.frame, reqs=reqs, seed=seed, origin=swf.header.unix_start_time or 0)
                if args.limit:
                    jobs = jobs.head(args.limit)
                s = simulate(jobs, catalog, config=SimulationConfig(CohConfig(policy)), seed=seed).summary
                rows.append((s.cost, s.cost_over_lb, s.utilization))
            a = np.array(rows)
            mean, std = a.mean(axis=0), a.std(axis=0)
            label = "CoH (trio)" if policy == "coh" else policy
            print(f"| {reqs} | {label} | {mean[0]:,.0f} ± {std[0]:,.0f} | {mean[1]:.3f} ± {std[1]:.3f} "
                  f"| {mean[2]:.1%} ± {std[2]:.1%} |", flush=True)


if __name__ == "__main__":
    main()
