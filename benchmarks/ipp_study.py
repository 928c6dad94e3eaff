"""What makes CoH's integer program (IPP) useful at 5-100 new jobs within a 2 s limit.

Instances: LCG-2005-1 (heterogeneous r, seed 1) and the generated Lublin workload (seed 1) are
replayed with CoH over the paper's trio; after a warm-up of ``--warm`` jobs and up to ``--span``
jobs, ``--snapshots`` fleets are copied at evenly spaced ticks. For each fleet and each M the batch
is the next M jobs of the trace from that tick (their trace arrivals, so some arrive later). Each
instance is solved by every variant below; every plan is scored with ``broker.coh.objective.plan_cost``.

Variants (2 s wall limit unless said; "warm" = warm start from the best trio heuristic plan):
``cpsat2`` CP-SAT 2 workers, default presolve, symmetry "order", all candidate VMs; ``-cold``
without the warm start; ``cpsat2-nopre`` presolve off; ``cpsat1`` one worker; ``cbc`` serial CBC;
on every other snapshot also ``sym-none`` / ``sym-assign``, ``maxvms-2M`` / ``maxvms-20``
(make_instance's max_vms), ``chunk20`` (20 jobs at a time, each chunk seeing the fleet updated by
the previous chunk's plan, the 2 s split across chunks), ``cpsat-det`` (deterministic limit, 2
CP-SAT deterministic seconds, 1 worker) and ``cpsat1-lin2`` (1 worker, linearization_level 2).
Single-thread variants run two at a time (two processes on the two cores); two-worker ones alone.

Reference: CP-SAT 2 workers warm-started from the best plan found, ``--ref-small`` s for M <= 10,
``--ref-mid`` s for M = 20, ``--ref-large`` s for M >= 35; "proven" when a valid bound (of a
full-instance model) reaches the best known cost.

Scoring: the project's paid-through objective (``plan_cost(..., paid=True)``, the default of
``SimulationConfig``); ``--paper-scoring`` uses the paper's reading (``paid=False``).

    /work/venv/bin/python benchmarks/ipp_study.py                    # full (~25 min on 2 cores)
    /work/venv/bin/python benchmarks/ipp_study.py --paper-scoring    # the same, paper objective
    /work/venv/bin/python benchmarks/ipp_study.py --quick            # small (~3 min)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from ipp_common import (
    BILLING,
    PAPER_TRIO,
    SCORING,
    Outcome,
    SolveConfig,
    best_plan,
    cost,
    fmt,
    heuristic_plans,
    instance,
    load_jobs,
    next_jobs,
    replay_capture,
    solve_ipp,
    table,
)

from broker.coh.objective import planned_departures
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.registry import HEURISTICS

MS = (5, 10, 20, 35, 50, 75, 100)
BASE = SolveConfig()
CORE2 = {"cpsat2": BASE, "cpsat2-cold": dataclasses.replace(BASE, warm=False),
         "cpsat2-nopre": dataclasses.replace(BASE, presolve=False),
         "cpsat2-nopre-cold": dataclasses.replace(BASE, presolve=False, warm=False)}
CORE1 = {"cpsat1": dataclasses.replace(BASE, workers=1),
         "cpsat1-cold": dataclasses.replace(BASE, workers=1, warm=False),
         "cbc": SolveConfig(solver="cbc"), "cbc-cold": SolveConfig(solver="cbc", warm=False)}
EXTRA2 = {"sym-none": dataclasses.replace(BASE, symmetry="none"),
          "sym-assign": dataclasses.replace(BASE, symmetry="assign")}
EXTRA1 = {"cpsat-det": dataclasses.replace(BASE, work=2.0), "cpsat1-lin2": dataclasses.replace(BASE, workers=1)}
ORDER = ["trio", "all66", *CORE2, *CORE1, *EXTRA2, "maxvms-2M", "maxvms-20", "chunk20", *EXTRA1, "reference"]


# -- decomposition ----------------------------------------------------------------------------------
def apply_plan(fleet: Fleet, batch: Batch, plan: Plan) -> Fleet:
    """The fleet after ``plan``: new VMs appended (booting now), free capacity and departures updated."""
    n, k = len(fleet), len(plan.new_types)
    cap = fleet.type_capacity[plan.new_types]
    now = fleet.now

    def ext(a: np.ndarray, v: np.ndarray | float) -> np.ndarray:
        return np.concatenate([a, np.broadcast_to(np.asarray(v, dtype=a.dtype), (k,))])

    new = dataclasses.replace(
        fleet, free=ext(fleet.free, cap), capacity=ext(fleet.capacity, cap), vm_type=ext(fleet.vm_type, plan.new_types),
        ready_at=ext(fleet.ready_at, now + fleet.boot_time), anchor=ext(fleet.anchor, BILLING.anchor(now)),
        last_departure=ext(fleet.last_departure, now), n_jobs=ext(fleet.n_jobs, 0), arr_min=ext(fleet.arr_min, np.nan),
        arr_max=ext(fleet.arr_max, np.nan), arr_sum=ext(fleet.arr_sum, 0.0), dep_min=ext(fleet.dep_min, np.nan),
        dep_max=ext(fleet.dep_max, np.nan))
    targets, deps = planned_departures(plan, batch, fleet)
    for p, t, d in zip(plan.jobs.tolist(), targets, deps, strict=True):
        a = float(batch.arrival[p])
        new.free[t] -= float(batch.r[p])
        new.last_departure[t] = max(new.last_departure[t], d)
        first = new.n_jobs[t] == 0
        new.n_jobs[t] += 1
        new.arr_min[t] = a if first else min(new.arr_min[t], a)
        new.arr_max[t] = a if first else max(new.arr_max[t], a)
        new.dep_min[t] = d if first else min(new.dep_min[t], d)
        new.dep_max[t] = d if first else max(new.dep_max[t], d)
        new.arr_sum[t] += a
    assert n + k == len(new)
    return new


def sub_batch(batch: Batch, lo: int, hi: int) -> Batch:
    return Batch(index=batch.index[lo:hi], arrival=batch.arrival[lo:hi], runtime=batch.runtime[lo:hi],
                 r=batch.r[lo:hi], user=batch.user[lo:hi])


def solve_chunked(batch: Batch, fleet: Fleet, config: SolveConfig, chunk: int) -> Outcome:
    """Solve ``chunk`` jobs at a time (each a small portfolio: trio + warm IPP); the limit is split by size."""
    t0 = time.perf_counter()
    n0, m = len(fleet), len(batch)
    jobs, targets, types, status = [], [], [], "optimal"
    for lo in range(0, m, chunk):
        part = sub_batch(batch, lo, min(lo + chunk, m))
        _, hplan, hcost = best_plan(heuristic_plans(part, fleet, PAPER_TRIO), part, fleet)
        out = solve_ipp(part, fleet, config, hplan, seconds=config.seconds * len(part) / m)
        plan = hplan
        if out.plan is not None and cost(out.plan, part, fleet) < hcost - 1e-9:
            plan = out.plan
        if out.status != "optimal":
            status = "feasible"
        jobs.append(plan.jobs + lo)
        targets.append(plan.targets)
        types.extend(plan.new_types.tolist())
        fleet = apply_plan(fleet, part, plan)
    plan = Plan(jobs=np.concatenate(jobs), targets=np.concatenate(targets), new_types=np.array(types, np.int64),
                n_slots=n0)
    return Outcome(plan, status, None, time.perf_counter() - t0, 0)


# -- one instance ------------------------------------------------------------------------------------
def run_single(args: tuple[Batch, Fleet, SolveConfig, Plan, float | None]) -> Outcome:
    batch, fleet, config, incumbent, seconds = args
    out = solve_ipp(batch, fleet, config, incumbent, seconds)
    return dataclasses.replace(out, result=None)


def solve_variant(name: str, config: SolveConfig, batch: Batch, fleet: Fleet, incumbent: Plan) -> Outcome:
    if name == "cpsat1-lin2":
        from broker.coh.ipp import build_model
        from solvers.base import get_solver

        t0 = time.perf_counter()
        inst = instance(batch, fleet)
        ipp = build_model(inst, symmetry=config.symmetry)
        res = get_solver("cpsat", num_workers=1, linearization_level=2).solve(
            ipp.model, limit=config.limit(), start=ipp.encode(incumbent))
        plan = ipp.decode(res.values) if res.values is not None else None
        return Outcome(plan, res.status.value, res.bound, time.perf_counter() - t0, ipp.model.n_vars)
    return run_single((batch, fleet, config, incumbent, None))


def _run_pairs(pool: ProcessPoolExecutor | None, variants: dict[str, SolveConfig], batch: Batch, fleet: Fleet,
               incumbent: Plan) -> dict[str, Outcome]:
    names = list(variants)
    if pool is None:
        return {n: solve_variant(n, variants[n], batch, fleet, incumbent) for n in names}
    futures = {n: pool.submit(solve_variant, n, variants[n], batch, fleet, incumbent) for n in names}
    return {n: f.result() for n, f in futures.items()}


def classes(batch: Batch, fleet: Fleet) -> tuple[int, int]:
    """Distinct jobs by (r, new-VM units) and by (r, units on every option): what aggregation could merge."""
    inst = instance(batch, fleet)
    key1 = np.column_stack([inst.r, inst.new_units])
    key2 = np.column_stack([key1, inst.vm_units.T]) if len(inst.vm_slot) else key1
    return len(np.unique(key1, axis=0)), len(np.unique(key2, axis=0))


def study_instance(batch: Batch, fleet: Fleet, *, extras: bool, ref_seconds: float,
                   pool: ProcessPoolExecutor) -> dict:
    m = len(batch)
    rec: dict = {"M": m, "outcomes": {}}
    t0 = time.perf_counter()
    trio = heuristic_plans(batch, fleet, PAPER_TRIO)
    _, hplan, hcost = best_plan(trio, batch, fleet)
    rec["outcomes"]["trio"] = Outcome(hplan, "heuristic", None, time.perf_counter() - t0, 0)
    t0 = time.perf_counter()
    _, aplan, _ = best_plan(heuristic_plans(batch, fleet, HEURISTICS.names()), batch, fleet)
    rec["outcomes"]["all66"] = Outcome(aplan, "heuristic", None, time.perf_counter() - t0, 0)
    inst = instance(batch, fleet)
    rec["cost_mismatch"] = sum(abs(inst.cost(p) - cost(p, batch, fleet)) > 1e-9 for p in trio.values())
    rec["n_vms"] = len(inst.vm_slot)
    rec["classes"] = classes(batch, fleet)
    outs = rec["outcomes"]
    for v, config in CORE2.items():
        outs[v] = run_single((batch, fleet, config, hplan, None))
    outs.update(_run_pairs(pool, CORE1 | (EXTRA1 if extras else {}), batch, fleet, hplan))
    if extras:
        for v, config in EXTRA2.items():
            outs[v] = run_single((batch, fleet, config, hplan, None))
        for v, cap in (("maxvms-2M", 2 * m), ("maxvms-20", 20)):
            same = rec["n_vms"] <= cap  # the instance is unchanged: the cpsat2 run stands for it
            outs[v] = outs["cpsat2"] if same else run_single((batch, fleet, dataclasses.replace(BASE, max_vms=cap),
                                                              hplan, None))
        outs["chunk20"] = outs["cpsat2"] if m <= 20 else solve_chunked(batch, fleet, BASE, 20)
    rec["costs"] = {v: (cost(o.plan, batch, fleet) if o.plan is not None else None) for v, o in outs.items()}
    known = [(c, v) for v, c in rec["costs"].items() if c is not None]
    _, best_v = min(known)
    ref = run_single((batch, fleet, BASE, outs[best_v].plan, ref_seconds))
    outs["reference"] = ref
    rec["costs"]["reference"] = cost(ref.plan, batch, fleet) if ref.plan is not None else None
    rec["best"] = min(c for c in rec["costs"].values() if c is not None)
    full = {"cpsat2", "cpsat2-cold", "cpsat2-nopre", "cpsat2-nopre-cold", "cpsat1", "cpsat1-cold", "cbc", "cbc-cold",
            "sym-none", "sym-assign", "cpsat-det", "cpsat1-lin2", "reference"}
    bounds = [o.bound for v, o in outs.items() if v in full and o.bound is not None]
    bounds += [rec["best"]] if any(outs[v].status == "optimal" for v in full if v in outs) else []
    rec["bound"] = max(bounds) if bounds else None
    rec["proven"] = rec["bound"] is not None and rec["bound"] >= rec["best"] - 1e-6
    rec["heur"] = hcost
    return rec


# -- reporting ----------------------------------------------------------------------------------------
def summarize(records: list[dict], *, subset: bool = False) -> tuple[list[list[str]], list[dict]]:
    """Per (M, variant) cells; ``subset`` keeps only the instances that ran the extra variants."""
    rows, out = [], []
    for m in MS:
        recs = [r for r in records if r["M"] == m and (not subset or "sym-none" in r["outcomes"])]
        for v in ORDER:
            have = [r for r in recs if v in r["outcomes"]]
            if not have:
                continue
            costs = [r["costs"][v] for r in have]
            with_plan = [(c, r) for c, r in zip(costs, have, strict=True) if c is not None]
            excess = [100 * (c - r["best"]) / r["best"] for c, r in with_plan if r["best"] > 1e-9]
            excess_usd = [c - r["best"] for c, r in with_plan]
            port = [100 * (min(c if c is not None else np.inf, r["heur"]) - r["best"]) / r["best"]
                    for c, r in zip(costs, have, strict=True) if r["best"] > 1e-9]
            walls = np.array([r["outcomes"][v].wall_s for r in have])
            cell = {
                "M": m, "variant": v, "n": len(have), "plan": len(with_plan) / len(have),
                "match": sum(abs(c - r["best"]) <= 1e-9 for c, r in with_plan) / len(have),
                "excess_pct": float(np.mean(excess)) if excess else None,
                "excess_usd": float(np.mean(excess_usd)) if excess_usd else None,
                "portfolio_excess_pct": float(np.mean(port)) if port else None,
                "wall_mean": float(walls.mean()), "wall_p95": float(np.percentile(walls, 95)),
                "optimal": sum(r["outcomes"][v].status == "optimal" for r in have) / len(have),
                "beats_heur": sum(c < r["heur"] - 1e-9 for c, r in with_plan) / len(have),
            }
            out.append(cell)
            rows.append([str(m), v, str(cell["n"]), fmt(cell["plan"], ".2f"), fmt(cell["match"], ".2f"),
                         fmt(cell["excess_pct"], ".1f"), fmt(cell["excess_usd"], ".3f"),
                         fmt(cell["portfolio_excess_pct"], ".1f"),
                         fmt(cell["wall_mean"], ".2f"), fmt(cell["wall_p95"], ".2f"), fmt(cell["optimal"], ".2f"),
                         fmt(cell["beats_heur"], ".2f")])
    return rows, out


def instance_table(records: list[dict]) -> str:
    rows = []
    for m in MS:
        recs = [r for r in records if r["M"] == m]
        if not recs:
            continue
        rows.append([str(m), str(len(recs)), fmt(np.mean([r["n_vms"] for r in recs]), ".0f"),
                     fmt(np.mean([r["outcomes"]["cpsat2"].n_vars for r in recs]), ".0f"),
                     fmt(np.mean([r["classes"][0] for r in recs]), ".1f"),
                     fmt(np.mean([r["classes"][1] for r in recs]), ".1f"),
                     f"{sum(r['proven'] for r in recs)}/{len(recs)}",
                     fmt(np.mean([r["heur"] for r in recs]), ".3f"), fmt(np.mean([r["best"] for r in recs]), ".3f"),
                     str(sum(r["cost_mismatch"] for r in recs))])
    return table(["M", "instances", "cand. VMs", "vars (cpsat2)", "distinct (r,new units)",
                  "distinct (r,all units)", "proven optimum", "mean trio cost $", "mean best known $",
                  "IppInstance.cost != plan_cost"], rows)


def snapshots(workload: str, n: int, warm: int, span: int) -> tuple[object, list[tuple[Batch, Fleet]]]:
    jobs = load_jobs(workload, n_jobs=span + max(MS) + 10)
    targets = [warm + (span - warm) * (i + 0.5) / n for i in range(n)]

    def keep(tick: int, batch: Batch, fleet: Fleet) -> bool:
        if targets and len(batch) and batch.index.min() >= targets[0]:
            targets.pop(0)
            return True
        return False

    return jobs, replay_capture(jobs.head(span), keep)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 snapshots per workload, M in 5,20,50,100, short refs")
    ap.add_argument("--snapshots", type=int, default=4, help="fleet snapshots per workload")
    ap.add_argument("--warm", type=int, default=5000)
    ap.add_argument("--span", type=int, default=60000)
    ap.add_argument("--ref-small", type=float, default=60.0)
    ap.add_argument("--ref-mid", type=float, default=30.0)
    ap.add_argument("--ref-large", type=float, default=10.0)
    ap.add_argument("--workloads", default="lcg,gen")
    ap.add_argument("--paper-scoring", action="store_true",
                    help="score with the paper's objective (paid=False) instead of the project's paid-through one")
    args = ap.parse_args()
    SCORING["paid"] = not args.paper_scoring
    global MS
    if args.quick:
        MS = (5, 20, 50, 100)
        args.snapshots, args.ref_small, args.ref_mid, args.ref_large = 2, 10.0, 5.0, 3.0
    started = time.perf_counter()
    print(f"# IPP study: paid={SCORING['paid']}, snapshots/workload={args.snapshots}, M={MS}, "
          f"refs {args.ref_small}/{args.ref_mid}/{args.ref_large} s, extras on every other snapshot\n")
    summary: dict = {"args": vars(args), "M": MS}
    with ProcessPoolExecutor(max_workers=2) as pool:
        for wl in args.workloads.split(","):
            jobs, snaps = snapshots(wl, args.snapshots, args.warm, args.span)
            records = []
            for s, (b0, fleet) in enumerate(snaps):
                for m in MS:
                    batch = next_jobs(jobs, int(b0.index.min()), m)
                    ref = args.ref_small if m <= 10 else args.ref_mid if m <= 20 else args.ref_large
                    records.append(study_instance(batch, fleet, extras=s % 2 == 0, ref_seconds=ref, pool=pool))
                print(f"[{wl}] snapshot {s + 1}/{len(snaps)} done at {time.perf_counter() - started:.0f} s "
                      f"(fleet {int((fleet.free >= 0).sum())} VMs, now {fleet.now:.0f} s)", flush=True)
            rows, cells = summarize(records)
            print(f"\n## {wl}: instances\n\n{instance_table(records)}\n")
            print(f"## {wl}: variants (excess over the best known; 'portfolio' = min with the trio heuristic)\n")
            print(table(["M", "variant", "n", "plan", "= best", "excess %", "excess $", "portfolio excess %",
                         "wall mean s", "wall p95 s", "optimal", "< heuristic"], rows))
            print()
            rows2, cells2 = summarize(records, subset=True)
            print(f"## {wl}: all variants on the same instances (the snapshots that ran the extra variants)\n")
            print(table(["M", "variant", "n", "plan", "= best", "excess %", "excess $", "portfolio excess %",
                         "wall mean s", "wall p95 s", "optimal", "< heuristic"], rows2))
            print()
            summary[wl] = {"cells": cells, "subset_cells": cells2, "proven": sum(r["proven"] for r in records),
                           "instances": len(records),
                           "cost_mismatch": sum(r["cost_mismatch"] for r in records)}
    summary["wall_s"] = time.perf_counter() - started
    print(json.dumps(summary, default=str))


if __name__ == "__main__":
    main()
