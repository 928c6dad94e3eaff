"""Gradient boosting beside k-NN: leak-free blocks, a spread from two quantiles, repeatable."""

from __future__ import annotations

import numpy as np
import pytest

from broker.advisor.boosting import _codes, predict_boosted
from workloads.errors import ConfigError


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    n = 900
    X = np.column_stack([rng.integers(0, 4, n), rng.uniform(0, 10, n), rng.uniform(0, 10, n)])
    y = 100.0 * X[:, 0] + 20.0 * X[:, 1] + rng.normal(scale=5.0, size=n)  # category and column 1 matter
    return X, y, np.arange(n) + 1


def test_predictions_follow_the_signal_with_a_finite_spread(problem) -> None:
    X, y, first = problem
    got = predict_boosted(X, y, first, np.arange(600, 900), [0], refit_every=100, max_iter=60)
    error = got.mean - y[600:]
    assert np.sqrt(np.mean(error**2)) < 0.2 * y[600:].std()
    assert np.all(np.isfinite(got.std)) and np.all(got.std >= 0) and 2 < np.median(got.std) < 30


def test_a_block_learns_only_what_its_first_query_knew(problem) -> None:
    X, y, first = problem
    queries = np.arange(600, 800)
    before = predict_boosted(X, y, first, queries, [0], refit_every=100, max_iter=30)
    changed = y.copy()
    changed[650:] = -1e6  # known to later queries of the first block, but not to its first query (600)
    changed[600:650] = 5e5
    after = predict_boosted(X, changed, first, queries, [0], refit_every=100, max_iter=30)
    np.testing.assert_array_equal(after.mean[:100], before.mean[:100])  # block 600..699 fitted on rows < 600
    assert not np.array_equal(after.mean[100:], before.mean[100:])  # block 700..799 knows rows 600..699
    again = predict_boosted(X, y, first, queries, [0], refit_every=100, max_iter=30)
    np.testing.assert_array_equal(again.mean, before.mean)
    np.testing.assert_array_equal(again.std, before.std)


def test_too_little_past_predicts_nothing_and_bad_arguments_are_refused(problem) -> None:
    X, y, first = problem
    got = predict_boosted(X, y, first, np.array([10, 20]), [0], min_rows=50)
    assert np.isnan(got.mean).all() and (got.std == np.inf).all()
    with pytest.raises(ConfigError, match="ascending"):
        predict_boosted(X, y, first, np.array([700, 600]), [0])
    with pytest.raises(ConfigError, match="refit_every"):
        predict_boosted(X, y, first, np.array([700]), [0], refit_every=0)


def test_categories_are_coded_by_first_appearance() -> None:
    X = np.array([[7.0, 1.5], [3.0, 2.5], [7.0, 0.5], [9.0, 1.0]])
    assert _codes(X, np.array([True, False])).tolist() == [[0.0, 1.5], [1.0, 2.5], [0.0, 0.5], [2.0, 1.0]]
