"""Predictions as each job is submitted, from the labels known by then (no leakage).

Row ``r``'s label (a wait, or a run time) is known to the query of row ``i`` when ``r`` was submitted
before it (``r < i``) and the label's ``known_at`` time is not after the query's submit time
(:func:`broker.advisor.features.known`). So each row has a first query from which it is known, and
the knowledge base of query ``i`` is the rows whose first query is at most ``i``: it only grows.

The rows already known at the last rebuild sit in a scikit-learn neighbour index; those that became
known since are searched directly, and the two candidate lists are merged, so every query sees
exactly its own knowledge base while the index is rebuilt only every ``rebuild_every`` new rows.

A bounded ``memory`` ``s`` (the paper's knowledge-base size, §5.4) keeps only the last ``s`` rows a
query knows, in the order they became known: the knowledge base slides instead of growing. Each
block of queries then searches, without an index, the rows some query of the block may hold, each
masked for the queries that do not hold it (not known yet, or already forgotten).

The searches are small (one block of queries at a time), so they run on one thread: scikit-learn's
OpenMP pool costs more to wake than such a search, and under load (two pytest workers on two cores,
or a sweep's processes) its spinning threads made one tuning pass ten times slower. A bounded memory's
search is one BLAS product per block, which runs on one thread too: under load, BLAS's threads made
the weight search's evaluations (27 queries against 560 rows) take twice as long.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import ThreadpoolController

from broker.advisor.features import LABELS
from broker.advisor.knn import stable_weights, weighted_variance
from workloads.errors import ConfigError


@dataclass(frozen=True, slots=True)
class OnlinePredictions:
    """Per query: the prediction, its standard deviation (inf when undefined) and the knowledge base's size."""

    queries: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    known: np.ndarray


def first_known(frame: pd.DataFrame, label: str) -> np.ndarray:
    """For each row, the first query (row index) whose knowledge base holds its ``label``."""
    if label not in LABELS:
        raise ConfigError(f"label must be one of {LABELS}, got {label!r}")
    submit = frame["submit_s"].to_numpy()
    at = frame[f"{label.removesuffix('_s')}_known_at"].to_numpy()
    return np.maximum(np.searchsorted(submit, at, side="left"), np.arange(len(frame)) + 1)


