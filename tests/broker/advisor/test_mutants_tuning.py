"""Tuning by hand: a column constant in single precision, and the exact settings of the global search.

Tests from a mutmut pass over :mod:`broker.advisor.tuning`; every expected value is worked by hand.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from broker.advisor import tuning
from broker.advisor.tuning import correlation_weights, search


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
