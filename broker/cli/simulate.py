"""``cloudbroker simulate``: replay a trace (or the generated default) through CoH, CoH-R or one heuristic."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from broker.cli import inputs, spot_options
from broker.cli.console import out
from broker.cli.files import read_plan, write_result
from broker.coh.config import (
    COH_POLICIES,
    DEFAULT_CHUNK_JOBS,
    DEFAULT_EXACT_JOBS,
    DEFAULT_RACE_JOBS,
    MAX_TICK,
    MIN_TICK,
    CohConfig,
    EngineConfig,
    IppConfig,
    SimulationConfig,
)
from broker.coh.metrics import RunResult, SpotCohSummary
from broker.coh.simulate import simulate
from broker.coh.subsets import MAX_SUBSET_JOBS
from broker.pricing.book import DEFAULT_PRICE_BOOK
from broker.pricing.reservations import PlanError, ReservationPlan
from broker.pricing.spot import NOTICE_S
from broker.pricing.spot_offer import PAPER_SPOT_FRACTION, R5_16XLARGE_ON_DEMAND
from heuristics.registry import PAPER_TRIO
from workloads.requirements import MODELS


def simulate_cmd(
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (e.g. KTH-SP2-1996-2.1-cln).")] = None,
    synthetic: Annotated[bool, typer.Option(help="Use the generated default workload (the default).")] = False,
    synthetic_jobs: Annotated[int, typer.Option(min=1, help="Jobs in the generated workload.")] = 2000,
    reqs: Annotated[str, typer.Option(help=f"Requirement model: {', '.join(MODELS)}.")] = "heterogeneous",
    policy: Annotated[str, typer.Option(help="'coh', 'ipp' (with --solver), 'coh-r' / 'coh-onetype' (with "
                                              "--reservations) or one heuristic such as FCFS-SM.")] = "coh",
    heuristics: Annotated[
        str, typer.Option(help="Portfolio members for --policy coh, comma separated.")
    ] = ",".join(PAPER_TRIO),
    tick: Annotated[float, typer.Option(min=MIN_TICK, max=MAX_TICK, callback=inputs.finite,
                                        help="Scheduling tick (s), 1 ms to a day.")] = 10.0,
    boot: Annotated[float, typer.Option(min=0, max=3600, callback=inputs.finite,
                                        help="VM boot time (s), billed.")] = 120.0,
    charging: Annotated[str, typer.Option(help="exact or wall-clock.")] = "exact",
    seed: Annotated[int, typer.Option(min=0, help="Seed of every random choice.")] = 0,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the first N jobs (by arrival).")] = None,
    drop_status: Annotated[str, typer.Option(help="Also remove jobs with these statuses: failed,cancelled.")] = "",
    price_book: Annotated[str, typer.Option(help="Bundled price book name or a .toml path.")] = DEFAULT_PRICE_BOOK,
    validate: Annotated[bool, typer.Option(help="Check the world's invariants every tick (slower).")] = False,
    capacity: Annotated[str, typer.Option(help="Capacity rule: interval (a job holds its VM's capacity over its "
                                                "run) or tick (from the decision tick, the rule before 2026-11).")
                        ] = "interval",
    solver: Annotated[str | None, typer.Option(help="Add the integer program to --policy coh: cbc, cpsat, or both "
                                                    "(cbc,cpsat: they race on each tick a solver decides).")] = None,
    time_limit: Annotated[float, typer.Option(callback=inputs.positive,
                                              help="IPP limit per tick: seconds, or work with --deterministic.")] = 2.0,
    deterministic: Annotated[bool, typer.Option(help="Work limits, not seconds: same seed, same result.")] = False,
    paid_scoring: Annotated[bool, typer.Option("--paid-scoring/--paper-scoring",
                                               help="Count billing units already paid as sunk when scoring.")] = True,
    ipp_wins_ties: Annotated[bool, typer.Option("--ipp-wins-ties/--heuristic-wins-ties",
                                                help="Which plan CoH applies on a tie.")] = True,
    ipp_max_jobs: Annotated[int, typer.Option(min=0, help="Run the IPP only when fewer new jobs than this.")] = 50,
    ipp_exact_jobs: Annotated[int, typer.Option(
        min=0, max=MAX_SUBSET_JOBS, help="Solve batches of up to this many jobs exactly, without a solver (2: the "
                                         "rule before 2026-11-27).")] = DEFAULT_EXACT_JOBS,
    ipp_chunk_jobs: Annotated[int, typer.Option(
        min=0, help="Plan batches of --ipp-max-jobs jobs or more this many at a time (0: heuristics only).")
    ] = DEFAULT_CHUNK_JOBS,
    portfolio_jobs: Annotated[int, typer.Option(
        min=1, help="Workers of the solver race (--solver cbc,cpsat): the backends run side by side on ticks of "
                    "at least --race-jobs jobs.")] = 1,
    race_jobs: Annotated[int, typer.Option(
        min=0, help="Run the race in the workers from this many jobs a tick (below: one after the other here).")
    ] = DEFAULT_RACE_JOBS,
    ipp_max_vms: Annotated[int | None, typer.Option(min=1,
                                                    help="Candidate running VMs in the IPP (default: all).")] = None,
    warm_start: Annotated[bool, typer.Option(help="Start the solver from the best heuristic plan.")] = True,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write jobs/instances tables and summary.json here.")
                       ] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    reservations: Annotated[Path | None, typer.Option(help="Reservation plan (plan-reservations --json output) "
                                                           "for --policy coh-r / coh-onetype.")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    spot: spot_options.File = None,
    spot_notice_s: spot_options.Notice = NOTICE_S["aws"],
    checkpoint_s: spot_options.Checkpoint = None,
    restart_overhead_s: spot_options.RestartOverhead = 0.0,
    spot_on_demand_price: spot_options.OnDemandPrice = R5_16XLARGE_ON_DEMAND,
    spot_fraction: spot_options.Fraction = PAPER_SPOT_FRACTION,
    spot_return: spot_options.Return = False,
    spot_max_preemptions: spot_options.MaxPreemptions = None,
    spot_expected_cost: spot_options.ExpectedCost = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Replay a trace (or the generated default) through CoH, CoH-R or one heuristic."""
    if trace and synthetic:
        raise typer.BadParameter("give --trace or --synthetic, not both")
    ipp = {"solver": solver, "time_limit": time_limit, "deterministic": deterministic, "max_jobs": ipp_max_jobs,
           "max_vms": ipp_max_vms, "warm_start": warm_start, "exact_jobs": ipp_exact_jobs,
           "chunk_jobs": ipp_chunk_jobs, "workers": portfolio_jobs, "race_jobs": race_jobs}
    coh = {"policy": policy, "heuristics": tuple(h.strip() for h in heuristics.split(",") if h.strip()),
           "paid_scoring": paid_scoring, "ipp_wins_ties": ipp_wins_ties}
    engine = {"tick": tick, "boot_time": boot, "charging": charging, "validate": validate, "capacity": capacity}
    config = configuration(coh, engine, ipp if solver is not None else None, _plan(reservations, policy))
    spot_cfg = spot_options.spot_config(spot, {"notice_s": spot_notice_s, "checkpoint_s": checkpoint_s,
                                               "restart_overhead_s": restart_overhead_s,
                                               "on_demand": spot_on_demand_price, "fraction": spot_fraction,
                                               "spot_return": spot_return, "max_preemptions": spot_max_preemptions,
                                               "expected_cost": spot_expected_cost})
    inputs.output_dir(out_dir, "--out", force=force)
    fmt_ = inputs.table_format(fmt)
    workload_seed, policy_seed = np.random.SeedSequence(seed).spawn(2)
    work = inputs.workload(trace, synthetic_jobs, reqs, workload_seed, limit_jobs, drop_status, lenient, strict)
    book = inputs.book(price_book)
    inputs.fits(work.jobs, book, reqs)
    if config.reservations is not None:
        try:
            config.reservations.check(book)
        except PlanError as exc:
            raise typer.BadParameter(f"--reservations {reservations}: {exc}") from exc
    counts = inputs.kept(work.report, work.label, work.swf)  # after the last check: it notes removed jobs on stderr
    if not len(work.jobs):
        inputs.nothing_to_run(counts, work.label, as_json=as_json, out_dir=out_dir)
        return
    started = time.perf_counter()
    with inputs.progress("replaying", len(work.jobs)) as recorder:
        result = simulate(work.jobs, book.catalog(), config=config, seed=int(policy_seed.generate_state(1)[0]),
                          recorder=recorder, book=book, spot=spot_cfg)
    wall = time.perf_counter() - started
    payload = {**_payload(result, work, config, seed, wall), **counts}
    if spot_cfg is not None:
        payload["spot"] = spot_cfg.to_dict()
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            write_result(result, out_dir, fmt=fmt_, summary=payload)
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
    else:
        _print_summary(result, work, wall)


