"""``cloudbroker advise``: the placement advisor over a trace with the paper's protocol.

Each evaluated job is predicted from the labels known when it was submitted; for each speed scenario
the output gives the jobs sent to the cloud and kept, and the saved time of the advisor (with the
cutoff, and without) and of the oracle. ``--out DIR`` writes the per-job predictions, uncertainty
and decisions and ``summary.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from broker.cli import inputs
from broker.cli.console import out


def _speeds(text: str | None) -> list[Any]:
    """``linear:O`` or ``table:FILE``; none: the paper's ten linear overheads."""
    from broker.advisor.decide import PAPER_OVERHEADS, LinearSpeed, TableSpeed

    if text is None:
        return [LinearSpeed(o) for o in PAPER_OVERHEADS]
    kind, _, value = text.partition(":")
    if kind == "linear":
        try:
            return [LinearSpeed(float(value))]
        except ValueError:
            raise typer.BadParameter(f"--speed {text!r}: use linear:O with a number O >= 0, e.g. linear:0.1") from None
    if kind == "table" and value:
        try:
            return [TableSpeed.read(value)]
        except OSError as exc:
            inputs.fail(exc)
    raise typer.BadParameter(f"--speed {text!r}: use linear:O or table:FILE (a CSV procs,ratio)")


def advise_cmd(
    trace: Annotated[str, typer.Option(help="SWF file or registry name (with wait and run times).")],
    speed: Annotated[str | None, typer.Option(help="linear:O or table:FILE (default: the paper's ten overheads "
                                                   "0.01 .. 10).")] = None,
    no_cutoff: Annotated[bool, typer.Option("--no-cutoff", help="Act on every prediction, however uncertain.")]
    = False,
    tune: Annotated[int, typer.Option(min=1, help="Entries before --skip that tune the weights and the cutoff.")]
    = 500,
    skip: Annotated[int, typer.Option(min=1, help="Entries left out at the start (cold start).")] = 10_000,
    evaluate: Annotated[int, typer.Option(min=1, help="Entries evaluated after --skip.")] = 10_000,
    model: Annotated[str, typer.Option(help="knn (the paper's) or gbm (gradient boosting, beyond the paper).")]
    = "knn",
    promises: Annotated[bool, typer.Option("--promises", help="Add each job's conservative-backfilling promise "
                                                            "to the wait's features (the paper's Table 5).")]
    = False,
    weights: Annotated[str, typer.Option(help="k-NN feature weights: correlation, or search (a seeded global "
                                              "search of weights, k and width on the tuning entries).")]
    = "correlation",
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of the weight search and of gbm.")] = 0,
    k: Annotated[int, typer.Option("--k", min=1, max=1000, help="Neighbours (the paper: 6 to 33).")] = 20,
    width: Annotated[float, typer.Option(callback=inputs.positive, help="Kernel width (in HEOM units).")] = 0.1,
    lenient: Annotated[bool, typer.Option(help="Skip malformed trace lines (and count them).")] = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write jobs.<format> and summary.json here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run here or in the cloud: the placement advisor over a trace, against the oracle."""
    from broker.advisor import evaluate as evaluation
    from broker.advisor.features import submission_features
    from workloads.errors import ConfigError

    speeds = _speeds(speed)
    if model not in evaluation.MODELS:
        raise typer.BadParameter(f"--model must be knn or gbm, got {model!r}")
    if weights not in evaluation.WEIGHTS:
        raise typer.BadParameter(f"--weights must be correlation or search, got {weights!r}")
    if tune > skip:
        raise typer.BadParameter(f"--tune {tune} must not exceed --skip {skip}")
    inputs.output_dir(out_dir, "--out", force=force)
    fmt_ = inputs.table_format(fmt)
    swf = inputs.trace(trace, lenient)
    if not swf.header.max_procs:
        raise ConfigError(f"{trace}: the header gives no MaxProcs (the machine's size the features need)")
    frame, report = submission_features(swf.frame, max_procs=swf.header.max_procs,
                                        unix_start=swf.header.unix_start_time, time_zone=swf.header.time_zone_string)
    protocol = evaluation.Protocol(tune=tune, skip=skip, evaluate=evaluate)
    protocol.windows(len(frame))  # refuse a trace too short for the protocol before any work
    started = time.perf_counter()
    if promises:
        frame = _with_promises(frame, swf.frame, swf.header.max_procs, protocol.skip + protocol.evaluate, trace)
    counts = inputs.kept(report, len(frame), trace)
    result = evaluation.evaluate(frame, speeds, protocol=protocol, k=k, width=width, cutoff=not no_cutoff,
                                 model=model, promises=promises, weights=weights, seed=seed)
    payload = {"trace": trace, **result.to_dict(), **counts, "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        table = result.jobs
        (table.to_parquet if fmt_ == "parquet" else table.to_csv)(out_dir / f"jobs.{fmt_}", index=False)
        (out_dir / "summary.json").write_text(json.dumps({k_: v for k_, v in payload.items() if k_ != "wall_s"},
                                                         sort_keys=True, indent=2))
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    _print(payload)


def _with_promises(frame: Any, trace_frame: Any, max_procs: int, rows: int, trace: str) -> Any:
    """The frame with each of its first ``rows`` jobs' promised wait (the rest NaN: never asked for)."""
    import numpy as np

    from broker.advisor.promises import PROMISE, promised_waits
    from workloads.errors import InputError

    try:
        waits = promised_waits(trace_frame, frame["job_id"].to_numpy()[:rows], max_procs=max_procs)
    except InputError as exc:
        raise InputError(f"{trace}: {exc}") from exc
    column = np.full(len(frame), np.nan)
    column[:rows] = waits
    return frame.assign(**{PROMISE: column})


def _print(payload: dict[str, Any]) -> None:
    out.print(f"{payload['trace']}: RMSE wait {payload['rmse_wait_s']:,.0f} s, run {payload['rmse_run_s']:,.0f} s")
    if "rmse_wait_promises_alone_s" in payload:
        out.print(f"the promises alone as the wait: RMSE {payload['rmse_wait_promises_alone_s']:,.0f} s")
    table = Table(title="saved time (h) and jobs sent to the cloud")
    for col in ("speed", "advisor", "sent", "no cutoff", "sent ", "oracle", "sent  "):
        table.add_column(col, justify="left" if col == "speed" else "right")
    for s in payload["scenarios"]:
        table.add_row(s["name"], f"{s['saved_time_s'] / 3600:,.0f}", f"{s['jobs_to_cloud']:,}",
                      f"{s['no_cutoff_saved_time_s'] / 3600:,.0f}", f"{s['no_cutoff_jobs_to_cloud']:,}",
                      f"{s['oracle_saved_time_s'] / 3600:,.0f}", f"{s['oracle_jobs_to_cloud']:,}")
    out.print(table)
