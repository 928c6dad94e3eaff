"""Advisor sweeps: the advisor's options as cells of :mod:`broker.sweep`, and one tidy table of their scenarios.

A cell is one configuration of the advisor -- trace, model, promises, weights, ``k``, width, cutoff
on or off, protocol -- evaluated for *all* its speed factors at once (:func:`advise_cell`). The
predictions are the expensive part of an evaluation (every evaluated job's neighbours, or the
boosted models) and they do not depend on the speed model: only the decision does. So the speeds
live inside a cell, which predicts once and decides once per speed, rather than being an axis of
the grid (ten cells per option set would predict the same jobs ten times). The speeds are the
paper's ten linear overheads by default (:data:`PAPER_SPEEDS`).

A worker reads each trace and replays its features once (:data:`FRAMES`, an explicit per-process
memo); the promises, a conservative replay of the jobs up to the end of the evaluated window, are
added once per trace and window when a cell asks for them. ::

    grid = cells(configs(trace, models=("knn", "gbm"), promises=(False, True)), name=CELL_NAME,
                 root_seed=1, paired=True)
    table = sweep_table(grid, run_sweep(advise_cell, grid))    # one row per cell x speed scenario

Configuration keys (all JSON): ``trace`` (a path or registry name, read by every worker), ``model``,
``promises``, ``weights``, ``k``, ``width``, ``cutoff``, ``label`` (as :func:`broker.advisor.evaluate.evaluate`
takes them), ``search_iterations``, ``tune``, ``skip``, ``evaluate``, ``count`` (the protocol), ``speeds``
(``"linear:O"`` or ``"table:FILE"`` each) and, only when ``"keep"``, ``cancelled`` (the entries cancelled while
queued kept, :mod:`broker.advisor.features`; absent, they are dropped, so the cells of before keep their keys).
The cell's seed seeds the weight search and the boosting.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from broker.advisor.decide import PAPER_OVERHEADS, LinearSpeed, TableSpeed
from broker.advisor.evaluate import LABELS_OF_WAIT, MODELS, WEIGHTS, Protocol, Speed, evaluate
from broker.advisor.features import CANCELLED, submission_features
from broker.advisor.promises import with_promises
from broker.sweep import Cell, Memo, bounded
from workloads.cache import load_trace
from workloads.errors import ConfigError, InputError
from workloads.jobs import FilterReport
from workloads.swf import site_size

#: The version of the cells' meaning (part of every cell's key): bump it when a cell computes something else.
CELL_NAME = "advisor-v4"
#: The paper's ten speed scenarios, as cells name them.
PAPER_SPEEDS = tuple(f"linear:{o:g}" for o in PAPER_OVERHEADS)
#: A cell's options (besides the trace, the protocol and the speeds), in the tidy table's order.
OPTIONS = ("model", "promises", "weights", "k", "width", "cutoff", "label")
#: Per-cell figures copied to each of the cell's rows (NaN when the cell has none).
CELL_FIGURES = ("rmse_wait_s", "rmse_run_s", "rmse_wait_promises_alone_s", "cutoff_used", "rmse_wait_ran_s",
                "evaluated_jobs", "cancelled_evaluated")
#: A scenario's figures, as :class:`broker.advisor.evaluate.Scenario` names them.
SCENARIO_FIGURES = ("s", "jobs_to_cloud", "jobs_local", "saved_time_s", "no_cutoff_jobs_to_cloud",
                    "no_cutoff_saved_time_s", "oracle_jobs_to_cloud", "oracle_saved_time_s")

#: The feature frames this process has built for cells (at most four: a trace with and without promises, twice).
FRAMES: Memo[tuple[pd.DataFrame, FilterReport]] = Memo(size=4)


def speed_of(text: str) -> Speed:
    """A speed model from ``linear:O`` (the overhead ``o`` per processor) or ``table:FILE`` (a CSV ``procs,ratio``)."""
    kind, _, value = text.partition(":")
    if kind == "linear":
        try:
            return LinearSpeed(float(value))
        except ValueError:
            raise ConfigError(f"speed {text!r}: use linear:O with a number O >= 0, e.g. linear:0.1") from None
    if kind == "table" and value:
        try:
            return TableSpeed.read(value)
        except OSError as exc:
            raise InputError(f"speed {text!r}: {exc}") from exc
    raise ConfigError(f"speed {text!r}: use linear:O or table:FILE (a CSV procs,ratio)")


def trace_features(trace: str, lenient: bool = False, cancelled: str = "drop") -> tuple[pd.DataFrame, FilterReport]:
    """The advisor's features of every replayable job of ``trace`` and what the replay removed, once per process.

    The machine is the site's size (:func:`workloads.swf.site_size`: the header's MaxProcs, else MaxNodes, else
    the widest job); its start time and time zone place the weekday and the time of day. ``lenient`` skips the
    trace's lines that cannot be parsed; ``cancelled`` keeps or drops the jobs cancelled while queued.
    """
    def build() -> tuple[pd.DataFrame, FilterReport]:
        swf = load_trace(trace, lenient=lenient)
        machine, _ = site_size(swf)
        if not machine:
            raise ConfigError(f"{trace}: the trace gives no MaxProcs, no MaxNodes and no processor count (the "
                              "machine's size the features need)")
        return submission_features(swf.frame, max_procs=machine, unix_start=swf.header.unix_start_time,
                                   time_zone=swf.header.time_zone_string, cancelled=cancelled)

    return FRAMES.get(("features", trace, lenient, cancelled), build)


def trace_frame(trace: str, promise_rows: int | None = None, lenient: bool = False,
                cancelled: str = "drop") -> pd.DataFrame:
    """The features of ``trace`` (:func:`trace_features`), with the promises of its first ``promise_rows`` jobs."""
    frame, report = trace_features(trace, lenient, cancelled)
    if promise_rows is None:
        return frame

    def build() -> tuple[pd.DataFrame, FilterReport]:
        swf = load_trace(trace, lenient=lenient)
        return with_promises(frame, swf.frame, int(site_size(swf)[0] or 0), promise_rows), report

    return FRAMES.get(("promises", trace, promise_rows, lenient, cancelled), build)[0]


def configs(trace: str, *, models: Iterable[str] = ("knn",), promises: Iterable[bool] = (False,),
            weights: Iterable[str] = ("correlation",), k: Iterable[int] = (20,), width: Iterable[float] = (0.1,),
            cutoff: Iterable[bool] = (True,), label: Iterable[str] = ("log",), protocol: Protocol | None = None,
            speeds: Sequence[str] = PAPER_SPEEDS, search_iterations: int = 20,
            lenient: bool = False, cancelled: str = "drop") -> list[dict[str, Any]]:
    """The cells' configurations: the product of the options (in :data:`OPTIONS` order), each with every speed.

    Raises :class:`~workloads.errors.ConfigError` for an unknown model or weighting, ``k < 1``, a width
    that is not a finite number > 0, no speed, or ``cancelled`` neither keep nor drop.
    """
    if cancelled not in CANCELLED:
        raise ConfigError(f"cancelled must be one of {', '.join(CANCELLED)}, got {cancelled!r}")
    protocol = protocol or Protocol()
    axes: dict[str, list[Any]] = {"model": list(models), "promises": list(promises), "weights": list(weights),
                                  "k": list(k), "width": list(width), "cutoff": list(cutoff), "label": list(label)}
    _check_options(axes, speeds=speeds, search_iterations=search_iterations)
    bounded(math.prod(len(axes[name]) for name in OPTIONS),
            "the grid (" + " x ".join(f"{len(axes[name]):,} {name}" for name in OPTIONS) + ")")
    base = {"trace": trace, **({"lenient": True} if lenient else {}), **({"cancelled": "keep"} if cancelled == "keep"
                                                                         else {}),
            "tune": protocol.tune, "skip": protocol.skip,
            "evaluate": protocol.evaluate, "count": protocol.count, "speeds": list(speeds),
            "search_iterations": search_iterations}
    return [{**base, **dict(zip(OPTIONS, values, strict=True))}
            for values in itertools.product(*(axes[name] for name in OPTIONS))]


def _check_options(axes: Mapping[str, list[Any]], *, speeds: Sequence[str], search_iterations: int) -> None:
    empty = [name for name in OPTIONS if not axes[name]]
    if empty:
        raise ConfigError(f"{empty[0]}: give at least one value")
    if not speeds:
        raise ConfigError("speeds: give at least one speed model")
    for name, known in (("model", MODELS), ("weights", WEIGHTS), ("label", LABELS_OF_WAIT)):
        unknown = [v for v in axes[name] if v not in known]
        if unknown:
            raise ConfigError(f"{name} must be one of {', '.join(known)}, got {unknown[0]!r}")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in axes["k"]):
        raise ConfigError(f"k must be integers >= 1, got {axes['k']}")
    if any(isinstance(w, bool) or not (isinstance(w, int | float) and math.isfinite(w) and w > 0)
           for w in axes["width"]):
        raise ConfigError(f"width must be finite numbers > 0, got {axes['width']}")
    if any(not isinstance(v, bool) for v in (*axes["promises"], *axes["cutoff"])):
        raise ConfigError("promises and cutoff must be true or false")
    if search_iterations < 1:
        raise ConfigError(f"search_iterations must be at least 1, got {search_iterations}")


def advise_cell(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One configuration of the advisor over all its speeds, as a sweep cell: the evaluation's ``to_dict()``.

    A pure function of the configuration (module docstring), the seed and the trace it names.
    """
    protocol = Protocol(tune=int(config["tune"]), skip=int(config["skip"]), evaluate=int(config["evaluate"]),
                        count=str(config.get("count", "entries")))
    promises, label = bool(config["promises"]), str(config.get("label", "log"))
    trace, lenient, cancelled = str(config["trace"]), bool(config.get("lenient")), str(config.get("cancelled", "drop"))
    frame = trace_frame(trace, replayed_rows(protocol, trace, lenient, cancelled) if promises or label == "replay"
                        else None, lenient, cancelled)
    result = evaluate(frame, [speed_of(s) for s in config["speeds"]], protocol=protocol, k=int(config["k"]),
                      width=float(config["width"]), cutoff=bool(config["cutoff"]), model=str(config["model"]),
                      promises=promises, weights=str(config["weights"]), label=label,
                      search_iterations=int(config.get("search_iterations", 20)), seed=seed)
    return result.to_dict()


