"""Feature weights by correlation (by hand) and by a seeded global search that finds the informative feature."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from broker.advisor import tuning
from broker.advisor.tuning import K_RANGE, correlation_weights, online_rmse, search
from workloads.errors import ConfigError


def test_correlation_weights_by_hand() -> None:
    y = np.array([1.0, 1.0, 3.0, 3.0])
    X = np.column_stack([2 * y + 1, -y, np.full(4, 7.0), [0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 2, 2]])
    w = correlation_weights(X, y, categorical=[3, 4, 5])
    # |r| = 1 for y's line and its mirror, 0 for a constant; eta = 1 when the category decides y, 0 when not;
    # for groups {1}, {1}, {3, 3}: between-group sum 1 * 1 + 1 * 1 + 2 * 1 = 4 over a total of 4
    np.testing.assert_allclose(w, [1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    assert correlation_weights(X, np.ones(4), categorical=[3]).tolist() == [0.0] * 6  # nothing to explain
    half = correlation_weights(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0.0, 2.0, 1.0, 3.0]))
    assert half[0] == pytest.approx(0.8)  # r of (0, 1, 2, 3) and (0, 2, 1, 3): 4 / 5


def test_the_correlation_ratio_strictly_between_0_and_1_by_hand() -> None:
    # groups {0, 2} and {1, 3}: means 1 and 2 around 1.5, between-group sum 2 * 0.25 + 2 * 0.25 = 1 over a
    # total of 2.25 + 0.25 + 0.25 + 2.25 = 5: eta = sqrt(1 / 5)
    y = np.array([0.0, 2.0, 1.0, 3.0])
    assert correlation_weights(np.array([[0.0], [0.0], [1.0], [1.0]]), y, [0])[0] == pytest.approx(0.2**0.5, rel=1e-15)
    # the same labels 10^7 higher in single precision (exact there) are weighed in double precision
    far = (1e7 + y).astype(np.float32)
    assert correlation_weights(np.array([[0.0], [0.0], [1.0], [1.0]]), far, [0])[0] == pytest.approx(0.2**0.5,
                                                                                                     rel=1e-12)


def test_a_weight_is_never_above_1_even_by_rounding() -> None:
    # a category that decides y: eta is 1, but in floating point the between-group sum comes out
    # above the total (sqrt gives 1.0000000000000002); the weight is clipped to exactly 1
    X, y = np.array([[0.0], [0.0], [0.0], [2.0]]), np.array([0.2, 0.2, 0.2, 0.1])
    assert correlation_weights(X, y, [0]).tolist() == [1.0]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(7)
    n = 240
    X = np.column_stack([rng.uniform(size=n), rng.uniform(size=n)])  # column 0 decides the label, 1 is noise
    y = 100.0 * X[:, 0] + rng.normal(scale=1.0, size=n)
    return X, y, np.arange(n) + 1, np.arange(160, n)  # every label known from the next query on


def test_the_search_weights_the_informative_feature_and_is_repeatable(problem) -> None:
    X, y, first, queries = problem
    found = search(X, y, first, queries, [], fit_rows=160, seed=3, maxiter=4, popsize=4)
    assert found.weights[0] > found.weights[1] and K_RANGE[0] <= found.k <= K_RANGE[1]
    noise_only = online_rmse(X, y, first, queries, [], np.array([0.0, 1.0]), found.k, found.width, 160, found.memory)
    assert found.rmse == pytest.approx(online_rmse(X, y, first, queries, [], found.weights, found.k, found.width,
                                                   160, found.memory))
    assert found.rmse < noise_only / 3
    again = search(X, y, first, queries, [], fit_rows=160, seed=3, maxiter=4, popsize=4)
    assert (again.weights.tolist(), again.k, again.width, again.memory, again.rmse) == (
        found.weights.tolist(), found.k, found.width, found.memory, found.rmse)
    assert found.evaluations == again.evaluations > 0


def test_a_sweep_cells_63_bit_seed_seeds_the_search() -> None:
    X, y = np.zeros((5, 1)), np.zeros(5)
    found = search(X, y, np.arange(5) + 1, np.arange(1, 5), [], fit_rows=5, seed=2**63 - 1, maxiter=1, popsize=1)
    assert found.evaluations > 0


@pytest.mark.parametrize("width_range", [(1.0, 0.5), (0.5, 0.5), (0.0, 1.0), (-1.0, 1.0)])
def test_a_bad_width_range_is_refused(problem, width_range) -> None:
    X, y, first, queries = problem
    with pytest.raises(ConfigError, match="width_range must be 0 < low < high"):
        search(X, y, first, queries, [], fit_rows=160, seed=0, width_range=width_range)


def test_the_online_rmse_by_hand_with_a_category_and_an_empty_past() -> None:
    # one column, a category: row 2's value 9 was seen in fitting but differs from both 0 and 10, so
    # rows 0 and 1 are equally far (w) and k = 1 takes the earlier, row 0 (label 5) against 7: error 2
    X, y, first = np.array([[0.0], [10.0], [9.0]]), np.array([5.0, 7.0, 7.0]), np.array([1, 2, 3])
    assert online_rmse(X, y, first, np.array([2]), [0], np.array([1.0]), 1, 1.0, 3) == pytest.approx(2.0)
    # as a number, 9 is nearest 10: no error
    assert online_rmse(X, y, first, np.array([2]), [], np.array([1.0]), 1, 1.0, 3) == 0.0
    # row 0 has no past: it counts as predicting 0 against 5
    assert online_rmse(X, y, first, np.array([0]), [0], np.array([1.0]), 1, 1.0, 3) == 5.0
    assert online_rmse(X, y, first, np.array([0, 2]), [0], np.array([1.0]), 1, 1.0, 3) == pytest.approx(
        ((25 + 4) / 2) ** 0.5)


def _recording(monkeypatch, best_k: int) -> list:
    """A stand-in for the k-NN's RMSE, cheap and with a known optimum: k = best_k, weights 0, width 0.01."""
    tried: list = []

    def fake(X, y, first, queries, categorical, weights, k, width, fit_rows, memory=None):
        cost = 100.0 + (k - best_k) ** 2 + float(np.sum(weights)) + abs(np.log(width / 0.01))
        tried.append((weights.copy(), k, width, cost))
        return cost

    monkeypatch.setattr(tuning, "online_rmse", fake)
    return tried


