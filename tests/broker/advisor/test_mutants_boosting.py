"""Gradient boosting's category codes by hand: codes in floating point, whatever the input's integer type.

A test from a mutmut pass over :mod:`broker.advisor.boosting`; the expected values are worked by hand.
"""

from __future__ import annotations

import numpy as np

from broker.advisor.boosting import _codes


def test_codes_past_127_survive_a_narrow_integer_input() -> None:
    # 200 categories in int8, first seen from 99 down to -100: codes 0..199 by first appearance (an int8
    # column could not hold the codes from 128 on); the number column beside it keeps its values
    X = np.column_stack([np.arange(99, -101, -1), np.arange(200) % 7]).astype(np.int8)
    codes = _codes(X, np.array([True, False]))
    assert codes.dtype == np.float64
    assert codes[:, 0].tolist() == list(range(200)) and codes[:, 1].tolist() == [i % 7 for i in range(200)]
