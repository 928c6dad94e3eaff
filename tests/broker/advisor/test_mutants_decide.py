"""The linear speed model in double precision whatever the processor counts' type.

A test from a mutmut pass over :mod:`broker.advisor.decide`; the expected values are worked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.advisor.decide import LinearSpeed


def test_single_precision_processor_counts_slow_the_cloud_in_double_precision() -> None:
    # 3 processors at o = 0.1 run (0.1 x 3 + 1) x 100 = 130 s; in single precision 1.3 is 1.29999995
    got = LinearSpeed(0.1).cloud_run(np.array([3.0], dtype=np.float32), np.array([100.0]))
    assert got.dtype == np.float64 and got[0] == pytest.approx(130.0, rel=1e-15)
    assert LinearSpeed(0.5).cloud_run(np.array([2], dtype=np.int8), np.array([10], dtype=np.int64)).tolist() == [20.0]


def test_a_cut_on_single_precision_speeds_is_placed_in_double_precision() -> None:
    from broker.advisor.decide import Cutoff

    # hits at s = 0.1, misses at 0.5, variances that say nothing: the cut is halfway, the mean of the four
    # speeds as given; 0.1 in single precision is 0.10000000149011612, so the mean is 0.30000000074505806
    # (in single precision it would round to 0.30000001192092896)
    s = np.array([0.1, 0.1, 0.5, 0.5], dtype=np.float32)
    cutoff = Cutoff.fit(s, np.ones(4), np.array([True, True, False, False]))
    assert cutoff.s_max == pytest.approx((2 * 0.10000000149011612 + 2 * 0.5) / 4, abs=1e-12)