@pytest.mark.parametrize("best_k", [K_RANGE[0], K_RANGE[1]])
def test_the_search_tries_only_its_ranges_reaches_both_ends_of_k_and_returns_its_best(monkeypatch, best_k) -> None:
    tried = _recording(monkeypatch, best_k)
    X, y = np.zeros((5, 2)), np.zeros(5)
    found = search(X, y, np.arange(5) + 1, np.arange(5), [], fit_rows=5, seed=3, maxiter=20, popsize=5)
    # a population of popsize x 5 parameters (2 weights, k, the width, the memory), evaluated once and then in
    # each of maxiter generations: tol = 0 never stops early, and no polishing afterwards
    assert found.evaluations == len(tried) == 5 * 5 * (20 + 1)
    weights, ks, widths = np.array([t[0] for t in tried]), [t[1] for t in tried], [t[2] for t in tried]
    assert weights.min() >= 0.0 and 0.9 < weights.max() <= 1.0
    assert K_RANGE[0] <= min(ks) and max(ks) <= K_RANGE[1] and found.k == best_k
    assert 1e-3 <= min(widths) < 2e-3 and 0.5 < max(widths) <= 1.0  # log-uniform over (1e-3, 1)
    best = min(tried, key=lambda t: t[3])
    assert (found.weights.tolist(), found.k, found.width, found.rmse) == (best[0].tolist(), best[1], best[2], best[3])


def test_the_default_budget_is_a_population_of_10_per_parameter_for_20_generations(monkeypatch) -> None:
    tried = _recording(monkeypatch, 10)
    found = search(np.zeros((5, 1)), np.zeros(5), np.arange(5) + 1, np.arange(5), [], fit_rows=5, seed=0)
    assert found.evaluations == len(tried) == 10 * 4 * (20 + 1)


# --- Tuning by hand: a column constant in single precision, and the exact settings of the global search -----------
# Every expected value is worked by hand.


def test_a_column_constant_in_single_precision_weighs_0() -> None:
    # seven times 0.1 in float32: in single precision its mean is not exactly 0.1, so its deviation is not 0;
    # in double precision the column is exactly constant and explains nothing of the labels
    X = np.full((7, 1), 0.1, dtype=np.float32)
    assert correlation_weights(X, np.arange(7.0)).tolist() == [0.0]


def test_the_search_is_a_seeded_deferred_differential_evolution_without_polishing(monkeypatch) -> None:
    calls: list = []

    def fake(cost, bounds, **settings):
        calls.append((bounds, settings))
        # the best point: weights 0.25 and 0.5, k 7.9 (7 once truncated), log width log 0.01, a memory of 150
        # jobs (more than the 4 the last query knows: every known job)
        return SimpleNamespace(x=np.array([0.25, 0.5, 7.9, math.log(0.01), math.log(150)]), fun=12.5, nfev=96)

    monkeypatch.setattr(tuning, "differential_evolution", fake)
    X, y = np.zeros((5, 2)), np.zeros(5)
    found = search(X, y, np.arange(5) + 1, np.arange(5), [], fit_rows=5, seed=3, maxiter=7, popsize=4,
                   width_range=(0.01, 2.0))
    bounds, settings = calls[0]
    # the memory from 100 jobs to the most a query knows, at least 101 (queries 0..4 know at most 4 rows)
    assert bounds == [(0.0, 1.0), (0.0, 1.0), (6, 33.999), (math.log(0.01), math.log(2.0)),
                      (math.log(100), math.log(101))]
    generator = settings.pop("seed")  # one generator seeded by the seed
    assert generator.random() == np.random.default_rng(3).random()
    assert settings == {"maxiter": 7, "popsize": 4, "polish": False, "tol": 0.0, "updating": "deferred", "x0": None}
    assert found.weights.tolist() == [0.25, 0.5] and found.k == 7 and found.width == pytest.approx(0.01, rel=1e-15)
    assert found.memory is None
    assert (found.rmse, found.evaluations) == (12.5, 96)