def replayed_rows(protocol: Protocol, trace: str, lenient: bool = False, cancelled: str = "drop") -> int:
    """The replayable jobs of ``trace`` up to the end of ``protocol``'s window (the rows the replay must give)."""
    if protocol.count == "jobs":
        return protocol.skip + protocol.evaluate
    return int(protocol.rows(trace_features(trace, lenient, cancelled)[0])[1][-1]) + 1


def sweep_table(cells: Sequence[Cell], results: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per cell x speed scenario: the cell's options, protocol, seed and figures, then the scenario's.

    ``options`` labels each cell by the options that vary across the sweep (all of them when none
    does); ``log_alpha``, ``beta`` and ``s_max`` are the cell's fitted cutoff (NaN: no limit of that kind).
    """
    labels = option_labels([c.config for c in cells])
    rows: list[dict[str, Any]] = []
    for cell, result, label in zip(cells, results, labels, strict=True):
        c = cell.config
        head = {"options": label, "trace": c["trace"], **{k: c[k] for k in OPTIONS},
                **{k: c[k] for k in ("tune", "skip", "evaluate", "count")}, "seed": cell.seed,
                **{k: result.get(k, math.nan) for k in CELL_FIGURES},
                "log_alpha": _number(result["cutoff"]["log_alpha"]), "beta": result["cutoff"]["beta"],
                "s_max": _number(result["cutoff"].get("s_max"))}
        rows.extend({**head, "scenario": scenario["name"], **{k: scenario[k] for k in SCENARIO_FIGURES}}
                    for scenario in result["scenarios"])
    return pd.DataFrame(rows, columns=["options", "trace", *OPTIONS, "tune", "skip", "evaluate", "count", "seed",
                                       *CELL_FIGURES, "log_alpha", "beta", "s_max", "scenario", *SCENARIO_FIGURES])


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def option_labels(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """A short label per configuration: its options that vary across ``configs`` (all when none varies)."""
    keys = [*OPTIONS, "trace", "tune", "skip", "evaluate", "count"]
    varied = [k for k in keys if len({repr(c[k]) for c in configs}) > 1] or list(OPTIONS)
    return [", ".join(_option_text(k, c[k]) for k in varied) for c in configs]


def _option_text(key: str, value: Any) -> str:
    if key in ("promises", "cutoff"):
        return f"{key} {'on' if value else 'off'}"
    if key == "model":
        return str(value)
    if key == "trace":
        return Path(str(value)).name
    return f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
