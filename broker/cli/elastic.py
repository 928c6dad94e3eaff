"""``cloudbroker elastic``: a pool of cores for one-core grid jobs, rigid or elastic (the elastic RL paper, SPEC §6).

One run prints the paper's figures (responsiveness per class, interactive queueing, utilization,
cores) beside the log's own schedule; ``elastic sweep`` runs modes x policies x lambda x estimates x
seeds through the sweep runner and writes the table (and the log's own schedule as a ``native``
row).
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

from broker.cli import backends, inputs
from broker.cli.console import out
from broker.cli.files import write_result
from broker.elastic import sweep as elastic_sweep
from broker.elastic.episode import REWARDS
from broker.elastic.estimate import ESTIMATES
from broker.elastic.metrics import native_figures
from broker.elastic.sarsa import SarsaConfig
from broker.elastic.simulate import ELASTIC_POLICIES, run_elastic
from broker.elastic.world import PoolConfig
from broker.sweep import bounded, cells
from workloads.cores import CoreJobs, cores_view
from workloads.errors import ConfigError
from workloads.lal import lal_workload
from workloads.swf import SwfTrace

elastic_app = typer.Typer(help="A pool of cores for grid jobs: which job runs next and how many cores to rent "
                               "(the elastic RL paper).", invoke_without_command=True)

MAX_CORES = 1_000_000
#: The longest window (days): a thousand years of log.
MAX_DAYS = 365_000.0
#: The words of the pool's and the learner's refusals and the options that set them.
WORDS = {"cores": "--cores", "min_cores": "--min-cores", "max_cores": "--max-cores", "hold time": "--hold",
         "estimate": "--estimate", "pretrain": "--pretrain", "retrain_every": "--retrain-every", "levels": "--levels"}
#: The figures a run prints, with the log's own beside them.
SHOWN = ("w_interactive_mean", "w_interactive_std", "w_batch_mean", "w_batch_std", "wait_interactive_mean_s",
         "share_interactive_wait_over_120s", "share_interactive_w_over_0_9", "share_batch_w_over_0_9",
         "fairness_mean")


def max_cores_of(text: str | None) -> tuple[int | None, bool]:
    """``--max-cores``: ``None`` (twice --cores), a number of cores, or ``none`` (no ceiling); and whether none."""
    if text is None:
        return None, False
    if text.strip().lower() == "none":
        return None, True
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_CORES:
        raise typer.BadParameter(f"--max-cores takes a number of cores in [1, {MAX_CORES:,}] or none, got {text!r}")
    return value, False


def _window(every: CoreJobs, label: str, first_day: float, days: float | None, limit_jobs: int | None) -> CoreJobs:
    jobs = every
    if len(jobs) and (first_day or days is not None):
        jobs = jobs.window(float(jobs.submit[0]) + first_day * 86400.0, (days or math.inf) * 86400.0)
    if limit_jobs is not None:
        jobs = jobs.head(limit_jobs)
    if len(every) and not len(jobs):  # refused before the view's counts are printed: one line
        span = "to the end" if days is None else f"--days {days:g}"
        raise ConfigError(f"{label}: no job submitted in the window (--first-day {first_day:g}, {span})")
    return jobs


def synthetic_jobs(name: str, seed: int) -> CoreJobs:
    """The one-core jobs of a named generator (``lal``: :func:`workloads.lal.lal_workload`)."""
    if name != "lal":
        raise typer.BadParameter(f"--synthetic takes lal, got {name!r}")
    return cores_view(lal_workload(seed=seed))[0]


def _check_parallel(parallel: str) -> None:
    if parallel not in ("expand", "one"):
        raise typer.BadParameter("--parallel must be expand or one")


def _jobs(swf: SwfTrace, trace: str, parallel: str, first_day: float, days: float | None,
          limit_jobs: int | None) -> tuple[CoreJobs, dict[str, Any]]:
    """The window's one-core jobs and the counts of reading and the view (a window that holds none is refused)."""
    try:
        every, report = cores_view(swf.frame, parallel=parallel,  # type: ignore[arg-type]
                                   origin=float(swf.header.unix_start_time or 0))
    except ConfigError as exc:
        raise inputs.in_options(exc, {"parallel": "--parallel"}) from exc
    jobs = _window(every, trace, first_day, days, limit_jobs)
    counts = inputs.kept(report, trace, swf)
    return jobs, counts