def knowledge_bases(first: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``queries`` (checked ascending), the rows by first query, and each query's knowledge-base size.

    The knowledge base of the ``q``-th query is ``order[:sizes[q]]``.
    """
    queries = np.asarray(queries, dtype=np.int64)
    if np.any(np.diff(queries) < 0):
        raise ConfigError("queries must be in ascending order")
    order = np.argsort(first, kind="stable")
    return queries, order, np.searchsorted(first[order], queries, side="right")


def predict_as_submitted(embedded: np.ndarray, labels: np.ndarray, first: np.ndarray, queries: np.ndarray, *,
                         n_neighbors: int, width: float, rebuild_every: int = 256, memory: int | None = None,
                         progress: Callable[[int], None] | None = None) -> OnlinePredictions:
    """k-NN predictions (:mod:`broker.advisor.knn`) for the rows ``queries`` (ascending), each from its own past.

    ``embedded``: the rows in HEOM space (:class:`~broker.advisor.knn.HeomEmbedding`); ``labels``: the
    label of every row; ``first``: :func:`first_known`. ``memory``: the knowledge base's size ``s``,
    the last ``s`` rows known (None: every row known). A query with an empty knowledge base gets a
    NaN prediction and an infinite deviation; ``known`` is each knowledge base's size. ``progress`` is
    called with the queries predicted so far after each block of them.
    """
    if n_neighbors < 1 or not width > 0 or rebuild_every < 1:
        raise ConfigError("need n_neighbors >= 1, width > 0 and rebuild_every >= 1")
    if memory is not None and (isinstance(memory, bool) or memory < 1):
        raise ConfigError(f"the knowledge base's size (memory) must be at least 1, got {memory}")
    if memory is None:
        with _threads().limit(limits=1, user_api="openmp"):
            return _predict(embedded, labels, first, queries, n_neighbors, width, rebuild_every, progress)
    with _threads().limit(limits=1):  # its distances are BLAS products of one block: one thread (docstring)
        return _predict_sliding(embedded, labels, first, queries, n_neighbors, width, memory, rebuild_every,
                                progress)


@functools.cache
def _threads() -> ThreadpoolController:
    """The process's thread pools, looked up once (a lookup walks every loaded library)."""
    return ThreadpoolController()


def _predict(embedded: np.ndarray, labels: np.ndarray, first: np.ndarray, queries: np.ndarray, n_neighbors: int,
             width: float, rebuild_every: int, progress: Callable[[int], None] | None) -> OnlinePredictions:
    queries, order, sizes = knowledge_bases(first, queries)
    mean, std = np.full(len(queries), np.nan), np.full(len(queries), np.inf)
    index: NearestNeighbors | None = None
    indexed = start = 0
    while start < len(queries):
        if sizes[start] - indexed > rebuild_every:  # too many rows known since the index was built: rebuild
            indexed = int(sizes[start])
            index = NearestNeighbors().fit(embedded[order[:indexed]])
        stop = int(np.searchsorted(sizes, indexed + rebuild_every, side="right"))  # the block this index serves
        block = slice(start, max(stop, start + 1))
        d, rows = _candidates(embedded, order, queries[block], sizes[block], index, indexed, n_neighbors)
        some = sizes[block] > 0
        if some.any():
            m, variance = weighted_variance(labels[rows[some]], stable_weights(d[some], width))
            mean[block][some], std[block][some] = m, np.sqrt(variance)
        start = block.stop
        if progress is not None:
            progress(min(start, len(queries)))
    return OnlinePredictions(queries, mean, std, sizes)


def _predict_sliding(embedded: np.ndarray, labels: np.ndarray, first: np.ndarray, queries: np.ndarray,
                     n_neighbors: int, width: float, memory: int, block_size: int,
                     progress: Callable[[int], None] | None) -> OnlinePredictions:
    """Each query from the last ``memory`` rows it knows (module docstring), ``block_size`` queries at a time."""
    queries, order, sizes = knowledge_bases(first, queries)
    low = np.maximum(sizes - memory, 0)  # the query's knowledge base is order[low:size]
    mean, std = np.full(len(queries), np.nan), np.full(len(queries), np.inf)
    for start in range(0, len(queries), block_size):
        block = slice(start, start + block_size)
        some = sizes[block] > low[block]
        if some.any():
            d, rows = _window_candidates(embedded, order, queries[block][some], low[block][some],
                                         sizes[block][some], n_neighbors)
            m, variance = weighted_variance(labels[rows], stable_weights(d, width))
            mean[block][some], std[block][some] = m, np.sqrt(variance)
        if progress is not None:
            progress(min(start + block_size, len(queries)))
    return OnlinePredictions(queries, mean, std, sizes - low)


def _window_candidates(embedded: np.ndarray, order: np.ndarray, queries: np.ndarray, low: np.ndarray,
                       sizes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of each query among ``order[low:size]`` (its own; others at infinity)."""
    lo, hi = int(low.min()), int(sizes.max())
    rows = order[lo:hi]
    d = euclidean_distances(embedded[queries], embedded[rows])
    at = np.arange(lo, hi)[None, :]
    d[(at < low[:, None]) | (at >= sizes[:, None])] = np.inf
    r = np.broadcast_to(rows, d.shape)
    best = np.lexsort((r, d), axis=-1)[:, :k]  # nearest first; equal distances: the earlier row
    # a knowledge base smaller than k leaves neighbours at infinity, whose kernel weight is 0
    return np.take_along_axis(d, best, axis=1), np.take_along_axis(r, best, axis=1)


def _candidates(embedded: np.ndarray, order: np.ndarray, queries: np.ndarray, sizes: np.ndarray,
                index: NearestNeighbors | None, indexed: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest known rows of each query (a row beyond a query's knowledge base is at infinity).

    Candidates: the index's ``k`` nearest (rows known to every query of the block), and every row known
    since the index was built, masked for the queries that do not know it yet.
    """
    points = embedded[queries]
    distances, rows = [np.zeros((len(queries), 0))], [np.zeros((len(queries), 0), dtype=np.int64)]
    if index is not None and indexed:
        d, i = index.kneighbors(points, n_neighbors=min(k, indexed))
        distances.append(d)
        rows.append(order[i])
    fresh = order[indexed:int(sizes.max())]
    if len(fresh):
        d = euclidean_distances(points, embedded[fresh])  # as scikit-learn's brute-force search computes them
        d[np.arange(len(fresh))[None, :] >= (sizes - indexed)[:, None]] = np.inf  # not known to that query yet
        distances.append(d)
        rows.append(np.broadcast_to(fresh, d.shape))
    d, r = np.concatenate(distances, axis=1), np.concatenate(rows, axis=1)
    best = np.lexsort((r, d), axis=-1)[:, :k]  # nearest first; equal distances: the earlier row
    return np.take_along_axis(d, best, axis=1), np.take_along_axis(r, best, axis=1)
