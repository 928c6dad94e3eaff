"""Feature weights by correlation (by hand) and by a seeded global search that finds the informative feature."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from broker.advisor import tuning
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


def test_the_correlation_ratio_strictly_between_0_and_1_by_hand() -> None:
    # groups {0, 2} and {1, 3}: means 1 and 2 around 1.5, between-group sum 2 * 0.25 + 2 * 0.25 = 1 over a
    # total of 2.25 + 0.25 + 0.25 + 2.25 = 5: eta = sqrt(1 / 5)
    y = np.array([0.0, 2.0, 1.0, 3.0])
    assert correlation_weights(np.array([[0.0], [0.0], [1.0], [1.0]]), y, [0])[0] == pytest.approx(0.2**0.5, rel=1e-15)
    # the same labels 10^7 higher in single precision (exact there) are weighed in double precision
    far = (1e7 + y).astype(np.float32)
    assert correlation_weights(np.array([[0.0], [0.0], [1.0], [1.0]]), far, [0])[0] == pytest.approx(0.2**0.5,
                                                                                                     rel=1e-12)


def test_a_weight_is_never_above_1_even_by_rounding() -> None:
    # a category that decides y: eta is 1, but in floating point the between-group sum comes out
    # above the total (sqrt gives 1.0000000000000002); the weight is clipped to exactly 1
    X, y = np.array([[0.0], [0.0], [0.0], [2.0]]), np.array([0.2, 0.2, 0.2, 0.1])
    assert correlation_weights(X, y, [0]).tolist() == [1.0]


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


@pytest.mark.parametrize("width_range", [(1.0, 0.5), (0.5, 0.5), (0.0, 1.0), (-1.0, 1.0)])
def test_a_bad_width_range_is_refused(problem, width_range) -> None:
    X, y, first, queries = problem
    with pytest.raises(ConfigError, match="width_range must be 0 < low < high"):
        search(X, y, first, queries, [], fit_rows=160, seed=0, width_range=width_range)


def test_the_online_rmse_by_hand_with_a_category_and_an_empty_past() -> None:
    # one column, a category: row 2's value 9 was seen in fitting but differs from both 0 and 10, so
    # rows 0 and 1 are equally far (w) and k = 1 takes the earlier, row 0 (label 5) against 7: error 2
    X, y, first = np.array([[0.0], [10.0], [9.0]]), np.array([5.0, 7.0, 7.0]), np.array([1, 2, 3])
    assert online_rmse(X, y, first, np.array([2]), [0], np.array([1.0]), 1, 1.0, 3) == pytest.approx(2.0)
    # as a number, 9 is nearest 10: no error
    assert online_rmse(X, y, first, np.array([2]), [], np.array([1.0]), 1, 1.0, 3) == 0.0
    # row 0 has no past: it counts as predicting 0 against 5
    assert online_rmse(X, y, first, np.array([0]), [0], np.array([1.0]), 1, 1.0, 3) == 5.0
    assert online_rmse(X, y, first, np.array([0, 2]), [0], np.array([1.0]), 1, 1.0, 3) == pytest.approx(
        ((25 + 4) / 2) ** 0.5)


def _recording(monkeypatch, best_k: int) -> list:
    """A stand-in for the k-NN's RMSE, cheap and with a known optimum: k = best_k, weights 0, width 0.01."""
    tried: list = []

    def fake(X, y, first, queries, categorical, weights, k, width, fit_rows):
        cost = 100.0 + (k - best_k) ** 2 + float(np.sum(weights)) + abs(np.log(width / 0.01))
        tried.append((weights.copy(), k, width, cost))
        return cost

    monkeypatch.setattr(tuning, "online_rmse", fake)
    return tried


@pytest.mark.parametrize("best_k", [K_RANGE[0], K_RANGE[1]])
def test_the_search_tries_only_its_ranges_reaches_both_ends_of_k_and_returns_its_best(monkeypatch, best_k) -> None:
    tried = _recording(monkeypatch, best_k)
    X, y = np.zeros((5, 2)), np.zeros(5)
    found = search(X, y, np.arange(5) + 1, np.arange(5), [], fit_rows=5, seed=3, maxiter=20, popsize=5)
    # a population of popsize x 4 parameters (2 weights, k, the width), evaluated once and then in each of
    # maxiter generations: tol = 0 never stops early, and no polishing afterwards
    assert found.evaluations == len(tried) == 5 * 4 * (20 + 1)
    weights, ks, widths = np.array([t[0] for t in tried]), [t[1] for t in tried], [t[2] for t in tried]
    assert weights.min() >= 0.0 and 0.9 < weights.max() <= 1.0
    assert K_RANGE[0] <= min(ks) and max(ks) <= K_RANGE[1] and found.k == best_k
    assert 1e-3 <= min(widths) < 2e-3 and 0.5 < max(widths) <= 1.0  # log-uniform over (1e-3, 1)
    best = min(tried, key=lambda t: t[3])
    assert (found.weights.tolist(), found.k, found.width, found.rmse) == (best[0].tolist(), best[1], best[2], best[3])


def test_the_default_budget_is_a_population_of_10_per_parameter_for_20_generations(monkeypatch) -> None:
    tried = _recording(monkeypatch, 10)
    found = search(np.zeros((5, 1)), np.zeros(5), np.arange(5) + 1, np.arange(5), [], fit_rows=5, seed=0)
    assert found.evaluations == len(tried) == 10 * 3 * (20 + 1)


# --- Tuning by hand: a column constant in single precision, and the exact settings of the global search -----------
# Every expected value is worked by hand.


def test_a_column_constant_in_single_precision_weighs_0() -> None:
    # seven times 0.1 in float32: in single precision its mean is not exactly 0.1, so its deviation is not 0;
    # in double precision the column is exactly constant and explains nothing of the labels
    X = np.full((7, 1), 0.1, dtype=np.float32)
    assert correlation_weights(X, np.arange(7.0)).tolist() == [0.0]


def test_the_search_is_a_seeded_deferred_differential_evolution_without_polishing(monkeypatch) -> None:
    calls: list = []

    def fake(cost, bounds, **settings):
        calls.append((bounds, settings))
        # the best point: weights 0.25 and 0.5, k 7.9 (7 once truncated), log width log 0.01
        return SimpleNamespace(x=np.array([0.25, 0.5, 7.9, math.log(0.01)]), fun=12.5, nfev=96)

    monkeypatch.setattr(tuning, "differential_evolution", fake)
    X, y = np.zeros((5, 2)), np.zeros(5)
    found = search(X, y, np.arange(5) + 1, np.arange(5), [], fit_rows=5, seed=3, maxiter=7, popsize=4,
                   width_range=(0.01, 2.0))
    bounds, settings = calls[0]
    assert bounds == [(0.0, 1.0), (0.0, 1.0), (6, 33.999), (math.log(0.01), math.log(2.0))]
    assert settings == {"seed": 3, "maxiter": 7, "popsize": 4, "polish": False, "tol": 0.0, "updating": "deferred"}
    assert found.weights.tolist() == [0.25, 0.5] and found.k == 7 and found.width == pytest.approx(0.01, rel=1e-15)
    assert (found.rmse, found.evaluations) == (12.5, 96)
