"""Q-learning's cost: a whole KTH run with daily clones of every V, against one run with a fixed V.

    python benchmarks/leasing_clones.py [--trace PATH] [--repeat 1]

Baseline: one constant-V run of the whole trace (the same engine, one clone a step). Then
Q-learning evaluating every V in 0..M each day (the default reading, whole-run references),
naively (every clone simulated) and with the clones that cannot differ shared, epsilon-greedy
(epsilon 0.1, the step's V and k = 3 others evaluated) and the sampled policy (k = 3 and the free
V). Prints wall times, clones simulated and the ratios to the baseline, and checks that the shared
and naive runs give the same caps and the same result.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from broker import LEASING_POLICIES, run_constant, run_leasing
from workloads.cache import load_trace
from workloads.rigid import rigid_view

TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"


def timed(fn, repeat: int):  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    jobs, _ = rigid_view(load_trace(args.trace).frame, nodes=args.nodes)
    m = args.nodes
    policy = LEASING_POLICIES.get
    base, _ = timed(lambda: run_constant(jobs, m, 31), args.repeat)
    rows = [("constant V = 31 (baseline)", base, None)]
    shared_t, shared = timed(lambda: run_leasing(jobs, m, policy("qlearning")(m)), args.repeat)
    naive_t, naive = timed(lambda: run_leasing(jobs, m, policy("qlearning")(m, share=False)), args.repeat)
    eps_t, eps = timed(lambda: run_leasing(jobs, m, policy("egreedy")(m, k=3)), args.repeat)
    sampled_t, sampled = timed(lambda: run_leasing(jobs, m, policy("sampled")(m, k=3)), args.repeat)
    rows += [("Q-learning, every V simulated", naive_t, naive), ("Q-learning, shared clones", shared_t, shared),
             ("epsilon-greedy, epsilon 0.1, k = 3", eps_t, eps), ("sampled, k = 3", sampled_t, sampled)]
    same = shared.summary.caps == naive.summary.caps and shared.summary.twt_s == naive.summary.twt_s
    print(f"{len(jobs):,} jobs, M = {m}, {len(shared.summary.caps)} daily steps; shared == naive: {same}")
    print(f"{'run':36} {'wall s':>8} {'x baseline':>11} {'clones':>8}")
    for label, wall, run in rows:
        clones = "" if run is None else f"{run.summary.clones_simulated:,}"
        print(f"{label:36} {wall:8.2f} {wall / base:10.1f}x {clones:>8}")
    print(f"mean cap: Q {np.mean(shared.summary.caps):.1f}, epsilon {np.mean(eps.summary.caps):.1f}, "
          f"sampled {np.mean(sampled.summary.caps):.1f}")


if __name__ == "__main__":
    main()
