"""The reservation planner against exhaustive search, and its time to a proven optimum on a year.

(1) Small instances (2 types x 3 reservation options, ``--hours`` of hourly demand with at most
    ``--box`` VMs of a type per hour): ``broker.planning.planner.exhaustive`` tries every count 0..``--box``
    of the 6 offers ((box+1)^6 plans, each priced by ``expected_cost``) and is the reference; in the
    same run ``plan_reservations`` plans with ``mode="per-type"`` (closed form) and
    ``mode="capacity"`` (the integer program through CBC and CP-SAT, the planner's default limit).
    Per instance: both optima's costs (equal within 1e-6 relative?), counts, best-of-``--repeat``
    wall times and the speed-up (exhaustive time / planner time). With at most ``--box`` VMs of a
    type per hour the per-type box holds the per-type optimum; in capacity mode the IP's counts are
    checked against the box (a plan outside it can only be cheaper than the box's best).
(2) A year of hourly demand (8,760 intervals): CoH on-demand replays the first 365 days of a real
    trace (``replay_demand``; CoH always starts the cost-efficient ``large`` type, so the replay
    demand has ``large`` only), and a two-type demand derived from it (below). Per demand: the
    per-type closed form and the capacity IP with CBC and CP-SAT (``--year-limit`` s wall, 2
    threads): best-of-``--repeat`` wall time of ``plan_reservations``, the solve status (``optimal``
    = proven), the plan's cost and the size of the IP (distinct demand levels, variables, rows).

Demand shapes of (1) (``np.random.SeedSequence(--seed).spawn`` streams, one per instance):
``uniform`` iid 0..box per type; ``diurnal`` Poisson, busy 08-18 h for small and 12-22 h for
large, clipped to box; ``bursty`` bursts starting with probability 0.04/h, geometric lengths (mean
6 h), heights 1..box; ``steady`` one VM of each type always on plus Binomial(box - 1, 0.3);
``replay`` (with a year) the first ``--hours`` of the two-type year demand clipped to box.

Two-type rule (2): each hour the replay's ``L`` large VMs are split by a seeded binomial draw,
``small ~ Binomial(L, 1/2)`` re-typed ``small`` and the rest kept ``large`` (``--split-seed``). The
replay's intervals (from its first arrival to its last VM release) are padded with zero-demand
hours to 8,760 (or cut there); the planner reads the empirical distribution, so where the zero
hours go does not matter.

    /work/venv/bin/python benchmarks/reservation_planner.py [--box 3] [--hours 672] [--repeat 3]
        [--trace PATH ...] [--no-year] [--year-limit 600] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from broker.planning.demand import Demand, replay_demand
from broker.planning.planner import Mode, PlanReport, Prices, capacity_model, exhaustive, plan_reservations
from broker.pricing.book import load_price_book
from solvers.base import Limit
from workloads.cache import load_trace
from workloads.jobs import job_view

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
DEFAULT_TRACES = (str(TRACES / "SDSC-BLUE-2000-4.2-cln.swf.gz"), str(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"))
TYPES = ("small", "large")
YEAR_HOURS = 8760
SOLVERS = ("cbc", "cpsat")
REL_TOL = 1e-6

T = TypeVar("T")


def best_of(repeat: int, fn: Callable[[], T]) -> tuple[float, T]:
    """Smallest wall time of ``repeat`` calls and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    assert result is not None
    return min(times), result


# -- demand ----------------------------------------------------------------------------------------

def synthetic(shape: str, hours: int, box: int, *, seed: np.random.SeedSequence) -> np.ndarray:
    """``(hours, 2)`` counts of one synthetic shape (module docstring), at most ``box`` per type."""
    rng = np.random.default_rng(seed)
    hour = np.arange(hours) % 24
    if shape == "uniform":
        return rng.integers(0, box + 1, size=(hours, 2))
    if shape == "diurnal":
        small = np.where((hour >= 8) & (hour < 18), 2.0, 0.3)
        large = np.where((hour >= 12) & (hour < 22), 1.5, 0.2)
        return np.minimum(rng.poisson(np.column_stack([small, large])), box)
    if shape == "bursty":
        out = np.zeros((hours, 2), dtype=np.int64)
        for k in range(2):
            for t in np.flatnonzero(rng.random(hours) < 0.04):
                stop = min(hours, t + int(rng.geometric(1 / 6)))
                out[t:stop, k] = np.maximum(out[t:stop, k], rng.integers(1, box + 1))
        return out
    if shape == "steady":
        return 1 + rng.binomial(box - 1, 0.3, size=(hours, 2))
    raise ValueError(f"unknown shape {shape!r}")