def test_the_search_also_sizes_the_knowledge_base_within_its_bounds(problem) -> None:
    X, y, first, queries = problem
    found = search(X, y, first, queries, [], fit_rows=160, seed=3, maxiter=2, popsize=4)
    # queries 160..239 know up to 239 rows: a memory of at least 100 below that, or every known row
    assert found.memory is None or tuning.LEAST_MEMORY <= found.memory < 239
    assert found.rmse == pytest.approx(online_rmse(X, y, first, queries, [], found.weights, found.k, found.width,
                                                   160, found.memory))


def _fake_search(setting: tuning.Setting, seen: list):
    def fake(X, y, first, queries, categorical, **kwargs):
        seen.append((queries.tolist(), kwargs["start"]))
        return tuning.Tuned(setting.weights, setting.k, setting.width, 0.0, 1, setting.memory)
    return fake


def test_the_tuning_keeps_the_search_only_where_it_beats_the_given_setting_on_entries_it_never_saw(
        problem, monkeypatch) -> None:
    X, y, first, queries = problem  # 80 queries: the search sees the first 53, 27 are held out
    informative, noise = tuning.Setting(np.array([1.0, 0.0]), 5, 0.05), tuning.Setting(np.array([0.0, 1.0]), 5, 0.05)
    seen: list = []
    monkeypatch.setattr(tuning, "search", _fake_search(informative, seen))
    kept = tuning.tune_knn(X, y, first, queries, [], fit_rows=160, seed=0, given=noise)
    assert seen == [(list(range(160, 213)), noise)] and kept.held_out == 27
    assert kept.chosen == "search" and kept.weights.tolist() == [1.0, 0.0]
    assert kept.held_out_rmse < kept.given_held_out_rmse
    assert kept.rmse == pytest.approx(online_rmse(X, y, first, queries, [], informative.weights, 5, 0.05, 160))
    monkeypatch.setattr(tuning, "search", _fake_search(noise, []))
    refused = tuning.tune_knn(X, y, first, queries, [], fit_rows=160, seed=0, given=informative)
    assert refused.chosen == "given" and refused.weights.tolist() == [1.0, 0.0]
    assert refused.held_out_rmse > refused.given_held_out_rmse and refused.searched.weights.tolist() == [0.0, 1.0]


def test_a_search_no_better_than_the_given_setting_on_the_held_out_entries_is_not_kept(problem, monkeypatch) -> None:
    X, y, first, queries = problem
    same = tuning.Setting(np.array([1.0, 0.0]), 5, 0.05)
    monkeypatch.setattr(tuning, "search", _fake_search(tuning.Setting(np.array([1.0, 0.0]), 5, 0.05, None), []))
    tie = tuning.tune_knn(X, y, first, queries, [], fit_rows=160, seed=0, given=same)
    assert tie.chosen == "given" and tie.held_out_rmse == tie.given_held_out_rmse


@pytest.mark.parametrize(("n", "held_out", "words"), [(1, 1 / 3, "at least 2 tuning entries"),
                                                        (5, 0.0, "strictly between 0 and 1"),
                                                        (5, 1.0, "strictly between 0 and 1")])
def test_too_few_tuning_entries_or_a_bad_held_out_share_are_refused(problem, n, held_out, words) -> None:
    X, y, first, queries = problem
    with pytest.raises(ConfigError, match=words):
        tuning.tune_knn(X, y, first, queries[:n], [], fit_rows=160, seed=0, held_out=held_out,
                        given=tuning.Setting(np.ones(2), 5, 0.1))


def test_two_tuning_entries_are_enough_one_searched_one_held_out(problem, monkeypatch) -> None:
    X, y, first, queries = problem
    seen: list = []
    given = tuning.Setting(np.ones(2), 5, 0.1)
    monkeypatch.setattr(tuning, "search", _fake_search(given, seen))
    kept = tuning.tune_knn(X, y, first, queries[:2], [], fit_rows=160, seed=0, given=given)
    assert seen[0][0] == [160] and kept.held_out == 1


def test_the_search_starts_from_the_given_setting_clipped_to_its_bounds(monkeypatch) -> None:
    calls: list = []

    def fake(cost, bounds, **settings):
        calls.append(settings["x0"])
        return SimpleNamespace(x=np.array([0.25, 0.5, 7.9, math.log(0.01), math.log(100.4)]), fun=1.0, nfev=1)

    monkeypatch.setattr(tuning, "differential_evolution", fake)
    X, y = np.zeros((300, 2)), np.zeros(300)
    start = tuning.Setting(np.array([0.2, 1.5]), 1, 0.1, None)  # weight 1.5 and k 1 lie outside the bounds
    found = search(X, y, np.arange(300) + 1, np.arange(200, 300), [], fit_rows=200, seed=0, start=start)
    # every known job stands as the most a query knows (299); 100.4 jobs round to a memory of 100
    np.testing.assert_allclose(calls[0], [0.2, 1.0, 6, math.log(0.1), math.log(299)])
    assert found.memory == 100
