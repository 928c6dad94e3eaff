"""The ``cloudbroker`` command line: ``trace info`` and ``simulate``.

Output goes to stdout (a table, or one JSON object with ``--json``); progress bars and log
messages go to stderr, and a progress bar is shown only on a terminal.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from broker.billing import Charging
from broker.metrics import RunResult
from broker.recorder import Recorder
from broker.reports import TableFormat, write_tables
from broker.simulate import SimulationConfig, simulate
from heuristics.registry import HEURISTICS, PAPER_TRIO
from solvers.base import list_solvers
from workloads.cache import load_trace
from workloads.jobs import STATUS_GROUPS, FilterReport, JobTable, job_view
from workloads.lublin import default_workload
from workloads.pricebooks import DEFAULT_PRICE_BOOK, load_price_book
from workloads.requirements import MODELS
from workloads.swf import trace_info

app = typer.Typer(help="Replay job traces through a simulated cloud broker.", no_args_is_help=True,
                  add_completion=False)
trace_app = typer.Typer(help="Inspect workload traces.", no_args_is_help=True)
app.add_typer(trace_app, name="trace")
out = Console()
err = Console(stderr=True)


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
    policy: Annotated[str, typer.Option(help="'coh', 'ipp' (with --solver) or one heuristic such as FCFS-SM.")] = "coh",
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
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Replay a trace (or the generated default) through CoH or one heuristic."""
    if trace and synthetic:
        raise typer.BadParameter("give --trace or --synthetic, not both")
    config = _config(policy, heuristics, tick, boot, charging, validate)
    config = replace(config, paid_scoring=paid_scoring, ipp_wins_ties=ipp_wins_ties,
                     **_ipp_options(solver, time_limit, deterministic, ipp_max_jobs, ipp_max_vms, warm_start, policy))
    workload_seed, policy_seed = np.random.SeedSequence(seed).spawn(2)
    work = _workload(trace, synthetic_jobs, reqs, workload_seed, limit_jobs, drop_status, lenient)
    catalog = load_price_book(price_book).catalog()
    started = time.perf_counter()
    with _progress(len(work.jobs), quiet=not err.is_terminal) as recorder:
        result = simulate(work.jobs, catalog, config=config, seed=int(policy_seed.generate_state(1)[0]),
                          recorder=recorder)
    wall = time.perf_counter() - started
    payload = _payload(result, work, config, seed, wall)
    if out_dir is not None:
        write_tables(result, out_dir, fmt=_format(fmt), extra={k: payload[k] for k in ("workload", "config", "seed")})
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
    if policy not in ("coh", "ipp"):
        raise typer.BadParameter("--solver needs --policy coh or ipp (the IPP is a member of the portfolio)")
    if time_limit <= 0:
        raise typer.BadParameter("--time-limit must be > 0")
    return {"solver": solver, "time_limit": time_limit, "deterministic": deterministic, "ipp_max_jobs": max_jobs,
            "ipp_max_vms": max_vms, "warm_start": warm_start}


def _load(path_or_name: str, lenient: bool) -> Any:
    try:
        return load_trace(path_or_name, lenient=lenient)
    except (OSError, LookupError, ValueError, RuntimeError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc


def _config(policy: str, heuristics: str, tick: float, boot: float, charging: str, validate: bool) -> SimulationConfig:
    members = tuple(h.strip() for h in heuristics.split(",") if h.strip())
    for name in (*members, *([policy] if policy not in ("coh", "ipp") else [])):
        if name not in HEURISTICS:
            raise typer.BadParameter(f"unknown heuristic {name!r}; known: {', '.join(HEURISTICS)}")
    if charging not in ("exact", "wall-clock"):
        raise typer.BadParameter("--charging must be exact or wall-clock")
    mode: Charging = "exact" if charging == "exact" else "wall-clock"
    return SimulationConfig(policy=policy, heuristics=members, tick=tick, boot_time=boot, charging=mode,
                            validate=validate)


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


class _ProgressRecorder(Recorder):
    def __init__(self, progress: Progress, task: Any) -> None:
        super().__init__(progress=lambda done, total: progress.update(task, completed=done), every=500)


def _progress(total: int, *, quiet: bool) -> AbstractContextManager[Recorder]:
    if quiet:
        return nullcontext(Recorder())
    return _ProgressContext(total)


class _ProgressContext(AbstractContextManager[Recorder]):
    def __init__(self, total: int) -> None:
        self.bar = Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=err, transient=True)
        self.total = total

    def __enter__(self) -> Recorder:
        self.bar.start()
        return _ProgressRecorder(self.bar, self.bar.add_task("jobs", total=self.total))

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()


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
                   "ipp_wins_ties": config.ipp_wins_ties},
    }


def _print_summary(result: RunResult, work: _Workload, wall: float) -> None:
    s = result.summary
    table = Table(title=f"{s.policy} on {work.label}", show_header=False)
    table.add_row("jobs", f"{s.jobs:,}  ({work.report.describe()})")
    table.add_row("cost", f"${s.cost:,.2f}")
    table.add_row("lower bound (LB)", f"${s.lower_bound:,.2f}")
    table.add_row("cost / LB", f"{s.cost_over_lb:.3f}")
    table.add_row("utilization", f"{s.utilization:.1%}")
    for vm_type, count in s.vms.items():
        table.add_row(f"VMs {vm_type}", f"{count:,} ({s.vm_hours[vm_type]:,.0f} h)")
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
