"""Policy sweeps for the cloud cluster: cells, grids from a spec, the Pareto front and ``B_c``.

A cell is a pure function of its configuration and seed (:func:`cluster_cell`), so grids run through
:func:`broker.sweep.run_sweep` on one machine, on Dask or on Ray, and resume from a store; a worker
reads each workload once (:data:`WORKLOADS`, an explicit per-process memo). A grid is
described as data (a TOML file for ``cloudbroker cluster sweep``)::

    name = "lpc-egee"
    [workload]                  # trace = a path or registry name, or synthetic = SCALE
    trace = "LPC-EGEE-2004-1.2-cln"
    limit = 20000               # first jobs only (optional)
    volumes = "bytes.csv"       # per-job bytes (optional; workloads/volumes.py), else the volume model
    parallel = "one"            # or "expand": a p-processor job becomes p one-instance tasks
    lenient = false             # skip the trace's lines that cannot be parsed (optional)
    [base]                      # settings every cell shares (names as the CLI's options)
    boot_s = 0
    [[family]]                  # one policy family: the product of its lists, over the base
    name = "P1 cap"
    cap = [10, 50, 100, 500]
    merge = [true, false]

Settings: ``cap`` (a number, or "none"), ``merge``, ``keepalive`` ("fixed:P" | "idle:P" | "load:P[:WINDOW_S]"),
``idle_timeout_min``, ``delay_min``, ``burst_ratio``, ``wait_next_hour_min``, ``charging``
("exact" | "wall-clock"), ``boot_s``. Costs use the ``ec2-2013-cluster`` price book unless the
spec's ``price_book`` names another. Relative paths (trace, volumes) are read from the directory
the sweep runs in, by every worker: run from the same place, or give absolute paths.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from broker.cloudcluster.policies import (
    ClusterPolicy,
    Delay,
    EndOfPeriod,
    IdleTimeout,
    Merged,
    NextHour,
    PerUser,
    StartRule,
    parse_keepalive,
)
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import CloudTerms
from broker.pricing.book import load_price_book
from broker.sweep import Memo, bounded
from workloads.bursty import bursty_workload
from workloads.cache import load_trace
from workloads.errors import InputError
from workloads.htc import HtcJobs, Parallel, htc_view
from workloads.jobs import FilterReport
from workloads.swf import SwfTrace
from workloads.volumes import read_volumes, with_volumes

SETTINGS = ("cap", "merge", "keepalive", "idle_timeout_min", "delay_min", "burst_ratio", "wait_next_hour_min",
            "charging", "boot_s")
CLUSTER_BOOK = "ec2-2013-cluster"
#: The version of the cells' meaning (part of every cell's key, with the spec's name): bump it when a
#: cell computes something else (v2: the summary names ``overhead_mean_s``, ``wait_mean_s``, ...).
CELL_NAME = "cluster-v2"


class SpecError(InputError):
    """A sweep spec that cannot be run; the message names the file and the entry."""


#: The longest delay or idle timeout a setting may give (minutes): a year.
MAX_MINUTES = 525_600.0
#: The number settings and their ranges ``(low, high, high included)``; the CLI's options have the same.
NUMBERS = {"idle_timeout_min": (0.0, MAX_MINUTES, True), "delay_min": (0.0, MAX_MINUTES, True),
           "burst_ratio": (0.0, 1e9, True), "wait_next_hour_min": (0.0, 60.0, False), "boot_s": (0.0, 3600.0, True)}


def check_settings(settings: Mapping[str, Any]) -> None:
    """Refuse a setting of the wrong type or out of its range (``ValueError`` naming it, the value and the range)."""
    for key, value in settings.items():
        if key in NUMBERS and value is not None:
            low, high, closed = NUMBERS[key]
            number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            if not (number and low <= value and (value <= high if closed else value < high)):
                raise ValueError(f"{key} must be a number in [{low:g}, {high:g}{']' if closed else ')'}, "
                                 f"got {value!r}")
    cap = settings.get("cap")
    if cap not in (None, "none") and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
        raise ValueError(f"cap must be an integer >= 1 or \"none\", got {cap!r}")
    if not isinstance(settings.get("merge", True), bool):
        raise ValueError(f"merge must be true or false, got {settings['merge']!r}")
    for key in ("keepalive", "charging"):
        if settings.get(key) is not None and not isinstance(settings[key], str):
            raise ValueError(f"{key} must be a string, got {settings[key]!r}")


def policy_of(settings: Mapping[str, Any]) -> ClusterPolicy:
    """The :class:`ClusterPolicy` of a cell's settings (minutes as in the CLI), checked (:func:`check_settings`)."""
    check_settings(settings)
    delay, hold = (float(settings.get(k) or 0.0) * 60.0 for k in ("delay_min", "wait_next_hour_min"))
    keep, timeout, ratio, cap = (settings.get(k) for k in ("keepalive", "idle_timeout_min", "burst_ratio", "cap"))
    start: list[StartRule] = []
    if delay or ratio is not None:
        start.append(Delay(delay, burst_ratio=None if ratio is None else float(ratio)))
    if hold:
        start.append(NextHour(hold))
    return ClusterPolicy(cap=None if cap in (None, "none") else int(cap),
                         pools=Merged() if settings.get("merge", True) else PerUser(),
                         keepalive=parse_keepalive(keep) if keep else None, start=tuple(start),
                         release=EndOfPeriod() if timeout is None else IdleTimeout(float(timeout) * 60.0))