#: The words of the configuration's refusals and the options of ``simulate`` that set them.
WORDS = {"policy": "--policy", "heuristic": "--heuristics", "tick": "--tick",
         "boot_time": "--boot", "charging": "--charging", "capacity": "--capacity", "solver": "--solver",
         "time_limit": "--time-limit", "max_jobs": "--ipp-max-jobs", "max_vms": "--ipp-max-vms",
         "exact_jobs": "--ipp-exact-jobs", "chunk_jobs": "--ipp-chunk-jobs", "workers": "--portfolio-jobs",
         "race_jobs": "--race-jobs", "reservations": "--reservations"}


def configuration(coh: dict[str, Any], engine: dict[str, Any], ipp: dict[str, Any] | None,
                  reservations: ReservationPlan | None, words: dict[str, str] | None = None) -> SimulationConfig:
    """The nested configuration of the command's options; a refusal names the options (``words``: :data:`WORDS`)."""
    _check_solver(coh["policy"], ipp is not None)
    try:
        return SimulationConfig(CohConfig(**coh), EngineConfig(**engine), IppConfig(**ipp) if ipp else None,
                                reservations)
    except (ValueError, KeyError) as exc:
        raise inputs.in_options(exc, WORDS if words is None else words) from exc


def _check_solver(policy: str, solver: bool) -> None:
    """``--solver`` in the options' words: ``ipp`` needs it, a single heuristic cannot take it."""
    spec = COH_POLICIES.get(policy) if policy in COH_POLICIES else None
    takes = [name for name in COH_POLICIES.names() if COH_POLICIES.get(name).takes_ipp]
    if spec is not None and spec.needs_ipp and not solver:
        raise typer.BadParameter(f"--policy {policy} needs --solver cbc or cpsat (the integer program it runs)")
    if solver and spec is not None and not spec.takes_ipp:
        raise typer.BadParameter(f"--solver goes with --policy {', '.join(takes)}; --policy {policy} is one "
                                 "heuristic (the integer program is a member of the portfolio)")


