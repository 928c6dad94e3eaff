"""Feature weights by correlation (by hand) and by a seeded global search that finds the informative feature."""

from __future__ import annotations

import numpy as np
import pytest

from broker.advisor.tuning import K_RANGE, correlation_weights, online_rmse, search
from workloads.errors import ConfigError


def test_correlation_weights_by_hand() -> None:
    y = np.array([1.0, 1.0, 3.0, 3.0])
    X = np.column_stack([2 * y + 1, -y, np.full(4, 7.0), [0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 2, 2]])
    w = correlation_weights(X, y, categorical=[3, 4, 5])
    # |r| = 1 for y's line and its mirror, 0 for a constant; eta = 1 when the category decides y, 0 when not;
    # for groups {1}, {1}, {3, 3}: between-group sum 1 * 1 + 1 * 1 + 2 * 1 = 4 over a total of 4
    np.testing.assert_allclose(w, [1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    assert correlation_weights(X, np.ones(4), categorical=[3]).tolist() == [0.0] * 6  # nothing to explain
    half = correlation_weights(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0.0, 2.0, 1.0, 3.0]))
    assert half[0] == pytest.approx(0.8)  # r of (0, 1, 2, 3) and (0, 2, 1, 3): 4 / 5


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(7)
    n = 240
    X = np.column_stack([rng.uniform(size=n), rng.uniform(size=n)])  # column 0 decides the label, 1 is noise
    y = 100.0 * X[:, 0] + rng.normal(scale=1.0, size=n)
    return X, y, np.arange(n) + 1, np.arange(160, n)  # every label known from the next query on


def test_the_search_weights_the_informative_feature_and_is_repeatable(problem) -> None:
    X, y, first, queries = problem
    found = search(X, y, first, queries, [], fit_rows=160, seed=3, maxiter=4, popsize=4)
    assert found.weights[0] > found.weights[1] and K_RANGE[0] <= found.k <= K_RANGE[1]
    noise_only = online_rmse(X, y, first, queries, [], np.array([0.0, 1.0]), found.k, found.width, 160)
    assert found.rmse == pytest.approx(online_rmse(X, y, first, queries, [], found.weights, found.k, found.width,
                                                   160))
    assert found.rmse < noise_only / 3
    again = search(X, y, first, queries, [], fit_rows=160, seed=3, maxiter=4, popsize=4)
    assert (again.weights.tolist(), again.k, again.width, again.rmse) == (found.weights.tolist(), found.k,
                                                                          found.width, found.rmse)
    assert found.evaluations == again.evaluations > 0


def test_a_bad_width_range_is_refused(problem) -> None:
    X, y, first, queries = problem
    with pytest.raises(ConfigError, match="width_range"):
        search(X, y, first, queries, [], fit_rows=160, seed=0, width_range=(1.0, 0.5))
