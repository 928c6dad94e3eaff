"""``cloudbroker cluster``: a cluster run wholly on the cloud, one run or a policy sweep (SPEC §7)."""

from __future__ import annotations

import json
import time
import tomllib
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.table import Table

from broker.cli import backends, inputs
from broker.cli.console import out
from broker.cli.files import write_result
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.sweep import (
    CELL_NAME,
    CLUSTER_BOOK,
    MAX_MINUTES,
    SETTINGS,
    SpecError,
    cluster_cell,
    grid,
    policy_of,
    sweep_table,
    terms_of,
    workload_of,
)
from broker.sweep import cells
from workloads.errors import ConfigError

#: The words of the policy's and the terms' refusals and the options that set them.
WORDS = {"cap": "--cap", "merge": "--merge", "keep-alive": "--keepalive", "keepalive": "--keepalive",
         "idle_timeout": "--idle-timeout", "idle_timeout_min": "--idle-timeout", "delay": "--delay",
         "delay_min": "--delay", "burst_ratio": "--burst-ratio", "wait_next_hour": "--wait-next-hour",
         "wait_next_hour_min": "--wait-next-hour", "charging": "--charging", "boot_s": "--boot",
         "price book": "--price-book"}

cluster_app = typer.Typer(help="A cluster run wholly on the cloud (the cloud-cluster paper, P1-P6).",
                          invoke_without_command=True)