def year_replay(path: str) -> tuple[np.ndarray, dict[str, Any]]:
    """Large VMs per hour of CoH on-demand over the trace's first 365 days, padded / cut to a year."""
    swf = load_trace(path)
    jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=1, origin=swf.header.unix_start_time or 0,
                       source=path)
    jobs = jobs.between(0, 365 * 86400)
    t = time.perf_counter()
    demand, result = replay_demand(jobs, load_price_book().catalog(), source=path)
    wall = time.perf_counter() - t
    if set(demand.types) != set(TYPES) or demand.column("small").any():
        raise RuntimeError(f"expected a replay demand of 'large' VMs only, got types {demand.types}")
    large = np.zeros(YEAR_HOURS, dtype=np.int64)
    n = min(len(demand), YEAR_HOURS)
    large[:n] = demand.column("large")[:n]
    info = {"trace": Path(path).name.removesuffix(".swf.gz"), "jobs": len(jobs), "replay_s": wall,
            "replay_intervals": len(demand), "replay_cost": result.summary.cost}
    return large, info


def split_types(large: np.ndarray, *, seed: int) -> np.ndarray:
    """Two types from a large-only series: each hour ``Binomial(L, 1/2)`` of the VMs re-typed small."""
    small = np.random.default_rng(seed).binomial(large, 0.5)
    return np.column_stack([small, large - small])


def demand_of(counts: np.ndarray, source: str) -> Demand:
    """A two-type hourly demand."""
    return Demand(counts=np.asarray(counts, dtype=np.int64), types=TYPES, source=source)


# -- comparisons -----------------------------------------------------------------------------------

def relative(a: float, b: float) -> float:
    """``|a - b| / |b|`` (0 when both are 0)."""
    return abs(a - b) / max(abs(b), 1e-12)


def verdict(counts: dict[tuple[str, str], int], cost: float, ref_counts: dict[tuple[str, str], int],
            ref_cost: float, box: int) -> str:
    """How a planner's optimum compares with the exhaustive one."""
    outside = any(n > box for n in counts.values())
    if relative(cost, ref_cost) <= REL_TOL:
        return "same counts" if dict(counts) == dict(ref_counts) else "same cost, other counts"
    if outside and cost < ref_cost:
        return "cheaper, outside the box"
    return "DIFFERENT COST"


def fmt_counts(counts: dict[tuple[str, str], int]) -> str:
    """``s:L1 M1 H0 / l:L2 M0 H0``-style short form of a plan."""
    short = {"reserved-light": "L", "reserved-medium": "M", "reserved-heavy": "H"}
    return " / ".join(f"{name[0]}:" + " ".join(f"{short[o]}{counts.get((name, o), 0)}" for o in short)
                      for name in TYPES)


def small_instance(label: str, demand: Demand, prices: Prices, box: int, repeat: int) -> dict[str, Any]:
    """Exhaustive search against the planner, per-type and capacity modes, on one demand."""
    row: dict[str, Any] = {"instance": label, "hours": len(demand), "max": demand.counts.max(axis=0).tolist()}
    modes: tuple[Mode, ...] = ("per-type", "capacity")
    for mode in modes:
        ex_s, (ex_counts, ex_cost) = best_of(repeat, partial(exhaustive, demand, prices, mode=mode, box=box))
        row[mode] = {"exhaustive_s": ex_s, "exhaustive_cost": ex_cost, "exhaustive_counts": fmt_counts(ex_counts)}
        planners: list[tuple[str, Callable[[], PlanReport]]]
        if mode == "per-type":
            planners = [("closed form", partial(plan_reservations, demand, prices, mode="per-type"))]
        else:
            planners = [(s, partial(plan_reservations, demand, prices, mode="capacity", solver=s)) for s in SOLVERS]
        for name, fn in planners:
            wall, rep = best_of(repeat, fn)
            counts = dict(rep.plan.counts)
            row[mode][name] = {"wall_s": wall, "speedup": ex_s / wall, "cost": rep.expected_cost,
                               "rel_diff": relative(rep.expected_cost, ex_cost), "counts": fmt_counts(counts),
                               "verdict": verdict(counts, rep.expected_cost, ex_counts, ex_cost, box),
                               "status": rep.solve.get("status", "closed form")}
    return row