@elastic_app.callback()
def elastic_cmd(
    ctx: typer.Context,
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (e.g. LPC-EGEE-2004-1.2-cln).")] = None,
    synthetic: Annotated[str | None, typer.Option(help="A generated workload instead of a trace: lal (the paper's "
                                                       "LAL log's shape, Table 1).")] = None,
    workload_seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of --synthetic.")] = 0,
    mode: Annotated[str, typer.Option(help="rigid (a fixed pool) or elastic (the policy sizes it).")] = "rigid",
    policy: Annotated[str, typer.Option(help="sarsa (the learner), fcfs, sjf, edf, greedy-w, urgent (orders; on an "
                                             "elastic pool with the threshold autoscaler) or threshold (elastic "
                                             "only).")] = "sarsa",
    reward: Annotated[str, typer.Option(help="The learner's reward: paper (a dispatch earns its job's W when it "
                                             "ends, as written) or wait (each decision is charged the W its step "
                                             "costs the waiting jobs, and on an elastic pool the idle cores).")]
    = "paper",
    cores: Annotated[int, typer.Option(min=1, max=MAX_CORES, help="The rigid pool's cores, or the elastic "
                                                                  "pool's first size.")] = 81,
    lam: Annotated[float, typer.Option("--lambda", min=0, max=1, callback=inputs.finite,
                                       help="Weight of responsiveness in the reward (rigid: against fairness; "
                                            "elastic: against utilization).")] = 0.5,
    estimate: Annotated[str, typer.Option(help="Run times known in advance (oracle) or the class median over "
                                               "the last 1000 completions (median).")] = "oracle",
    min_cores: Annotated[int, typer.Option(min=1, max=MAX_CORES, help="Elastic: never fewer cores.")] = 30,
    max_cores: Annotated[str | None, typer.Option(help="Elastic: never more cores (default: twice --cores; none: no "
                                                       "ceiling, as in the paper).")] = None,
    hold: Annotated[float, typer.Option(min=0, max=1e9, callback=inputs.finite,
                                        help="Elastic: seconds a size holds before it may change.")] = 900.0,
    levels: Annotated[int, typer.Option(min=1, max=1000, help="Pool sizes the learner chooses among.")] = 17,
    pretrain: Annotated[int, typer.Option(min=1, max=10**9, help="Decisions taken by EDF while the learner "
                                                                 "watches, before it decides.")] = 1000,
    retrain_every: Annotated[int, typer.Option(min=1, max=10**9, help="Decisions between re-trainings of the "
                                                                      "learner's readout.")] = 500,
    first_day: Annotated[float, typer.Option(min=0, max=MAX_DAYS, callback=inputs.finite,
                                             help="Start of the window: days after the first job.")] = 0.0,
    days: Annotated[float | None, typer.Option(max=MAX_DAYS, callback=inputs.positive,
                                               help="Length of the window in days, in (0, 365000] (default: to "
                                                    "the end).")] = None,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the window's first N jobs.")] = None,
    parallel: Annotated[str, typer.Option(help="A job of p processors: p one-core jobs (expand) or one (one).")]
    = "expand",
    trim: Annotated[int, typer.Option(min=0, max=10**9, help="Jobs left out of the statistics at each end.")] = 500,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of the learner.")] = 0,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write the jobs and pool tables, summary.json and "
                                                 "the figures here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Replay a trace's jobs on a rigid or elastic pool of cores; `elastic sweep` for grids."""
    if ctx.invoked_subcommand is not None:
        return
    if (trace is None) == (synthetic is None):
        raise typer.BadParameter("pass exactly one of --trace or --synthetic")
    if reward not in REWARDS:
        raise typer.BadParameter(f"--reward must be one of {', '.join(REWARDS)}")
    if mode not in ("rigid", "elastic"):
        raise typer.BadParameter("--mode must be rigid or elastic")
    if policy not in ELASTIC_POLICIES:
        raise typer.BadParameter(f"--policy must be one of {', '.join(ELASTIC_POLICIES)}")
    if policy == "threshold" and mode != "elastic":
        raise typer.BadParameter("--policy threshold sizes an elastic pool: add --mode elastic")
    if estimate not in ESTIMATES:
        raise typer.BadParameter(f"--estimate must be one of {', '.join(ESTIMATES)}")
    ceiling, unbounded = max_cores_of(max_cores)
    if unbounded and mode != "elastic":
        raise typer.BadParameter("--max-cores none is for an elastic pool: add --mode elastic")
    if unbounded and policy == "sarsa" and reward == "paper":
        raise typer.BadParameter("--max-cores none: the paper's learner spreads its sizes over [--min-cores, "
                                 "--max-cores]; give a ceiling or use --reward wait")
    try:
        pool = PoolConfig(cores, elastic=mode == "elastic", min_cores=min_cores, max_cores=ceiling, hold_s=hold,
                          estimate=estimate, no_ceiling=unbounded)
        sarsa = SarsaConfig(pretrain=pretrain, retrain_every=retrain_every, levels=levels)
    except ValueError as exc:
        raise inputs.in_options(exc, WORDS) from exc
    inputs.output_dir(out_dir, "--out", force=force)
    fmt_ = inputs.table_format(fmt)
    started = time.perf_counter()
    _check_parallel(parallel)
    if synthetic is not None:
        label = f"{synthetic} (seed {workload_seed})"
        jobs = _window(synthetic_jobs(synthetic, workload_seed), label, first_day, days, limit_jobs)
        counts: dict[str, Any] = {"jobs_in": len(jobs), "jobs_kept": len(jobs), "workload_seed": workload_seed}
    else:
        assert trace is not None
        label = trace
        jobs, counts = _jobs(inputs.trace(trace, lenient, strict), trace, parallel, first_day, days, limit_jobs)
    if not len(jobs):
        inputs.nothing_to_run(counts, label, as_json=as_json, out_dir=out_dir)
        return
    with inputs.progress("elastic", len(jobs)) as recorder:
        result = run_elastic(jobs, pool, policy, lam=lam, seed=seed, sarsa=sarsa, trim=trim, reward=reward,
                             recorder=recorder)
    native, native_undefined, without_wait = native_figures(jobs, pool.interactive_s, trim)
    payload = {"trace": label, **counts, "tasks": len(jobs), "first_day": first_day, "days": days, "parallel": parallel,
               **result.summary.to_dict(), "seed": seed, "hold_s": hold,
               "sarsa": sarsa.to_dict() if policy == "sarsa" else None,
               "sizes_chosen": sizes_chosen(result.instances) if pool.elastic else None,
               "native": {**native, "jobs_without_wait": without_wait, "undefined": native_undefined},
               "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            write_result(result, out_dir, fmt=fmt_, summary=payload)
            _figures(result, out_dir, f"{policy} on {Path(label).name} ({mode}, {cores} cores)")
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    _print_run(payload)


def sizes_chosen(periods: pd.DataFrame, top: int = 10) -> list[list[float]]:
    """The pool sizes held longest: ``[cores, share of the run's time]`` pairs, the ``top`` ones, largest first.

    Ties keep the smaller size first; an empty span gives no pair.
    """
    span = (periods["end_s"] - periods["start_s"]).groupby(periods["cores"]).sum()
    total = float(span.sum())
    if total <= 0:
        return []
    shares = (span / total).sort_values(ascending=False, kind="stable").head(top)
    return [[int(cores), round(float(share), 4)] for cores, share in shares.items()]  # type: ignore[call-overload]


def _figures(result: Any, out_dir: Path, title: str) -> None:
    from broker.elastic import plots  # matplotlib, imported only when a figure is drawn

    plots.cores_and_utilization({result.summary.policy: (result.jobs, result.instances)}, title=title).savefig(
        out_dir / "pool.png", dpi=110)
    plots.responsiveness_cdf({result.summary.policy: result.jobs}, title=title).savefig(
        out_dir / "responsiveness.png", dpi=110)


def _number(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"


def _print_run(payload: dict[str, Any]) -> None:
    table = Table(title=f"{payload['policy']} on {payload['trace']}: {payload['mode']} pool, {payload['cores']} cores, "
                        f"lambda {payload['lam']:g}, {payload['estimate']} run times, {payload['reward']} reward")
    for col in ("figure", "this run", "the log's own schedule"):
        table.add_column(col, justify="left" if col == "figure" else "right")
    for key in SHOWN:
        table.add_row(key, _number(payload[key]), _number(payload["native"][key]))
    for key in ("utilization", "mean_cores", "peak_cores", "size_demand_corr", "core_hours", "jobs", "jobs_counted",
                "decisions", "wall_s"):
        table.add_row(key, _number(payload[key]), "")
    out.print(table)


def _names(text: str, option: str, known: tuple[str, ...]) -> list[str]:
    values = list(dict.fromkeys(v.strip() for v in text.split(",")))
    bad = [v for v in values if v not in known]
    if bad:
        raise typer.BadParameter(f"{option} takes {', '.join(known)} (comma-separated), got {bad[0]!r}")
    return values


def _lambdas(text: str) -> list[float]:
    values = []
    for v in (v.strip() for v in text.split(",")):
        try:
            number = float(v)
        except ValueError:
            number = math.nan
        if not 0 <= number <= 1:
            raise typer.BadParameter(f"--lambda takes numbers in [0, 1] (comma-separated), got {v!r}")
        values.append(number)
    return list(dict.fromkeys(values))


@elastic_app.command("sweep")
def elastic_sweep_cmd(
    trace: Annotated[str, typer.Option(help="SWF file path (workers read it) or registry name.")],
    mode: Annotated[str, typer.Option(help="Modes, comma-separated: rigid, elastic.")] = "rigid,elastic",
    policy: Annotated[str, typer.Option(help="Policies, comma-separated (threshold runs on elastic pools only).")]
    = "fcfs,sjf,edf,threshold,sarsa",
    lam: Annotated[str, typer.Option("--lambda", help="Lambdas, comma-separated, in [0, 1].")] = "0.5,1",
    estimate: Annotated[str, typer.Option(help="Estimates, comma-separated: oracle, median.")] = "oracle,median",
    seeds: Annotated[int, typer.Option(min=1, max=10_000, help="Runs of each learning configuration "
                                                               "(the rules run once).")] = 3,
    cores: Annotated[int, typer.Option(min=1, max=MAX_CORES, help="The pool's (first) size.")] = 81,
    min_cores: Annotated[int, typer.Option(min=1, max=MAX_CORES, help="Elastic: never fewer cores.")] = 30,
    max_cores: Annotated[int | None, typer.Option(min=1, max=MAX_CORES, help="Elastic: never more cores "
                                                                             "(default: twice --cores).")] = None,
    hold: Annotated[float, typer.Option(min=0, max=1e9, callback=inputs.finite,
                                        help="Elastic: seconds a size holds.")] = 900.0,
    first_day: Annotated[float, typer.Option(min=0, max=MAX_DAYS, callback=inputs.finite,
                                             help="Start of the window: days after the first job.")] = 0.0,
    days: Annotated[float | None, typer.Option(max=MAX_DAYS, callback=inputs.positive,
                                               help="Length of the window in days, in (0, 365000] (default: to "
                                                    "the end).")] = None,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the window's first N jobs.")] = None,
    parallel: Annotated[str, typer.Option(help="expand or one.")] = "expand",
    trim: Annotated[int, typer.Option(min=0, max=10**9, help="Jobs left out of the statistics at each end.")] = 500,
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for table.csv.")] = Path("elastic-sweep"),
    backend: Annotated[str, typer.Option(help="loky, dask or ray.")] = "loky",
    scheduler: Annotated[str | None, typer.Option(help="Dask or Ray scheduler address (dask without one: a local "
                                                     "cluster of --n-jobs workers).")] = None,
    store: Annotated[Path | None, typer.Option(help="Directory of finished cells (resume from it).")] = None,
    n_jobs: Annotated[int, typer.Option(callback=inputs.workers, help="Workers (loky or a local Dask cluster; "
                                                                    "-1: every core).")] = -1,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Root seed of the cells.")] = 1,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    force: Annotated[bool, typer.Option(help="Overwrite the table of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON records.")] = False,
) -> None:
    """Every combination of the options (learners over --seeds seeds) and the log's own schedule; write table.csv."""
    backends.check(backend, scheduler)
    modes = _names(mode, "--mode", ("rigid", "elastic"))
    policies = _names(policy, "--policy", tuple(ELASTIC_POLICIES))
    lams, estimates = _lambdas(lam), _names(estimate, "--estimate", ESTIMATES)
    inputs.output_dir(out_dir, "--out", force=force)
    inputs.store_dir(store)
    common = {"parallel": parallel, "first_day": first_day, "days": days, "limit": limit_jobs, "cores": cores,
              "min_cores": min_cores, "max_cores": max_cores, "hold_s": hold, "trim": trim,
              **({"lenient": True} if lenient else {})}
    for each in modes:  # a bad pool is refused before the trace is read
        try:
            elastic_sweep.pool_of({**common, "mode": each})
        except ValueError as exc:
            raise inputs.in_options(exc, WORDS) from exc
    grid = elastic_sweep.configs(trace, modes=modes, policies=policies, lams=lams, estimates=estimates, **common)
    if not grid:
        raise ConfigError(f"no run in the grid: --policy {policy} on --mode {mode} (threshold sizes elastic pools "
                          f"only)")
    learning = sum(c["policy"] == "sarsa" for c in grid)
    bounded(learning * seeds + sum(c["policy"] != "sarsa" and c["lam"] == lams[0] for c in grid),
            f"{learning:,} learning runs x --seeds {seeds:,} and the rules")
    _check_parallel(parallel)
    swf = inputs.trace(trace, lenient, strict)
    path = str(swf.path) if swf.path else trace
    jobs, counts = _jobs(swf, trace, parallel, first_day, days, limit_jobs)
    if not len(jobs):
        inputs.nothing_to_run(counts, trace, as_json=as_json)
        return
    grid = [{**c, "trace": path} for c in grid]
    learners = [c for c in grid if c["policy"] == "sarsa"]
    rules = [c for c in grid if c["policy"] != "sarsa" and c["lam"] == lams[0]]  # a rule ignores lambda
    todo = [*cells(rules, name=elastic_sweep.CELL_NAME, root_seed=seed),
            *cells(learners, name=elastic_sweep.CELL_NAME, root_seed=seed, repeats=seeds)]
    native = cells([{"trace": path, **common}], name=f"{elastic_sweep.CELL_NAME}-native", root_seed=seed)
    results = backends.sweep(elastic_sweep.elastic_cell, todo, backend=backend, scheduler=scheduler, store=store,
                             n_jobs=n_jobs)
    native_row = elastic_sweep.native_cell(native[0].config, native[0].seed)
    table = elastic_sweep.sweep_table(todo, results)
    log = pd.DataFrame([{**{k: native_row.get(k) for k in table.columns}, "mode": "log", "policy": "native"}],
                       columns=table.columns).astype(table.dtypes.to_dict())
    table = pd.concat([table, log], ignore_index=True)
    with inputs.writing("--out", out_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        table.to_csv(out_dir / "table.csv", index=False)
    if as_json:
        records = table.to_dict(orient="records")
        typer.echo(json.dumps([{k: None if isinstance(v, float) and v != v else v for k, v in r.items()}
                               for r in records], allow_nan=False))
        return
    _print_sweep(table, f"{trace}: {len(jobs):,} jobs, {len(todo)} runs -> {out_dir}")


def _print_sweep(table: Any, title: str) -> None:
    t = Table(title=title)
    columns = ("w_interactive_mean", "w_batch_mean", "share_interactive_wait_over_120s", "utilization", "mean_cores")
    for col in ("mode", "policy", "lambda", "estimate", "runs", *columns):
        t.add_column(col, justify="left" if col in ("mode", "policy", "estimate") else "right")
    grouped = table.groupby(["mode", "policy", "lam", "estimate"], dropna=False, sort=False)
    for (mode, policy, lam, estimate), rows in grouped:
        means = rows[list(columns)].astype(float).mean()
        t.add_row(str(mode), str(policy), _number(lam), str(estimate), str(len(rows)),
                  *(_number(means[c]) for c in columns))
    out.print(t)