@cluster_app.callback()
def cluster_cmd(
    ctx: typer.Context,
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (e.g. LPC-EGEE-2004-1.2-cln).")] = None,
    synthetic: Annotated[bool, typer.Option(help="Use the bursty multi-user load instead of a trace.")] = False,
    scale: Annotated[float, typer.Option(callback=inputs.positive,
                                         help="Load of --synthetic: users x SCALE (the paper's S1-S5).")] = 1.0,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the first N jobs (by arrival).")] = None,
    volumes: Annotated[Path | None, typer.Option(help="CSV job_id,input_bytes,output_bytes for the trace's jobs "
                                                 "(default: the seeded volume model).")] = None,
    parallel: Annotated[str, typer.Option(help="A trace's parallel jobs: one instance each, or expand into "
                                          "one-instance tasks per processor.")] = "one",
    cap: Annotated[int | None, typer.Option(min=1, help="P1: at most N instances (jobs queue FCFS).")] = None,
    merge: Annotated[bool, typer.Option("--merge/--per-user", help="P2: one pool, or instances per user.")] = True,
    keepalive: Annotated[str | None, typer.Option(help="P3: fixed:P, idle:P or load:P[:WINDOW_S].")] = None,
    idle_timeout: Annotated[float | None, typer.Option(min=0, max=MAX_MINUTES, callback=inputs.finite,
                                                       help="Baseline: release after MIN idle, "
                                                       "whatever the billing period.")] = None,
    delay: Annotated[float, typer.Option(min=0, max=MAX_MINUTES, callback=inputs.finite,
                                         help="P4: start an instance once a job waited MIN.")] = 0.0,
    burst_ratio: Annotated[float | None, typer.Option(min=0, max=1e9, callback=inputs.finite,
                                                      help="P5: no delay while more than R x cap jobs wait.")] = None,
    wait_next_hour: Annotated[float, typer.Option(min=0, callback=inputs.below_an_hour,
                                                  help="P6: hold jobs arriving within MIN of the hour's end, MIN in "
                                                       "[0, 60).")] = 0.0,
    charging: Annotated[str, typer.Option(help="exact or wall-clock.")] = "exact",
    boot: Annotated[float, typer.Option(min=0, max=3600, callback=inputs.finite, help="Instance boot time (s).")] = 0.0,
    price_book: Annotated[str, typer.Option(help="Price book (instance price and egress tiers).")] = CLUSTER_BOOK,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the data volumes and keep-alive draws.")] = 0,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write jobs, instances and per-user bill tables "
                                                 "and summary.json here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Replay a trace (or the synthetic load) on a cloud cluster; `cluster sweep SPEC.toml` for grids."""
    if ctx.invoked_subcommand is not None:
        return
    if (trace is None) == (not synthetic):
        raise typer.BadParameter("pass exactly one of --trace or --synthetic")
    settings: dict[str, Any] = {"cap": cap, "merge": merge, "keepalive": keepalive, "idle_timeout_min": idle_timeout,
                                "delay_min": delay, "burst_ratio": burst_ratio, "wait_next_hour_min": wait_next_hour,
                                "charging": charging, "boot_s": boot}
    try:
        policy, terms = policy_of(settings), terms_of(settings, price_book)
    except ValueError as e:
        raise inputs.in_options(e, WORDS) from e
    if volumes is not None and trace is None:
        raise typer.BadParameter("--volumes goes with --trace")
    if fmt not in ("parquet", "csv"):
        raise typer.BadParameter("--format must be parquet or csv")
    started = time.perf_counter()
    inputs.output_dir(out_dir, "--out", force=force)
    label = trace or f"synthetic x{scale:g}"
    swf = None if trace is None else inputs.trace(trace, lenient, strict)
    try:
        jobs, report = workload_of(trace, scale if synthetic else None, limit_jobs, seed,
                                   None if volumes is None else str(volumes), parallel, swf=swf)
    except ConfigError as e:
        raise inputs.in_options(e, {"parallel": "--parallel"}) from e
    except (OSError, LookupError, ValueError, RuntimeError) as e:
        inputs.fail(e)
    counts = inputs.kept(report, label, swf)
    if not len(jobs):
        inputs.nothing_to_run(counts, label, as_json=as_json, out_dir=out_dir)
        return
    result = simulate_cluster(jobs, policy, terms, seed=seed)
    payload = {"workload": label, "parallel": parallel, **settings, **result.summary.to_dict(), **counts,
               "users": len(result.users), "seed": seed, "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            write_result(result, out_dir, fmt="csv" if fmt == "csv" else "parquet", summary=payload,
                         frames={"users": result.users})
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    table = Table(title=f"cloud cluster on {payload['workload']}", show_header=False)
    for key in ("jobs", "instances", "peak_instances", "instance_hours", "instance_cost", "egress_cost", "cost",
                "overhead_mean_s", "overhead_p95_s", "wait_mean_s", "wall_s"):
        value = payload[key]
        table.add_row(key, f"{value:,.2f}" if isinstance(value, float) else f"{value:,}")
    out.print(table)


@cluster_app.command("sweep")
def cluster_sweep_cmd(
    spec: Annotated[Path, typer.Argument(help="TOML grid (see broker/cloudcluster/sweep.py).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the table and plots.")] = Path("cluster-sweep"),
    backend: Annotated[str, typer.Option(help="loky, dask or ray.")] = "loky",
    scheduler: Annotated[str | None, typer.Option(help="Dask or Ray scheduler address (dask without one: a local "
                                                     "cluster of --n-jobs workers).")] = None,
    store: Annotated[Path | None, typer.Option(help="Directory of finished cells (resume from it).")] = None,
    n_jobs: Annotated[int, typer.Option(callback=inputs.workers, help="Workers (loky or a local Dask cluster; "
                                                                    "-1: every core).")] = -1,
    seed: Annotated[int, typer.Option(min=0, help="Root seed of the cells' keep-alive draws.")] = 1,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    force: Annotated[bool, typer.Option(help="Overwrite the table and plots of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON records.")] = False,
) -> None:
    """Run a policy grid; write table.csv, pareto.png and (with caps) cap_benefit.png into --out."""
    backends.check(backend, scheduler)
    inputs.output_dir(out_dir, "--out", force=force)
    inputs.store_dir(store)
    try:
        data = tomllib.loads(spec.read_text())
        configs = grid(data, source=str(spec))
    except (OSError, tomllib.TOMLDecodeError, SpecError) as e:
        inputs.fail(e if isinstance(e, SpecError) else SpecError(f"{spec}: {e}"))
    if lenient:  # every cell reads the trace as the command does
        configs = [{**c, "workload": {**c["workload"], "lenient": True}} for c in configs]
    w = configs[0]["workload"]
    try:  # read the workload once here: a missing trace or a bad volumes file is refused before any cell runs
        swf = None if w.get("trace") is None else inputs.trace(w["trace"], bool(w.get("lenient")), strict)
        jobs, report = workload_of(w.get("trace"), w.get("synthetic"), w.get("limit"), int(w.get("seed", 0)),
                                   w.get("volumes"), w.get("parallel", "one"), swf=swf)
    except (OSError, LookupError, ValueError, RuntimeError) as e:
        inputs.fail(SpecError(f"{spec}: [workload]: {e}"))
    label = str(w.get("trace") or f"synthetic x{w.get('synthetic')}")
    counts = inputs.kept(report, label, swf)
    if not len(jobs):
        inputs.nothing_to_run(counts, label, as_json=as_json)
        return
    name = data.get("name", spec.stem)
    todo = cells(configs, name=f"{CELL_NAME}-{name}", root_seed=seed, paired=True)
    results = backends.sweep(cluster_cell, todo, backend=backend, scheduler=scheduler, store=store, n_jobs=n_jobs)
    table = sweep_table(configs, results)
    with inputs.writing("--out", out_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        table.to_csv(out_dir / "table.csv", index=False)
        _figures(table, out_dir, name)
    if as_json:
        typer.echo(table.to_json(orient="records"))
        return
    show = table.sort_values("cost")
    t = Table(title=f"{name}: {len(table)} cells ({(table['pareto']).sum()} on the Pareto front) -> {out_dir}")
    for col in ("family", "settings", "cost", "instance_cost", "egress_cost", "overhead_mean_s", "pareto"):
        t.add_column(col)
    for _, row in show.iterrows():
        varied = ", ".join(f"{k}={row[k]}" for k in SETTINGS if row[k] is not None and not pd.isna(row[k]))
        t.add_row(str(row["family"]), varied, f"{row['cost']:,.2f}", f"{row['instance_cost']:,.2f}",
                  f"{row['egress_cost']:,.2f}", f"{row['overhead_mean_s']:,.1f}", "*" if row["pareto"] else "")
    out.print(t)


def _figures(table: pd.DataFrame, out_dir: Path, name: str) -> None:
    """The sweep's Pareto plot and, when a cap was swept, its benefit B_c."""
    from broker.cloudcluster import plots  # matplotlib, imported only when a figure is drawn

    plots.pareto(table, title=f"{name}: cost against overhead").savefig(out_dir / "pareto.png", dpi=110)
    if table["benefit_bc"].notna().any():
        plots.cap_benefit(table, title=f"{name}: B_c").savefig(out_dir / "cap_benefit.png", dpi=110)
