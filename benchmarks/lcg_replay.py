"""Replay speed of the engine against a bare heap-event loop, measured in the same run.

Replays all jobs of LCG-2005-1 (Heterogeneous requirements) with FCFS-SM alone and with CoH over
the paper's trio (FCFS-SM, FCFS-LD, FCFS-CFH); times a bare ``heapq`` loop that pushes and pops
one arrival and one departure per job (the least any job-level simulator must do) over the same
jobs; prints jobs/s and the ratio of each replay's time to the bare loop's.

    python benchmarks/lcg_replay.py [--trace PATH] [--limit N] [--repeat K]
"""

from __future__ import annotations

import argparse
import heapq
import json
import platform
import time
from pathlib import Path

import numpy as np

from broker import CohConfig, SimulationConfig, load_price_book, simulate
from heuristics.registry import PAPER_TRIO
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view

DEFAULT_TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "LCG-2005-1.swf.gz"


def bare_heap_loop(arrival: np.ndarray, departure: np.ndarray) -> int:
    """Push every arrival and departure into one heap and pop them all in time order."""
    heap: list[tuple[float, int, int]] = []
    push, pop = heapq.heappush, heapq.heappop
    for i, (a, d) in enumerate(zip(arrival.tolist(), departure.tolist(), strict=True)):
        push(heap, (a, 1, i))
        push(heap, (d, 0, i))
    events = 0
    while heap:
        pop(heap)
        events += 1
    return events


def best_of(repeat: int, fn, *args):  # type: ignore[no-untyped-def]
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - t)
    return min(times), result


def replay(jobs: JobTable, policy: str) -> tuple[float, dict]:
    catalog = load_price_book().catalog()
    config = SimulationConfig(CohConfig(policy, heuristics=PAPER_TRIO))
    t = time.perf_counter()
    result = simulate(jobs, catalog, config=config, seed=1)
    return time.perf_counter() - t, result.summary.to_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", default=str(DEFAULT_TRACE))
    parser.add_argument("--limit", type=int, default=None, help="first N jobs only")
    parser.add_argument("--repeat", type=int, default=3, help="bare-loop repetitions (best is kept)")
    args = parser.parse_args()
    swf = load_trace(args.trace)
    jobs, report = job_view(swf.frame, reqs="heterogeneous", seed=1, origin=swf.header.unix_start_time or 0,
                            source=args.trace)
    if args.limit:
        jobs = jobs.head(args.limit)
    print(f"{platform.python_implementation()} {platform.python_version()}, {len(jobs):,} jobs ({report.describe()})")
    bare, events = best_of(args.repeat, bare_heap_loop, jobs.arrival, jobs.departure)
    print(f"bare heap loop      {bare:7.2f} s  {len(jobs) / bare:12,.0f} jobs/s  ({events:,} events)")
    rows = {"bare_s": bare, "jobs": len(jobs)}
    for label, policy in (("FCFS-SM", "FCFS-SM"), ("CoH trio", "coh")):
        wall, summary = replay(jobs, policy)
        ratio = wall / bare
        print(f"{label:<18}  {wall:7.2f} s  {len(jobs) / wall:12,.0f} jobs/s  {ratio:6.1f}x bare  "
              f"cost {summary['cost']:,.2f}  cost/LB {summary['cost_over_lb']:.3f}  "
              f"({summary['events']:,} engine events, {summary['ticks']:,} ticks)")
        rows[label] = {"wall_s": wall, "ratio": ratio, "cost": summary["cost"], "cost_over_lb": summary["cost_over_lb"]}
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
