"""Feature weights, ``k``, the kernel width and the knowledge base's size for the advisor's k-NN.

The paper tunes the chromosome ``[k, w, s, weights]`` on 500 entries (§5.4). Two ways here: weights
by correlation (each number weighted by its absolute Pearson correlation with the label, each
category by its correlation ratio, both in [0, 1]), and a global search that minimises the
root-mean-square error of the predictions each tuning entry gets from its own past
(:mod:`broker.advisor.online`), with :func:`scipy.optimize.differential_evolution` in place of the
paper's genetic algorithm. The search is seeded: the same seed gives the same setting.

Searched on 500 entries, fifteen numbers fit those entries' errors rather than the waits to come (on
SDSC-BLUE a search once brought the tuning RMSE to 20,931 s and the evaluated one up to 37,894 s,
against 35,040 s untuned). :func:`tune_knn` guards against it: the search sees the earlier two thirds
of the tuning entries, and its setting is kept only if it beats the untuned one on the last third.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import differential_evolution

from broker.advisor.knn import HeomEmbedding
from broker.advisor.online import knowledge_bases, predict_as_submitted
from workloads.errors import ConfigError

#: The range of ``k`` the paper searches.
K_RANGE = (6, 33)
#: The smallest knowledge base the search tries (jobs).
LEAST_MEMORY = 100
#: The share of the tuning entries (the latest) held out of the search to check it.
HELD_OUT = 1 / 3


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
class Setting:
    """A k-NN's feature weights, ``k``, kernel width and knowledge-base size ``memory`` (None: every known job)."""

    weights: np.ndarray
    k: int
    width: float
    memory: int | None = None


@dataclass(frozen=True, slots=True)
class Tuned:
    """What a search found: weights, ``k``, the width, the knowledge-base size and the RMSE they gave."""

    weights: np.ndarray
    k: int
    width: float
    rmse: float
    evaluations: int
    memory: int | None = None

    @property
    def setting(self) -> Setting:
        """The k-NN setting found."""
        return Setting(self.weights, self.k, self.width, self.memory)


@dataclass(frozen=True, slots=True)
class Guarded:
    """The setting :func:`tune_knn` keeps, and the held-out errors it was chosen by (RMSE, s).

    ``chosen``: ``search`` (the searched setting beat the given one on the held-out entries) or
    ``given``. ``rmse`` is the kept setting's over every tuning entry.
    """

    weights: np.ndarray
    k: int
    width: float
    memory: int | None
    rmse: float
    chosen: str
    searched: Tuned
    held_out_rmse: float
    given_held_out_rmse: float
    held_out: int

    def report(self) -> dict[str, Any]:
        """JSON-ready, without the weights (the caller names them)."""
        s = self.searched
        return {"chosen": self.chosen, "k": self.k, "width": self.width, "memory": self.memory,
                "tuning_rmse_s": self.rmse, "held_out_entries": self.held_out,
                "held_out_rmse_s": self.held_out_rmse, "given_held_out_rmse_s": self.given_held_out_rmse,
                "search": {"k": s.k, "width": s.width, "memory": s.memory, "search_rmse_s": s.rmse,
                           "evaluations": s.evaluations}}


def online_rmse(X: np.ndarray, y: np.ndarray, first: np.ndarray, queries: np.ndarray, categorical: Sequence[int],
                weights: np.ndarray, k: int, width: float, fit_rows: int, memory: int | None = None) -> float:
    """The RMSE of each query's prediction from its own past, under ``weights``, ``k``, ``width`` and ``memory``.

    The embedding's ranges and categories are fitted on the first ``fit_rows`` rows. A query with an
    empty past counts as predicting 0. Only the rows up to the last query are embedded (later ones are
    never known to a query).
    """
    end = int(np.max(queries)) + 1
    embedded = HeomEmbedding(weights.tolist(), categorical).fit(X[:fit_rows]).embed_together(X[:end])
    got = predict_as_submitted(embedded, y[:end], first[:end], queries, n_neighbors=k, width=width, memory=memory)
    error = np.nan_to_num(got.mean, nan=0.0) - y[queries]
    return float(np.sqrt(np.mean(error**2)))


