"""The run-time estimates (:mod:`broker.elastic.estimate`) by hand: a copy of the median estimates keeps each
class's window apart, an oracle keeps no window."""

from __future__ import annotations

from collections import deque

import numpy as np

from broker.elastic.estimate import RunTimeEstimates


def test_a_copy_keeps_the_batch_window_and_the_interactive_one_apart() -> None:
    # jobs: 0 interactive (100 s); 1, 2, 3 batch (2000, 3000, 5000 s); windows of two jobs per class
    runtime = np.array([100.0, 2000.0, 3000.0, 5000.0])
    est = RunTimeEstimates(runtime, runtime < 900, "median", window=2, prior=900.0)
    for job in (0, 1, 2):
        est.completed(job)
    twin = est.copy()
    twin.completed(3)  # the batch window drops 2000: {3000, 5000}
    assert twin.one(3) == 4000.0 and twin.one(0) == 100.0
    assert est.one(3) == 2500.0  # the original still holds {2000, 3000}


def test_the_median_of_five() -> None:
    runtime = np.array([500.0, 100.0, 400.0, 200.0, 300.0])
    est = RunTimeEstimates(runtime, runtime < 900, "median", window=10, prior=900.0)
    for job in range(5):
        est.completed(job)
    assert est.one(0) == 300.0  # the third of 100, 200, 300, 400, 500


def test_the_defaults_oracle_a_900_s_prior_and_a_window_of_1000() -> None:
    runtime = np.arange(1.0, 1002.0)  # 1001 interactive jobs of 1 .. 1001 s
    interactive = np.ones(1001, dtype=bool)
    assert RunTimeEstimates(runtime, interactive).of(np.array([0, 5])).tolist() == [1.0, 6.0]
    est = RunTimeEstimates(runtime, interactive, "median")
    assert est.one(0) == 900.0
    for job in range(1001):
        est.completed(job)
    assert est.one(0) == 501.5  # the last 1000: 2 .. 1001


def test_a_window_of_one_and_a_prior_of_zero() -> None:
    runtime = np.array([10.0, 20.0])
    est = RunTimeEstimates(runtime, np.ones(2, dtype=bool), "median", window=1, prior=0.0)
    assert est.one(0) == 0.0
    est.completed(0)
    est.completed(1)
    assert est.one(0) == 20.0  # the last one alone


# --- hand-worked edges: an oracle ---------------------------------------------------------------------------------


def test_an_oracle_keeps_no_window() -> None:
    # completions join a class's window with median estimates only: an oracle's medians stay at the prior
    runtime = np.array([100.0, 2000.0])
    est = RunTimeEstimates(runtime, runtime < 900, "oracle", window=2, prior=900.0)
    est.completed(0)
    est.completed(1)
    assert est.median.tolist() == [900.0, 900.0]
    assert est.recent == (deque(), deque()) and est.ordered == ([], [])
    assert est.of(np.array([0, 1])).tolist() == [100.0, 2000.0]
