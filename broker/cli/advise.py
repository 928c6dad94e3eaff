"""``cloudbroker advise``: the placement advisor over a trace with the paper's protocol; ``advise sweep`` for grids.

Each evaluated job is predicted from the labels known when it was submitted; for each speed scenario
the output gives the jobs sent to the cloud and kept, and the saved time of the advisor (with the
cutoff, and without) and of the oracle. ``--out DIR`` writes the per-job predictions, uncertainty
and decisions and ``summary.json``.

``advise sweep`` runs every combination of the options it is given (models, promises, weights,
``k``, widths, cutoff) through the sweep runner (:mod:`broker.advisor.sweep`), each for all the
speeds, and writes the tidy table, the store of finished cells (a killed sweep resumes from it) and
the paper's Figure 4 into ``--out``.
"""

from __future__ import annotations

import json
import math
import sys
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


advise_app = typer.Typer(help="Run here or in the cloud: the placement advisor over a trace, against the oracle.",
                         invoke_without_command=True)
#: The sub-directory of ``advise sweep --out`` that holds the finished cells.
STORE = "cells"


@advise_app.callback()
def advise_cmd(
    ctx: typer.Context,
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (with wait and run times); "
                                                   "required.")] = None,
    speed: Annotated[str | None, typer.Option(help="linear:O or table:FILE (default: the paper's ten overheads "
                                                   "0.01 .. 10).")] = None,
    no_cutoff: Annotated[bool, typer.Option("--no-cutoff", help="Act on every prediction, however uncertain.")]
    = False,
    tune: Annotated[int | None, typer.Option(min=1, help="Entries before --skip that tune the weights and the "
                                                         "cutoff (default: 500, at most --skip).")] = None,
    skip: Annotated[int | None, typer.Option(min=1, help="Entries left out at the start (cold start; default: "
                                                         "10,000, half the entries of a shorter trace).")] = None,
    evaluate: Annotated[int | None, typer.Option(min=1, help="Entries evaluated after --skip (default: 10,000, "
                                                             "the rest of a shorter trace).")] = None,
    count: Annotated[str, typer.Option(help="What --tune, --skip and --evaluate count: entries (the SWF file's, "
                                            "as the paper) or jobs (the replayable jobs).")] = "entries",
    label: Annotated[str, typer.Option(help="The wait learned and scored: log (the log's) or replay (the "
                                            "conservative replay's that makes the promises; the paper's "
                                            "Table 5).")] = "log",
    cancelled: Annotated[str, typer.Option(help="Entries whose run time is unknown but wait known (cancelled while "
                                                "queued): keep (in the queue features and scored for the wait, "
                                                "no placement: the paper counts entries) or drop them.")] = "keep",
    memory: Annotated[int | None, typer.Option(min=1, help="The k-NN's knowledge base: the last N known jobs "
                                                           "(default: every known job).")] = None,
    model: Annotated[str, typer.Option(help="knn (the paper's) or gbm (gradient boosting, beyond the paper).")]
    = "knn",
    promises: Annotated[bool, typer.Option("--promises", help="Add each job's conservative-backfilling promise "
                                                            "to the wait's features (the paper's Table 5).")]
    = False,
    weights: Annotated[str, typer.Option(help="k-NN feature weights: correlation, or search (a seeded search of "
                                              "weights, k, width and memory on the tuning entries, kept if it "
                                              "beats --k, --width, --memory on the entries held out of it).")]
    = "correlation",
    search_iterations: Annotated[int, typer.Option(min=1, max=1000, help="Generations of the weight search "
                                                                         "(--weights search).")] = 20,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of the weight search and of gbm.")] = 0,
    k: Annotated[int, typer.Option("--k", min=1, max=1000, help="Neighbours (the paper: 6 to 33).")] = 20,
    width: Annotated[float, typer.Option(callback=inputs.positive, help="Kernel width (in HEOM units).")] = 0.1,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write jobs.<format> and summary.json here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Table format for --out: parquet or csv.")] = "parquet",
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run here or in the cloud: the placement advisor over a trace, against the oracle; `advise sweep` for grids."""
    if ctx.invoked_subcommand is not None:
        return
    if trace is None:
        ctx.fail("Missing option '--trace'.")
    from broker.advisor import evaluate as evaluation
    from broker.advisor.features import CANCELLED, submission_features

    speeds = _speeds(speed)
    if model not in evaluation.MODELS:
        raise typer.BadParameter(f"--model must be knn or gbm, got {model!r}")
    if weights not in evaluation.WEIGHTS:
        raise typer.BadParameter(f"--weights must be correlation or search, got {weights!r}")
    if count not in evaluation.COUNTS:
        raise typer.BadParameter(f"--count must be entries or jobs, got {count!r}")
    if label not in evaluation.LABELS_OF_WAIT:
        raise typer.BadParameter(f"--label must be log or replay, got {label!r}")
    if cancelled not in CANCELLED:
        raise typer.BadParameter(f"--cancelled must be keep or drop, got {cancelled!r}")
    _check_tune(tune, skip)
    inputs.output_dir(out_dir, "--out", force=force)
    fmt_ = inputs.table_format(fmt)
    swf = inputs.trace(trace, lenient, strict)
    machine, source = _machine(swf, trace)
    frame, report = submission_features(swf.frame, max_procs=machine, unix_start=swf.header.unix_start_time,
                                        time_zone=swf.header.time_zone_string, cancelled=cancelled)
    if len(frame) < 2 or frame["cancelled"].all():  # no job that ran: nothing to place
        inputs.nothing_to_run(inputs.kept(report, trace, swf), trace, as_json=as_json, out_dir=out_dir)
        return
    protocol = _protocol(tune, skip, evaluate, _counted(frame, count), trace, count)
    rows, predicted = _windows(protocol, frame)
    if source != "MaxProcs":  # said after the checks: a refusal stays one line
        print(f"{trace}: no MaxProcs in the header: a machine of {machine:,} processors ({source})", file=sys.stderr)
    started = time.perf_counter()
    if promises or label == "replay":
        frame = _with_promises(frame, swf.frame, machine, rows, trace)
    counts = inputs.kept(report, trace, swf)
    with inputs.progress("advising", 2 * predicted) as recorder:
        result = evaluation.evaluate(frame, speeds, protocol=protocol, k=k, width=width, memory=memory,
                                     cutoff=not no_cutoff, model=model, promises=promises, weights=weights,
                                     label=label, search_iterations=search_iterations, seed=seed, recorder=recorder)
    payload = {"trace": trace, **result.to_dict(), "cancelled": cancelled, **counts,
               "wall_s": round(time.perf_counter() - started, 3)}
    if out_dir is not None:
        with inputs.writing("--out", out_dir):
            _write(result.jobs, payload, out_dir, fmt_)
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
        return
    _print(payload)


def _write(table: Any, payload: dict[str, Any], out_dir: Path, fmt: str) -> None:
    """``jobs.<fmt>`` and ``summary.json`` (without the measured wall time) into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (table.to_parquet if fmt == "parquet" else table.to_csv)(out_dir / f"jobs.{fmt}", index=False)
    (out_dir / "summary.json").write_text(json.dumps({k: v for k, v in payload.items() if k != "wall_s"},
                                                     sort_keys=True, indent=2))