def terms_of(settings: Mapping[str, Any], book_name: str = CLUSTER_BOOK) -> CloudTerms:
    """The :class:`CloudTerms` of a cell's settings: the book's first instance type on demand, its egress tiers."""
    charging = settings.get("charging", "exact")
    if charging not in ("exact", "wall-clock"):
        raise ValueError(f"charging must be exact or wall-clock, got {charging!r}")
    return CloudTerms.from_book(load_price_book(book_name), charging=charging,
                                boot=float(settings.get("boot_s", 0.0)))


#: The workloads this process has built for cells, by their description (at most four).
WORKLOADS: Memo[tuple[HtcJobs, FilterReport]] = Memo(size=4)


def workload_of(trace: str | None, synthetic: float | None, limit: int | None, seed: int,
                volumes: str | None = None, parallel: str = "one", *, lenient: bool = False,
                swf: SwfTrace | None = None) -> tuple[HtcJobs, FilterReport]:
    """The jobs of a cell and what the HTC view removed, built once per process (:data:`WORKLOADS`).

    ``volumes``: a CSV of per-job bytes (:mod:`workloads.volumes`) used instead of the volume model;
    ``parallel``: "one" instance per job, or "expand" a p-processor job into p one-instance tasks;
    ``lenient``: skip the trace's lines that cannot be parsed; ``swf``: ``trace`` already read (not memoised).
    """
    if parallel not in ("one", "expand"):
        raise ValueError(f"parallel must be 'one' or 'expand', got {parallel!r}")
    if swf is not None:
        return _build_workload(trace, synthetic, limit, seed, volumes, parallel, lenient, swf)
    key = (trace, synthetic, limit, seed, volumes, parallel, lenient)
    return WORKLOADS.get(key, lambda: _build_workload(trace, synthetic, limit, seed, volumes, parallel, lenient))


def _build_workload(trace: str | None, synthetic: float | None, limit: int | None, seed: int,
                    volumes: str | None, parallel: str, lenient: bool,
                    swf: SwfTrace | None = None) -> tuple[HtcJobs, FilterReport]:
    mode: Parallel = "one" if parallel == "one" else "expand"
    if trace is not None:
        swf = swf if swf is not None else load_trace(trace, lenient=lenient)
        frame = swf.frame if volumes is None else with_volumes(swf.frame, read_volumes(volumes))
        jobs, report = htc_view(frame, origin=swf.header.unix_start_time or 0, seed=seed, parallel=mode)
    else:
        jobs, report = htc_view(bursty_workload(synthetic or 1.0, seed=seed), seed=seed)
    return (jobs.head(limit) if limit else jobs), report