def ip_size(demand: Demand, prices: Prices) -> dict[str, int]:
    """Distinct capacity levels and the size of the capacity IP built on them."""
    caps = np.array([next(t.capacity for t in prices.types if t.name == name) for name in demand.types])
    levels, n = np.unique(demand.counts @ caps, return_counts=True)
    model, n_var = capacity_model(levels, n, prices)
    return {"levels": len(levels), "vars": model.n_vars, "rows": len(model.rows),
            "max_N": max(int(model.ub[i]) for i in n_var.values())}


def year_instance(label: str, demand: Demand, prices: Prices, repeat: int, limit: Limit) -> dict[str, Any]:
    """Per-type closed form and the capacity IP (both solvers) on a year of demand."""
    row: dict[str, Any] = {"instance": label, "hours": len(demand), "max": demand.counts.max(axis=0).tolist(),
                           "size": ip_size(demand, prices)}
    wall, rep = best_of(repeat, partial(plan_reservations, demand, prices, mode="per-type"))
    row["per-type"] = {"wall_s": wall, "cost": rep.expected_cost, "counts": fmt_counts(dict(rep.plan.counts)),
                       "status": "closed form", "on_demand_cost": rep.on_demand_cost}
    for s in SOLVERS:
        times, reps = [], []
        for _ in range(repeat):
            t = time.perf_counter()
            reps.append(plan_reservations(demand, prices, mode="capacity", solver=s, limit=limit))
            times.append(time.perf_counter() - t)
        rep = reps[int(np.argmin(times))]
        row[s] = {"wall_s": min(times), "all_s": times, "cost": rep.expected_cost,
                  "counts": fmt_counts(dict(rep.plan.counts)), "status": rep.solve["status"],
                  "statuses": sorted({r.solve["status"] for r in reps}), "gap": rep.solve["gap"],
                  "on_demand_cost": rep.on_demand_cost}
    return row


# -- output ----------------------------------------------------------------------------------------

def print_small(rows: list[dict[str, Any]], box: int) -> None:
    print(f"\n(1) planner vs exhaustive search over counts 0..{box} ({(box + 1) ** 6:,} plans per mode); "
          f"best-of wall times")
    head = (f"{'instance':<10} {'mode':<9} {'planner':<12} {'exhaustive s':>12} {'planner s':>10} "
            f"{'speed-up':>9} {'rel. diff':>9}  {'verdict':<24} planner counts (exhaustive counts)")
    print(head)
    print("-" * len(head))
    for row in rows:
        for mode in ("per-type", "capacity"):
            r = row[mode]
            for name in (["closed form"] if mode == "per-type" else list(SOLVERS)):
                p = r[name]
                print(f"{row['instance']:<10} {mode:<9} {name:<12} {r['exhaustive_s']:12.3f} {p['wall_s']:10.4f} "
                      f"{p['speedup']:8.0f}x {p['rel_diff']:9.1e}  {p['verdict']:<24} {p['counts']} "
                      f"({r['exhaustive_counts']})")


