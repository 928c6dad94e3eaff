"""HEOM's embedding by hand: ranges taken in floating point, the column of unseen values, no warning on a constant.

Tests from a mutmut pass over :mod:`broker.advisor.knn`; every expected value is worked by hand.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from broker.advisor.knn import HeomEmbedding


def test_a_narrow_integer_column_has_its_range_taken_in_floating_point() -> None:
    # -100 and 100 in int8: the range is 200 (in int8 arithmetic it would wrap around to -56)
    X = np.array([[-100], [100], [0]], dtype=np.int8)
    embedding = HeomEmbedding().fit(X)
    assert embedding.scale_.tolist() == [1 / 200]
    assert embedding.transform(X).tolist() == [[-0.5], [0.5], [0.0]]


def test_the_last_column_of_a_category_marks_a_value_not_seen_in_fitting() -> None:
    # column 0 a number (range 10, weight 1), column 1 a category (weight 2) seen as 1 and 2: its one-hot
    # columns are scaled by 2 / sqrt(2) = sqrt(2), then one column for a value never seen
    embedding = HeomEmbedding(feature_weights=[1.0, 2.0], categorical=[1]).fit(np.array([[0.0, 1.0], [10.0, 2.0]]))
    got = embedding.transform(np.array([[5.0, 2.0], [5.0, 9.0], [0.0, 1.0]]))
    r = math.sqrt(2.0)
    np.testing.assert_allclose(got, [[0.5, 0.0, r, 0.0], [0.5, 0.0, 0.0, r], [0.0, r, 0.0, 0.0]], rtol=1e-15)


def test_a_constant_column_is_fitted_without_a_division_warning() -> None:
    # column 0 is constant (range 0): it weighs 0 whatever its weight, and nothing is divided by its range
    X = np.array([[4.0, 0.0], [4.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for weights in ([1.0, 1.0], [0.0, 1.0]):
            assert HeomEmbedding(feature_weights=weights).fit(X).scale_.tolist() == [0.0, 1.0]
    assert HeomEmbedding().fit(X).transform(np.array([[1000.0, 0.5]])).tolist() == [[0.0, pytest.approx(0.5)]]
