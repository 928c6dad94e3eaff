"""The ``cloudbroker`` command line: ``trace info``, ``simulate``, ``plan-reservations``, ``leasing``, ``cluster``.

Output goes to stdout (a table, or one JSON object with ``--json``); progress bars and log
messages go to stderr, and a progress bar is shown only on a terminal.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from broker.cli.backends import BACKENDS, joblib_backend
from broker.cli.cluster import cluster_app
from broker.cli.console import bar as _bar
from broker.cli.console import err, out
from broker.cli.files import TableFormat, read_demand, read_plan, write_result
from broker.coh.metrics import RunResult
from broker.coh.simulate import RESERVED_POLICIES, SimulationConfig, replay_demand, simulate
from broker.hybrid import plots
from broker.hybrid.leasing import (
    SweepSummary,
    cumulative_balance,
    run_policy,
    summarize_sweep,
    sweep_cell,
    sweep_configs,
)
from broker.hybrid.site import Balance, balance, run_constant
from broker.planning.demand import Demand, distribution
from broker.planning.planner import Prices, plan_reservations
from broker.pricing.billing import Charging
from broker.pricing.book import DEFAULT_PRICE_BOOK, HEAVY, RESERVED_OPTIONS, PriceBook, load_price_book
from broker.pricing.reservations import PlanError, ReservationPlan
from broker.sim.recorder import Recorder
from broker.sweep import run_sweep
from heuristics.backfill import Discipline
from heuristics.registry import HEURISTICS, PAPER_TRIO
from solvers.base import list_solvers
from workloads.cache import load_trace
from workloads.jobs import STATUS_GROUPS, FilterReport, JobTable, job_view
from workloads.lublin import default_workload
from workloads.requirements import MODELS
from workloads.rigid import rigid_view
from workloads.swf import trace_info

app = typer.Typer(help="Replay job traces through a simulated cloud broker.", no_args_is_help=True,
                  add_completion=False)
trace_app = typer.Typer(help="Inspect workload traces.", no_args_is_help=True)
app.add_typer(trace_app, name="trace")


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log to stderr.")] = False) -> None:
    level = logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@trace_app.command("info")
def trace_info_cmd(
    path_or_name: Annotated[str, typer.Argument(help="An SWF file (plain or gzip) or a registry name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    lenient: Annotated[bool, typer.Option(help="Skip malformed lines (and count them).")] = False,
) -> None:
    """Jobs, time span, processors and fields present in a trace."""
    info = trace_info(_load(path_or_name, lenient))
    if as_json:
        typer.echo(json.dumps(info, sort_keys=True, default=str))
        return
    table = Table(title=str(info.get("path", path_or_name)), show_header=False)
    for key in ("jobs", "first_submit", "last_submit", "span_s", "first_submit_utc", "last_submit_utc",
                "max_procs", "max_nodes", "skipped"):
        table.add_row(key, str(info.get(key)))
    table.add_row("fields present", ", ".join(info.get("fields_present", [])))
    table.add_row("fields missing", ", ".join(info.get("fields_missing", [])))
    out.print(table)


@dataclass(frozen=True, slots=True)
class _Workload:
    jobs: JobTable
    report: FilterReport
    label: str


@app.command("simulate")
def simulate_cmd(
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (e.g. KTH-SP2-1996-2.1-cln).")] = None,
    synthetic: Annotated[bool, typer.Option(help="Use the generated default workload (the default).")] = False,
    synthetic_jobs: Annotated[int, typer.Option(help="Jobs in the generated workload.")] = 2000,
    reqs: Annotated[str, typer.Option(help=f"Requirement model: {', '.join(MODELS)}.")] = "heterogeneous",
    policy: Annotated[str, typer.Option(help="'coh', 'ipp' (with --solver), 'coh-r' / 'coh-onetype' (with "
                                              "--reservations) or one heuristic such as FCFS-SM.")] = "coh",
    heuristics: Annotated[
        str, typer.Option(help="Portfolio members for --policy coh, comma separated.")
    ] = ",".join(PAPER_TRIO),
    tick: Annotated[float, typer.Option(help="Scheduling tick (s).")] = 10.0,
    boot: Annotated[float, typer.Option(help="VM boot time (s), billed.")] = 120.0,
    charging: Annotated[str, typer.Option(help="exact or wall-clock.")] = "exact",
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = 0,
    limit_jobs: Annotated[int | None, typer.Option(help="Use only the first N jobs (by arrival).")] = None,
    drop_status: Annotated[str, typer.Option(help="Also remove jobs with these statuses: failed,cancelled.")] = "",
    price_book: Annotated[str, typer.Option(help="Bundled price book name or a .toml path.")] = DEFAULT_PRICE_BOOK,
    validate: Annotated[bool, typer.Option(help="Check the engine's invariants every tick (slower).")] = False,
    solver: Annotated[str | None, typer.Option(help="Add the integer program to --policy coh: cbc or cpsat.")] = None,
    time_limit: Annotated[float, typer.Option(help="IPP limit per tick: seconds, or work with --deterministic.")] = 2.0,
    deterministic: Annotated[bool, typer.Option(help="Work limits, not seconds: same seed, same result.")] = False,
    paid_scoring: Annotated[bool, typer.Option("--paid-scoring/--paper-scoring",
                                               help="Count billing units already paid as sunk when scoring.")] = True,
    ipp_wins_ties: Annotated[bool, typer.Option("--ipp-wins-ties/--heuristic-wins-ties",
                                                help="Which plan CoH applies on a tie.")] = True,
    ipp_max_jobs: Annotated[int, typer.Option(help="Run the IPP only when fewer new jobs than this.")] = 50,
    ipp_max_vms: Annotated[int | None, typer.Option(help="Candidate running VMs in the IPP (default: all).")] = None,
    warm_start: Annotated[bool, typer.Option(help="Start the solver from the best heuristic plan.")] = True,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write jobs/vms tables and summary.json here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    lenient: Annotated[bool, typer.Option(help="Skip malformed trace lines (and count them).")] = False,
    reservations: Annotated[Path | None, typer.Option(help="Reservation plan (plan-reservations --json output) "
                                                           "for --policy coh-r / coh-onetype.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Replay a trace (or the generated default) through CoH, CoH-R or one heuristic."""
    if trace and synthetic:
        raise typer.BadParameter("give --trace or --synthetic, not both")
    config = _config(policy, heuristics, tick, boot, charging, validate, **_reservation_options(reservations, policy))
    config = replace(config, paid_scoring=paid_scoring, ipp_wins_ties=ipp_wins_ties,
                     **_ipp_options(solver, time_limit, deterministic, ipp_max_jobs, ipp_max_vms, warm_start, policy))
    workload_seed, policy_seed = np.random.SeedSequence(seed).spawn(2)
    work = _workload(trace, synthetic_jobs, reqs, workload_seed, limit_jobs, drop_status, lenient)
    book = _book(price_book)
    catalog = book.catalog()
    started = time.perf_counter()
    with _progress(len(work.jobs), quiet=not err.is_terminal) as recorder:
        result = simulate(work.jobs, catalog, config=config, seed=int(policy_seed.generate_state(1)[0]),
                          recorder=recorder, book=book)
    wall = time.perf_counter() - started
    payload = _payload(result, work, config, seed, wall)
    if out_dir is not None:
        write_result(result, out_dir, fmt=_format(fmt),
                     summary={**result.summary.to_dict(), **{k: payload[k] for k in ("workload", "config", "seed")}})
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
    else:
        _print_summary(result, work, wall)


