"""The advisor's k-NN estimator with uncertainty (``SPEC.md`` §8; the advisor paper, equations 1-3, 6, 7).

A scikit-learn regressor. The distance is the heterogeneous Euclidean-overlap metric with feature
weights ``w``: ``sqrt(sum_f (w_f delta_f)^2)``, ``delta_f`` the difference of a number divided by the
feature's range in the training data (HEOM's normalisation), and for a category 0 when equal and 1
when not. Encoding each category one-hot, scaled by ``w_f / sqrt(2)``, with one more column for a
value not seen in training, makes that metric Euclidean, so scikit-learn's neighbour search finds
the neighbours.

The prediction is the kernel-weighted mean of the ``k`` nearest labels, kernel
``K(d) = exp(-(d / width)^2)``, with the weights in the paper's stable form
``v_p = 1 / sum_r exp((d_p / width)^2 - (d_r / width)^2)``: no division by zero when every kernel
underflows. The uncertainty is the weighted unbiased variance (equation 7),
``s^2 = sum_p v_p (E - l_p)^2 / (1 - sum_p v_p^2)``; when one neighbour holds all the weight
(``sum v^2 = 1``) it is undefined and reported as infinite (no certainty to act on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils.validation import check_is_fitted, validate_data


def stable_weights(d: np.ndarray, width: float) -> np.ndarray:
    """The paper's weights ``v`` (equation 6) of rows of neighbour distances ``d``; each row sums to 1."""
    a = (np.asarray(d, dtype=np.float64) / width) ** 2
    # v_p = 1 / sum_r exp(a_p - a_r) = exp(-a_p) / sum_r exp(-a_r): shifted by the row's nearest, every
    # exponent is <= 0 and the nearest neighbour's term is 1, so the sum is >= 1
    e = np.exp(a.min(axis=-1, keepdims=True) - a)
    return e / e.sum(axis=-1, keepdims=True)


def weighted_variance(labels: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted mean and the unbiased weighted variance (equation 7) of rows of ``labels``; inf if undefined."""
    mean = (v * labels).sum(axis=-1)
    spread = (v * (labels - mean[..., None]) ** 2).sum(axis=-1)
    room = 1.0 - (v**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(room > 1e-12, spread / np.where(room > 1e-12, room, 1.0), np.inf)
    return mean, variance


class HeomEmbedding(TransformerMixin, BaseEstimator):
    """Rows mapped where the weighted HEOM distance is the Euclidean one (module docstring).

    Numbers are divided by their range in the data it was fitted on and multiplied by their weight;
    each category becomes one-hot columns scaled by ``w / sqrt(2)``. :meth:`transform` adds one
    column for any value not seen in fitting (a fixed width, for an estimator's index: an unseen
    value is ``w`` from every seen one, and a query is compared with indexed rows only).
    :meth:`embed_together` embeds rows that are compared *with each other*, as the advisor's
    knowledge base and queries are: each value not seen in fitting gets a column of its own, so two
    different values are ``w`` apart whether seen or not.
    """

    def __init__(self, feature_weights: Sequence[float] | None = None, categorical: Sequence[int] = ()) -> None:
        self.feature_weights = feature_weights
        self.categorical = categorical

    def fit(self, X: Any, y: Any = None) -> HeomEmbedding:
        """Learn the numbers' ranges and the categories' values."""
        X = validate_data(self, X, dtype=np.float64)
        n_features = X.shape[1]
        weights = np.ones(n_features) if self.feature_weights is None else np.asarray(self.feature_weights, float)
        if weights.shape != (n_features,) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError(f"feature_weights must be {n_features} finite numbers >= 0, got {self.feature_weights!r}")
        cats = sorted({int(c) for c in self.categorical})
        if any(not 0 <= c < n_features for c in cats):
            raise ValueError(f"categorical columns must lie in 0..{n_features - 1}, got {list(self.categorical)}")
        self.weights_, self.categorical_ = weights, cats
        self.numeric_ = [c for c in range(n_features) if c not in cats]
        span = np.ptp(X[:, self.numeric_], axis=0) if self.numeric_ else np.zeros(0)
        self.scale_ = np.where(span > 0, weights[self.numeric_] / np.where(span > 0, span, 1.0), 0.0)
        self.encoder_ = (OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X[:, cats])
                         if cats else None)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """The embedded rows, one column for every value not seen in fitting (a fixed width)."""
        return self._embed(X, together=False)

    def embed_together(self, X: Any) -> np.ndarray:
        """The rows of ``X`` embedded to be compared with each other: each unseen value a column of its own."""
        return self._embed(X, together=True)

    def _embed(self, X: Any, *, together: bool) -> np.ndarray:
        check_is_fitted(self, "scale_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        parts = [X[:, self.numeric_] * self.scale_]
        if self.encoder_ is not None:
            onehot = self.encoder_.transform(X[:, self.categorical_])
            blocks = np.split(onehot, np.cumsum([len(c) for c in self.encoder_.categories_])[:-1], axis=1)
            for j, (block, seen) in enumerate(zip(blocks, self.encoder_.categories_, strict=True)):
                w = self.weights_[self.categorical_[j]] / np.sqrt(2.0)
                values = X[:, self.categorical_[j]]
                unseen = ~np.isin(values, seen)
                if together:
                    new, code = np.unique(values[unseen], return_inverse=True)
                    extra = np.zeros((len(X), len(new)))
                    extra[np.flatnonzero(unseen), code] = w
                else:
                    extra = unseen[:, None] * w
                parts += [block * w, extra]
        return np.hstack(parts)


class KernelKNN(RegressorMixin, BaseEstimator):
    """k nearest neighbours under HEOM, a Gaussian kernel, and the weighted variance as uncertainty.

    Parameters
    ----------
    n_neighbors : int
        ``k`` (the paper: 6 to 33).
    width : float
        The kernel width ``omega`` (> 0).
    feature_weights : sequence of float or None
        ``w_f`` per input column (>= 0); None: all 1.
    categorical : sequence of int
        The columns that are categories (compared by the overlap function).
    """

    def __init__(self, n_neighbors: int = 10, width: float = 1.0, feature_weights: Sequence[float] | None = None,
                 categorical: Sequence[int] = ()) -> None:
        self.n_neighbors = n_neighbors
        self.width = width
        self.feature_weights = feature_weights
        self.categorical = categorical

    def fit(self, X: Any, y: Any) -> KernelKNN:
        """Keep the training rows (the knowledge base) and index them for neighbour search."""
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        if not (isinstance(self.n_neighbors, int | np.integer) and self.n_neighbors >= 1):
            raise ValueError(f"n_neighbors must be an integer >= 1, got {self.n_neighbors!r}")
        if not (np.isfinite(self.width) and self.width > 0):
            raise ValueError(f"width must be a finite number > 0, got {self.width!r}")
        self.embedding_ = HeomEmbedding(self.feature_weights, self.categorical).fit(X)
        self.y_ = y.copy()
        self.neighbors_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, len(y))).fit(self.embedding_.transform(X))
        return self

    def predict(self, X: Any, return_std: bool = False) -> Any:
        """The kernel-weighted mean of the neighbours' labels, and with ``return_std`` the square root of eq. 7."""
        check_is_fitted(self, "neighbors_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        distance, index = self.neighbors_.kneighbors(self.embedding_.transform(X))
        mean, variance = weighted_variance(self.y_[index], stable_weights(distance, float(self.width)))
        return (mean, np.sqrt(variance)) if return_std else mean

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