def _plan(path: Path | None, policy: str) -> ReservationPlan | None:
    if (path is not None) != (policy in COH_POLICIES and COH_POLICIES.get(policy).reserved):
        raise typer.BadParameter("--reservations goes with --policy coh-r or coh-onetype, and they need it")
    if path is None:
        return None
    try:
        return read_plan(path)
    except OSError as exc:
        raise typer.BadParameter(f"--reservations {path}: {exc.strerror}") from exc
    except PlanError as exc:
        raise typer.BadParameter(f"--reservations {exc}") from exc


def _payload(result: RunResult, work: inputs.Workload, config: SimulationConfig, seed: int,
             wall: float) -> dict[str, Any]:
    s = result.summary
    ipp_keys = ("ipp_wins", "heuristic_wins", "ipp_optimal_ticks", "mean_gap")
    report = work.report
    return {
        **s.to_dict(),
        **{k: s.policy_stats[k] for k in ipp_keys if k in s.policy_stats},
        "wall_s": round(wall, 3),
        "seed": seed,
        "workload": {"source": work.label, "filter": {"read": report.read, "kept": report.kept,
                                                      "removed": report.removed, "kept_flagged": report.kept_flagged},
                     "jobs_simulated": len(work.jobs)},
        "config": config.to_dict(),
    }


def _print_summary(result: RunResult, work: inputs.Workload, wall: float) -> None:
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
    if isinstance(s, SpotCohSummary):
        billed = ", ".join(f"{k} ${v:,.2f}" for k, v in s.cost_by_option.items())
        table.add_row("spot", f"{s.preemptions:,} preemptions, {s.restarts:,} restarts, {s.lost_s / 3600:,.1f} h "
                              f"lost, timeline read again {s.timeline_repeats:,} times; billed: {billed}")
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
