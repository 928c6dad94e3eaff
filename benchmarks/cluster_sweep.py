"""A 200-cell cloud-cluster policy sweep: 1 worker against 2, and a cell against one plain replay.

    python benchmarks/cluster_sweep.py [--trace PATH] [--limit N] [--workers 2]

The grid spans the policy families (P1 caps x P2 x charging, P3 x boot, P4 x P2 x charging,
P4 x P5, P6 x charging x P2): 200 cells over one trace, run through the sweep runner
(:func:`broker.sweep.run_sweep`, no store) on a Dask ``LocalCluster`` of one worker process and of
``--workers`` worker processes (one thread each), so both measurements run cells in fresh worker
processes; and sequentially in this process (joblib's ``n_jobs=1``), for reference. The baseline in
the same run is one plain replay (no cap, merged, exact charging, no boot). Each worker reads the
trace once (cached per process), so that cost is inside the sweep times. Prints wall times, the
speed-up, and per-cell time over the plain replay; checks that all runs give identical results.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from distributed import Client, LocalCluster
from joblib import parallel_config

from broker.cloudcluster.sweep import cluster_cell, grid
from broker.sweep import cells, run_sweep

TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def spec(trace: str, limit: int | None) -> dict:
    workload = {"trace": trace, "seed": 1, **({"limit": limit} if limit else {})}
    return {"workload": workload, "family": [
        {"name": "P1 x P2 x charging", "cap": [2, 5, 10, 15, 20, 30, 40, 60, 100, "none"], "merge": [True, False],
         "charging": ["exact", "wall-clock"]},
        {"name": "P3 x boot",
         "keepalive": [f"fixed:{p}" for p in (0, 0.1, 0.2, 0.3, 0.4, 0.5)] + ["idle:0.5", "load:0.5"],
         "boot_s": [0, 120, 240, 480, 600]},
        {"name": "P4 x P2 x charging", "cap": 40, "delay_min": [0, 1, 2, 3, 4, 5, 10, 15, 20, 30],
         "merge": [True, False], "charging": ["exact", "wall-clock"]},
        {"name": "P4 x P5", "cap": 40, "delay_min": [1, 10, 15, 20, 30],
         "burst_ratio": [0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1.0]},
        {"name": "P6 x charging x P2", "cap": 40, "wait_next_hour_min": [0, 2, 5, 8, 10, 15, 20, 25, 28, 30],
         "charging": ["exact", "wall-clock"], "merge": [True, False]},
    ]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    configs = grid(spec(args.trace, args.limit))
    todo = cells(configs, name="bench-cluster", root_seed=1, paired=True)
    cluster_cell(configs[0], 0)  # read the trace once here, so the plain replay below times the replay only
    base = {**configs[0], "cap": None, "merge": True, "charging": "exact"}
    replay = float("inf")
    for _ in range(3):  # best of 3
        t = time.perf_counter()
        plain = cluster_cell(base, 0)
        replay = min(replay, time.perf_counter() - t)
    print(f"{len(todo)} cells on {Path(args.trace).name}" + (f" (first {args.limit} jobs)" if args.limit else "")
          + f", {plain['jobs']:,} jobs; one plain replay (best of 3): {replay:.3f} s")
    times, outputs = {}, {}
    t = time.perf_counter()
    with parallel_config(backend="sequential"):
        outputs["in-process"] = run_sweep(cluster_cell, todo, store=None, n_jobs=1)
    times["in-process"] = time.perf_counter() - t
    for n in (1, args.workers):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster, Client(cluster) as client, \
                parallel_config(backend="dask", client=client):
            t = time.perf_counter()
            outputs[n] = run_sweep(cluster_cell, todo, store=None, n_jobs=-1)
            times[n] = time.perf_counter() - t
    for label, wall in times.items():
        name = label if isinstance(label, str) else f"{label} worker process(es)"
        print(f"  {name}: {wall:.1f} s, {wall / len(todo):.3f} s per cell = "
              f"{wall / len(todo) / replay:.2f} x one plain replay per cell")
    print(f"  speed-up {args.workers} workers over 1: {times[1] / times[args.workers]:.2f}x")
    assert all(out == outputs[1] for out in outputs.values()), "the runs gave different results"
    print("  identical results in process, on 1 and on", args.workers, "workers")


if __name__ == "__main__":
    main()
