"""Elastic-pool figures as matplotlib objects (no file I/O here: the CLI and notebooks save or show them).

The paper's Figure 9: the pool's cores over time and its utilization over time, one line per run,
and the distribution of interactive jobs' responsiveness (its Figures 4 and 8).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

DAY = 86400.0


def utilization_curve(jobs: pd.DataFrame, periods: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """``U(t)``: work of the jobs ended by ``t`` over the pool's core-seconds from its start to ``t`` (0 before any)."""
    order = np.argsort(jobs["end"].to_numpy(), kind="stable")
    ends = jobs["end"].to_numpy()[order]
    work = np.concatenate([[0.0], np.cumsum(jobs["runtime"].to_numpy()[order])])
    done = work[np.searchsorted(ends, times, side="right")]
    core_s = core_seconds_to(periods, times)
    return np.divide(done, core_s, out=np.zeros_like(done), where=core_s > 0)


def core_seconds_to(periods: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """The pool's core-seconds from its start to each of ``times``."""
    start, stop, cores = (periods[c].to_numpy() for c in ("start_s", "end_s", "cores"))
    inside = np.clip(times[:, None], start[None, :], stop[None, :]) - start[None, :]
    return (inside * cores[None, :]).sum(axis=1)


def cores_and_utilization(runs: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], *, title: str = "",
                          points: int = 400) -> Figure:
    """Left: the pool's mean cores per interval (``points`` intervals); right: utilization so far.

    ``runs``: label -> (jobs table, pool periods). A size can change every 15 minutes, which over
    weeks is a blur: the left panel averages it over intervals of span / ``points``.
    """
    fig = Figure(figsize=(11, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    t0 = min(float(periods["start_s"].iloc[0]) for _, periods in runs.values())
    for label, (jobs, periods) in runs.items():
        times = np.linspace(float(periods["start_s"].iloc[0]), float(periods["end_s"].iloc[-1]), points + 1)
        mean_cores = np.diff(core_seconds_to(periods, times)) / np.diff(times)
        left.step((times[:-1] - t0) / DAY, mean_cores, where="post", label=label, linewidth=0.9)
        right.plot((times[1:] - t0) / DAY, utilization_curve(jobs, periods, times[1:]), label=label, linewidth=0.9)
    left.set_xlabel("days")
    left.set_ylabel("cores in the pool (interval mean)")
    right.set_xlabel("days")
    right.set_ylabel("utilization so far")
    right.set_ylim(0, 1.05)
    left.legend(fontsize="small")
    fig.suptitle(title or "the pool over time")
    return fig


def responsiveness_cdf(runs: Mapping[str, pd.DataFrame], *, title: str = "") -> Figure:
    """``P(W > x)`` of the counted interactive jobs, one line per run (``runs``: label -> jobs table)."""
    fig = Figure(figsize=(6, 3.8), layout="constrained")
    ax = fig.add_subplot()
    for label, jobs in runs.items():
        w = np.sort(jobs.loc[jobs["counted"] & jobs["interactive"], "w"].to_numpy())
        if len(w):
            ax.step(w, 1.0 - np.arange(1, len(w) + 1) / len(w), where="post", label=label)
    ax.set_xlabel("responsiveness W")
    ax.set_ylabel("P(W > x), interactive jobs")
    ax.legend(fontsize="small")
    ax.set_title(title or "responsiveness of interactive jobs")
    return fig
