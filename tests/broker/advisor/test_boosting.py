"""Gradient boosting beside k-NN: leak-free blocks, a spread from two quantiles, repeatable."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from broker.advisor import boosting
from broker.advisor.boosting import HIGH, LOW, _codes, predict_boosted
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


# eight rows, each known from the next query on: four labels of 7, then four of 100; a category coded
# far above the model's 255 codes (recoded 0, 1, 2 by first appearance) and a number
EIGHT = np.column_stack([[1000.0, 2000.0, 3000.0, 1000.0, 2000.0, 3000.0, 1000.0, 2000.0], np.arange(8.0)])
EIGHT_LABELS = np.array([7.0] * 4 + [100.0] * 4)


def test_blocks_of_two_by_hand() -> None:
    # fewer than 20 rows: no tree can split (min_samples_leaf), so each model is its baseline: the mean, and
    # the 16th and 84th percentiles of the labels the block's first query knew
    got = predict_boosted(EIGHT, EIGHT_LABELS, np.arange(8) + 1, np.arange(8), [0], refit_every=2, max_iter=1,
                          min_rows=2)
    assert got.queries.tolist() == got.known.tolist() == list(range(8))
    # block 0-1: no past; 2-3: exactly min_rows = 2 rows, all 7; 4-5: rows 0..3 (query 5 also knows row 4, a
    # 100, but the block does not); 6-7: rows 0..5, mean (4 x 7 + 2 x 100) / 6 = 38, percentiles 7 and 100
    np.testing.assert_array_equal(got.mean, [np.nan, np.nan, 7.0, 7.0, 7.0, 7.0, 38.0, 38.0])
    np.testing.assert_array_equal(got.std, [np.inf, np.inf, 0.0, 0.0, 0.0, 0.0, 46.5, 46.5])


def test_blocks_of_one_know_everything_known_at_each_query() -> None:
    got = predict_boosted(EIGHT, EIGHT_LABELS, np.arange(8) + 1, np.arange(8), [0], refit_every=1, max_iter=1,
                          min_rows=2)
    np.testing.assert_allclose(got.mean, [np.nan, np.nan, 7.0, 7.0, 7.0, 128 / 5, 38.0, 328 / 7], rtol=1e-12)
    assert np.isinf(got.std[:2]).all() and got.std[2:5].tolist() == [0.0] * 3 and got.std[6] == 46.5


@pytest.mark.parametrize(("every", "iters", "rows"), [(0, 1, 2), (1, 0, 2), (1, 1, 1), (-5, 100, 50)])
def test_each_bad_argument_is_refused(problem, every: int, iters: int, rows: int) -> None:
    X, y, first = problem
    with pytest.raises(ConfigError, match=r"^need refit_every >= 1, max_iter >= 1 and min_rows >= 2$"):
        predict_boosted(X, y, first, np.array([700]), [0], refit_every=every, max_iter=iters, min_rows=rows)


class _Recorded:
    """A stand-in for the regressor: keeps its parameters and the rows it learnt, predicts 10 / 4 / 8."""

    made: ClassVar[list] = []

    def __init__(self, **params) -> None:
        self.params = params
        _Recorded.made.append(self)

    def fit(self, X, y):
        self.rows, self.X = len(y), X
        return self

    def predict(self, X):
        value = {None: 10.0, LOW: 4.0, HIGH: 8.0}[self.params.get("quantile")]
        return np.full(len(X), value)


@pytest.fixture
def recorded(monkeypatch):
    _Recorded.made = []
    monkeypatch.setattr(boosting, "HistGradientBoostingRegressor", _Recorded)
    return _Recorded.made


def test_the_three_models_mean_and_two_quantiles_native_categories_seeded_no_early_stopping(recorded) -> None:
    got = predict_boosted(EIGHT, EIGHT_LABELS, np.arange(8) + 1, np.array([5]), [0], seed=7, max_iter=3, min_rows=2)
    assert (got.mean.tolist(), got.std.tolist()) == ([10.0], [2.0])  # half of 8 - 4
    assert [m.params.pop("categorical_features").tolist() for m in recorded] == [[True, False]] * 3
    assert [m.params for m in recorded] == [
        {"loss": loss, "random_state": boosting.random_state(7), "max_iter": 3, "early_stopping": False, **extra}
        for loss, extra in (("squared_error", {}), ("quantile", {"quantile": LOW}), ("quantile", {"quantile": HIGH}))]
    assert [m.rows for m in recorded] == [5, 5, 5]
    # rows 0..4 as the models see them: categories 1000, 2000, 3000, 1000, 2000 coded by first appearance
    assert all(m.X.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 3.0], [1.0, 4.0]] for m in recorded)


def test_the_defaults_refit_every_500_queries_from_50_known_rows_seed_0_and_100_iterations(recorded) -> None:
    X, y, first = np.zeros((600, 2)), np.zeros(600), np.arange(600) + 1
    got = predict_boosted(X, y, first, np.arange(501), [])  # blocks 0..499 (no past at 0) and 500
    assert np.isnan(got.mean[:500]).all() and got.mean[500] == 10.0
    expected = [(500, boosting.random_state(0), 100)] * 3
    assert [(m.rows, m.params["random_state"], m.params["max_iter"]) for m in recorded] == expected
    recorded.clear()
    assert predict_boosted(X, y, first, np.array([50]), []).mean[0] == 10.0 and [m.rows for m in recorded] == [50] * 3
    assert np.isnan(predict_boosted(X, y, first, np.array([49]), []).mean[0])


def test_past_254_categories_share_the_last_code() -> None:
    X = np.column_stack([np.arange(300.0, 0.0, -1.0)])  # 300 values, first seen in descending order
    assert _codes(X, np.array([True]))[:, 0].tolist() == list(range(254)) + [254] * 46


def test_any_seed_the_sweep_runner_gives_is_taken(problem) -> None:
    # cells get 63-bit seeds; scikit-learn takes a random_state below 2**32: the seed is mapped into that range
    X, y, first = problem
    big = predict_boosted(X, y, first, np.array([700, 800]), [0], seed=2**63 - 1, max_iter=5)
    assert np.isfinite(big.mean).all()
    assert boosting.random_state(2**63 - 1) == int(np.random.SeedSequence(2**63 - 1).generate_state(1)[0])
    assert boosting.random_state(7) != boosting.random_state(8) and 0 <= boosting.random_state(2**40) < 2**32


# --- Gradient boosting's category codes by hand: codes in floating point, whatever the input's integer type -------
# The expected values are worked by hand.


def test_codes_past_127_are_kept_for_a_narrow_integer_input() -> None:
    # 200 categories in int8, first seen from 99 down to -100: codes 0..199 by first appearance (an int8
    # column could not hold the codes from 128 on); the number column beside it keeps its values
    X = np.column_stack([np.arange(99, -101, -1), np.arange(200) % 7]).astype(np.int8)
    codes = _codes(X, np.array([True, False]))
    assert codes.dtype == np.float64
    assert codes[:, 0].tolist() == list(range(200)) and codes[:, 1].tolist() == [i % 7 for i in range(200)]
