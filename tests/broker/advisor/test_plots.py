"""The advisor's figures draw the data they are given: bar heights, clipped points, the cutoff's line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from broker.advisor.decide import Cutoff
from broker.advisor.plots import cutoff_line, predictions, saved_time

SCENARIOS = ["linear:0.1", "linear:1", "linear:10"]


def table(options: str, cutoff: bool, fitted: bool, saved: list[float]) -> pd.DataFrame:
    """A tidy table's rows for one option set (saved times in seconds; the other two series derived)."""
    return pd.DataFrame({"options": options, "cutoff": cutoff, "cutoff_used": fitted, "scenario": SCENARIOS,
                         "s": [0.1, 1.0, 10.0], "saved_time_s": saved,
                         "no_cutoff_saved_time_s": [v - 3600.0 for v in saved],
                         "oracle_saved_time_s": [v + 7200.0 for v in saved]})


def test_saved_time_draws_a_panel_per_option_set_with_bars_of_the_saved_hours() -> None:
    rows = pd.concat([table("knn", True, True, [36_000.0, 7200.0, 0.0]),
                      table("knn, cutoff off", False, False, [3600.0, -3600.0, -72_000.0]),
                      table("gbm", True, False, [18_000.0, 0.0, 0.0])], ignore_index=True)
    fig = saved_time(rows, title="KTH")
    assert isinstance(fig, Figure) and fig.get_suptitle() == "KTH"
    first, second, third = fig.axes
    assert [c.get_label() for c in first.containers] == ["advisor with the cutoff", "advisor without the cutoff",
                                                         "oracle"]
    heights = [[bar.get_height() for bar in c] for c in first.containers]
    assert heights == [[10.0, 2.0, 0.0], [9.0, 1.0, -1.0], [12.0, 4.0, 2.0]]  # hours
    assert [t.get_text() for t in first.get_xticklabels()] == ["0.1", "1", "10"] and first.get_title() == "knn"
    # cells run without the cutoff have no "with the cutoff" bars
    assert [c.get_label() for c in second.containers] == ["advisor without the cutoff", "oracle"]
    assert [bar.get_height() for bar in second.containers[0]] == [0.0, -2.0, -21.0]
    assert third.get_title() == "gbm (the tuning entries fitted no cutoff)"
    assert all(ax.get_ylabel() == "saved time (h)" for ax in fig.axes)


def test_predictions_are_drawn_log_log_with_times_below_a_second_at_one() -> None:
    jobs = pd.DataFrame({"wait_s": [0.0, 10.0, 1000.0], "wait_pred_s": [5.0, 0.0, 2000.0],
                         "run_s": [60.0, 0.5, 7200.0], "run_pred_s": [30.0, 100.0, 3600.0]})
    fig = predictions(jobs)
    wait, run = fig.axes
    assert wait.get_xscale() == wait.get_yscale() == run.get_xscale() == "log"
    points = next(c for c in wait.collections if isinstance(c, PathCollection))
    assert points.get_offsets().tolist() == [[1.0, 5.0], [10.0, 1.0], [1000.0, 2000.0]]
    run_points = next(c for c in run.collections if isinstance(c, PathCollection))
    assert run_points.get_offsets().tolist() == [[60.0, 30.0], [1.0, 100.0], [7200.0, 3600.0]]
    diagonal = wait.get_lines()[0]
    assert diagonal.get_label() == "prediction = actual" and list(diagonal.get_xdata()) == list(diagonal.get_ydata())
    assert "wait" in wait.get_xlabel() and "run time" in run.get_ylabel()


def points() -> pd.DataFrame:
    """Hits of small variance, misses of large variance; one point without a usable variance."""
    return pd.DataFrame({"scenario": ["a", "a", "a", "b", "b", "b"], "s": [0.1, 0.1, 0.1, 1.0, 1.0, 1.0],
                         "variance": [math.exp(10), math.exp(20), 0.0, math.exp(12), math.exp(22), math.exp(14)],
                         "hit": [True, False, True, True, False, True]})


def test_the_cutoff_line_is_ln_alpha_plus_beta_s_over_hits_and_misses() -> None:
    cutoff = Cutoff(log_alpha=18.0, beta=-2.0)
    fig = cutoff_line(points(), cutoff, jitter=0.0)
    ax = fig.axes[0]
    hits, misses = (c for c in ax.collections if isinstance(c, PathCollection))
    assert hits.get_label().startswith("hit") and misses.get_label().startswith("miss")
    assert hits.get_offsets().tolist() == [[0.1, 10.0], [1.0, 12.0], [1.0, 14.0]]  # the 0 variance is left out
    assert misses.get_offsets().tolist() == [[0.1, 20.0], [1.0, 22.0]]
    line = ax.get_lines()[0]
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert (x[0], x[-1]) == pytest.approx((0.1, 1.0)) and y == pytest.approx(18.0 - 2.0 * x)
    assert ax.get_xscale() == "log" and ax.get_title() == "the cutoff over the tuning entries"


def test_jitter_spreads_misses_left_and_hits_right_of_their_speed() -> None:
    ax = cutoff_line(points(), Cutoff(), jitter=0.04, seed=1).axes[0]
    hits, misses = (np.asarray(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    assert ((hits[:, 0] >= [0.1, 1.0, 1.0]) & (hits[:, 0] <= np.array([0.1, 1.0, 1.0]) * 10**0.04)).all()
    assert ((misses[:, 0] <= [0.1, 1.0]) & (misses[:, 0] >= np.array([0.1, 1.0]) / 10**0.04)).all()
    assert ax.get_lines() == [] and ax.get_title().endswith("(no cutoff fitted)")


def test_the_variance_axis_starts_at_the_first_percentile_and_counts_the_points_below() -> None:
    many = pd.DataFrame({"scenario": "a", "s": 0.5, "variance": np.exp(np.r_[-120.0, np.linspace(10, 20, 199)]),
                         "hit": True})
    ax = cutoff_line(many, Cutoff(log_alpha=15.0, beta=0.0), jitter=0.0).axes[0]
    assert ax.get_ylim()[0] > 0 and ax.get_title().endswith("(1 point below the axis)")
    assert ax.get_xscale() == "log"
    negative = many.assign(s=np.r_[0.0, np.full(199, 0.5)])
    assert cutoff_line(negative, Cutoff(), jitter=0.0).axes[0].get_xscale() == "symlog"
