"""Advisor figures as matplotlib objects (no file I/O here: the CLI and notebooks save or show them).

Saved time per speed scenario with the cutoff, without it and for the oracle (the paper's
Figure 4, as grouped bars), predictions against actuals (log-log) for the wait and the run time,
and the cutoff line ``C(s)`` in ``(s, ln sigma^2)`` over the tuning entries that were hits and misses.
"""

from __future__ import annotations

import math
from pathlib import PurePath

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from broker.advisor.decide import Cutoff

HOUR = 3600.0
#: The bars of each scenario: (column of the tidy table, label).
BARS = (("saved_time_s", "advisor with the cutoff"), ("no_cutoff_saved_time_s", "advisor without the cutoff"),
        ("oracle_saved_time_s", "oracle"))


def saved_time(table: pd.DataFrame, *, title: str = "") -> Figure:
    """Saved time (h) per speed scenario, one panel per option set (``options`` of the sweep's tidy table).

    Each scenario has a bar for the advisor with the cutoff (left out where the cells ran without
    one), without it, and for the oracle. A panel whose cells asked for the cutoff but whose tuning
    entries fitted none says so: its first two bars are then equal.
    """
    groups = list(table.groupby("options", sort=False)) if "options" in table else [("advisor", table)]
    fig = Figure(figsize=(max(7.0, 0.75 * table["scenario"].nunique() + 2), 3.2 * len(groups)), layout="constrained")
    axes = fig.subplots(len(groups), 1, squeeze=False)[:, 0]
    for ax, (label, rows) in zip(axes, groups, strict=True):
        _bars(ax, rows)
        ax.set_title(str(label) + _cutoff_note(rows))
    axes[-1].set_xlabel("speed scenario (linear: the overhead o per processor)")
    if title:
        fig.suptitle(title)
    return fig


def _bars(ax: Axes, rows: pd.DataFrame) -> None:
    with_cutoff = bool(rows["cutoff"].all()) if "cutoff" in rows else True
    bars = [b for b in BARS if with_cutoff or b[0] != "saved_time_s"]
    x, width = np.arange(len(rows)), 0.8 / len(bars)
    for i, (column, label) in enumerate(bars):
        ax.bar(x + (i - (len(bars) - 1) / 2) * width, rows[column].to_numpy() / HOUR, width, label=label)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(x, [_tick(str(name)) for name in rows["scenario"]])
    ax.set_ylabel("saved time (h)")
    ax.legend(fontsize="small")


def _tick(scenario: str) -> str:
    """A scenario's tick: a linear model's overhead, or a table's file name."""
    kind, _, value = scenario.partition(":")
    return value if kind == "linear" else f"{kind}:{PurePath(value).name}"


def _cutoff_note(rows: pd.DataFrame) -> str:
    asked = bool(rows["cutoff"].all()) if "cutoff" in rows else True
    fitted = bool(rows["cutoff_used"].all()) if "cutoff_used" in rows else True
    return " (the tuning entries fitted no cutoff)" if asked and not fitted else ""


def predictions(jobs: pd.DataFrame, *, title: str = "") -> Figure:
    """Predicted against actual wait and run time, log-log, one point per evaluated job (``Evaluation.jobs``).

    Times below 1 s (a wait of 0, a prediction of 0 where nothing was known) are drawn at 1 s.
    """
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    for ax, (label, name) in zip(fig.subplots(1, 2), (("wait_s", "wait"), ("run_s", "run time")), strict=True):
        actual = np.maximum(jobs[label].to_numpy(dtype=float), 1.0)
        predicted = np.maximum(jobs[label.replace("_s", "_pred_s")].to_numpy(dtype=float), 1.0)
        ax.scatter(actual, predicted, s=5, alpha=0.35, label="jobs")
        top = float(max(actual.max(), predicted.max(), 10.0)) if len(actual) else 10.0
        ax.plot([1.0, top], [1.0, top], color="black", linewidth=0.8, label="prediction = actual")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"actual {name} (s, below 1 s at 1 s)")
        ax.set_ylabel(f"predicted {name} (s)")
        ax.set_title(name)
        ax.legend(fontsize="small", loc="upper left")
    if title:
        fig.suptitle(title)
    return fig


def cutoff_line(points: pd.DataFrame, cutoff: Cutoff, *, jitter: float = 0.04, seed: int = 0,
                title: str = "") -> Figure:
    """The cutoff ``ln C(s) = ln alpha + beta s`` over the tuning points (``Evaluation.cutoff_points``).

    A point is a tuning entry a scenario would send to the cloud, at the scenario's ``s`` and its
    wait variance; a hit is one whose move saved time. Points with no finite, positive variance
    (which the fit ignores) are left out. So that a scenario's points do not hide each other, misses
    are spread over up to ``jitter`` of a decade left of their ``s`` and hits right of it (seeded
    with ``seed``; ``jitter=0`` draws every point at its ``s``). ``s`` is on a log scale (symmetric-log,
    linear below 0.01, when some ``s`` is not positive). The variance axis starts at the points' 1st
    percentile: the title counts the points below it. No line when no cutoff was fitted; a cut on
    ``s`` alone (``cutoff.s_max``) is a dashed vertical line.
    """
    usable = points[np.isfinite(points["variance"]) & (points["variance"] > 0)]
    s, hit = usable["s"].to_numpy(dtype=float), usable["hit"].to_numpy(dtype=bool)
    y = np.log(usable["variance"].to_numpy(dtype=float))
    spread = 10.0 ** (jitter * np.random.default_rng(seed).random(len(s)) * np.where(hit, 1.0, -1.0))
    x = np.where(s > 0, s * spread, s)
    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = fig.add_subplot()
    ax.scatter(x[hit], y[hit], s=8, alpha=0.35, marker="o", color="tab:blue", label="hit (the cloud saved time)")
    ax.scatter(x[~hit], y[~hit], s=8, alpha=0.35, marker="x", color="tab:red", label="miss (the cloud lost time)")
    positive = bool(len(s)) and bool((s > 0).all())
    if math.isfinite(cutoff.log_alpha) and len(s):
        low, high = float(s.min()), float(s.max())
        grid = np.geomspace(low, high, 400) if positive and low < high else np.linspace(low, high, 400)
        ax.plot(grid, cutoff.log_alpha + cutoff.beta * grid, color="black",
                label=f"cutoff: ln C(s) = {cutoff.log_alpha:.2f} + ({cutoff.beta:.3g}) s")
    if math.isfinite(cutoff.s_max):
        ax.axvline(cutoff.s_max, color="black", ls="--", label=f"cutoff: nothing sent from s = {cutoff.s_max:.3g}")
    below = 0
    if len(y):
        floor, top = float(np.percentile(y, 1)), float(y.max())
        margin = 0.05 * (top - floor) + 0.5
        ax.set_ylim(floor - margin, top + margin)
        below = int((y < floor - margin).sum())
    if positive:
        ax.set_xscale("log")
    else:
        ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlabel("speed factor s")
    ax.set_ylabel("ln wait variance (s²)")
    ax.legend(fontsize="small")
    fitted = math.isfinite(cutoff.log_alpha) or math.isfinite(cutoff.s_max)
    notes = [n for n in ("" if fitted else "no cutoff fitted",
                         f"{below} point{'' if below == 1 else 's'} below the axis" if below else "") if n]
    ax.set_title((title or "the cutoff over the tuning entries") + (f" ({'; '.join(notes)})" if notes else ""))
    return fig