def _check_tune(tune: int | None, skip: int | None) -> None:
    if tune is not None and skip is not None and tune > skip:
        raise typer.BadParameter(f"--tune {tune} must not exceed --skip {skip}")


def _machine(swf: Any, trace: str) -> tuple[int, str]:
    """The machine's processors the features need (:func:`workloads.swf.site_size`) and where the number comes from."""
    from workloads.errors import ConfigError
    from workloads.swf import site_size

    size, source = site_size(swf)
    if not size:
        raise ConfigError(f"{trace}: the trace gives no MaxProcs, no MaxNodes and no processor count (the machine's "
                          "size the features need)")
    return size, source


def _counted(frame: Any, count: str) -> int:
    """The trace's entries, or its replayable jobs, as ``--count`` says."""
    return int(frame.attrs["entries"]) if count == "entries" else len(frame)


def _protocol(tune: int | None, skip: int | None, evaluate: int | None, n: int, trace: str,
              count: str = "entries") -> Any:
    """The options' protocol; the paper's (or, on a trace of fewer than 20,000 entries, half and half) where not given.

    ``n``: the trace's entries, or its replayable jobs, as ``count`` says.
    """
    from broker.advisor.evaluate import Protocol

    unit = "entries" if count == "entries" else "replayable jobs"
    if skip is None and evaluate is None:
        fitted = Protocol.fitting(n, count)
        skip, evaluate = fitted.skip, fitted.evaluate
        if n < 20_000:
            print(f"{trace}: {n:,} {unit}, fewer than the paper's 20,000: --skip {skip:,} --evaluate "
                  f"{evaluate:,}", file=sys.stderr)
    paper = Protocol()
    skip, evaluate = skip or paper.skip, evaluate or paper.evaluate
    tune = tune or min(paper.tune, skip)
    _check_tune(tune, skip)
    return Protocol(tune=tune, skip=skip, evaluate=evaluate, count=count)


