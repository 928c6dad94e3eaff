"""The subset dynamic program against CP-SAT on the same ticks, by number of new jobs, in one run.

Ticks of 3 to 12 new jobs from a CoH replay of LCG-2005-1 over the trio (Heterogeneous, seed 1),
each instance built once (``make_instance``, paid scoring). For each: ``solve_subsets`` and CP-SAT
(deterministic limit of ``--work``, one worker, warm-started from the trio's best plan, as the
portfolio runs it; model building and translation included), the cost of both plans and CP-SAT's
status. Prints the median and mean time of each by size, the ratio, and how often the costs agree
when CP-SAT proves its optimum (they must, always).

    python benchmarks/exact_subsets.py [--jobs 60000] [--per-size 25] [--work 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

from ipp_common import PAPER_TRIO, best_plan, heuristic_plans, instance, load_jobs, replay_capture, table

from broker.coh.ipp import build_model
from broker.coh.subsets import MAX_SUBSET_JOBS, solve_subsets
from heuristics.fleet import Batch, Fleet
from solvers.base import Limit, Status, get_solver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=60_000)
    parser.add_argument("--per-size", type=int, default=25)
    parser.add_argument("--work", type=float, default=2.0)
    args = parser.parse_args()
    kept: dict[int, int] = defaultdict(int)

    def keep(_: int, batch: Batch, __: Fleet) -> bool:
        m = len(batch)
        if 3 <= m <= MAX_SUBSET_JOBS and kept[m] < args.per_size:
            kept[m] += 1
            return True
        return False

    cases = replay_capture(load_jobs("lcg", n_jobs=args.jobs), keep)
    solver = get_solver("cpsat")
    by_size: dict[int, list[tuple[float, float, bool, bool]]] = defaultdict(list)
    for batch, fleet in cases:
        _, warm, _ = best_plan(heuristic_plans(batch, fleet, PAPER_TRIO), batch, fleet)
        t = time.perf_counter()
        inst = instance(batch, fleet)
        _, dp_cost = solve_subsets(inst)
        dp_s = time.perf_counter() - t
        t = time.perf_counter()
        inst = instance(batch, fleet)
        model = build_model(inst)
        result = solver.solve(model.model, limit=Limit.deterministic(args.work), start=model.encode(warm))
        cp_s = time.perf_counter() - t
        proven = result.status is Status.OPTIMAL
        assert result.values is not None
        cp_cost = inst.cost(model.decode(result.values))
        agree = abs(cp_cost - dp_cost) <= 1e-9
        assert dp_cost <= cp_cost + 1e-9, "the dynamic program found a dearer plan than CP-SAT"
        by_size[len(batch)].append((dp_s, cp_s, proven, agree))
    rows, raw = [], {}
    for m in sorted(by_size):
        runs = by_size[m]
        dp = [r[0] for r in runs]
        cp = [r[1] for r in runs]
        proven = [r for r in runs if r[2]]
        rows.append([str(m), str(len(runs)), f"{1e3 * statistics.median(dp):.2f}", f"{1e3 * statistics.mean(dp):.2f}",
                     f"{1e3 * statistics.median(cp):.1f}", f"{1e3 * statistics.mean(cp):.1f}",
                     f"{statistics.mean(cp) / statistics.mean(dp):.1f}x",
                     f"{sum(r[3] for r in proven)}/{len(proven)}"])
        raw[m] = {"n": len(runs), "dp_ms": 1e3 * statistics.mean(dp), "cpsat_ms": 1e3 * statistics.mean(cp)}
    print(table(["jobs", "ticks", "DP median (ms)", "DP mean (ms)", "CP-SAT median (ms)", "CP-SAT mean (ms)",
                 "CP-SAT / DP", "same cost where CP-SAT proves"], rows))
    print(json.dumps(raw))


if __name__ == "__main__":
    main()