def print_year(rows: list[dict[str, Any]]) -> None:
    print("\n(2) a year of hourly demand (8,760 intervals): time to the optimum, best-of wall times")
    head = (f"{'instance':<26} {'levels':>6} {'IP vars':>7} {'planner':<12} {'wall s':>8} {'status':<12} "
            f"{'cost/term $':>11} {'vs per-type':>11}  counts")
    print(head)
    print("-" * len(head))
    for row in rows:
        size, base = row["size"], row["per-type"]["cost"]
        for name in ("per-type", *SOLVERS):
            p = row[name]
            label = "closed form" if name == "per-type" else f"IP {name}"
            extra = f" (all {', '.join(f'{t:.2f}' for t in p['all_s'])} s)" if "all_s" in p else ""
            change = (p["cost"] - base) / base if abs(p["cost"] - base) > REL_TOL * base else 0.0
            print(f"{row['instance']:<26} {size['levels']:>6} {size['vars']:>7} {label:<12} {p['wall_s']:8.3f} "
                  f"{p['status']:<12} {p['cost']:11,.2f} {change:+10.2%}  {p['counts']}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--box", type=int, default=3, help="largest count per offer in the exhaustive search")
    parser.add_argument("--hours", type=int, default=4 * 168, help="hours of demand of the small instances")
    parser.add_argument("--repeat", type=int, default=3, help="timings per measurement (the best is kept)")
    parser.add_argument("--seed", type=int, default=1, help="root seed of the synthetic shapes")
    parser.add_argument("--split-seed", type=int, default=1, help="seed of the two-type split of a replay")
    parser.add_argument("--trace", action="append", default=None,
                        help="SWF trace for the year (repeatable; default SDSC-BLUE-2000 and KTH-SP2-1996)")
    parser.add_argument("--no-year", action="store_true", help="small instances only")
    parser.add_argument("--year-limit", type=float, default=600.0, help="wall limit (s) of the year's IP solves")
    parser.add_argument("--json", default=None, help="write all figures to this file")
    args = parser.parse_args()

    prices = Prices.from_book(load_price_book(), 1)
    print(f"{platform.python_implementation()} {platform.python_version()}, price book {prices.book}, "
          f"{prices.term_years}-year term, types {', '.join(t.name for t in prices.types)}, "
          f"{sum(len(t.offers) for t in prices.types)} offers; best of {args.repeat}")

    years: list[tuple[str, np.ndarray, dict[str, Any]]] = []
    if not args.no_year:
        for path in args.trace or DEFAULT_TRACES:
            large, info = year_replay(path)
            years.append((info["trace"], large, info))
            print(f"replay {info['trace']}: {info['jobs']:,} jobs in 365 days, {info['replay_s']:.1f} s, "
                  f"{info['replay_intervals']:,} hourly intervals, at most {large.max()} large VMs, "
                  f"on-demand cost ${info['replay_cost']:,.2f}")

    shapes = ("uniform", "diurnal", "bursty", "steady")
    streams = np.random.SeedSequence(args.seed).spawn(len(shapes) + 1)
    small: list[tuple[str, Demand]] = [
        (shape, demand_of(synthetic(shape, args.hours, args.box, seed=s), shape))
        for shape, s in zip(shapes, streams, strict=False)]
    small.append(("uniform-2", demand_of(synthetic("uniform", args.hours, args.box, seed=streams[-1]), "uniform")))
    if years:
        first = split_types(years[0][1], seed=args.split_seed)[: args.hours]
        small.append(("replay", demand_of(np.minimum(first, args.box), f"{years[0][0]} split, clipped")))
    rows = [small_instance(label, d, prices, args.box, args.repeat) for label, d in small]
    print_small(rows, args.box)

    year_rows = []
    limit = Limit.wall(args.year_limit, threads=2)
    for trace, large, _ in years:
        name = "-".join(trace.split("-")[:3])
        one = demand_of(np.column_stack([np.zeros_like(large), large]), f"{trace} replay")
        two = demand_of(split_types(large, seed=args.split_seed), f"{trace} replay, split")
        year_rows.append(year_instance(f"{name} large-only", one, prices, args.repeat, limit))
        year_rows.append(year_instance(f"{name} two-type", two, prices, args.repeat, limit))
    if year_rows:
        print_year(year_rows)

    summary = {"small": rows, "year": year_rows, "replays": [info for _, _, info in years],
               "box": args.box, "hours": args.hours, "repeat": args.repeat}
    worst = {mode: min((row[mode][k]["speedup"] for row in rows for k in row[mode] if isinstance(row[mode][k], dict)),
                       default=math.nan) for mode in ("per-type", "capacity")}
    print(f"\nsmallest speed-up: per-type closed form {worst['per-type']:.0f}x, capacity IP {worst['capacity']:.0f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