def _windows(protocol: Any, frame: Any) -> tuple[int, int]:
    """The frame's rows up to the end of the evaluated window and the rows predicted, once ``protocol`` fits it.

    Refused before any work, naming ``--skip``, ``--evaluate`` and ``--tune``.
    """
    try:
        tune, window = protocol.rows(frame)
    except ValueError as exc:
        raise inputs.in_options(exc, {"skip": "--skip", "evaluate": "--evaluate", "tune": "--tune"}) from exc
    return int(window[-1]) + 1, len(tune) + len(window)


def _with_promises(frame: Any, trace_frame: Any, max_procs: int, rows: int, trace: str) -> Any:
    """The frame with each of its first ``rows`` jobs' promised wait (the rest NaN: never asked for)."""
    from broker.advisor.promises import with_promises
    from workloads.errors import InputError

    try:
        return with_promises(frame, trace_frame, max_procs, rows)
    except InputError as exc:
        raise InputError(f"{trace}: {exc}") from exc


def _print(payload: dict[str, Any]) -> None:
    out.print(f"{payload['trace']}: RMSE wait ({payload['label']}'s) {payload['rmse_wait_s']:,.0f} s over "
              f"{payload['wait_scored']:,} entries ({payload['cancelled_evaluated']:,} cancelled while queued; "
              f"{payload['rmse_wait_ran_s']:,.0f} s over the {payload['placed_jobs']:,} that ran), run "
              f"{payload['rmse_run_s']:,.0f} s")
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