def cluster_cell(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One run as a sweep cell; returns the run's summary.

    ``config`` has ``workload`` (trace | synthetic, limit, seed), the settings and optionally
    ``price_book``; ``seed`` drives the keep-alive draws.
    """
    w = config["workload"]
    jobs, _ = workload_of(w.get("trace"), w.get("synthetic"), w.get("limit"), int(w.get("seed", 0)), w.get("volumes"),
                          w.get("parallel", "one"), lenient=bool(w.get("lenient")))
    result = simulate_cluster(jobs, policy_of(config), terms_of(config, config.get("price_book", CLUSTER_BOOK)),
                              seed=seed)
    return result.summary.to_dict()


def grid(spec: Mapping[str, Any], *, source: str = "<spec>") -> list[dict[str, Any]]:
    """The cells' configurations of a spec (module docstring), family by family, each tagged ``family``."""
    workload = spec.get("workload")
    if not isinstance(workload, dict) or ("trace" in workload) == ("synthetic" in workload):
        raise SpecError(f"{source}: [workload] needs exactly one of 'trace' or 'synthetic'")
    problem = _workload_problem(workload)
    if problem:
        raise SpecError(f"{source}: [workload]: {problem}")
    base = dict(spec.get("base", {}))
    families = spec.get("family")
    if not isinstance(families, list) or not families:
        raise SpecError(f"{source}: no [[family]] tables")
    sizes = [math.prod(len(v) if isinstance(v, list) else 1 for k, v in f.items() if k != "name")
             for f in families if isinstance(f, dict)]
    each = f" ({' + '.join(f'{n:,}' for n in sizes)})" if len(sizes) > 1 else ""
    bounded(sum(sizes), f"{source}: the [[family]] grids{each}")
    configs = []
    for i, family in enumerate(families):
        name = family.get("name", f"family {i + 1}")
        axes = {k: (v if isinstance(v, list) else [v]) for k, v in family.items() if k != "name"}
        for key in [*base, *axes]:
            if key not in SETTINGS:
                raise SpecError(f"{source}: family[{i}] ({name}): unknown setting {key!r}; "
                                f"known: {', '.join(SETTINGS)}")
        empty = [key for key, options in axes.items() if not options]
        if empty:
            raise SpecError(f"{source}: family[{i}] ({name}): setting {empty[0]!r} has no values (an empty list)")
        for values in itertools.product(*axes.values()):
            settings = {**base, **dict(zip(axes, values, strict=True))}
            config = {"family": name, "workload": workload, **settings}
            if "price_book" in spec:
                config["price_book"] = spec["price_book"]
            try:
                policy_of(settings), terms_of(settings, spec.get("price_book", CLUSTER_BOOK))
            except ValueError as e:
                raise SpecError(f"{source}: family[{i}] ({name}): {settings}: {e}") from e
            configs.append(config)
    return configs


def _workload_problem(w: Mapping[str, Any]) -> str | None:
    """What is wrong with a spec's ``[workload]`` table, or None."""
    def integer(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    known = {"trace", "synthetic", "limit", "seed", "volumes", "parallel", "lenient"}
    unknown = sorted(set(w) - known)
    if unknown:
        return f"unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}"
    checks = [
        ("trace", lambda v: isinstance(v, str) and v != "", "a path or registry name"),
        ("volumes", lambda v: isinstance(v, str) and v != "", "a path"),
        ("synthetic", lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0,
         "a scale > 0"),
        ("limit", lambda v: integer(v) and v >= 1, "an integer >= 1"),
        ("seed", lambda v: integer(v) and v >= 0, "an integer >= 0"),
        ("parallel", lambda v: v in ("one", "expand"), '"one" or "expand"'),
        ("lenient", lambda v: isinstance(v, bool), "true or false"),
    ]
    for key, ok, allowed in checks:
        if key in w and not ok(w[key]):
            return f"{key} must be {allowed}, got {w[key]!r}"
    if "volumes" in w and "trace" not in w:
        return "volumes goes with trace"
    return None


def pareto_front(cost: ArrayLike, overhead: ArrayLike) -> np.ndarray:
    """Mask of the points no other point beats on both cost and overhead (lower is better)."""
    c, o = np.asarray(cost, dtype=float), np.asarray(overhead, dtype=float)
    order = np.lexsort((o, c))
    front = np.zeros(len(c), dtype=bool)
    best = np.inf
    for i in order:
        if o[i] < best:
            front[i], best = True, o[i]
    return front


def cap_benefit(caps: ArrayLike, cost: ArrayLike, overhead: ArrayLike) -> np.ndarray:
    """The paper's equation 7 along increasing caps: ``B_c = -(C_c - C_c-1) / (O_c - O_c-1)``.

    0 where the overhead does not change; ``nan`` for the smallest cap.
    """
    order = np.argsort(caps)
    c, o = np.asarray(cost, dtype=float)[order], np.asarray(overhead, dtype=float)[order]
    b = np.full(len(c), np.nan)
    dc, do = np.diff(c), np.diff(o)
    b[1:] = np.where(do != 0, -dc / np.where(do != 0, do, 1.0), 0.0)
    out = np.empty_like(b)
    out[order] = b
    return out


def sweep_table(configs: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per cell: family, settings and summary figures.

    Adds ``pareto`` (on the front of all cells) and ``benefit_bc`` / ``bc_group`` (:func:`with_benefit`).
    """
    rows = [{"family": c["family"], **{k: c.get(k) for k in SETTINGS}, **r} for c, r in zip(configs, results,
                                                                                           strict=True)]
    table = pd.DataFrame(rows)
    table["pareto"] = pareto_front(table["cost"], table["overhead_mean_s"]) if len(table) else []
    return with_benefit(table)


def with_benefit(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``benefit_bc`` (equation 7) along the caps of cells that differ only in their cap.

    ``bc_group`` names each such series: its family and the settings that are not its cap.
    """
    table = table.copy()
    table["benefit_bc"], table["bc_group"] = np.nan, None
    others = [k for k in SETTINGS if k != "cap"]
    capped = table[table["cap"].map(lambda c: c not in (None, "none") and not pd.isna(c))]
    labels = capped.apply(lambda row: ", ".join([str(row["family"])] + [
        f"{k}={row[k]}" for k in others if row[k] is not None and not pd.isna(row[k])]), axis=1)
    for label, rows in capped.groupby(labels, sort=False):
        if len(rows) > 1:
            table.loc[rows.index, "benefit_bc"] = cap_benefit(rows["cap"].astype(float), rows["cost"],
                                                              rows["overhead_mean_s"])
            table.loc[rows.index, "bc_group"] = label
    return table
