"""The interval capacity rule against the tick rule, measured in the same run: cost and replay time.

Replays whole traces with one heuristic under both rules (``EngineConfig(capacity=...)``): the tick
rule (a job's requirement held from its decision tick, the rule before issue 16) is the baseline.
Prints each rule's cost and wall time, the cost change and the time ratio.

    python benchmarks/capacity_rule.py [--traces KTH-SP2-1996-2.1-cln,...] [--policy FCFS-LD]
                                       [--reqs constant-100] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from broker import CohConfig, EngineConfig, SimulationConfig, load_price_book, simulate
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view

TRACE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TRACES = ("KTH-SP2-1996-2.1-cln", "SDSC-BLUE-2000-4.2-cln", "LCG-2005-1")


def replay(jobs: JobTable, policy: str, capacity: str) -> tuple[float, float]:
    """Wall time (s) and cost ($) of one replay."""
    config = SimulationConfig(CohConfig(policy), EngineConfig(capacity=capacity))  # type: ignore[arg-type]
    started = time.perf_counter()
    cost = simulate(jobs, load_price_book().catalog(), config=config, seed=1).summary.cost
    return time.perf_counter() - started, cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", default=",".join(TRACES))
    parser.add_argument("--policy", default="FCFS-LD")
    parser.add_argument("--reqs", default="constant-100")
    parser.add_argument("--limit", type=int, default=None, help="first N jobs only")
    args = parser.parse_args()
    rows = {}
    print(f"{args.policy}, {args.reqs}: tick rule (baseline) and interval rule, same run")
    for name in args.traces.split(","):
        swf = load_trace(TRACE_DIR / f"{name}.swf.gz")
        jobs, _ = job_view(swf.frame, reqs=args.reqs, seed=1, origin=swf.header.unix_start_time or 0)
        if args.limit:
            jobs = jobs.head(args.limit)
        tick_s, tick_cost = replay(jobs, args.policy, "tick")
        interval_s, interval_cost = replay(jobs, args.policy, "interval")
        change, ratio = interval_cost / tick_cost - 1, interval_s / tick_s
        print(f"{name:<24} {len(jobs):>8,} jobs  tick ${tick_cost:,.2f} in {tick_s:.1f} s  "
              f"interval ${interval_cost:,.2f} in {interval_s:.1f} s  cost {change:+.2%}  time {ratio:.2f}x")
        rows[name] = {"jobs": len(jobs), "tick_cost": tick_cost, "tick_s": tick_s, "interval_cost": interval_cost,
                      "interval_s": interval_s, "cost_change": change, "time_ratio": ratio}
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
