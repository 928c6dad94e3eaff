"""CoH-R against the paper (CoH §4, §5.2 Figure 2): CoH vs CoH-oneType vs CoH-R vs FCFS-CFH on long traces.

    python experiments/coh_r_table.py --store /work/results/coh_r --seeds 1-3 [--traces A,B] [--reqs R] [--n-jobs 2]
                                      [--ipp cpsat]

Per (trace, requirements, seed): CoH (the trio portfolio, on-demand only) is replayed and its
demand (VMs billed per hour and type) planned on by the reservation planner (per-type cover, and
optionally formula 6's capacity cover on CP-SAT); CoH-R replays the plan, CoH-oneType replays a
plan of heavy reservations only, FCFS-CFH is the on-demand heuristic the paper compares with.

Two samples:

``in-sample`` (the paper's protocol)
    plan on the whole trace's CoH demand, replay the whole trace.
``out-of-sample``
    plan on the first half of the trace's span (the CoH demand of the whole replay up to the
    midpoint: what a broker would have seen), replay the jobs arriving in the second half. The
    row "CoH-R, planned on the half itself" is the in-sample plan of that half, for reference.

With ``--ipp SOLVER`` CoH runs with its integer program (``SOLVER``: a backend or a race such as
``cbc,cpsat``; deterministic limit of ``--ipp-work``, 2 by default), in every replay that is CoH:
the demand replay and the CoH-R / CoH-oneType replays (FCFS-CFH stays one heuristic).

Costs are the replay's ``summary.cost``: billed units at each VM's rate plus the run's share of the
upfront prices (``upfront * run hours / term hours``). "predicted" is what the planner's model
says the plan costs on the replayed period's CoH demand (``PlanReport.planned_horizon_cost`` for
in-sample plans).

Each cell is a pure function of its configuration, stored as one JSON file under ``--store``; an
interrupted run resumes without recomputing finished cells. A reservation cell reads the demand of
its CoH cell from the store (computing it first if missing). Cells run through joblib.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from cells import seeds_of, stored
from joblib import Parallel, delayed

from broker import CohConfig, IppConfig, SimulationConfig, replay_demand, simulate
from broker.planning.demand import Demand
from broker.planning.planner import Prices, plan_reservations, report
from broker.pricing.book import HEAVY, LIGHT, MEDIUM, load_price_book
from solvers.base import Limit
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view

TRACE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TRACES = ("SDSC-BLUE-2000-4.2-cln", "LPC-EGEE-2004-1.2-cln", "KTH-SP2-1996-2.1-cln")
REQS = ("heterogeneous", "constant-100", "constant-10")
BOOK = "ec2-2013"
SAMPLES = ("in-sample", "out-of-sample")
#: Reserved variants: label -> (policy, planner mode, options, where the plan's demand comes from).
RESERVED = {
    "CoH-oneType": ("coh-onetype", "per-type", (HEAVY,), "plan"),
    "CoH-R": ("coh-r", "per-type", (LIGHT, MEDIUM, HEAVY), "plan"),
    "CoH-R (capacity plan)": ("coh-r", "capacity", (LIGHT, MEDIUM, HEAVY), "plan"),
    "CoH-R, planned on the half itself": ("coh-r", "per-type", (LIGHT, MEDIUM, HEAVY), "self"),
}
ROWS = {"in-sample": ["CoH", "FCFS-CFH", "CoH-oneType", "CoH-R", "CoH-R (capacity plan)"],
        "out-of-sample": ["CoH", "FCFS-CFH", "CoH-oneType", "CoH-R", "CoH-R, planned on the half itself"]}


# -- the workload of a cell ----------------------------------------------------------------------------

def workload(trace: str, reqs: str, seed: int, part: str) -> tuple[JobTable, float]:
    """The jobs of ``part`` (``"all"`` or ``"second-half"``: arriving after the span's midpoint) and the midpoint."""
    swf = load_trace(trace)
    jobs, _ = job_view(swf.frame, reqs=reqs, seed=seed, origin=swf.header.unix_start_time or 0,
                       source=Path(trace).name)
    mid = midpoint(jobs)
    return (jobs if part == "all" else jobs.between(mid, math.inf)), mid


def midpoint(jobs: JobTable) -> float:
    """The middle of the arrival span (s)."""
    return float(jobs.arrival[0] + (jobs.arrival[-1] - jobs.arrival[0]) / 2)


def summary_of(result: Any) -> dict[str, Any]:
    """The figures kept per replay (costs in $, hours in h)."""
    s, vms = result.summary, result.instances
    span = float((vms["released_at"].max() - vms["hired_at"].min()) / 3600) if len(vms) else 0.0
    return {"cost": s.cost, "cost_over_lb": s.cost_over_lb, "lower_bound": s.lower_bound,
            "utilization": s.utilization, "jobs": s.jobs, "vm_hours": s.instance_hours_by_type,
            "vms": s.instances_by_type,
            "upfront_amortized": s.upfront_amortized, "cost_by_option": s.cost_by_option,
            "span_hours": span, "policy_stats": s.policy_stats}


# -- cells -------------------------------------------------------------------------------------------

def ipp_config(ipp: str | None, work: float) -> IppConfig | None:
    """CoH's integer program of ``--ipp`` (deterministic, ``work`` per tick), or none."""
    return IppConfig(ipp, time_limit=work, deterministic=True) if ipp else None


def config_of(policy: str, ipp: IppConfig | None, plan: Any = None) -> SimulationConfig:
    """The replay's configuration: the integer program joins CoH (and CoH-R, CoH-oneType), not a heuristic."""
    takes_ipp = policy in ("coh", "coh-r", "coh-onetype")
    return SimulationConfig(CohConfig(policy), ipp=ipp if takes_ipp else None, reservations=plan)


def base_cell(trace: str, reqs: str, seed: int, part: str, policy: str,
              ipp: IppConfig | None = None) -> dict[str, Any]:
    """An on-demand replay: CoH (with its demand series) or FCFS-CFH."""
    (jobs, mid), catalog = workload(trace, reqs, seed, part), load_price_book(BOOK).catalog()
    if policy == "coh":
        demand, result = replay_demand(jobs, catalog, config=config_of(policy, ipp), seed=seed)
        return {**summary_of(result), "midpoint_s": mid,
                "demand": {"counts": demand.counts.tolist(), "types": list(demand.types),
                           "interval_s": demand.interval_s, "start": demand.start}}
    return summary_of(simulate(jobs, catalog, config=config_of(policy, ipp), seed=seed))


def reserved_cell(store: Path, trace: str, reqs: str, seed: int, sample: str, label: str,
                  work: float, ipp: IppConfig | None = None) -> dict[str, Any]:
    """Plan on a CoH demand, replay the plan with CoH-R / CoH-oneType (module docstring)."""
    policy, mode, options, source = RESERVED[label]
    book = load_price_book(BOOK)
    prices = Prices.from_book(book, 1, options=list(options))
    part = "all" if sample == "in-sample" else "second-half"
    whole = base(store, trace, reqs, seed, "all", "coh", ipp)
    replayed = whole if part == "all" else base(store, trace, reqs, seed, part, "coh", ipp)
    if source == "self" or part == "all":
        planned_on = demand_of(replayed)
    else:
        planned_on = first_half(demand_of(whole), whole["midpoint_s"])
    plan = plan_reservations(planned_on, prices, mode=mode, solver="cpsat", limit=Limit.deterministic(work))
    predicted = report(demand_of(replayed), prices, dict(plan.plan.counts), mode=mode)
    config = config_of(policy, ipp, plan.plan)
    result = simulate(workload(trace, reqs, seed, part)[0], book.catalog(), config=config, seed=seed, book=book)
    return {**summary_of(result), "plan": [[k, o, n] for (k, o), n in plan.plan.counts.items()],
            "planned_on_hours": plan.horizon_hours, "planned_horizon_cost": plan.planned_horizon_cost,
            "planned_on_demand_cost": plan.on_demand_horizon_cost, "expected_cost_per_term": plan.expected_cost,
            "predicted": predicted.planned_horizon_cost, "predicted_on_demand": predicted.on_demand_horizon_cost,
            "solve": plan.solve}


def demand_of(cell: dict[str, Any]) -> Demand:
    """The demand stored in a CoH cell."""
    d = cell["demand"]
    return Demand(np.array(d["counts"], dtype=np.int64).reshape(-1, len(d["types"])), tuple(d["types"]),
                  d["interval_s"], d["start"])


def first_half(demand: Demand, mid: float) -> Demand:
    """The intervals that start before ``mid`` (s)."""
    return demand.window(0, max(1, math.ceil((mid - demand.start) / demand.interval_s)))


# -- the store ---------------------------------------------------------------------------------------

def cell_key(*parts: Any) -> str:
    text = json.dumps([Path(str(parts[0])).name, *parts[1:]], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def base(store: Path, trace: str, reqs: str, seed: int, part: str, policy: str,
         ipp: IppConfig | None = None) -> dict[str, Any]:
    config = config_of(policy, ipp).to_dict()
    key = cell_key(trace, reqs, seed, part, policy, config, BOOK)
    return stored(store / f"{key}.json", lambda: base_cell(trace, reqs, seed, part, policy, ipp))


def reserved(store: Path, trace: str, reqs: str, seed: int, sample: str, label: str, work: float,
             ipp: IppConfig | None = None) -> dict[str, Any]:
    policy, mode, options, source = RESERVED[label]
    config = SimulationConfig(ipp=ipp).to_dict()
    key = cell_key(trace, reqs, seed, sample, policy, mode, options, source, config, BOOK, work)
    return stored(store / f"{key}.json", lambda: reserved_cell(store, trace, reqs, seed, sample, label, work, ipp))


# -- the table ---------------------------------------------------------------------------------------

def plan_text(plans: list[list[list[Any]]]) -> str:
    """Reservations per type and option, as ``large 1H 1M 8L``; ranges over seeds as ``1-2H``."""
    parts = []
    for vm_type in ("small", "large"):
        cells = []
        for option, tag in ((HEAVY, "H"), (MEDIUM, "M"), (LIGHT, "L")):
            n = [sum(c for k, o, c in p if k == vm_type and o == option) for p in plans]
            if max(n):
                cells.append(f"{min(n)}{tag}" if min(n) == max(n) else f"{min(n)}-{max(n)}{tag}")
        if cells:
            parts.append(f"{vm_type} {' '.join(cells)}")
    return "; ".join(parts) or "none"


def pm(values: list[float], fmt: str) -> str:
    """Mean ± standard deviation (the mean alone for one value)."""
    m = format(float(np.mean(values)), fmt)
    return m if len(values) == 1 else f"{m} ± {format(float(np.std(values)), fmt.lstrip('+'))}"


def row(trace: str, reqs: str, sample: str, label: str, runs: list[dict[str, Any]], coh: list[dict[str, Any]],
        cfh: list[dict[str, Any]]) -> str:
    cost = [r["cost"] for r in runs]
    vs_coh = [r["cost"] / c["cost"] - 1 for r, c in zip(runs, coh, strict=True)]
    vs_cfh = [r["cost"] / c["cost"] - 1 for r, c in zip(runs, cfh, strict=True)]
    plan, predicted = "", ""
    if "plan" in runs[0]:
        plan = plan_text([r["plan"] for r in runs])
        predicted = (f"{pm([r['predicted'] for r in runs], ',.0f')} "
                     f"({pm([r['cost'] / r['predicted'] for r in runs], '.3f')})")
    name = "-".join(trace.split("-")[:2])
    rel_coh = "" if label == "CoH" else pm(vs_coh, "+.1%")
    rel_cfh = "" if label == "FCFS-CFH" else pm(vs_cfh, "+.1%")
    return (f"| {name} | {reqs} | {sample} | {label} | {len(runs)} | {pm(cost, ',.0f')} | {rel_coh} | {rel_cfh} "
            f"| {pm([r['cost_over_lb'] for r in runs], '.3f')} | {plan} | {predicted} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir", default=str(TRACE_DIR))
    parser.add_argument("--traces", default=",".join(TRACES))
    parser.add_argument("--store", default="results/coh_r")
    parser.add_argument("--seeds", default="1-3")
    parser.add_argument("--reqs", default=",".join(REQS))
    parser.add_argument("--samples", default=",".join(SAMPLES))
    parser.add_argument("--no-capacity", action="store_true", help="skip the capacity-plan (formula 6) row")
    parser.add_argument("--work", type=float, default=60.0, help="CP-SAT deterministic seconds (capacity plan)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--ipp", default=None, help="CoH with its integer program on this solver (e.g. cpsat)")
    parser.add_argument("--ipp-work", type=float, default=2.0, help="the integer program's deterministic limit")
    args = parser.parse_args()
    ipp = ipp_config(args.ipp, args.ipp_work)
    store = Path(args.store)
    store.mkdir(parents=True, exist_ok=True)
    traces = [str(Path(args.trace_dir) / f"{t}.swf.gz") for t in args.traces.split(",")]
    reqs, seeds, samples = args.reqs.split(","), seeds_of(args.seeds), args.samples.split(",")
    grid = [(t, r, s) for t in traces for r in reqs for s in seeds]
    parts = ["all"] + (["second-half"] if "out-of-sample" in samples else [])
    first = [(t, r, s, p, pol) for t, r, s in grid for p in parts for pol in ("coh", "FCFS-CFH")]
    Parallel(n_jobs=args.n_jobs, verbose=5)(delayed(base)(store, *c, ipp) for c in first)
    labels = {sample: [lab for lab in ROWS[sample] if lab in RESERVED
                       and not (args.no_capacity and "capacity" in lab)] for sample in samples}
    second = [(t, r, s, sample, lab) for t, r, s in grid for sample in samples for lab in labels[sample]]
    Parallel(n_jobs=args.n_jobs, verbose=5)(delayed(reserved)(store, *c, args.work, ipp) for c in second)
    print("| trace | requirements | sample | policy | seeds | cost ($) | vs CoH | vs FCFS-CFH | cost / LB "
          "| plan (1-year) | predicted ($) (replay / predicted) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for t in traces:
        for r in reqs:
            for sample in samples:
                part = "all" if sample == "in-sample" else "second-half"
                coh = [base(store, t, r, s, part, "coh", ipp) for s in seeds]
                cfh = [base(store, t, r, s, part, "FCFS-CFH", ipp) for s in seeds]
                for lab in ROWS[sample]:
                    if lab == "CoH" or lab == "FCFS-CFH":
                        runs = coh if lab == "CoH" else cfh
                    elif lab in labels[sample]:
                        runs = [reserved(store, t, r, s, sample, lab, args.work, ipp) for s in seeds]
                    else:
                        continue
                    print(row(Path(t).name.removesuffix(".swf.gz"), r, sample, lab, runs, coh, cfh))


if __name__ == "__main__":
    main()
