"""The LCG table against the paper: CoH (trio + IPP) vs FCFS-SM, FCFS-LD, FCFS-CFH, for the three
requirement models over several seeds; mean and standard deviation of cost, cost/LB, utilization.

    python experiments/coh_lcg_table.py --store results/coh_lcg --seeds 1-10 [--n-jobs 2] [--work 2]

Each cell (requirements, policy, seed) is a pure function of its configuration and is stored as one
JSON file under ``--store``; an interrupted run resumes without recomputing finished cells. Cells
run through joblib (loky on one machine; any joblib backend via ``joblib.parallel_config``).
The IPP uses CP-SAT under a deterministic work limit (``--work`` deterministic seconds, one
worker), so every number is reproducible.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
from cells import seeds_of, stored
from joblib import Parallel, delayed

from broker import CohConfig, EngineConfig, IppConfig, SimulationConfig, load_price_book, simulate
from heuristics.occupancy import CAPACITY_RULES, CapacityRule
from workloads.cache import load_trace
from workloads.jobs import job_view

TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "LCG-2005-1.swf.gz"
REQS = ("heterogeneous", "constant-100", "constant-10")


def configs(work: float, max_vms: int | None, capacity: CapacityRule = "interval") -> dict[str, SimulationConfig]:
    engine = EngineConfig(capacity=capacity)
    return {
        "FCFS-SM": SimulationConfig(CohConfig("FCFS-SM"), engine),
        "FCFS-LD": SimulationConfig(CohConfig("FCFS-LD"), engine),
        "FCFS-CFH": SimulationConfig(CohConfig("FCFS-CFH"), engine),
        "CoH (trio)": SimulationConfig(CohConfig("coh"), engine),
        "CoH (trio + IPP)": SimulationConfig(CohConfig("coh"), engine, ipp=IppConfig(
            "cpsat", time_limit=work, deterministic=True, max_vms=max_vms)),
    }


def cell_key(trace: str, reqs: str, label: str, config: SimulationConfig, seed: int) -> str:
    text = json.dumps([Path(trace).name, reqs, label, config.to_dict(), seed], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_cell(trace: str, reqs: str, config: SimulationConfig, seed: int, limit: int | None) -> dict:
    swf = load_trace(trace)
    jobs, _ = job_view(swf.frame, reqs=reqs, seed=seed, origin=swf.header.unix_start_time or 0)
    if limit:
        jobs = jobs.head(limit)
    s = simulate(jobs, load_price_book().catalog(), config=config, seed=seed).summary
    return {"cost": s.cost, "cost_over_lb": s.cost_over_lb, "utilization": s.utilization, "jobs": s.jobs,
            "policy_stats": s.policy_stats}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--store", default="results/coh_lcg")
    parser.add_argument("--seeds", default="1-10")
    parser.add_argument("--reqs", default=",".join(REQS))
    parser.add_argument("--policies", default=None, help="comma-separated labels (default: all)")
    parser.add_argument("--work", type=float, default=2.0)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--max-vms", type=int, default=None, help="IPP candidate running VMs (default: all)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--capacity", default="interval", choices=CAPACITY_RULES,
                        help="capacity rule (tick: the rule before issue 16)")
    args = parser.parse_args()
    store = Path(args.store)
    store.mkdir(parents=True, exist_ok=True)
    table = configs(args.work, args.max_vms, args.capacity)
    labels = args.policies.split(",") if args.policies else list(table)
    cells = [(r, lab, s) for r in args.reqs.split(",") for lab in labels for s in seeds_of(args.seeds)]
    tasks = [delayed(stored)(store / f"{cell_key(args.trace, r, lab, table[lab], s)}.json",
                             lambda r=r, lab=lab, s=s: run_cell(args.trace, r, table[lab], s, args.limit))
             for r, lab, s in cells]
    results = Parallel(n_jobs=args.n_jobs, verbose=5)(tasks)
    print("| requirements | policy | seeds | cost ($) | cost / LB | utilization |")
    print("|---|---|---|---|---|---|")
    for r in args.reqs.split(","):
        for lab in labels:
            rows = np.array([[res["cost"], res["cost_over_lb"], res["utilization"]]
                             for (rr, ll, _), res in zip(cells, results, strict=True) if rr == r and ll == lab])
            m, sd = rows.mean(axis=0), rows.std(axis=0)
            print(f"| {r} | {lab} | {len(rows)} | {m[0]:,.0f} ± {sd[0]:,.0f} | {m[1]:.3f} ± {sd[1]:.3f} "
                  f"| {m[2]:.1%} ± {sd[2]:.1%} |")


if __name__ == "__main__":
    main()
