"""``cloudbroker spot``: a job with a deadline on spot instances, from real availability timelines.

One run: the zones given (``--availability FILE [FILE ...]``, one per zone) form one market, the job
(``--work-h``, ``--deadline-h``, ``--overhead-h``) runs from ``--starts`` seeded random start ticks
under one ``--policy``, and the means over starts are printed (``--json``: ``cost``,
``cost_over_on_demand``, ``deadline_misses``, ``preemptions``, ``timeline_repeats``, ...);
``--out`` writes the per-start rows and ``summary.json``. ``--sweep 4,12,24,48`` instead runs every
zone on its own at each slack (deadline = work + slack) under every policy of ``--policy``
(comma-separated), through the sweep runner, and writes the table, the comparison and the paper's
figure (cost over on-demand against slack).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.table import Table

from broker.cli import inputs
from broker.cli.console import out
from broker.pricing.spot import (
    CONVENTIONS,
    PAPER_ON_DEMAND,
    PAPER_SPOT,
    SpotBilling,
    SpotMarket,
    Timeline,
    load_timeline,
)
from broker.spot import sweep as spot_sweep
from broker.spot.policies import SPOT_POLICIES, Failover
from broker.spot.simulate import START_COLUMNS, on_demand_cost, run_spot, start_ticks, summarize
from broker.spot.world import SpotJob
from broker.sweep import bounded, cells, run_sweep
from workloads.errors import ConfigError

HOUR = 3600.0
#: The longest job or deadline (h): ten years.
MAX_HOURS = 87_600.0
MAX_STARTS = 100_000


def _hours(value: float) -> float:
    return float(inputs.positive(value) or 0.0)


def _policies(text: str, *, many: bool) -> list[str]:
    values = list(dict.fromkeys(v.strip() for v in text.split(",")))
    bad = [v for v in values if v not in SPOT_POLICIES]
    if bad:
        raise typer.BadParameter(f"--policy takes {', '.join(SPOT_POLICIES.names())}, got {bad[0]!r}")
    if len(values) > 1 and not many:
        raise typer.BadParameter("--policy takes one policy for a run (several, comma-separated, with --sweep)")
    return values


def _slacks(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError as exc:
        raise typer.BadParameter(f"--sweep takes slacks in hours, comma-separated, got {text!r}") from exc
    if not all(math.isfinite(v) and 0 < v <= MAX_HOURS for v in values):
        raise typer.BadParameter(f"--sweep: every slack must be in (0, {MAX_HOURS:g}] h, got {text!r}")
    return sorted(set(values))


def _timelines(files: list[Path], convention: str) -> tuple[Timeline, ...]:
    if not files:
        raise typer.BadParameter("--availability FILE [FILE ...] is required (one trace file per zone)")
    if convention not in CONVENTIONS:
        raise typer.BadParameter(f"--convention must be one of {', '.join(CONVENTIONS)}")
    return tuple(load_timeline(f, convention=convention) for f in files)


def _check_job(job: SpotJob, policies: list[str], billing: SpotBilling) -> None:
    if job.deadline_s <= job.work_s:
        raise ConfigError(f"--deadline-h {job.deadline_s / HOUR:g} must exceed --work-h {job.work_s / HOUR:g}")
    if "omniscient" in policies:
        if billing.unit != "second":
            raise ConfigError("--policy omniscient is for per-second billing: drop --billing hour")
        for option, value in (("--work-h", job.work_s), ("--deadline-h", job.deadline_s),
                              ("--overhead-h", job.overhead_s)):
            if value != round(value):
                raise ConfigError(f"--policy omniscient needs whole seconds: {option} is {value:g} s")


def spot_cmd(
    files: Annotated[list[Path] | None, typer.Argument(help="More trace files after --availability's first.",
                                                       show_default=False)] = None,
    availability: Annotated[list[Path] | None, typer.Option(
        help="Availability trace files, one per zone (../shared/spot/skypilot-spot-traces/...).")] = None,
    work_h: Annotated[float, typer.Option(max=MAX_HOURS, callback=_hours, help="Hours of compute the job needs.")]
    = 48.0,
    deadline_h: Annotated[float | None, typer.Option(max=2 * MAX_HOURS, callback=inputs.positive,
                                                     help="Hours from the start to the deadline (a run).")] = 52.0,
    overhead_h: Annotated[float, typer.Option(min=0, max=MAX_HOURS, callback=inputs.finite,
                                              help="Changeover overhead of every (re)launch, hours.")] = 0.2,
    policy: Annotated[str, typer.Option(help="on-demand, greedy, uniform-progress, omniscient or failover "
                                             "(comma-separated with --sweep).")] = "uniform-progress",
    on_demand_price: Annotated[float, typer.Option(callback=inputs.positive, help="On-demand $/h.")]
    = PAPER_ON_DEMAND,
    spot_price: Annotated[float, typer.Option(callback=inputs.positive,
                                              help="Spot $/h where a trace has no prices.")] = PAPER_SPOT,
    notice_s: Annotated[float, typer.Option(min=0, max=3600, callback=inputs.finite,
                                            help="Warning before a preemption, s (AWS 120, GCP 30).")] = 120.0,
    billing: Annotated[str, typer.Option(help="second or hour.")] = "second",
    interrupted_hour_free: Annotated[bool, typer.Option(help="Hourly billing: a preempted partial hour is free.")]
    = False,
    checkpoint: Annotated[bool, typer.Option(help="Progress is kept across instances (--no-checkpoint: "
                                                  "restarted).")] = True,
    block_h: Annotated[float, typer.Option(min=0, max=MAX_HOURS, callback=inputs.finite,
                                           help="Failover: hours a preempted zone is avoided.")] = 1.0,
    convention: Annotated[str, typer.Option(help="available (1 = a launch succeeded) or failed (1 = it failed, "
                                                 "the paper's simulator's files).")] = "available",
    starts: Annotated[int, typer.Option(min=1, max=MAX_STARTS, help="Random start times.")] = 30,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of the start times.")] = 0,
    sweep: Annotated[str | None, typer.Option(help="Slacks in hours (e.g. 4,12,24,48): every zone alone, "
                                                   "every --policy, deadline = work + slack.")] = None,
    jobs: Annotated[int, typer.Option(min=1, max=1_000_000, help="Sweep workers (-1: all cores).")] = 1,
    store: Annotated[Path | None, typer.Option(help="Sweep: a directory of finished cells; the same command "
                                                    "resumes from it.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write the rows, summary.json (and the sweep's "
                                                               "figure) here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "csv",
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """A job with a deadline on spot instances from real availability timelines (Can't Be Late)."""
    many = sweep is not None
    names = _policies(policy, many=many)
    slacks = _slacks(sweep) if sweep is not None else []
    if billing not in ("second", "hour"):
        raise typer.BadParameter("--billing must be second or hour")
    bill = SpotBilling(billing, interrupted_hour_free=interrupted_hour_free)  # type: ignore[arg-type]
    if slacks and (bill != SpotBilling() or block_h != 1.0):
        raise typer.BadParameter("--sweep bills per second and blocks a failed-over zone 1 h: drop --billing, "
                                 "--interrupted-hour-free and --block-h, or run one policy without --sweep")
    deadline = work_h + max(slacks) if slacks else (deadline_h or 0.0)
    job = SpotJob(work_h * HOUR, deadline * HOUR, overhead_h * HOUR, checkpoint)
    _check_job(job, names, bill)
    if slacks:
        _check_job(SpotJob(work_h * HOUR, (work_h + min(slacks)) * HOUR, overhead_h * HOUR, checkpoint), names, bill)
    if store is not None and not slacks:
        raise typer.BadParameter("--store keeps a sweep's cells: give --sweep, or drop --store")
    inputs.output_dir(out_dir, "--out", force=force)
    inputs.store_dir(store)
    fmt_ = inputs.table_format(fmt)
    paths = [*(availability or []), *(files or [])]
    zones = _timelines(paths, convention)
    started = time.perf_counter()
    if slacks:  # every zone a market of its own: the zones may differ in tick
        market = SpotMarket(zones[:1], on_demand=on_demand_price, spot_price=spot_price, notice_s=notice_s)
        _sweep(paths, names, slacks, market, job, starts, seed, jobs, convention, out_dir, fmt_, as_json, started,
               store)
        return
    market = SpotMarket(zones, on_demand=on_demand_price, spot_price=spot_price, notice_s=notice_s, billing=bill)
    _run(market, job, names[0], starts, seed, block_h, out_dir, fmt_, as_json, started)


def _run(market: SpotMarket, job: SpotJob, name: str, n: int, seed: int, block_h: float, out_dir: Path | None,
         fmt: Any, as_json: bool, started: float) -> None:
    reference = on_demand_cost(market, job)
    rows = []
    for start in start_ticks(market, job, n, seed=seed):
        policy = Failover(block_h * HOUR) if name == "failover" else SPOT_POLICIES.get(name)()
        run = run_spot(market, [job], policy, start=start)
        rows.append((name, start, run.cost, run.cost / reference, run.deadline_misses, run.preemptions,
                     run.launches, run.timeline_repeats))
    table = pd.DataFrame(rows, columns=list(START_COLUMNS))
    payload = {"policy": name, "zones": list(market.names), "work_h": job.work_s / HOUR,
               "deadline_h": job.deadline_s / HOUR, "overhead_h": job.overhead_s / HOUR,
               "checkpoint": job.checkpoint, "on_demand_price": market.on_demand, "spot_price": market.spot_price,
               "notice_s": market.notice_s, "billing": market.billing.unit, "seed": seed,
               "on_demand_cost": reference, **summarize(table), "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            _write(out_dir, {"starts": table}, fmt, payload)
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    _print(payload)


def _sweep(paths: list[Path], names: list[str], slacks: list[float], market: SpotMarket, job: SpotJob, n: int,
           seed: int, workers: int, convention: str, out_dir: Path | None, fmt: Any, as_json: bool,
           started: float, store: Path | None = None) -> None:
    configs = spot_sweep.configs([str(p) for p in paths], slacks_h=slacks, policies=names, starts=n, seed=seed,
                                 work_h=job.work_s / HOUR, overhead_h=job.overhead_s / HOUR,
                                 on_demand=market.on_demand, spot_price=market.spot_price, notice_s=market.notice_s,
                                 convention=convention, checkpoint=job.checkpoint)
    bounded(len(configs) * n, f"{len(paths)} zones x {len(slacks)} slacks x {len(names)} policies x {n} starts")
    grid = cells(configs, name=spot_sweep.CELL_NAME, root_seed=seed)
    with inputs.progress("spot sweep", len(grid)) as recorder:
        results = run_sweep(spot_sweep.slack_cell, grid, store=store, n_jobs=workers,
                            progress=recorder.progress)
    table = spot_sweep.sweep_table(grid, results)
    comparison = spot_sweep.comparison(table)
    payload = {"zones": list(spot_sweep.zone_names(str(p) for p in paths).values()), "policies": names,
               "slacks_h": slacks, "starts": n, "seed": seed,
               "work_h": job.work_s / HOUR, "overhead_h": job.overhead_s / HOUR,
               "findings": spot_sweep.findings(table),
               "cost_over_on_demand": {f"{s:g}": {p: float(v) for p, v in g.groupby("policy")[
                   "cost_over_on_demand"].mean().items()} for s, g in comparison.groupby("slack_h")},
               "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            _write(out_dir, {"starts": table, "comparison": comparison}, fmt, payload)
            from broker.spot import plots  # matplotlib, imported only when a figure is drawn

            plots.cost_against_slack(comparison, title=f"{len(paths)} zones, {n} starts each").savefig(
                out_dir / "cost_over_on_demand.png", dpi=110)
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    _print_sweep(payload)


def _write(out_dir: Path, frames: dict[str, pd.DataFrame], fmt: Any, payload: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        path = out_dir / f"{name}.{fmt}"
        frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, index=False)
    summary = {k: v for k, v in payload.items() if k != "wall_s"}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")


def _print(payload: dict[str, Any]) -> None:
    table = Table(title=f"{payload['policy']}: {payload['work_h']:g} h of work by {payload['deadline_h']:g} h, "
                        f"{len(payload['zones'])} zone(s), {payload['starts']} starts")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key in ("cost", "on_demand_cost", "cost_over_on_demand", "deadline_misses", "preemptions",
                "timeline_repeats", "wall_s"):
        value = payload[key]
        table.add_row(key, f"{value:,.4f}" if isinstance(value, float) else f"{value:,}")
    out.print(table)


def _print_sweep(payload: dict[str, Any]) -> None:
    table = Table(title=f"cost / on-demand, mean over {len(payload['zones'])} zones x {payload['starts']} starts")
    table.add_column("slack (h)", justify="right")
    for name in payload["policies"]:
        table.add_column(name, justify="right")
    for slack, means in payload["cost_over_on_demand"].items():
        table.add_row(slack, *(f"{means[p]:.3f}" for p in payload["policies"]))
    out.print(table)
    out.print(f"deadline misses: {payload['findings']['deadline_misses']}")
