"""Feature weights, ``k`` and the kernel width for the advisor's k-NN (the paper tunes on 500 entries).

Two ways: by correlation (each number weighted by its absolute Pearson correlation with the label,
each category by its correlation ratio, both in [0, 1]), and by a global search that minimises the
root-mean-square error of the predictions each tuning entry gets from its own past
(:mod:`broker.advisor.online`), with :func:`scipy.optimize.differential_evolution` in place of the
paper's genetic algorithm. The search is seeded: the same seed gives the same weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import differential_evolution

from broker.advisor.knn import HeomEmbedding
from broker.advisor.online import predict_as_submitted
from workloads.errors import ConfigError

#: The range of ``k`` the paper searches.
K_RANGE = (6, 33)


def correlation_weights(X: np.ndarray, y: np.ndarray, categorical: Sequence[int] = ()) -> np.ndarray:
    """Per column: ``|r|`` (numbers) or the correlation ratio ``eta`` (categories) with ``y``; 0 if undefined."""
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    weights = np.zeros(X.shape[1])
    total = ((y - y.mean()) ** 2).sum()
    if total == 0:
        return weights
    for f in range(X.shape[1]):
        column = X[:, f]
        if f in categorical:
            _, group, counts = np.unique(column, return_inverse=True, return_counts=True)
            means = np.bincount(group, weights=y) / counts
            weights[f] = np.sqrt((counts * (means - y.mean()) ** 2).sum() / total)
        elif column.std() > 0:
            weights[f] = abs(np.corrcoef(column, y)[0, 1])
    return np.clip(weights, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class Tuned:
    """What a search found: feature weights, ``k``, the kernel width and the tuning RMSE they gave."""

    weights: np.ndarray
    k: int
    width: float
    rmse: float
    evaluations: int


def online_rmse(X: np.ndarray, y: np.ndarray, first: np.ndarray, queries: np.ndarray, categorical: Sequence[int],
                weights: np.ndarray, k: int, width: float, fit_rows: int) -> float:
    """The RMSE of each query's prediction from its own past, under ``weights``, ``k`` and ``width``.

    The embedding's ranges and categories are fitted on the first ``fit_rows`` rows. A query with an
    empty past counts as predicting 0.
    """
    embedded = HeomEmbedding(weights.tolist(), categorical).fit(X[:fit_rows]).embed_together(X)
    got = predict_as_submitted(embedded, y, first, queries, n_neighbors=k, width=width)
    error = np.nan_to_num(got.mean, nan=0.0) - y[queries]
    return float(np.sqrt(np.mean(error**2)))


def search(X: np.ndarray, y: np.ndarray, first: np.ndarray, queries: np.ndarray, categorical: Sequence[int], *,
           fit_rows: int, seed: int, maxiter: int = 20, popsize: int = 10,
           width_range: tuple[float, float] = (1e-3, 1.0)) -> Tuned:
    """Weights in [0, 1], ``k`` in :data:`K_RANGE` and the width (log-uniform in ``width_range``) of least RMSE."""
    if not 0 < width_range[0] < width_range[1]:
        raise ConfigError(f"width_range must be 0 < low < high, got {width_range}")
    p = X.shape[1]
    bounds = [(0.0, 1.0)] * p + [(K_RANGE[0], K_RANGE[1] + 0.999), (np.log(width_range[0]), np.log(width_range[1]))]

    def decode(z: np.ndarray) -> tuple[np.ndarray, int, float]:
        return z[:p], int(z[p]), float(np.exp(z[p + 1]))

    def cost(z: np.ndarray) -> float:
        w, k, width = decode(z)
        return online_rmse(X, y, first, queries, categorical, w, k, width, fit_rows)

    found = differential_evolution(cost, bounds, seed=seed, maxiter=maxiter, popsize=popsize, polish=False,
                                   tol=0.0, updating="deferred")
    w, k, width = decode(found.x)
    return Tuned(w, k, width, float(found.fun), int(found.nfev))