def _ipp_options(solver: str | None, time_limit: float, deterministic: bool, max_jobs: int, max_vms: int | None,
                 warm_start: bool, policy: str) -> dict[str, Any]:
    if solver is None:
        return {}
    if solver not in list_solvers():
        raise typer.BadParameter(f"--solver must be one of {', '.join(list_solvers())}")
    if policy not in ("coh", "ipp", *RESERVED_POLICIES):
        raise typer.BadParameter("--solver needs --policy coh, ipp, coh-r or coh-onetype (the IPP is a member of "
                                 "the portfolio)")
    if time_limit <= 0:
        raise typer.BadParameter("--time-limit must be > 0")
    return {"solver": solver, "time_limit": time_limit, "deterministic": deterministic, "ipp_max_jobs": max_jobs,
            "ipp_max_vms": max_vms, "warm_start": warm_start}


def _reservation_options(path: Path | None, policy: str) -> dict[str, Any]:
    if (path is not None) != (policy in RESERVED_POLICIES):
        raise typer.BadParameter("--reservations goes with --policy coh-r or coh-onetype, and they need it")
    if path is None:
        return {}
    try:
        plan = read_plan(path)
    except (OSError, PlanError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    if policy == "coh-onetype" and {o for _, o in plan.counts} - {HEAVY}:
        raise typer.BadParameter(f"{path}: coh-onetype uses heavy reservations only; this plan has others "
                                 f"(make it with plan-reservations --options reserved-heavy, or use coh-r)")
    return {"reservations": plan}


def _load(path_or_name: str, lenient: bool) -> Any:
    try:
        return load_trace(path_or_name, lenient=lenient)
    except (OSError, LookupError, ValueError, RuntimeError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc


def _config(policy: str, heuristics: str, tick: float, boot: float, charging: str, validate: bool,
            reservations: ReservationPlan | None = None) -> SimulationConfig:
    members = tuple(h.strip() for h in heuristics.split(",") if h.strip())
    for name in (*members, *([policy] if policy not in ("coh", "ipp", *RESERVED_POLICIES) else [])):
        if name not in HEURISTICS:
            raise typer.BadParameter(f"unknown heuristic {name!r}; known: {', '.join(HEURISTICS)}")
    if charging not in ("exact", "wall-clock"):
        raise typer.BadParameter("--charging must be exact or wall-clock")
    mode: Charging = "exact" if charging == "exact" else "wall-clock"
    return SimulationConfig(policy=policy, heuristics=members, tick=tick, boot_time=boot, charging=mode,
                            validate=validate, reservations=reservations)


def _workload(trace: str | None, n_synthetic: int, reqs: str, seed: np.random.SeedSequence, limit: int | None,
              drop_status: str, lenient: bool) -> _Workload:
    if reqs not in MODELS:
        raise typer.BadParameter(f"--reqs must be one of {', '.join(MODELS)}")
    drop = frozenset(s.strip() for s in drop_status.split(",") if s.strip())
    if drop - set(STATUS_GROUPS):
        raise typer.BadParameter(f"--drop-status takes {', '.join(STATUS_GROUPS)}")
    gen_seed, req_seed = seed.spawn(2)
    if trace is None:
        frame = default_workload(seed=int(gen_seed.generate_state(1)[0]), n_jobs=n_synthetic)
        origin, label = 0, f"synthetic Lublin-Feitelson ({n_synthetic} jobs)"
    else:
        swf = _load(trace, lenient)
        frame, origin, label = swf.frame, swf.header.unix_start_time or 0, trace
    jobs, report = job_view(frame, reqs=reqs, seed=req_seed, drop_status=drop, origin=origin, source=label)
    return _Workload(jobs.head(limit) if limit is not None else jobs, report, label)


def _format(fmt: str) -> TableFormat:
    if fmt not in ("parquet", "csv"):
        raise typer.BadParameter("--format must be parquet or csv")
    return "parquet" if fmt == "parquet" else "csv"


@contextmanager
def _progress(total: int, *, quiet: bool) -> Iterator[Recorder]:
    with _bar("replaying", total, quiet=quiet) as update:
        yield Recorder() if update is None else Recorder(progress=update, every=500)


def _payload(result: RunResult, work: _Workload, config: SimulationConfig, seed: int, wall: float) -> dict[str, Any]:
    s = result.summary
    ipp_keys = ("ipp_wins", "heuristic_wins", "ipp_optimal_ticks", "mean_gap")
    return {
        **s.to_dict(),
        **{k: s.policy_stats[k] for k in ipp_keys if k in s.policy_stats},
        "wall_s": round(wall, 3),
        "seed": seed,
        "workload": {"source": work.label, "filter": {"read": work.report.read, "kept": work.report.kept,
                                                      "removed": work.report.removed,
                                                      "kept_flagged": work.report.kept_flagged},
                     "jobs_simulated": len(work.jobs)},
        "config": {"policy": config.policy, "heuristics": list(config.heuristics), "tick": config.tick,
                   "boot_time": config.boot_time, "charging": config.charging,
                   "release_margin": config.release_margin, "validate": config.validate, "solver": config.solver,
                   "time_limit": config.time_limit, "deterministic": config.deterministic,
                   "ipp_max_jobs": config.ipp_max_jobs, "ipp_max_vms": config.ipp_max_vms,
                   "warm_start": config.warm_start, "paid_scoring": config.paid_scoring,
                   "ipp_wins_ties": config.ipp_wins_ties,
                   "reservations": config.reservations.to_dict() if config.reservations else None},
    }


def _print_summary(result: RunResult, work: _Workload, wall: float) -> None:
    s = result.summary
    table = Table(title=f"{s.policy} on {work.label}", show_header=False)
    table.add_row("jobs", f"{s.jobs:,}  ({work.report.describe()})")
    table.add_row("cost", f"${s.cost:,.2f}")
    if s.upfront_amortized:
        billed = ", ".join(f"{k} ${v:,.2f}" for k, v in s.cost_by_option.items())
        table.add_row("  of which", f"upfront (share of the term) ${s.upfront_amortized:,.2f}; billed: {billed}")
    table.add_row("lower bound (LB)", f"${s.lower_bound:,.2f}")
    table.add_row("cost / LB", f"{s.cost_over_lb:.3f}")
    table.add_row("utilization", f"{s.utilization:.1%}")
    for vm_type, count in s.instances_by_type.items():
        table.add_row(f"VMs {vm_type}", f"{count:,} ({s.instance_hours_by_type[vm_type]:,.0f} h)")
    table.add_row("wait mean / max", f"{s.wait_mean_s:.1f} s / {s.wait_max_s:.1f} s")
    stats = s.policy_stats
    wins = stats.get("wins", {})
    if len(wins) > 1 or s.policy == "coh":
        table.add_row("portfolio wins", ", ".join(f"{k} {v:,}" for k, v in wins.items()))
    if "ipp_calls" in stats:
        gap = "n/a" if stats["mean_gap"] is None else f"{stats['mean_gap']:.2%}"
        table.add_row("IPP", f"{stats['ipp_calls']:,} calls ({stats['ipp_exact_ticks']:,} exact), "
                             f"{stats['ipp_optimal_ticks']:,} optimal, mean gap {gap}, {stats['ipp_wall_s']:.1f} s")
    table.add_row("wall time", f"{wall:.2f} s")
    out.print(table)


def _book(name_or_path: str) -> PriceBook:
    try:
        return load_price_book(name_or_path)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc


@app.command("plan-reservations")
def plan_reservations_cmd(
    trace: Annotated[str | None, typer.Option(help="Replay this SWF file or registry name for the demand.")] = None,
    demand_file: Annotated[Path | None, typer.Option("--demand", help="Demand CSV (VMs per type, interval).")] = None,
    synthetic_jobs: Annotated[int, typer.Option(help="Jobs in the generated workload (the default input).")] = 2000,
    reqs: Annotated[str, typer.Option(help=f"Requirement model: {', '.join(MODELS)}.")] = "heterogeneous",
    term: Annotated[str, typer.Option(help="Reservation term: 1y or 3y.")] = "1y",
    mode: Annotated[str, typer.Option(help="per-type (CoH-R's cover, closed form) or capacity (formula 6, an "
                                           "integer program).")] = "per-type",
    options: Annotated[str, typer.Option(help="Reservation options to consider, comma separated.")] = ",".join(
        RESERVED_OPTIONS),
    solver: Annotated[str, typer.Option(help="Solver of the capacity-mode program: cbc or cpsat.")] = "cbc",
    growth: Annotated[float, typer.Option(help="Scale the demand by this factor before planning.")] = 1.0,
    interval: Annotated[float, typer.Option(help="Demand interval (s).")] = 3600.0,
    heuristics: Annotated[str, typer.Option(help="CoH members of the demand replay.")] = ",".join(PAPER_TRIO),
    replay_solver: Annotated[str | None, typer.Option(help="Add CoH's integer program (cbc or cpsat, deterministic "
                                                           "work limit of 1) to the demand replay.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the workload and the replay.")] = 0,
    limit_jobs: Annotated[int | None, typer.Option(help="Use only the first N jobs (by arrival).")] = None,
    price_book: Annotated[str, typer.Option(help="Bundled price book name or a .toml path.")] = DEFAULT_PRICE_BOOK,
    save_demand: Annotated[Path | None, typer.Option(help="Write the demand series here (CSV).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Plan reserved-instance purchases from a trace's CoH replay or a demand file (CoH formula 6)."""
    if trace is not None and demand_file is not None:
        raise typer.BadParameter("give --trace or --demand, not both")
    book = _book(price_book)
    prices = _prices(book, term, options, mode, solver)
    config = _config("coh", heuristics, 10.0, 120.0, "exact", False)
    if replay_solver is not None:
        config = replace(config, **_ipp_options(replay_solver, 1.0, True, 50, None, True, "coh"))
    demand, source = _demand(book, trace, demand_file, synthetic_jobs, reqs, config, seed, limit_jobs, interval)
    if growth != 1.0:
        demand = demand.scaled(growth)
    if save_demand is not None:
        demand.frame().to_csv(save_demand, index=False)
    report = plan_reservations(demand, prices, mode="capacity" if mode == "capacity" else "per-type", solver=solver)
    payload = {**report.to_dict(), "demand": _demand_summary(demand, source, growth)}
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
    else:
        _print_plan(payload)


def _demand_summary(demand: Demand, source: str, growth: float) -> dict[str, Any]:
    """Where the demand came from, its size and, per type, its peak and ``Pr(D = i)``."""
    per_type = {}
    for name in demand.types:
        levels, probs = distribution(demand.column(name))
        per_type[name] = {"peak": int(levels.max()), "levels": levels.tolist(), "probability": probs.tolist()}
    return {"source": source, "intervals": len(demand), "interval_s": demand.interval_s, "growth": growth,
            "peak": {name: d["peak"] for name, d in per_type.items()}, "distribution": per_type}


def _prices(book: PriceBook, term: str, options: str, mode: str, solver: str) -> Prices:
    if term not in ("1y", "3y"):
        raise typer.BadParameter("--term must be 1y or 3y")
    if mode not in ("per-type", "capacity"):
        raise typer.BadParameter("--mode must be per-type or capacity")
    if solver not in list_solvers():
        raise typer.BadParameter(f"--solver must be one of {', '.join(list_solvers())}")
    chosen = [o.strip() for o in options.split(",") if o.strip()]
    try:
        return Prices.from_book(book, int(term[0]), options=chosen)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def _demand(book: PriceBook, trace: str | None, demand_file: Path | None, synthetic_jobs: int, reqs: str,
            config: SimulationConfig, seed: int, limit_jobs: int | None, interval: float) -> tuple[Demand, str]:
    catalog = book.catalog()
    if demand_file is not None:
        try:
            return read_demand(demand_file, catalog.names, interval_s=interval), str(demand_file)
        except (OSError, ValueError) as exc:
            err.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from exc
    workload_seed, policy_seed = np.random.SeedSequence(seed).spawn(2)
    work = _workload(trace, synthetic_jobs, reqs, workload_seed, limit_jobs, "", False)
    with _progress(len(work.jobs), quiet=not err.is_terminal) as recorder:
        demand, _ = replay_demand(work.jobs, catalog, config=config, seed=int(policy_seed.generate_state(1)[0]),
                                  recorder=recorder, interval_s=interval, source=work.label)
    return demand, f"CoH replay of {work.label}"


def _print_plan(payload: dict[str, Any]) -> None:
    term = payload["term_years"]
    table = Table(title=f"Reservation plan, {term}-year term ({payload['mode']} cover)")
    for col in ("type", "reserved", "count", "upfront $", "hourly $", "upfront $/h", "break-even use"):
        table.add_column(col, justify="left" if col in ("type", "reserved") else "right")
    for line in payload["lines"]:
        option = line["option"].removeprefix("reserved-")
        table.add_row(line["instance_type"], option, str(line["count"]), f"{line['upfront']:,.0f}",
                      f"{line['hourly']:.3f}", f"{line['upfront_per_hour']:.4f}",
                      f"{line['break_even_utilization']:.0%}")
    out.print(table)
    out.print(f"demand: {payload['demand']['source']} ({payload['demand']['intervals']:,} intervals, peak "
              f"{payload['demand']['peak']})")
    out.print(f"expected cost per term ${payload['expected_cost']:,.2f}; all on-demand "
              f"${payload['on_demand_cost']:,.2f}; savings ${payload['savings']:,.2f} "
              f"({payload['savings_fraction']:.1%})")


leasing_app = typer.Typer(help="A local cluster that leases cloud nodes (the Q-learning paper).",
                          invoke_without_command=True)
app.add_typer(leasing_app, name="leasing")


@leasing_app.callback()
def leasing_cmd(
    ctx: typer.Context,
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (e.g. KTH).")] = None,
    policy: Annotated[str, typer.Option(help="constant:V, random, qlearning or egreedy.")] = "qlearning",
    nodes: Annotated[int | None, typer.Option(help="Local nodes M (default: the trace header's MaxProcs).")] = None,
    span: Annotated[float, typer.Option(help="Policy step (s); the paper's day.")] = 86400.0,
    epsilon_k: Annotated[int, typer.Option(help="Random V evaluated per step by --policy egreedy.")] = 3,
    discipline: Annotated[str, typer.Option(help="Local scheduler: easy or conservative.")] = "easy",
    seed: Annotated[int, typer.Option(help="Seed of the random and egreedy policies.")] = 0,
    lenient: Annotated[bool, typer.Option(help="Skip malformed trace lines (and count them).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """A local cluster with EASY backfilling that leases up to V cloud nodes; `leasing sweep` for the references."""
    if ctx.invoked_subcommand is not None:
        return
    if trace is None:
        raise typer.BadParameter("--trace is required")
    name, cap = _leasing_policy(policy)
    if discipline not in ("easy", "conservative"):
        raise typer.BadParameter("--discipline must be easy or conservative")
    swf = _load(trace, lenient)
    m = nodes or swf.header.max_procs or swf.header.max_nodes
    if not m:
        raise typer.BadParameter("the trace header gives no MaxProcs / MaxNodes: pass --nodes")
    jobs, report = rigid_view(swf.frame, nodes=m)
    mode: Discipline = "easy" if discipline == "easy" else "conservative"
    started = time.perf_counter()
    local, unbounded = run_constant(jobs, m, 0, discipline=mode), run_constant(jobs, m, math.inf, discipline=mode)
    run = run_policy(jobs, m, name, step=span, seed=seed, cap=cap, epsilon_k=epsilon_k, discipline=mode)
    b = balance(run.result.twt, run.result.cost, local.twt, unbounded.cost)
    caps = [float(c) for c in run.result.caps]
    payload = {"policy": policy, "nodes": m, "jobs": len(jobs), "filter": report.describe(),
               "twt_s": run.result.twt, "cloud_cpu_s": run.result.cost, "twt_ref_s": local.twt,
               "cloud_cpu_ref_s": unbounded.cost, "twt_pct": b.twt_pct, "cost_pct": b.c_pct,
               "twt_imp_pct": b.twt_imp_pct, "balance": b.balance, "span_s": span, "v_per_step": caps,
               "clones_simulated": run.simulated, "seed": seed, "wall_s": round(time.perf_counter() - started, 3)}
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    table = Table(title=f"{policy} leasing on {trace} (M = {m})", show_header=False)
    for key in ("jobs", "twt_s", "cloud_cpu_s", "twt_imp_pct", "cost_pct", "balance", "clones_simulated", "wall_s"):
        value = payload[key]
        table.add_row(key, f"{value:,.2f}" if isinstance(value, float) else str(value))
    table.add_row("V per step", f"mean {np.mean(caps):.1f}, min {min(caps):g}, max {max(caps):g} ({len(caps)} steps)"
                  if caps else "-")
    out.print(table)


def _leasing_plots(swf: Any, m: int, summary: SweepSummary, folder: Path, random_runs: int, seed: int) -> list[str]:
    """Figures 5 and 6 into ``folder``; Figure 6 replays the references, best V, random runs and Q-learning."""
    folder.mkdir(parents=True, exist_ok=True)
    constant = {v: Balance(twt_pct=100.0 - b["twt_imp_pct"], c_pct=b["cost_pct"]) for v, b in summary.constant.items()}
    paths = [folder / "balance_vs_v.png", folder / "balance_over_time.png"]
    plots.balance_vs_v(constant, summary.best_v).savefig(paths[0], dpi=110)
    jobs, _ = rigid_view(swf.frame, nodes=m)
    ref0, refinf = run_policy(jobs, m, "constant", cap=0), run_policy(jobs, m, "constant", cap=math.inf)
    curves = {f"constant V = {summary.best_v}": cumulative_balance(
        run_policy(jobs, m, "constant", cap=summary.best_v), ref0, refinf)}
    if random_runs:
        runs = [cumulative_balance(run_policy(jobs, m, "random", seed=seed + k), ref0, refinf)
                for k in range(random_runs)]
        curves[f"random (mean of {random_runs})"] = np.mean(runs, axis=0)
    curves["Q-learning"] = cumulative_balance(run_policy(jobs, m, "qlearning"), ref0, refinf)
    plots.balance_over_time(curves).savefig(paths[1], dpi=110)
    return [str(p) for p in paths]


def _leasing_policy(policy: str) -> tuple[str, float]:
    """``constant:V`` -> ("constant", V); ``egreedy`` -> the epsilon-greedy learner."""
    if policy.startswith("constant:"):
        try:
            cap = int(policy.split(":", 1)[1])
        except ValueError:
            raise typer.BadParameter(f"--policy {policy!r}: V must be an integer, e.g. constant:31") from None
        if cap < 0:
            raise typer.BadParameter("--policy constant:V needs V >= 0")
        return "constant", float(cap)
    names = {"random": "random", "qlearning": "qlearning", "egreedy": "epsilon"}
    if policy not in names:
        raise typer.BadParameter("--policy must be constant:V, random, qlearning or egreedy")
    return names[policy], 0.0


@leasing_app.command("sweep")
def leasing_sweep_cmd(
    trace: Annotated[str, typer.Option(help="SWF file path (workers read it) or registry name.")],
    nodes: Annotated[int | None, typer.Option(help="Local nodes M (default: the trace header's MaxProcs).")] = None,
    v: Annotated[str, typer.Option("--v", help="Constant caps: FIRST:LAST (inclusive), LAST may be M.")] = "0:M",
    random_runs: Annotated[int, typer.Option(help="Runs of the random policy.")] = 1000,
    backend: Annotated[str, typer.Option(help="loky, dask or ray.")] = "loky",
    scheduler: Annotated[str | None, typer.Option(help="Dask or Ray scheduler address.")] = None,
    store: Annotated[Path | None, typer.Option(help="Directory of finished cells (resume from it).")] = None,
    n_jobs: Annotated[int, typer.Option(help="Workers (loky; -1: all cores).")] = -1,
    seed: Annotated[int, typer.Option(help="Root seed of the cells.")] = 1,
    plot: Annotated[Path | None, typer.Option(help="Write balance_vs_v.png (Figure 5) and balance_over_time.png "
                                              "(Figure 6: best V, random mean, Q-learning) here.")] = None,
    plot_random: Annotated[int, typer.Option(help="Random runs averaged in Figure 6.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Every constant V and repeated random-V runs through the sweep runner (resumable with --store)."""
    if backend not in BACKENDS:
        raise typer.BadParameter(f"--backend must be one of {', '.join(BACKENDS)}")
    swf = _load(trace, False)
    m = nodes or swf.header.max_procs or swf.header.max_nodes
    if not m:
        raise typer.BadParameter("the trace header gives no MaxProcs / MaxNodes: pass --nodes")
    first, _, last = v.partition(":")
    try:
        values = list(range(int(first), (m if last in ("M", "") else int(last)) + 1))
    except ValueError:
        raise typer.BadParameter(f"--v {v!r}: use FIRST:LAST, e.g. 0:M or 0:50") from None
    if not values or values[0] < 0 or values[-1] > m:
        raise typer.BadParameter(f"--v {v!r}: caps must lie in 0..{m}")
    ref, const, rand = sweep_configs(str(swf.path) if swf.path else trace, m, sorted({0, *values}),
                                     random_runs=random_runs, root_seed=seed)
    todo = [*ref, *const, *rand]
    with _bar("cells", len(todo), quiet=not err.is_terminal) as progress, joblib_backend(backend, scheduler):
        results = run_sweep(sweep_cell, todo, store=store, n_jobs=n_jobs, progress=progress)
    by_cap = {int(c.config["cap"]): r for c, r in zip(const, results[1:1 + len(const)], strict=True)}
    summary = summarize_sweep(results[0], by_cap[0], {k: by_cap[k] for k in values},
                              results[1 + len(const):])
    payload = {"trace": trace, "nodes": m, "cells": len(todo), "backend": backend, **summary.to_dict()}
    if plot is not None:
        payload["plots"] = _leasing_plots(swf, m, summary, plot, plot_random, seed)
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    best = summary.constant[summary.best_v]
    out.print(f"best constant V = {summary.best_v}: twt_imp {best['twt_imp_pct']:.2f} %, c {best['cost_pct']:.2f} %, "
              f"balance {best['balance']:.2f}")
    rnd = payload["random"]
    if rnd["runs"]:
        out.print(f"random V per step, {rnd['runs']} runs: balance mean {rnd['mean']:.2f} ± {rnd['std']:.2f}, "
                  f"best {rnd['best']:.2f}")


app.add_typer(cluster_app, name="cluster")
