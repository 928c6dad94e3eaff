"""Predictions as each job is submitted: exactly the k-NN of its own past, and blind to what came later."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from broker.advisor import online
from broker.advisor.features import CATEGORIES, NUMBERS, known, submission_features
from broker.advisor.knn import HeomEmbedding, stable_weights, weighted_variance
from broker.advisor.online import first_known, predict_as_submitted
from tests.conftest import trace_path
from workloads.errors import ConfigError
from workloads.swf import read_swf

COLUMNS = [*CATEGORIES, *NUMBERS]


@pytest.fixture(scope="module")
def kth():
    swf = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    frame, _ = submission_features(swf.frame.iloc[:1400], max_procs=100, unix_start=swf.header.unix_start_time,
                                   time_zone=swf.header.time_zone_string)
    features = frame[COLUMNS].fillna(0.0).to_numpy()
    embedded = HeomEmbedding(categorical=[0, 1, 2]).fit(features[:1000]).transform(features)
    return frame, embedded


def refit_each_time(frame, embedded, label, queries, k, width):
    """The reference: a fresh neighbour search over exactly the rows known at each query."""
    y = frame[label].to_numpy()
    mean, std = [], []
    for i in queries:
        rows = np.flatnonzero(known(frame, i, label))
        d, j = NearestNeighbors(n_neighbors=min(k, len(rows))).fit(embedded[rows]).kneighbors(embedded[[i]])
        m, var = weighted_variance(y[rows][j], stable_weights(d, width))
        mean.append(m[0])
        std.append(np.sqrt(var[0]))
    return np.array(mean), np.array(std)


@pytest.mark.parametrize("label", ["wait_s", "run_s"])
def test_online_predictions_equal_a_refit_on_each_querys_own_past(kth, label: str) -> None:
    frame, embedded = kth
    queries = np.arange(1100, 1300)
    got = predict_as_submitted(embedded, frame[label].to_numpy(), first_known(frame, label), queries,
                               n_neighbors=12, width=0.2, rebuild_every=24)
    mean, std = refit_each_time(frame, embedded, label, queries, 12, 0.2)
    np.testing.assert_allclose(got.mean, mean, rtol=1e-9)  # distances summed in another order: last-bit differences
    np.testing.assert_allclose(got.std, std, rtol=1e-9)
    assert got.known.tolist() == [int(known(frame, i, label).sum()) for i in queries]


def test_a_label_not_yet_known_cannot_change_a_prediction(kth) -> None:
    frame, embedded = kth
    label, i = "run_s", 1200
    first = first_known(frame, label)
    y = frame[label].to_numpy().copy()
    before = predict_as_submitted(embedded, y, first, np.array([i]), n_neighbors=8, width=0.2)
    pending = np.flatnonzero(~known(frame, i, label))  # later jobs, and earlier ones still running at the query
    assert (pending < i).any()
    y[pending] = 1e9  # labels the query must not see
    after = predict_as_submitted(embedded, y, first, np.array([i]), n_neighbors=8, width=0.2)
    assert (after.mean[0], after.std[0]) == (before.mean[0], before.std[0])
    y[np.flatnonzero(known(frame, i, label))] += 1000.0  # labels it does see: the prediction moves with them
    moved = predict_as_submitted(embedded, y, first, np.array([i]), n_neighbors=8, width=0.2)
    assert moved.mean[0] == pytest.approx(before.mean[0] + 1000.0)


def test_a_first_query_with_no_past_predicts_nothing(kth) -> None:
    frame, embedded = kth
    got = predict_as_submitted(embedded, frame["wait_s"].to_numpy(), first_known(frame, "wait_s"), np.array([0]),
                               n_neighbors=5, width=1.0)
    assert np.isnan(got.mean[0]) and got.std[0] == np.inf and got.known[0] == 0


def test_first_known_by_hand() -> None:
    import pandas as pd

    frame = pd.DataFrame({"submit_s": [0.0, 10.0, 10.0, 30.0], "wait_known_at": [10.0, 25.0, 10.0, 30.0],
                          "run_known_at": [40.0, 26.0, 10.0, 99.0]})
    # row 0's wait is known at 10: the first query at or after 10 is row 1; row 2's at 10, but only from row 3
    assert first_known(frame, "wait_s").tolist() == [1, 3, 3, 4]
    assert first_known(frame, "run_s").tolist() == [4, 3, 3, 4]
    with pytest.raises(ConfigError, match="label"):
        first_known(frame, "cost")


def test_bad_arguments_are_refused(kth) -> None:
    frame, embedded = kth
    y, first = frame["wait_s"].to_numpy(), first_known(frame, "wait_s")
    with pytest.raises(ConfigError, match="ascending"):
        predict_as_submitted(embedded, y, first, np.array([5, 3]), n_neighbors=3, width=1.0)
    with pytest.raises(ConfigError, match="n_neighbors"):
        predict_as_submitted(embedded, y, first, np.array([5]), n_neighbors=0, width=1.0)


# four rows on a line, each known from the next query on; row 3 (at 0.5) is as far from row 0 as from row 1
LINE = np.array([[0.0], [1.0], [3.0], [0.5]])
LINE_LABELS = np.array([10.0, 20.0, 40.0, 99.0])


@pytest.mark.parametrize("rebuild_every", [1, 2, 256])
def test_predictions_on_a_line_by_hand(rebuild_every: int) -> None:
    first = np.arange(4) + 1
    got = predict_as_submitted(LINE, LINE_LABELS, first, np.arange(4), n_neighbors=5, width=1.0,
                               rebuild_every=rebuild_every)
    assert got.queries.tolist() == [0, 1, 2, 3] and got.known.tolist() == [0, 1, 2, 3]
    assert np.isnan(got.mean[0]) and got.std[0] == np.inf  # no past
    # one known row (k = 5 asks for more): its label, and no spread to speak of; rows 1..3 are not yet known
    assert (got.mean[1], got.std[1]) == (10.0, np.inf)
    # rows 0 and 1 at 3 and 2: weights e^-9 and e^-4 (normalised); two labels 10 apart: variance 10^2 / 2
    v0 = 1 / (1 + np.exp(5.0))
    assert got.mean[2] == pytest.approx(20 - 10 * v0, rel=1e-12) and got.std[2] == pytest.approx(50**0.5, rel=1e-12)
    # rows 0, 1, 2 at 0.5, 0.5 and 2.5: kernel terms 1, 1, e^-6 once shifted by the nearest
    assert got.mean[3] == pytest.approx((10 + 20 + 40 * np.exp(-6.0)) / (2 + np.exp(-6.0)), rel=1e-12)


@pytest.mark.parametrize("rebuild_every", [1, 256])
def test_one_neighbour_and_a_tie_goes_to_the_earlier_row(rebuild_every: int) -> None:
    got = predict_as_submitted(LINE, LINE_LABELS, np.arange(4) + 1, np.array([3]), n_neighbors=1, width=1.0,
                               rebuild_every=rebuild_every)
    assert (got.mean[0], got.std[0], got.known[0]) == (10.0, np.inf, 3)  # rows 0 and 1 both 0.5 away: row 0


@pytest.mark.parametrize(("k", "width", "every"), [(0, 1.0, 1), (1, 0.0, 1), (1, -1.0, 5), (1, 1.0, 0)])
def test_a_neighbour_a_positive_width_and_a_rebuild_step_are_needed(k: int, width: float, every: int) -> None:
    with pytest.raises(ConfigError, match=r"^need n_neighbors >= 1, width > 0 and rebuild_every >= 1$"):
        predict_as_submitted(LINE, LINE_LABELS, np.arange(4) + 1, np.array([3]), n_neighbors=k, width=width,
                             rebuild_every=every)


def test_a_query_may_be_asked_twice_but_not_out_of_order() -> None:
    got = predict_as_submitted(LINE, LINE_LABELS, np.arange(4) + 1, np.array([2, 2]), n_neighbors=5, width=1.0)
    assert got.queries.tolist() == [2, 2] and got.mean[0] == got.mean[1] == pytest.approx(20 - 10 / (1 + np.exp(5.0)))
    with pytest.raises(ConfigError, match=r"^queries must be in ascending order$"):
        predict_as_submitted(LINE, LINE_LABELS, np.arange(4) + 1, np.array([3, 2]), n_neighbors=5, width=1.0)


def test_the_searches_run_on_one_openmp_thread_whatever_the_callers_limit(monkeypatch) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    seen: list[int] = []
    inner = online._predict

    def spy(*args):
        seen.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "openmp")
        return inner(*args)

    monkeypatch.setattr(online, "_predict", spy)
    with threadpool_limits(limits=2, user_api="openmp"):
        got = predict_as_submitted(LINE, LINE_LABELS, np.arange(4) + 1, np.array([3]), n_neighbors=1, width=1.0)
    assert got.mean.tolist() == [10.0] and seen and set(seen) == {1}


# --- Predictions as submitted: when the neighbour index is rebuilt, and which thread pool the searches limit ------
# Every expected value is worked by hand.


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


# Five rows on a line, each known from the next query on; row 0 sits where the query (row 4) is.
MEMORY_ROWS = np.array([[3.5], [0.0], [1.0], [2.0], [3.5]])
MEMORY_LABELS = np.array([10.0, 20.0, 30.0, 40.0, 50.0])


@pytest.mark.parametrize(("memory", "expected"), [(None, 10.0), (5, 10.0), (4, 10.0), (3, 40.0), (1, 40.0)])
def test_a_bounded_memory_forgets_the_oldest_known_rows(memory, expected) -> None:
    # query 4 knows rows 0..3; the last 3 known are rows 1..3, whose nearest is row 3 (label 40); with row 0
    # remembered (memory 4 exactly the knowledge base, or more) its distance 0 wins (label 10)
    got = predict_as_submitted(MEMORY_ROWS, MEMORY_LABELS, np.arange(5) + 1, np.array([4]), n_neighbors=1, width=1.0,
                               memory=memory)
    assert got.mean.tolist() == [expected] and got.known.tolist() == [min(4, memory or 4)]


def test_a_memory_smaller_than_k_uses_the_rows_it_holds() -> None:
    # memory 2 at query 4: rows 2 and 3 only, though k = 3; equal kernel weights with a wide kernel
    got = predict_as_submitted(MEMORY_ROWS, MEMORY_LABELS, np.arange(5) + 1, np.array([4]), n_neighbors=3, width=1e6,
                               memory=2)
    assert got.mean.tolist() == pytest.approx([35.0]) and got.known.tolist() == [2]


def test_a_memory_as_large_as_every_past_predicts_as_no_memory() -> None:
    rng = np.random.default_rng(5)
    embedded, labels = rng.normal(size=(600, 3)), rng.normal(size=600)
    first = np.arange(600) + 1 + rng.integers(0, 40, size=600)
    queries = np.arange(300, 600)
    whole = predict_as_submitted(embedded, labels, first, queries, n_neighbors=5, width=0.7)
    bounded = predict_as_submitted(embedded, labels, first, queries, n_neighbors=5, width=0.7, memory=600)
    # the same neighbours; distances from the index and from a direct search differ in the last bits only
    np.testing.assert_allclose(bounded.mean, whole.mean, rtol=1e-9, atol=1e-12)
    assert bounded.known.tolist() == whole.known.tolist()


@pytest.mark.parametrize("memory", [0, -3, True])
def test_a_memory_below_1_is_refused(memory) -> None:
    with pytest.raises(ConfigError, match="the knowledge base's size \\(memory\\) must be at least 1"):
        predict_as_submitted(MEMORY_ROWS, MEMORY_LABELS, np.arange(5) + 1, np.array([4]), n_neighbors=1, width=1.0,
                             memory=memory)


def test_a_bounded_memory_searches_on_one_thread_of_each_pool(monkeypatch) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    seen: dict[str, set[int]] = {}
    inner = online._predict_sliding

    def spy(*args):
        for pool in threadpool_info():
            seen.setdefault(pool["user_api"], set()).add(pool["num_threads"])
        return inner(*args)

    monkeypatch.setattr(online, "_predict_sliding", spy)
    with threadpool_limits(limits=2):
        predict_as_submitted(MEMORY_ROWS, MEMORY_LABELS, np.arange(5) + 1, np.array([4]), n_neighbors=1, width=1.0,
                             memory=2)
    assert seen["openmp"] == {1} and seen["blas"] == {1}