def search(X: np.ndarray, y: np.ndarray, first: np.ndarray, queries: np.ndarray, categorical: Sequence[int], *,
           fit_rows: int, seed: int, maxiter: int = 20, popsize: int = 10,
           width_range: tuple[float, float] = (1e-3, 1.0), start: Setting | None = None) -> Tuned:
    """Weights in [0, 1], ``k`` in :data:`K_RANGE`, the width and the memory ``s`` of least RMSE on ``queries``.

    The width is searched log-uniformly in ``width_range``; ``s`` log-uniformly from
    :data:`LEAST_MEMORY` to the largest knowledge base a query has, which stands for every known job
    (memory None). ``start`` (clipped to the bounds) joins the first generation of the differential
    evolution. Cost: ``(maxiter + 1) * popsize * (p + 3)`` RMSE evaluations for ``p`` features.
    """
    if not 0 < width_range[0] < width_range[1]:
        raise ConfigError(f"width_range must be 0 < low < high, got {width_range}")
    p = X.shape[1]
    known = int(knowledge_bases(first, queries)[2].max(initial=0))
    most = max(known, LEAST_MEMORY + 1)
    bounds = [(0.0, 1.0)] * p + [(K_RANGE[0], K_RANGE[1] + 0.999), (np.log(width_range[0]), np.log(width_range[1])),
                                 (np.log(LEAST_MEMORY), np.log(most))]

    def decode(z: np.ndarray) -> tuple[np.ndarray, int, float, int | None]:
        memory = round(float(np.exp(z[p + 2])))
        return z[:p], int(z[p]), float(np.exp(z[p + 1])), None if memory >= known else memory

    def cost(z: np.ndarray) -> float:
        w, k, width, memory = decode(z)
        return online_rmse(X, y, first, queries, categorical, w, k, width, fit_rows, memory)

    x0 = None if start is None else np.clip(
        [*start.weights, start.k, np.log(start.width), np.log(most if start.memory is None else start.memory)],
        [b[0] for b in bounds], [b[1] for b in bounds])
    # one generator from the seed (a sweep cell's seed has 63 bits; a legacy seed must be below 2**32)
    found = differential_evolution(cost, bounds, seed=np.random.default_rng(seed), maxiter=maxiter, popsize=popsize,
                                   polish=False, tol=0.0, updating="deferred", x0=x0)
    w, k, width, memory = decode(found.x)
    return Tuned(w, k, width, float(found.fun), int(found.nfev), memory)


def tune_knn(X: np.ndarray, y: np.ndarray, first: np.ndarray, queries: np.ndarray, categorical: Sequence[int], *,
             fit_rows: int, seed: int, given: Setting, maxiter: int = 20, popsize: int = 10,
             held_out: float = HELD_OUT) -> Guarded:
    """The paper's tuning of ``[k, width, s, weights]`` on the tuning entries, guarded against overfitting them.

    :func:`search` runs on the first ``1 - held_out`` of ``queries`` (in time order); the searched
    setting is kept only if its RMSE on the last ``held_out`` (entries it never saw) is below that of
    ``given`` (the untuned setting, started from by the search), else ``given`` is kept.
    """
    queries = np.asarray(queries, dtype=np.int64)
    if not 0 < held_out < 1:
        raise ConfigError(f"held_out must be a fraction strictly between 0 and 1, got {held_out}")
    cut = len(queries) - max(1, round(held_out * len(queries)))
    if cut < 1:
        raise ConfigError(f"tuning needs at least 2 tuning entries (one to search on, one held out), got "
                          f"{len(queries)}")
    searched = search(X, y, first, queries[:cut], categorical, fit_rows=fit_rows, seed=seed, maxiter=maxiter,
                      popsize=popsize, start=given)

    def rmse(setting: Setting, rows: np.ndarray) -> float:
        return online_rmse(X, y, first, rows, categorical, setting.weights, setting.k, setting.width, fit_rows,
                           setting.memory)

    held = queries[cut:]
    scores = rmse(searched.setting, held), rmse(given, held)
    chosen, kept = ("search", searched.setting) if scores[0] < scores[1] else ("given", given)
    return Guarded(kept.weights, kept.k, kept.width, kept.memory, rmse(kept, queries), chosen, searched,
                   scores[0], scores[1], len(held))
