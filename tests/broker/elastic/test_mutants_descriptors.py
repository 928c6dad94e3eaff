"""The pool-size levels are core counts: integers, not floats that happen to be whole."""

from __future__ import annotations

import numpy as np

from broker.elastic.descriptors import levels


def test_levels_are_integers() -> None:
    got = levels(1, 4, 3)  # 1, 2.5, 4: 2.5 rounds to even, 2
    assert got.dtype == np.int64 and got.tolist() == [1, 2, 4]
