"""A stronger learner beside k-NN: gradient boosting on the same features, refitted as the past grows.

Three scikit-learn ``HistGradientBoostingRegressor`` models per refit: the squared-error mean (the
prediction) and the 16th and 84th percentiles (quantile losses), whose half distance stands for one
standard deviation (exact for a normal spread). Categories are the model's native categorical
features. Each block of ``refit_every`` queries is predicted by models fitted on the rows known to
the block's *first* query, a subset of what every query of the block knows: no leakage, at the
price of up to ``refit_every`` queries of staleness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from broker.advisor.online import OnlinePredictions, knowledge_bases
from workloads.errors import ConfigError

#: The quantiles whose half distance is the deviation (a normal's mean +- 1 sigma).
LOW, HIGH = 0.158655, 0.841345


def predict_boosted(X: np.ndarray, labels: np.ndarray, first: np.ndarray, queries: np.ndarray,
                    categorical: Sequence[int], *, seed: int = 0, refit_every: int = 500,
                    max_iter: int = 100, min_rows: int = 50,
                    progress: Callable[[int], None] | None = None) -> OnlinePredictions:
    """Gradient-boosting predictions and deviations for ``queries`` (ascending), each from its block's known rows.

    ``X``: the raw feature rows (categories as integer codes), ``first``:
    :func:`broker.advisor.online.first_known`. A block whose first query knows fewer than
    ``min_rows`` rows gets NaN predictions and infinite deviations. ``progress`` is called with the
    queries predicted so far after each block of them.
    """
    if refit_every < 1 or max_iter < 1 or min_rows < 2:
        raise ConfigError("need refit_every >= 1, max_iter >= 1 and min_rows >= 2")
    queries, order, sizes = knowledge_bases(first, queries)
    mean, std = np.full(len(queries), np.nan), np.full(len(queries), np.inf)
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[list(categorical)] = True
    codes = _codes(X, mask)
    for start in range(0, len(queries), refit_every):
        block = slice(start, start + refit_every)
        known = order[:sizes[start]]
        if len(known) >= min_rows:
            models = [_model(loss, q, mask, seed, max_iter).fit(codes[known], labels[known])
                      for loss, q in (("squared_error", None), ("quantile", LOW), ("quantile", HIGH))]
            rows = codes[queries[block]]
            mean[block] = models[0].predict(rows)
            std[block] = np.maximum(models[2].predict(rows) - models[1].predict(rows), 0.0) / 2.0
        if progress is not None:
            progress(min(start + refit_every, len(queries)))
    return OnlinePredictions(queries, mean, std, sizes)


def random_state(seed: int) -> int:
    """The model's ``random_state`` for ``seed``: scikit-learn takes one below ``2**32``; a cell's seed has 63 bits."""
    return int(np.random.SeedSequence(seed).generate_state(1)[0])


def _model(loss: str, quantile: float | None, categorical: np.ndarray, seed: int,
           max_iter: int) -> HistGradientBoostingRegressor:
    extra = {"quantile": quantile} if quantile is not None else {}
    return HistGradientBoostingRegressor(loss=loss, categorical_features=categorical, random_state=random_state(seed),
                                         max_iter=max_iter, early_stopping=False, **extra)


def _codes(X: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    """Categories recoded 0, 1, ... in order of first appearance.

    The model takes codes below 255: later values share the last. A code says nothing about the rows
    after its value's first appearance.
    """
    out = np.asarray(X, dtype=np.float64).copy()
    for f in np.flatnonzero(categorical):
        values, first = np.unique(out[:, f], return_index=True)
        code = np.empty(len(values))
        code[np.argsort(first, kind="stable")] = np.minimum(np.arange(len(values)), 254)
        out[:, f] = code[np.searchsorted(values, out[:, f])]
    return out