@advise_app.command("sweep")
def advise_sweep_cmd(
    trace: Annotated[str, typer.Option(help="SWF file path (workers read it) or registry name.")],
    model: Annotated[str, typer.Option(help="Models, comma-separated: knn, gbm.")] = "knn",
    promises: Annotated[str, typer.Option(help="Promises as a wait feature: off, on, or off,on for both.")] = "off",
    weights: Annotated[str, typer.Option(help="k-NN feature weights, comma-separated: correlation, search.")]
    = "correlation",
    k: Annotated[str, typer.Option("--k", help="Neighbours, comma-separated integers in [1, 1000].")] = "20",
    width: Annotated[str, typer.Option(help="Kernel widths (HEOM units), comma-separated numbers > 0.")] = "0.1",
    cutoff: Annotated[str, typer.Option(help="The uncertainty cutoff: on, off, or on,off for both.")] = "on",
    label: Annotated[str, typer.Option(help="The wait learned and scored, comma-separated: log, replay.")] = "log",
    count: Annotated[str, typer.Option(help="What --tune, --skip and --evaluate count: entries (the SWF file's) "
                                            "or jobs (the replayable jobs).")] = "entries",
    cancelled: Annotated[str, typer.Option(help="Entries cancelled while queued (run time unknown, wait known): "
                                                "keep (in the queue features, scored for the wait, no placement) "
                                                "or drop them.")] = "keep",
    speed: Annotated[str | None, typer.Option(help="Speeds, comma-separated linear:O or table:FILE (default: the "
                                                   "paper's ten overheads 0.01 .. 10); every cell runs them all.")]
    = None,
    tune: Annotated[int | None, typer.Option(min=1, help="Entries before --skip that tune the weights and the "
                                                         "cutoff (default: 500, at most --skip).")] = None,
    skip: Annotated[int | None, typer.Option(min=1, help="Entries left out at the start (cold start; default: "
                                                         "10,000, half the entries of a shorter trace).")] = None,
    evaluate: Annotated[int | None, typer.Option(min=1, help="Entries evaluated after --skip (default: 10,000, "
                                                             "the rest of a shorter trace).")] = None,
    search_iterations: Annotated[int, typer.Option(min=1, max=1000, help="Generations of the weight search "
                                                                         "(--weights search).")] = 20,
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for table.csv, saved_time.png and the store of "
                                                        "finished cells (cells/, resumed from).")]
    = Path("advise-sweep"),
    backend: Annotated[str, typer.Option(help="loky, dask or ray.")] = "loky",
    scheduler: Annotated[str | None, typer.Option(help="Dask or Ray scheduler address (dask without one: a local "
                                                     "cluster of --n-jobs workers).")] = None,
    n_jobs: Annotated[int, typer.Option(callback=inputs.workers, help="Workers (loky or a local Dask cluster; "
                                                                    "-1: every core).")] = -1,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Root seed of the cells (the weight search, "
                                                                  "gbm); every cell gets the same.")] = 1,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    force: Annotated[bool, typer.Option(help="Overwrite the table and plot of an earlier run in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON records.")] = False,
) -> None:
    """Every combination of the options, each for all the speeds; write table.csv and saved_time.png into --out."""
    from broker.advisor import sweep as advisor_sweep
    from broker.advisor.evaluate import COUNTS, LABELS_OF_WAIT, MODELS, WEIGHTS
    from broker.advisor.features import CANCELLED
    from broker.cli import backends
    from broker.sweep import bounded, cells

    backends.check(backend, scheduler)
    models, promised, weighting = _choices(model, "--model", MODELS), _switches(promises, "--promises"), \
        _choices(weights, "--weights", WEIGHTS)
    ks, widths, cutoffs = _integers(k, "--k", 1, 1000), _widths(width), _switches(cutoff, "--cutoff")
    labels = _choices(label, "--label", LABELS_OF_WAIT)
    if count not in COUNTS:
        raise typer.BadParameter(f"--count must be entries or jobs, got {count!r}")
    if cancelled not in CANCELLED:
        raise typer.BadParameter(f"--cancelled must be keep or drop, got {cancelled!r}")
    speeds = _speed_texts(speed)
    _check_tune(tune, skip)
    axes: dict[str, int] = {"--model": len(models), "--promises": len(promised), "--weights": len(weighting),
                            "--k": len(ks), "--width": len(widths), "--cutoff": len(cutoffs), "--label": len(labels)}
    bounded(math.prod(axes.values()), " x ".join(f"{option} ({n:,})" for option, n in axes.items()))
    _sweep_out(out_dir, force)
    swf = inputs.trace(trace, lenient, strict)
    path = str(swf.path) if swf.path else trace
    frame, report = advisor_sweep.trace_features(path, lenient, cancelled)
    if len(frame) < 2:
        inputs.nothing_to_run(inputs.kept(report, trace, swf), trace, as_json=as_json)
        return
    protocol = _protocol(tune, skip, evaluate, _counted(frame, count), trace, count)
    rows, _ = _windows(protocol, frame)
    inputs.kept(report, trace, swf)
    if True in promised or "replay" in labels:  # a trace whose promises cannot be joined is refused here
        _promised(advisor_sweep, path, rows, trace, lenient, cancelled)
    configs = advisor_sweep.configs(path, models=models, promises=promised, weights=weighting, k=ks, width=widths,
                                    cutoff=cutoffs, label=labels, protocol=protocol, speeds=speeds,
                                    search_iterations=search_iterations, lenient=lenient, cancelled=cancelled)
    todo = cells(configs, name=advisor_sweep.CELL_NAME, root_seed=seed, paired=True)
    results = backends.sweep(advisor_sweep.advise_cell, todo, backend=backend, scheduler=scheduler,
                             store=out_dir / STORE, n_jobs=n_jobs)
    table = advisor_sweep.sweep_table(todo, results)
    with inputs.writing("--out", out_dir):
        table.to_csv(out_dir / "table.csv", index=False)
        _figure(table, out_dir, Path(path).name)
    if as_json:
        records = table.to_dict(orient="records")
        typer.echo(json.dumps([{k: None if isinstance(v, float) and v != v else v for k, v in r.items()}
                               for r in records], allow_nan=False))
        return
    _print_sweep(table, f"{trace}: {len(todo)} cells x {len(speeds)} speeds -> {out_dir}")


