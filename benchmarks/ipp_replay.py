"""CoH with its integer program over a whole trace, as a multiple of CoH over the trio alone, in one run.

Replays the trace (all of LCG-2005-1 by default, Heterogeneous requirements, seed 1) twice: CoH
over the paper's trio (FCFS-SM, FCFS-LD, FCFS-CFH), then the same with the integer program on
CP-SAT under a deterministic limit (2 deterministic seconds, one worker). Prints both wall times,
the ratio, the costs, and how the IPP settled its ticks (proven optimal, at the limit, by path);
``--reference-cost`` / ``--reference-optimal`` compare with a run of the same command on an
earlier commit (the figures of the commit before issue 17 by default, docs/BENCHMARKS.md).

    python benchmarks/ipp_replay.py [--trace PATH] [--limit N] [--exact-jobs K] [--solver cpsat]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

from broker import CohConfig, IppConfig, SimulationConfig, load_price_book, simulate
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view

DEFAULT_TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "LCG-2005-1.swf.gz"
#: This command on the whole of LCG at df56383 (before issue 17): cost ($) and proven-optimal ticks.
REFERENCE = {"cost": 16_727.75, "optimal": 76_900}


def replay(jobs: JobTable, ipp: IppConfig | None) -> tuple[float, dict[str, Any]]:
    config = SimulationConfig(CohConfig("coh"), ipp=ipp)
    started = time.perf_counter()
    summary = simulate(jobs, load_price_book().catalog(), config=config, seed=1).summary
    return time.perf_counter() - started, summary.to_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", default=str(DEFAULT_TRACE))
    parser.add_argument("--limit", type=int, default=None, help="first N jobs only")
    parser.add_argument("--solver", default="cpsat")
    parser.add_argument("--time-limit", type=float, default=2.0, help="deterministic seconds (CP-SAT)")
    parser.add_argument("--exact-jobs", type=int, default=None, help="IppConfig.exact_jobs (default: its default)")
    parser.add_argument("--reference-cost", type=float, default=REFERENCE["cost"])
    parser.add_argument("--reference-optimal", type=int, default=REFERENCE["optimal"])
    args = parser.parse_args()
    swf = load_trace(args.trace)
    jobs, report = job_view(swf.frame, reqs="heterogeneous", seed=1, origin=swf.header.unix_start_time or 0,
                            source=args.trace)
    if args.limit:
        jobs = jobs.head(args.limit)
    print(f"{platform.python_implementation()} {platform.python_version()}, {len(jobs):,} jobs ({report.describe()})")
    trio_s, trio = replay(jobs, None)
    print(f"CoH over the trio      {trio_s:8.1f} s  cost {trio['cost']:,.2f}  cost/LB {trio['cost_over_lb']:.3f}")
    extra = {"exact_jobs": args.exact_jobs} if args.exact_jobs is not None else {}
    ipp = IppConfig(args.solver, time_limit=args.time_limit, deterministic=True, **extra)
    ipp_s, out = replay(jobs, ipp)
    stats = out["policy_stats"]
    ratio = ipp_s / trio_s
    print(f"CoH + IPP ({args.solver}, work {args.time_limit:g})  {ipp_s:8.1f} s  cost {out['cost']:,.2f}  "
          f"cost/LB {out['cost_over_lb']:.3f}  {ratio:.1f}x the trio's replay")
    print(f"  ticks {stats['portfolio_ticks']:,}: proven optimal {stats['ipp_optimal_ticks']:,}, at the limit "
          f"{stats['ipp_limit_hit_ticks']:,}, exact {stats['ipp_exact_ticks']:,}, bound {stats['ipp_bound_ticks']:,}; "
          f"by status {stats['ipp_status']}")
    if args.limit is None and args.trace == str(DEFAULT_TRACE):
        change = out["cost"] / args.reference_cost - 1
        print(f"  against the reference: cost {change:+.3%} (${args.reference_cost:,.2f}), proven-optimal ticks "
              f"{stats['ipp_optimal_ticks'] - args.reference_optimal:+,} ({args.reference_optimal:,})")
    print(json.dumps({"trio_s": trio_s, "ipp_s": ipp_s, "ratio": ratio, "trio_cost": trio["cost"],
                      "ipp_cost": out["cost"], "optimal": stats["ipp_optimal_ticks"],
                      "limit_hit": stats["ipp_limit_hit_ticks"], "ticks": stats["portfolio_ticks"]}))


if __name__ == "__main__":
    main()
