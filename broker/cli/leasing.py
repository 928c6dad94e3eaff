"""``cloudbroker leasing``: a local cluster that leases up to V cloud nodes; ``leasing sweep`` for the references."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated, Any, cast

import numpy as np
import typer
from rich.table import Table

from broker.cli import backends, inputs
from broker.cli.console import out
from broker.cli.files import write_result
from broker.hybrid.metrics import Balance, LeasingResult, cumulative_balance, normalized
from broker.hybrid.policies import LEASING_POLICIES, MAX_NODES, run_constant, run_leasing
from broker.hybrid.sweep import SweepSummary, summarize_sweep, sweep_cell, sweep_configs
from broker.sweep import MAX_CELLS
from heuristics.backfill import Discipline
from workloads.rigid import RigidJobs, rigid_view
from workloads.swf import SwfTrace, site_size

#: The most policy steps a run may take: each is a decision of the policy and a pass of the site (of a clone of the
#: site per cap the learners evaluate), so a step costs the same whether the site is busy or idle.
MAX_STEPS = 1_000_000
#: The policies that learn (and take the learning options).
LEARNERS = ("qlearning", "egreedy", "sampled")
#: The references a learning step is normalised by, unless --references says otherwise.
DEFAULT_REFERENCES = "runs"


def _above_0(value: float) -> float:
    """An option callback: a finite number > 0 (with the option's maximum 1: (0, 1])."""
    if not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a finite number > 0, got {value}")
    return value


def _below_1(value: float) -> float:
    """An option callback: a finite number < 1 (with the option's minimum 0: [0, 1))."""
    if not (math.isfinite(value) and value < 1):
        raise typer.BadParameter(f"must be a finite number < 1, got {value}")
    return value


#: The words of the policies' refusals and the options that set them.
WORDS = {"k": "--epsilon-k", "epsilon": "--epsilon", "references": "--references", "reward": "--reward",
         "alpha": "--alpha", "gamma": "--gamma"}


leasing_app = typer.Typer(help="A local cluster that leases cloud nodes (the Q-learning paper).",
                          invoke_without_command=True)


@leasing_app.callback()
def leasing_cmd(
    ctx: typer.Context,
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (e.g. KTH).")] = None,
    policy: Annotated[str, typer.Option(help="constant:V, random, qlearning, egreedy or sampled.")] = "qlearning",
    nodes: Annotated[int | None, typer.Option(min=1, max=MAX_NODES,
                                              help="Local nodes M (default: the trace header's MaxProcs).")] = None,
    span: Annotated[float, typer.Option(callback=inputs.positive,
                                        help="Policy step (s); the paper's day.")] = 86400.0,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the first N jobs (by arrival).")] = None,
    offset: Annotated[float, typer.Option(min=0, callback=inputs.finite,
                                          help="Shift the step grid by this many seconds (less than --span).")] = 0.0,
    epsilon_k: Annotated[int, typer.Option(min=0, max=MAX_NODES, help="Other V evaluated per step by --policy "
                                                                      "egreedy (>= 0) or sampled (>= 1).")] = 3,
    epsilon: Annotated[float, typer.Option(min=0, max=1, callback=inputs.finite,
                                           help="egreedy: the chance of a random V for a step.")] = 0.1,
    references: Annotated[str, typer.Option(help="A learning step's references: clones (of the step, V = 0 and V "
                                                 "unbounded) or runs (two whole runs stepped alongside).")]
    = DEFAULT_REFERENCES,
    reward: Annotated[str, typer.Option(help="Balances to rewards: minmax (the paper: best 1, worst 0) or balance "
                                             "(the balance / 100).")] = "minmax",
    continue_best: Annotated[bool, typer.Option("--continue-best", help="Continue the step's best clone, not the "
                                                "chosen one (hindsight: to measure it).")] = False,
    alpha: Annotated[float, typer.Option(max=1, callback=_above_0,  # --help shows no "0<=x": 0 is refused
                                         help="The learners' learning rate, in (0, 1].")] = 0.1,
    gamma: Annotated[float, typer.Option(min=0, callback=_below_1,  # --help shows no "x<=1": 1 is refused
                                         help="The learners' discount, in [0, 1).")] = 0.1,
    discipline: Annotated[str, typer.Option(help="Local scheduler: easy or conservative.")] = "easy",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the random, egreedy and sampled policies.")] = 0,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write the jobs, cloud leases and steps tables and "
                                                 "summary.json here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """A local cluster with EASY backfilling that leases up to V cloud nodes; `leasing sweep` for the references."""
    if ctx.invoked_subcommand is not None:
        return
    if trace is None:
        raise typer.BadParameter("--trace is required")
    if discipline not in ("easy", "conservative"):
        raise typer.BadParameter("--discipline must be easy or conservative")
    if offset >= span:
        raise typer.BadParameter(f"--offset {offset:g} must be below --span {span:g}")
    learning = {"references": references, "reward": reward, "continue_best": continue_best, "alpha": alpha,
                "gamma": gamma}
    name, params = _policy(policy, seed, epsilon_k, epsilon, learning)
    try:  # the policy's own checks (none depends on M) before the trace is read
        LEASING_POLICIES.get(name)(1, **params)
    except ValueError as exc:
        raise inputs.in_options(exc, WORDS, default="--policy") from exc
    inputs.output_dir(out_dir, "--out", force=force)
    fmt_ = inputs.table_format(fmt)
    swf = inputs.trace(trace, lenient, strict)
    m, source = _nodes(swf, nodes)
    leasing = LEASING_POLICIES.get(name)(m, **params)
    jobs, report = rigid_view(swf.frame, nodes=m)
    jobs = jobs if limit_jobs is None else jobs.head(limit_jobs)
    _policy_steps(jobs, span)
    counts = inputs.kept(report, trace, swf)
    _say_site(swf, m, source)
    if not len(jobs):
        inputs.nothing_to_run(counts, trace, as_json=as_json, out_dir=out_dir)
        return
    mode: Discipline = "easy" if discipline == "easy" else "conservative"
    started = time.perf_counter()
    local, unbounded = run_constant(jobs, m, 0, discipline=mode), run_constant(jobs, m, math.inf, discipline=mode)
    with inputs.progress("leasing", len(jobs)) as recorder:
        run = run_leasing(jobs, m, leasing, step=span, offset_s=offset, discipline=mode, recorder=recorder)
    s, ref = run.summary, (local.summary.twt_s, unbounded.summary.cloud_cpu_s)
    settings: dict[str, Any] = {**learning, **{k: params[k] for k in ("epsilon", "k") if k in params}}
    payload = {**s.to_dict(), **counts, "policy": policy, "filter": report.describe(), "twt_ref_s": ref[0],
               "cloud_cpu_ref_s": ref[1], **normalized(s.twt_s, s.cloud_cpu_s, *ref), "span_s": span,
               "offset_s": offset, "v_per_step": s.caps, "cap_mean": float(np.mean(s.caps)) if s.caps else None,
               "seed": seed, "learning": settings if name in LEARNERS else None,
               "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            write_result(run, out_dir, fmt=fmt_, summary=payload, frames={"steps": run.steps})
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    _print_run(payload, f"{policy} leasing on {trace} (M = {m})")


def _policy_steps(jobs: RigidJobs, span: float) -> None:
    """Refuse a ``--span`` whose run would take more than :data:`MAX_STEPS` policy steps over the jobs."""
    inputs.steps(inputs.horizon(jobs.submit, jobs.runtime), span, "--span", "policy steps (each a decision of the "
                 "policy and a pass of the site)", most=MAX_STEPS, hint=" (the paper's step is a day, 86400 s)")


def _caps(text: str, m: int) -> list[int]:
    """``--v FIRST:LAST``: the constant caps, inclusive (LAST may be M)."""
    first, _, last = text.partition(":")
    try:
        lo, hi = int(first), (m if last in ("M", "") else int(last))
    except ValueError:
        raise typer.BadParameter(f"--v {text!r}: use FIRST:LAST, e.g. 0:M or 0:50") from None
    if not 0 <= lo <= hi <= m:
        raise typer.BadParameter(f"--v {text!r}: need 0 <= FIRST <= LAST <= M = {m}")
    return list(range(lo, hi + 1))


def _nodes(swf: SwfTrace, nodes: int | None) -> tuple[int, str]:
    """``--nodes``, else the site's size from the trace (:func:`workloads.swf.site_size`), and where it came from."""
    if nodes:
        return nodes, "--nodes"
    m, source = site_size(swf)
    if not m:
        raise typer.BadParameter("the trace gives no MaxProcs, no MaxNodes and no processor count: pass --nodes")
    if m > MAX_NODES:
        raise typer.BadParameter(f"the trace gives {m:,} nodes ({source}), more than {MAX_NODES:,}: pass --nodes")
    return int(m), source


def _say_site(swf: SwfTrace, m: int, source: str) -> None:
    """After the checks (a refusal stays one line): say when the site's size is not the header's."""
    if source == "the widest job":
        print(f"{swf.path.name}: no MaxProcs or MaxNodes in the header: a site of {m:,} nodes, the widest job's "
              "(--nodes to choose)", file=sys.stderr)


def _policy(text: str, seed: int, k: int, epsilon: float, learning: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``constant:V``, ``random`` or a learner: a name of ``LEASING_POLICIES`` and its parameters."""
    name, _, value = text.partition(":")
    if name == "constant":
        try:
            cap = int(value)
        except ValueError:
            raise typer.BadParameter(f"--policy {text!r}: V must be an integer, e.g. constant:31") from None
        if cap < 0:
            raise typer.BadParameter("--policy constant:V needs V >= 0")
        return name, {"v": float(cap)}
    if value or name not in LEASING_POLICIES:
        raise typer.BadParameter("--policy must be constant:V, random, qlearning, egreedy or sampled")
    if name == "random":
        return name, {"seed": seed}
    extra = {"epsilon": epsilon, "k": k} if name == "egreedy" else {"k": k} if name == "sampled" else {}
    return name, {"seed": seed, **extra, **learning}


def _print_run(payload: dict[str, Any], title: str) -> None:
    table = Table(title=title, show_header=False)
    for key in ("jobs", "twt_s", "cloud_cpu_s", "twt_imp_pct", "cost_pct", "balance", "clones_simulated", "wall_s"):
        value = payload[key]
        text = f"{value:,.2f}" if isinstance(value, float) else str(value)
        table.add_row(key, text if value is not None else f"undefined: {payload['undefined'][key]}")
    caps = payload["v_per_step"]
    table.add_row("V per step", f"mean {np.mean(caps):.1f}, min {min(caps):g}, max {max(caps):g} ({len(caps)} steps)"
                  if caps else "-")
    out.print(table)


def _leasing_plots(jobs: RigidJobs, m: int, summary: SweepSummary, folder: Path, random_runs: int,
                   seed: int, step: float = 86400.0, offset: float = 0.0,
                   discipline: Discipline = "easy") -> list[str]:
    """Figures 5 and 6 into ``folder``; Figure 6 replays the references, best V, random runs and Q-learning.

    The balances must be defined (``summary.best_v`` set).
    """
    from broker.hybrid import plots  # matplotlib, imported only when a figure is drawn

    best_v = summary.best_v
    if best_v is None:
        raise ValueError("figures need defined balances")
    folder.mkdir(parents=True, exist_ok=True)
    constant = {v: Balance(twt_pct=100.0 - cast(float, b["twt_imp_pct"]), c_pct=cast(float, b["cost_pct"]))
                for v, b in summary.constant.items()}
    paths = [folder / "balance_vs_v.png", folder / "balance_over_time.png"]
    plots.balance_vs_v(constant, best_v).savefig(paths[0], dpi=110)
    def daily(name: str, **params: Any) -> LeasingResult:
        return run_leasing(jobs, m, LEASING_POLICIES.get(name)(m, **params), step=step, offset_s=offset,
                           discipline=discipline)

    ref0, refinf = daily("constant", v=0), daily("constant", v=math.inf)
    curves = {f"constant V = {best_v}": cumulative_balance(daily("constant", v=best_v), ref0, refinf)}
    if random_runs:
        runs = [cumulative_balance(daily("random", seed=seed + k), ref0, refinf) for k in range(random_runs)]
        curves[f"random (mean of {random_runs})"] = np.mean(runs, axis=0)
    curves["Q-learning"] = cumulative_balance(daily("qlearning"), ref0, refinf)
    plots.balance_over_time(curves).savefig(paths[1], dpi=110)
    return [str(p) for p in paths]


@leasing_app.command("sweep")
def leasing_sweep_cmd(
    trace: Annotated[str, typer.Option(help="SWF file path (workers read it) or registry name.")],
    nodes: Annotated[int | None, typer.Option(min=1, max=MAX_NODES,
                                              help="Local nodes M (default: the trace header's MaxProcs).")] = None,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the first N jobs (by arrival).")] = None,
    v: Annotated[str, typer.Option("--v", help="Constant caps: FIRST:LAST (inclusive), LAST may be M.")] = "0:M",
    random_runs: Annotated[int, typer.Option(min=0, max=MAX_CELLS, help="Runs of the random policy.")] = 1000,
    span: Annotated[float, typer.Option(callback=inputs.positive, help="Policy step (s); the paper's day.")] = 86400.0,
    offset: Annotated[float, typer.Option(min=0, callback=inputs.finite,
                                          help="Shift the step grid by this many seconds (less than --span).")] = 0.0,
    discipline: Annotated[str, typer.Option(help="Local scheduler: easy or conservative.")] = "easy",
    backend: Annotated[str, typer.Option(help="loky, dask or ray.")] = "loky",
    scheduler: Annotated[str | None, typer.Option(help="Dask or Ray scheduler address (dask without one: a local "
                                                     "cluster of --n-jobs workers).")] = None,
    store: Annotated[Path | None, typer.Option(help="Directory of finished cells (resume from it).")] = None,
    n_jobs: Annotated[int, typer.Option(callback=inputs.workers, help="Workers (loky or a local Dask cluster; "
                                                                    "-1: every core).")] = -1,
    seed: Annotated[int, typer.Option(min=0, help="Root seed of the cells.")] = 1,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    plot: Annotated[Path | None, typer.Option(help="Write balance_vs_v.png (Figure 5) and balance_over_time.png "
                                              "(Figure 6: best V, random mean, Q-learning) here.")] = None,
    plot_random: Annotated[int, typer.Option(min=0, help="Random runs averaged in Figure 6.")] = 10,
    force: Annotated[bool, typer.Option(help="Overwrite the figures of an earlier run in --plot.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Every constant V and repeated random-V runs through the sweep runner (resumable with --store)."""
    backends.check(backend, scheduler)
    if discipline not in ("easy", "conservative"):
        raise typer.BadParameter("--discipline must be easy or conservative")
    if offset >= span:
        raise typer.BadParameter(f"--offset {offset:g} must be below --span {span:g}")
    inputs.store_dir(store)
    inputs.output_dir(plot, "--plot", force=force)
    swf = inputs.trace(trace, lenient, strict)
    m, source = _nodes(swf, nodes)
    values = _caps(v, m)
    view, report = rigid_view(swf.frame, nodes=m)
    jobs = view if limit_jobs is None else view.head(limit_jobs)
    _policy_steps(jobs, span)
    counts = inputs.kept(report, trace, swf)
    _say_site(swf, m, source)
    if not len(jobs):
        inputs.nothing_to_run(counts, trace, as_json=as_json)
        return
    ref, const, rand = sweep_configs(str(swf.path) if swf.path else trace, m, sorted({0, *values}),
                                     random_runs=random_runs, root_seed=seed, limit=limit_jobs, step=span,
                                     discipline=discipline, offset_s=offset, lenient=lenient)
    todo = [*ref, *const, *rand]
    results = backends.sweep(sweep_cell, todo, backend=backend, scheduler=scheduler, store=store, n_jobs=n_jobs)
    by_cap = {int(c.config["params"]["v"]): r for c, r in zip(const, results[1:1 + len(const)], strict=True)}
    summary = summarize_sweep(results[0], by_cap[0], {k: by_cap[k] for k in values}, results[1 + len(const):])
    payload = {"trace": trace, "nodes": m, "jobs": len(jobs), **counts, "cells": len(todo), "backend": backend,
               **summary.to_dict()}
    if summary.best_v is None:
        why = "; ".join(sorted(set(summary.undefined.values())))
        print(f"warning: {trace}: {why}: the balances are undefined{', no figure drawn' if plot else ''}",
              file=sys.stderr)
    elif plot is not None:
        with inputs.writing("--plot", plot):
            payload["plots"] = _leasing_plots(jobs, m, summary, plot, plot_random, seed, span, offset,
                                              "conservative" if discipline == "conservative" else "easy")
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    if summary.best_v is None:
        out.print(f"balances undefined: {why}")
        return
    best = summary.constant[summary.best_v]
    out.print(f"best constant V = {summary.best_v}: twt_imp {best['twt_imp_pct']:.2f} %, c {best['cost_pct']:.2f} %, "
              f"balance {best['balance']:.2f}")
    rnd = payload["random"]
    if rnd["runs"]:
        out.print(f"random V per step, {rnd['runs']} runs: balance mean {rnd['mean']:.2f} ± {rnd['std']:.2f}, "
                  f"best {rnd['best']:.2f}")