def _choices(text: str, option: str, known: tuple[str, ...]) -> list[str]:
    """A comma-separated list of names from ``known``, each once, in the order given."""
    values = [v.strip() for v in text.split(",")]
    bad = [v for v in values if v not in known]
    if bad:
        raise typer.BadParameter(f"{option} takes {', '.join(known)} (comma-separated), got {bad[0]!r}")
    return list(dict.fromkeys(values))


def _switches(text: str, option: str) -> list[bool]:
    """``off``, ``on`` or both, comma-separated: False, True."""
    return [v == "on" for v in _choices(text, option, ("off", "on"))]


def _integers(text: str, option: str, low: int, high: int) -> list[int]:
    """Comma-separated integers in ``[low, high]``, each once."""
    values = [v.strip() for v in text.split(",")]
    for v in values:
        if not (v.lstrip("-").isdigit() and v.isascii() and low <= int(v) <= high):
            raise typer.BadParameter(f"{option} takes integers in [{low}, {high}] (comma-separated), got {v!r}")
    return list(dict.fromkeys(int(v) for v in values))


def _widths(text: str) -> list[float]:
    """``--width``: comma-separated finite numbers > 0, each once."""
    import math

    values = []
    for v in (v.strip() for v in text.split(",")):
        try:
            number = float(v)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            raise typer.BadParameter(f"--width takes finite numbers > 0 (comma-separated), got {v!r}")
        values.append(number)
    return list(dict.fromkeys(values))


def _speed_texts(text: str | None) -> list[str]:
    """The speeds of ``--speed`` as cells name them (checked, a table's file read now; its path made absolute)."""
    from broker.advisor.decide import LinearSpeed
    from broker.advisor.sweep import PAPER_SPEEDS

    if text is None:
        return list(PAPER_SPEEDS)
    texts = []
    for item in (i.strip() for i in text.split(",")):
        parsed = _speeds(item)[0]
        texts.append(f"linear:{parsed.overhead:g}" if isinstance(parsed, LinearSpeed)
                     else f"table:{Path(item.partition(':')[2]).resolve()}")
    return list(dict.fromkeys(texts))


def _sweep_out(out_dir: Path, force: bool) -> None:
    """Refuse an ``--out`` that is a file, or holds more than a store of cells unless ``--force`` (before any work)."""
    from workloads.errors import ConfigError

    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out {out_dir}: a file is there; give a directory")
    inputs.writable(out_dir, "--out")
    inputs.store_dir(out_dir / STORE, "--out")
    taken = sorted(p.name for p in out_dir.iterdir() if p.name != STORE) if out_dir.is_dir() else []
    if taken and not force:
        raise ConfigError(f"--out {out_dir}: holds {taken[0]} of an earlier run; choose another directory or pass "
                          f"--force to overwrite it (the finished cells in {STORE}/ are resumed from either way)")


def _promised(advisor_sweep: Any, path: str, rows: int, trace: str, lenient: bool, cancelled: str) -> None:
    from workloads.errors import InputError

    try:
        advisor_sweep.trace_frame(path, rows, lenient, cancelled)
    except InputError as exc:
        raise InputError(f"{trace}: {exc}") from exc


def _figure(table: Any, out_dir: Path, name: str) -> None:
    """The paper's Figure 4 for the sweep: saved time per speed scenario, one panel per option set."""
    from broker.advisor import plots  # matplotlib, imported only when a figure is drawn

    plots.saved_time(table, title=f"{name}: saved time per speed scenario").savefig(out_dir / "saved_time.png",
                                                                                  dpi=110)


def _print_sweep(table: Any, title: str) -> None:
    t = Table(title=title)
    for col in ("options", "speed", "RMSE wait (s)", "advisor (h)", "no cutoff (h)", "oracle (h)"):
        t.add_column(col, justify="left" if col in ("options", "speed") else "right")
    for row in table.itertuples(index=False):
        t.add_row(str(row.options), str(row.scenario).removeprefix("linear:"), f"{row.rmse_wait_s:,.0f}",
                  *(f"{getattr(row, c) / 3600:,.0f}" for c in ("saved_time_s", "no_cutoff_saved_time_s",
                                                                "oracle_saved_time_s")))
    out.print(t)
