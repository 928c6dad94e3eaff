"""Golden cases: every world on slices of real traces, reduced to numbers and array digests.

The values in ``values.json`` were recorded from main at e8e2e37, before the one-kernel redesign,
by ``python -m tests.golden.record``; ``test_golden.py`` recomputes every case and asserts the same
numbers to the last bit. Regenerate only on purpose (a change that is meant to move a number), with
that script, and say why in the commit.

A case returns a flat ``{name: value}`` of floats, ints, strings and digests; a digest is the first
16 hex digits of the SHA-256 of an array's float64 bytes, so one start time moved by one ulp fails.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from tests.conftest import trace_path

Observed = dict[str, Any]


def digest(values: Any) -> str:
    """SHA-256 (16 hex digits) of the values as contiguous float64."""
    array = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    return hashlib.sha256(array.tobytes()).hexdigest()[:16]


def frame_digest(frame: pd.DataFrame, columns: list[str], names: list[str] | None = None) -> dict[str, str]:
    """One digest per column (numeric columns; categories by their codes), keyed by ``names`` (the recorded names)."""
    out = {}
    for col, name in zip(columns, names or columns, strict=True):
        values = frame[col]
        if not pd.api.types.is_numeric_dtype(values):
            values = pd.Series(pd.Categorical(values.astype(str)).codes)
        out[f"{name}#"] = digest(values.to_numpy(dtype=np.float64, na_value=np.nan))
    return out


# -- workloads (unchanged by the redesign: the bottom of the tree) ----------------------------------------

@cache
def _swf(name: str) -> Any:
    from workloads.cache import load_trace

    return load_trace(trace_path(name))


LCG = "LCG-2005-1.swf.gz"
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
SP2 = "SDSC-SP2-1998-4.2-cln.swf.gz"
EGEE = "LPC-EGEE-2004-1.2-cln.swf.gz"


def coh_jobs(name: str, reqs: str, n: int | None, seed: int = 1) -> Any:
    from workloads.jobs import job_view

    swf = _swf(name)
    jobs, _ = job_view(swf.frame, reqs=reqs, seed=seed, origin=swf.header.unix_start_time or 0, source=name)
    return jobs if n is None else jobs.head(n)


def rigid_jobs(name: str, m: int, n: int | None = None) -> Any:
    from workloads.rigid import rigid_view

    jobs, _ = rigid_view(_swf(name).frame, nodes=m)
    if n is None:
        return jobs
    return type(jobs)(**{f: getattr(jobs, f)[:n] for f in ("submit", "runtime", "nodes", "estimate")})


# -- the CoH world ------------------------------------------------------------------------------------------

def nested(*, policy: str = "coh", solver: str | None = None, reservations: Any = None, **flat: Any) -> Any:
    """The nested configuration of the flat options the cases were recorded with.

    The capacity rule is the tick rule unless ``capacity`` says otherwise: the cases recorded before
    issue 16 ran under it, and keep reproducing their values exactly under it. Likewise the IPP solves
    at most two jobs without a solver and leaves batches of ``max_jobs`` or more to the heuristics unless
    ``exact_jobs`` and ``chunk_jobs`` say otherwise (the rules before issue 17).
    """
    from broker.coh.config import CohConfig, EngineConfig, IppConfig, SimulationConfig

    sections: dict[str, dict[str, Any]] = {"coh": {}, "engine": {}, "ipp": {}}
    names = {"coh": ("heuristics", "lookahead", "paid_scoring", "ipp_wins_ties"),
             "engine": ("tick", "boot_time", "charging", "release_margin", "validate", "capacity"),
             "ipp": ("time_limit", "deterministic", "threads", "max_jobs", "max_vms", "warm_start", "exact_jobs",
                     "chunk_jobs")}
    for key, value in flat.items():
        [section] = [s for s, keys in names.items() if key in keys]
        sections[section][key] = value
    sections["engine"].setdefault("capacity", "tick")
    sections["ipp"].setdefault("exact_jobs", 2)
    sections["ipp"].setdefault("chunk_jobs", 0)
    ipp = IppConfig(solver, **sections["ipp"]) if solver is not None else None
    return SimulationConfig(CohConfig(policy, **sections["coh"]), EngineConfig(**sections["engine"]), ipp,
                            reservations)


def _coh(jobs: Any, *, book: Any = None, recorder: Any = None, **config: Any) -> Observed:
    from broker.coh.simulate import simulate
    from broker.pricing.book import load_price_book

    book = book if book is not None else load_price_book()
    seed = config.pop("seed", 3)
    result = simulate(jobs, book.catalog(), config=nested(**config), seed=seed, recorder=recorder, book=book)
    s = result.summary
    out: Observed = {"cost": s.cost, "lower_bound": s.lower_bound, "utilization": s.utilization,
                     "utilization_leased": s.utilization_leased, "wait_mean_s": s.wait_mean_s,
                     "wait_p95_s": s.wait_p95_s, "wait_max_s": s.wait_max_s, "ticks": s.ticks, "events": s.events,
                     "upfront_amortized": s.upfront_amortized, "vms": str(sorted(s.instances_by_type.items())),
                     "vm_hours": str(sorted(s.instance_hours_by_type.items())),
                     "cost_by_option": str(sorted(s.cost_by_option.items())),
                     "wins": str(sorted(s.policy_stats.get("wins", {}).items()))}
    for key in ("ipp_calls", "ipp_optimal_ticks", "ipp_exact_ticks", "ipp_bound_ticks", "ipp_limit_hit_ticks"):
        if key in s.policy_stats:
            out[key] = s.policy_stats[key]
    out.update(frame_digest(result.jobs, ["start", "end", "wait", "instance_id"], ["start", "end", "wait", "vm_id"]))
    out.update(frame_digest(result.instances, ["instance_id", "instance_type", "hired_at", "ready_at", "released_at",
                                               "anchor", "units", "hourly", "cost", "jobs_hosted", "busy_capacity_s",
                                               "option"],
                            ["vm_id", "vm_type", "boot_start", "ready_at", "released_at", "anchor", "units", "hourly",
                             "cost", "jobs_hosted", "busy_capacity_s", "option"]))
    return out


def coh_lcg(reqs: str, policy: str, n: int | None = 3000, **extra: Any) -> Callable[[], Observed]:
    return lambda: _coh(coh_jobs(LCG, reqs, n), policy=policy, **extra)


def coh_ipp(solver: str, capacity: str = "tick", **ipp: Any) -> Observed:
    return _coh(coh_jobs(LCG, "heterogeneous", 800), policy="coh", solver=solver, time_limit=0.5, deterministic=True,
                threads=1, capacity=capacity, **ipp)


def coh_egee_burst(solver: str) -> Observed:
    """LPC-EGEE around its first bursts (ticks of 322, 80, 63 and 72 jobs), planned in chunks."""
    jobs = coh_jobs(EGEE, "heterogeneous", None)
    burst = jobs.between(float(jobs.arrival[44_500]), float(jobs.arrival[46_300]))
    return _coh(burst, policy="coh", solver=solver, time_limit=0.5, deterministic=True, threads=1,
                capacity="interval", exact_jobs=12, chunk_jobs=20)


def coh_records() -> Observed:
    from broker.sim.recorder import MemoryRecorder

    recorder = MemoryRecorder()
    out = _coh(coh_jobs(LCG, "constant-10", 600), recorder=recorder, policy="coh", solver="cpsat", time_limit=0.2,
               deterministic=True, threads=1)
    frame = recorder.frame("portfolio")
    out["records"] = len(frame)
    out.update(frame_digest(frame, [c for c in frame.columns if c.startswith("cost[")] + ["now", "jobs"]))
    return out


def coh_r_kth(capacity: str = "tick") -> Observed:
    from broker.pricing.book import load_price_book
    from broker.pricing.reservations import ReservationPlan

    plan = ReservationPlan(1, {("large", "reserved-heavy"): 2, ("large", "reserved-medium"): 3,
                               ("large", "reserved-light"): 2, ("small", "reserved-light"): 1})
    return _coh(coh_jobs(KTH, "heterogeneous", 4000, seed=5), book=load_price_book(), policy="coh-r",
                reservations=plan, capacity=capacity)


def planner_kth(capacity: str = "tick") -> Observed:
    from broker.coh.config import EngineConfig, SimulationConfig
    from broker.planning.demand import replay_demand
    from broker.planning.planner import Prices, plan_reservations
    from broker.pricing.book import load_price_book

    book = load_price_book()
    jobs = coh_jobs(KTH, "heterogeneous", 6000, seed=5)
    config = SimulationConfig(engine=EngineConfig(capacity=capacity))  # type: ignore[arg-type]
    demand, result = replay_demand(jobs, book.catalog(), config=config, seed=2)
    out: Observed = {"replay_cost": result.summary.cost}
    for name in demand.types:
        out[f"demand[{name}]#"] = digest(demand.column(name))
    for mode in ("per-type", "capacity"):
        report = plan_reservations(demand, Prices.from_book(book, 1), mode=mode)  # type: ignore[arg-type]
        out[f"{mode}.plan"] = str(sorted(report.plan.counts.items()))
        out[f"{mode}.expected_cost"] = report.expected_cost
    return out


def lublin_default() -> Observed:
    from workloads.jobs import job_view
    from workloads.lublin import default_workload

    jobs, _ = job_view(default_workload(seed=4, n_jobs=1500), reqs="heterogeneous", seed=4)
    return _coh(jobs, policy="ipp", solver="cbc", time_limit=0.3, deterministic=True, threads=1)


# -- the hybrid site ----------------------------------------------------------------------------------------

def _leasing_observed(run: Any) -> Observed:
    s, jobs = run.summary, run.jobs
    site = np.where(jobs["site"] == "cloud", 1, 0)
    out: Observed = {"twt": s.twt_s, "cost": s.cloud_cpu_s, "simulated": s.clones_simulated, "caps#": digest(s.caps),
                     "start#": digest(jobs["start"]), "site#": digest(site),
                     "cumulative#": digest(run.steps[["twt_s", "cloud_cpu_s"]].to_numpy(dtype=float).ravel())}
    if run.q is not None:
        out["q#"] = digest(run.q)
    return out


def leasing(trace: str, m: int, n: int | None, policy: str, **kwargs: Any) -> Callable[[], Observed]:
    def case() -> Observed:
        from broker.hybrid.policies import LEASING_POLICIES, run_leasing

        params = {k: v for k, v in kwargs.items() if k in ("v", "seed", "k", "share", "references")}
        options = {k: v for k, v in kwargs.items() if k not in params}
        return _leasing_observed(run_leasing(rigid_jobs(trace, m, n), m, LEASING_POLICIES.get(policy)(m, **params),
                                             **options))
    return case


def backfill(trace: str, m: int, n: int | None, discipline: str) -> Callable[[], Observed]:
    def case() -> Observed:
        from broker.hybrid.world import replay

        schedule, _ = replay(rigid_jobs(trace, m, n), m, discipline)  # type: ignore[arg-type]
        return {"start#": digest(schedule.start), "end#": digest(schedule.end), "promised#": digest(schedule.promised),
                "wait_sum": float(np.nansum(schedule.start - rigid_jobs(trace, m, n).submit))}
    return case


# -- the cloud cluster --------------------------------------------------------------------------------------

def cluster(workload: dict[str, Any], settings: dict[str, Any], seed: int = 11) -> Callable[[], Observed]:
    def case() -> Observed:
        from broker.cloudcluster.simulate import simulate_cluster
        from broker.cloudcluster.sweep import policy_of, terms_of, workload_of

        jobs, _ = workload_of(workload.get("trace"), workload.get("synthetic"), workload.get("limit"),
                           workload.get("seed", 0), None, workload.get("parallel", "one"))
        result = simulate_cluster(jobs, policy_of(settings), terms_of(settings), seed=seed)
        s = result.summary
        out: Observed = {"cost": s.cost, "instance_cost": s.instance_cost, "egress_cost": s.egress_cost,
                         "instance_hours": s.instance_hours, "mean_overhead_s": s.overhead_mean_s,
                         "p95_overhead_s": s.overhead_p95_s, "mean_wait_s": s.wait_mean_s, "jobs": s.jobs,
                         "instances": s.instances, "peak_instances": s.peak_instances}
        months = {int(np.datetime64(m, "M").astype(int)): c for m, c in s.egress_by_month.items()}
        out["egress_by_month"] = str(sorted(months.items()))
        out.update(frame_digest(result.jobs, ["start", "end", "instance_id", "wait", "overhead"],
                                ["begin", "done", "instance", "wait", "overhead"]))
        out.update({f"ledger.{k}": v for k, v in frame_digest(
            result.instances, ["pool", "hired_at", "anchor", "ready_at", "released_at", "units", "cost"],
            ["pool", "hired", "anchor", "ready", "released", "units", "cost"]).items()})
        out.update({f"users.{k}": v for k, v in frame_digest(result.users, ["instance_cost", "egress_cost",
                                                                            "exec_s"]).items()})
        return out
    return case


def _trace_workload(name: str, limit: int, **extra: Any) -> dict[str, Any]:
    return {"trace": str(trace_path(name)), "limit": limit, "seed": 2, **extra}


CASES: dict[str, Callable[[], Observed]] = {
    # CoH: the paper's trio, each requirement model; members alone; wall-clock; other tick and boot
    "coh/lcg/heterogeneous/coh": coh_lcg("heterogeneous", "coh"),
    "coh/lcg/constant-100/coh": coh_lcg("constant-100", "coh"),
    "coh/lcg/constant-10/coh": coh_lcg("constant-10", "coh"),
    "coh/lcg/heterogeneous/FCFS-SM": coh_lcg("heterogeneous", "FCFS-SM"),
    "coh/lcg/heterogeneous/LJF-LD": coh_lcg("heterogeneous", "LJF-LD"),
    "coh/lcg/heterogeneous/RR-EAA": coh_lcg("heterogeneous", "RR-EAA"),
    "coh/lcg/constant-100/FCFS-CFH/wall-clock": coh_lcg("constant-100", "FCFS-CFH", charging="wall-clock"),
    "coh/lcg/heterogeneous/coh/tick60-boot300": coh_lcg("heterogeneous", "coh", tick=60.0, boot_time=300.0,
                                                        lookahead=120.0, paid_scoring=False),
    "coh/lcg/heterogeneous/coh/validate": coh_lcg("heterogeneous", "coh", validate=True, n=1500),
    "coh/lcg/ipp-cpsat": lambda: coh_ipp("cpsat"),
    "coh/lcg/ipp-cbc": lambda: coh_ipp("cbc"),
    "coh/lcg/records": coh_records,
    "coh/lublin/ipp-alone": lublin_default,
    "coh-r/kth": coh_r_kth,
    "planning/kth": planner_kth,
    # the interval capacity rule (issue 16, the default since): recorded when it came in
    "coh/lcg/heterogeneous/coh/interval": coh_lcg("heterogeneous", "coh", capacity="interval"),
    "coh/lcg/constant-100/FCFS-LD/interval": coh_lcg("constant-100", "FCFS-LD", capacity="interval"),
    "coh/lcg/heterogeneous/FCFS-SM/interval": coh_lcg("heterogeneous", "FCFS-SM", capacity="interval"),
    "coh/lcg/heterogeneous/LJF-EA/interval": coh_lcg("heterogeneous", "LJF-EA", capacity="interval"),
    "coh/lcg/heterogeneous/coh/validate/interval": coh_lcg("heterogeneous", "coh", validate=True, n=1500,
                                                           capacity="interval"),
    "coh/lcg/ipp-cpsat/interval": lambda: coh_ipp("cpsat", "interval"),
    "coh/lcg/ipp-cbc/interval": lambda: coh_ipp("cbc", "interval"),
    "coh-r/kth/interval": lambda: coh_r_kth("interval"),
    "planning/kth/interval": lambda: planner_kth("interval"),
    # issue 17: up to 12 jobs solved exactly, larger batches in chunks of 20, two backends racing
    "coh/lcg/ipp-cpsat/exact12": lambda: coh_ipp("cpsat", "interval", exact_jobs=12, chunk_jobs=20),
    "coh/lcg/ipp-cbc/exact12": lambda: coh_ipp("cbc", "interval", exact_jobs=12, chunk_jobs=20),
    "coh/lcg/ipp-cbc,cpsat/race": lambda: coh_ipp("cbc,cpsat", "interval", exact_jobs=2, chunk_jobs=20),
    "coh/egee/burst/ipp-cpsat/chunks": lambda: coh_egee_burst("cpsat"),
    # hybrid leasing: KTH (M = 100) and SDSC-SP2 (M = 128) slices
    "hybrid/kth/constant-0": leasing(KTH, 100, 5000, "constant", v=0.0),
    "hybrid/kth/constant-31": leasing(KTH, 100, 5000, "constant", v=31.0),
    "hybrid/kth/constant-inf": leasing(KTH, 100, 5000, "constant", v=math.inf),
    "hybrid/kth/random": leasing(KTH, 100, 5000, "random", seed=7),
    "hybrid/kth/qlearning": leasing(KTH, 100, 5000, "qlearning", references="clones"),
    "hybrid/kth/qlearning-naive": leasing(KTH, 100, 2000, "qlearning", share=False, references="clones"),
    "hybrid/kth/epsilon": leasing(KTH, 100, 5000, "sampled", seed=5, k=3, references="clones"),  # was egreedy
    "hybrid/kth/qlearning/conservative": leasing(KTH, 100, 2500, "qlearning", discipline="conservative",
                                                  references="clones"),
    "hybrid/kth/constant-12/conservative/6h": leasing(KTH, 100, 4000, "constant", v=12.0,
                                                      discipline="conservative", step=21600.0),
    "hybrid/sp2/qlearning": leasing(SP2, 128, 5000, "qlearning", references="clones"),
    "hybrid/sp2/random": leasing(SP2, 128, 5000, "random", seed=2),
    "hybrid/sp2/constant-29": leasing(SP2, 128, 5000, "constant", v=29.0),
    # the plain backfilling replay
    "backfill/kth/easy": backfill(KTH, 100, None, "easy"),
    "backfill/kth/conservative": backfill(KTH, 100, 6000, "conservative"),
    "backfill/sp2/easy": backfill(SP2, 128, 20000, "easy"),
    # the cloud cluster: every rule, LPC-EGEE and SDSC-SP2 slices and the bursty load
    "cluster/egee/default": cluster(_trace_workload(EGEE, 20000), {}),
    "cluster/egee/cap-40": cluster(_trace_workload(EGEE, 8000), {"cap": 40}),
    "cluster/egee/per-user/wall-clock": cluster(_trace_workload(EGEE, 8000), {"merge": False,
                                                                             "charging": "wall-clock"}),
    "cluster/egee/keepalive-fixed/boot": cluster(_trace_workload(EGEE, 8000), {"keepalive": "fixed:0.5",
                                                                              "boot_s": 600}),
    "cluster/egee/keepalive-idle": cluster(_trace_workload(EGEE, 8000), {"keepalive": "idle:0.4", "boot_s": 120}),
    "cluster/egee/keepalive-load": cluster(_trace_workload(EGEE, 8000), {"keepalive": "load:0.6:1800",
                                                                        "boot_s": 300}),
    "cluster/egee/idle-timeout": cluster(_trace_workload(EGEE, 8000), {"idle_timeout_min": 10}),
    "cluster/sp2/delay": cluster(_trace_workload(SP2, 6000), {"delay_min": 5, "cap": 60}),
    "cluster/sp2/burst": cluster(_trace_workload(SP2, 6000), {"delay_min": 10, "burst_ratio": 0.5, "cap": 30}),
    "cluster/sp2/next-hour": cluster(_trace_workload(SP2, 6000), {"wait_next_hour_min": 30,
                                                                 "charging": "wall-clock"}),
    "cluster/sp2/expand": cluster(_trace_workload(SP2, 3000, parallel="expand"), {"cap": 200}),
    "cluster/synthetic/s2": cluster({"synthetic": 2.0, "seed": 3}, {"keepalive": "fixed:0.2", "boot_s": 60,
                                                                     "merge": False}),
}

#: Whole traces, checked once by hand (``python -m tests.golden.record --whole``; minutes, not run by the tests).
WHOLE: dict[str, Callable[[], Observed]] = {
    "coh/lcg/heterogeneous/coh": coh_lcg("heterogeneous", "coh", n=None),
    "coh/lcg/constant-100/coh": coh_lcg("constant-100", "coh", n=None),
    "coh/lcg/constant-10/coh": coh_lcg("constant-10", "coh", n=None),
    "coh/lcg/heterogeneous/FCFS-SM": coh_lcg("heterogeneous", "FCFS-SM", n=None),
    "coh/lcg/constant-100/FCFS-LD/interval": coh_lcg("constant-100", "FCFS-LD", n=None, capacity="interval"),
    "hybrid/kth/qlearning": leasing(KTH, 100, None, "qlearning", references="clones"),
    "hybrid/kth/constant-31": leasing(KTH, 100, None, "constant", v=31.0),
    "hybrid/kth/random": leasing(KTH, 100, None, "random", seed=7),
    "hybrid/kth/epsilon": leasing(KTH, 100, None, "sampled", seed=5, k=3, references="clones"),  # was egreedy
    "hybrid/sp2/qlearning": leasing(SP2, 128, None, "qlearning", references="clones"),
    "backfill/kth/conservative": backfill(KTH, 100, None, "conservative"),
    "cluster/egee/default": cluster({"trace": str(trace_path(EGEE)), "seed": 2}, {}),
    "cluster/egee/keepalive-load": cluster({"trace": str(trace_path(EGEE)), "seed": 2},
                                           {"keepalive": "load:0.5", "boot_s": 600}),
    "cluster/sp2/per-user/wall-clock": cluster({"trace": str(trace_path(SP2)), "seed": 2},
                                               {"merge": False, "charging": "wall-clock", "delay_min": 5}),
}
