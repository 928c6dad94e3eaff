"""Predictions as submitted: when the neighbour index is rebuilt, and which thread pool the searches limit.

Tests from a mutmut pass over :mod:`broker.advisor.online`; every expected value is worked by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from broker.advisor import online
from broker.advisor.online import predict_as_submitted

# 600 points on a line, row r at r and labelled r, each known from the next query on (query q knows rows < q)
POINTS, LABELS, FIRST = np.arange(600.0)[:, None], np.arange(600.0), np.arange(600) + 1


def test_the_index_is_built_once_more_than_256_rows_are_left_to_search_directly(monkeypatch) -> None:
    built: list[int] = []

    class Counted(NearestNeighbors):
        def fit(self, X, y=None):
            built.append(len(X))
            return super().fit(X)

    monkeypatch.setattr(online, "NearestNeighbors", Counted)
    got = predict_as_submitted(POINTS, LABELS, FIRST, np.arange(256, 600), n_neighbors=3, width=1.0)
    # query 256 knows 256 rows: searched directly; query 257 knows 257: the index takes them; it serves up
    # to 257 + 256 = 513 known rows, so query 514 rebuilds it with 514
    assert built == [257, 514]
    # the last query's neighbours are rows 598, 597, 596 at 1, 2, 3: kernel terms 1, e^-3, e^-8 once shifted
    expected = 598 - (math.exp(-3) + 2 * math.exp(-8)) / (1 + math.exp(-3) + math.exp(-8))
    assert got.mean[-1] == pytest.approx(expected, rel=1e-12)


def test_only_the_openmp_pool_runs_on_one_thread(monkeypatch) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    seen: dict[str, set[int]] = {}
    inner = online._predict

    def spy(*args):
        for pool in threadpool_info():
            seen.setdefault(pool["user_api"], set()).add(pool["num_threads"])
        return inner(*args)

    monkeypatch.setattr(online, "_predict", spy)
    with threadpool_limits(limits=2):
        predict_as_submitted(POINTS[:4], LABELS[:4], FIRST[:4], np.array([3]), n_neighbors=1, width=1.0)
    assert seen["openmp"] == {1} and seen["blas"] == {2}  # BLAS keeps the caller's limit


def test_rows_known_from_the_same_query_stay_in_submission_order() -> None:
    from broker.advisor.online import knowledge_bases

    # odd rows are known from the next query on, even rows only from query 41 (the whole log's end): the
    # odd rows come first by their first query, then the even ones, in row order however many tie
    r = np.arange(40)
    queries, order, sizes = knowledge_bases(np.where(r % 2 == 0, 41, r + 1), np.array([0, 2, 40, 41]))
    assert order.tolist() == list(range(1, 40, 2)) + list(range(0, 40, 2))
    assert sizes.tolist() == [0, 1, 20, 40] and queries.tolist() == [0, 2, 40, 41]


def test_queries_given_as_whole_floats_are_row_numbers() -> None:
    got = predict_as_submitted(POINTS[:4], LABELS[:4], FIRST[:4], np.array([2.0, 3.0]), n_neighbors=1, width=1.0)
    assert got.queries.dtype == np.int64 and got.queries.tolist() == [2, 3]
    assert got.mean.tolist() == [1.0, 2.0]  # each query's nearest known row is the one just before it
