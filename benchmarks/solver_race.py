"""The solver race against each backend alone, by tick size and limit, measured in the same run.

Instances: real LCG-2005-1 ticks with more jobs than the exact path takes (13 or more), captured from
a CoH replay over the trio, with the engine's 10 s tick and, for larger ticks, a 30 s one; each
warm-started from the trio's best plan, as the portfolio does. For each instance and limit (wall
seconds, or deterministic work: CP-SAT deterministic seconds, CBC 1000 nodes per unit):

- ``cpsat`` / ``cbc``: the backend alone, in this process (CP-SAT with 2 workers under a wall
  limit, one under a work limit; CBC serial);
- ``race here``: both, one after the other in this process (``solvers.race``, workers=1);
- ``race workers``: both side by side in two loky workers (workers=2), warm before timing.

Per tick-size class it prints the mean wall time, the proven optima, the plans found and their mean
excess ($) over the cheapest plan any of them found, and the race's time over the best single
backend's. The race lists CBC first (``--solver cbc,cpsat``): in this process CBC runs first and
CP-SAT gets what is left of the limit. Racing in
workers pays where ``race workers`` beats ``race here``: there a round trip to the workers costs
less than running the backends one after the other (``IppConfig.race_jobs``).

    python benchmarks/solver_race.py [--jobs 60000] [--per-class 6] [--limits w0.5,w2,d0.5,d2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

from ipp_common import CATALOG, LOOKAHEAD, PAPER_TRIO, best_plan, heuristic_plans, instance, load_jobs, table

from broker.coh.ipp import build_model
from broker.coh.portfolio import CohPolicy
from broker.coh.world import CohWorld, EngineConfig, run
from heuristics.fleet import Batch, Fleet
from heuristics.registry import HEURISTICS
from solvers.base import Limit, Status, get_backend, get_solver
from solvers.race import Entrant, race

CLASSES = ((13, 16), (17, 24), (25, 35), (36, 49))


def capture(jobs, tick: float, per_class: int) -> list[tuple[Batch, Fleet]]:  # type: ignore[no-untyped-def]
    """Up to ``per_class`` ticks of each size class, spread over the replay."""
    from ipp_common import copy_fleet

    seen: dict[tuple[int, int], int] = defaultdict(int)
    cases: list[tuple[Batch, Fleet]] = []

    class Capturing(CohPolicy):
        def decide(self, now, batch, sim):  # type: ignore[no-untyped-def]
            for lo, hi in CLASSES:
                if lo <= len(batch) <= hi:
                    seen[(lo, hi)] += 1
                    if seen[(lo, hi)] % 3 == 1 and sum(lo <= len(b) <= hi for b, _ in cases) < per_class:
                        cases.append((batch, copy_fleet(sim.fleet(stats=True))))
            return super().decide(now, batch, sim)

    policy = Capturing([HEURISTICS.get(n) for n in PAPER_TRIO], lookahead=LOOKAHEAD + tick - 10.0, seed=0)
    run(CohWorld(jobs, CATALOG, EngineConfig(tick=tick), lookahead=policy.lookahead), policy)
    return cases


def limits_of(text: str) -> list[tuple[str, dict[str, Limit]]]:
    """``w2`` (2 wall seconds) or ``d2`` (2 units of work) -> a limit per backend."""
    out = []
    for item in text.split(","):
        value = float(item[1:])
        if item[0] == "w":
            out.append((f"wall {value:g} s", {"cpsat": Limit.wall(value, threads=2), "cbc": Limit.wall(value)}))
        else:
            out.append((f"work {value:g}", {name: get_backend(name).deterministic_limit(value)
                                            for name in ("cpsat", "cbc")}))
    return out


def measure(batch: Batch, fleet: Fleet, limits: dict[str, Limit]) -> dict[str, tuple[float, float | None, bool]]:
    """Wall time, plan cost and proven optimum of each way to solve one tick."""
    _, warm, _ = best_plan(heuristic_plans(batch, fleet, PAPER_TRIO), batch, fleet)
    model = build_model(instance(batch, fleet))
    start = model.encode(warm)
    entrants = [Entrant(get_solver("cbc"), limits["cbc"]), Entrant(get_solver("cpsat"), limits["cpsat"])]
    out: dict[str, tuple[float, float | None, bool]] = {}
    for label, ways, workers in (("cbc", entrants[:1], 1), ("cpsat", entrants[1:], 1), ("race here", entrants, 1),
                                 ("race workers", entrants, 2)):
        if workers > 1:  # the race's entrants share the two cores
            ways = [Entrant(e.solver, Limit.wall(e.limit.seconds, threads=1) if e.limit.seconds else e.limit)
                    for e in ways]
        t = time.perf_counter()
        result = race(ways, model.model, start=start, workers=workers).result
        out[label] = (time.perf_counter() - t, result.objective, result.status is Status.OPTIMAL)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=60_000, help="LCG jobs replayed to find ticks")
    parser.add_argument("--per-class", type=int, default=6)
    parser.add_argument("--limits", default="w0.5,w2,d0.5,d2")
    args = parser.parse_args()
    jobs = load_jobs("lcg", n_jobs=args.jobs)
    cases = capture(jobs, 10.0, args.per_class) + capture(jobs, 30.0, args.per_class)
    sizes = sorted(len(b) for b, _ in cases)
    print(f"{len(cases)} ticks of {sizes[0]}-{sizes[-1]} jobs")
    race([Entrant(get_solver("cpsat"), Limit.wall(0.1)), Entrant(get_solver("cbc"), Limit.wall(0.1))],
         build_model(instance(*cases[0])).model, workers=2)  # the workers start here, not in a timed race
    labels = ["cbc", "cpsat", "race here", "race workers"]
    rows, raw = [], []
    for limit_name, limits in limits_of(args.limits):
        by_class: dict[tuple[int, int], list[dict[str, tuple[float, float | None, bool]]]] = defaultdict(list)
        for batch, fleet in cases:
            cls = next(c for c in CLASSES if c[0] <= len(batch) <= c[1])
            by_class[cls].append(measure(batch, fleet, limits))
        for cls in CLASSES:
            runs = by_class.get(cls, [])
            if not runs:
                continue
            best = [min(c for _, c, _ in r.values() if c is not None) for r in runs]
            cells = []
            for label in labels:
                wall = statistics.mean(r[label][0] for r in runs)
                found = [(r[label][1], b) for r, b in zip(runs, best, strict=True) if r[label][1] is not None]
                excess = statistics.mean(c - b for c, b in found) if found else float("nan")
                optimal = sum(r[label][2] for r in runs)
                cells.append(f"{wall:.3f} s, {optimal}/{len(runs)} opt, {len(found)} plans, +${excess:.3f}")
            single = min(statistics.mean(r[label][0] for r in runs) for label in ("cbc", "cpsat"))
            ratio = statistics.mean(r["race workers"][0] for r in runs) / single
            here = statistics.mean(r["race here"][0] for r in runs)
            workers = statistics.mean(r["race workers"][0] for r in runs)
            rows.append([limit_name, f"{cls[0]}-{cls[1]}", str(len(runs)), *cells, f"{ratio:.2f}x",
                         "yes" if workers < here else "no"])
            raw.append({"limit": limit_name, "class": cls, "n": len(runs), "runs": runs})
    print(table(["limit", "jobs", "ticks", *labels, "race workers / best single", "workers beat here"], rows))
    print(json.dumps(raw, default=str)[:2000])


if __name__ == "__main__":
    main()
