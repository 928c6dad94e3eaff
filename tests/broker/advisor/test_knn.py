"""The k-NN estimator: stable weights, the weighted variance, HEOM by hand, and scikit-learn's estimator checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from broker.advisor.knn import HeomEmbedding, KernelKNN, stable_weights, weighted_variance


def test_stable_weights_equal_the_kernel_ratios_where_the_kernels_do_not_underflow() -> None:
    d = np.array([[0.5, 1.0, 2.0]])
    kernel = np.exp(-((d / 1.5) ** 2))
    np.testing.assert_allclose(stable_weights(d, 1.5), kernel / kernel.sum(), rtol=1e-14)


def test_stable_weights_survive_when_every_kernel_underflows() -> None:
    d = np.array([[30.0, 31.0, 40.0]])  # (d / width)^2 = 900, 961, 1600: exp(-900) is 0.0 in double precision
    assert np.all(np.exp(-(d**2)) == 0.0)  # the naive weights would be 0 / 0
    v = stable_weights(d, 1.0)
    assert np.all(np.isfinite(v)) and v.sum() == pytest.approx(1.0)
    # v_0 = 1 / (1 + e^-61 + e^-700), v_1 = e^-61 v_0, v_2 = e^-700 v_0 (underflows to 0 relative to 1)
    assert v[0, 0] == pytest.approx(1 / (1 + math.exp(-61)), rel=1e-15) and v[0, 1] == pytest.approx(math.exp(-61))
    assert stable_weights(np.array([[7.0, 7.0]]), 0.01).tolist() == [[0.5, 0.5]]  # ties share, however far


def test_the_weighted_unbiased_variance_by_hand() -> None:
    mean, variance = weighted_variance(np.array([[1.0, 3.0]]), np.array([[0.5, 0.5]]))
    assert (mean[0], variance[0]) == (2.0, 2.0)  # two equal weights: the sample variance, ((1-2)^2 + (3-2)^2) / 1
    mean, variance = weighted_variance(np.array([[0.0, 10.0]]), np.array([[0.75, 0.25]]))
    # mean 2.5; spread 0.75 * 6.25 + 0.25 * 56.25 = 18.75; 1 - (0.5625 + 0.0625) = 0.375
    assert (mean[0], variance[0]) == (2.5, 50.0)
    _, alone = weighted_variance(np.array([[4.0, 9.0]]), np.array([[1.0, 0.0]]))
    assert alone[0] == math.inf  # one neighbour holds all the weight: no spread to speak of


def test_heom_distance_by_hand() -> None:
    # column 0 a number (range 10 in training), column 1 a category; weights 2 and 3
    X = np.array([[0.0, 1.0], [10.0, 1.0], [5.0, 2.0]])
    model = KernelKNN(n_neighbors=3, feature_weights=[2.0, 3.0], categorical=[1]).fit(X, [0.0, 1.0, 2.0])
    d, i = model.neighbors_.kneighbors(model.embedding_.transform(np.array([[0.0, 2.0]])))
    by_row = dict(zip(i[0].tolist(), d[0].tolist(), strict=True))
    assert by_row[2] == pytest.approx(math.sqrt((2 * 5 / 10) ** 2))  # same category, 5 apart: 1
    assert by_row[0] == pytest.approx(3.0)  # same number, other category: w = 3
    assert by_row[1] == pytest.approx(math.sqrt(2.0**2 + 3.0**2))  # 10 apart (2) and other category (3)
    d, _ = model.neighbors_.kneighbors(model.embedding_.transform(np.array([[0.0, 7.0]])))  # a category never seen
    assert sorted(d[0].tolist()) == pytest.approx([3.0, math.sqrt(1 + 9), math.sqrt(4 + 9)])


def test_predictions_weight_the_nearest_and_report_their_spread() -> None:
    X = np.array([[0.0], [1.0], [2.0], [10.0]])
    y = np.array([10.0, 20.0, 30.0, 1000.0])
    model = KernelKNN(n_neighbors=2, width=0.05).fit(X, y)  # distances in units of the range 10
    mean, std = model.predict(np.array([[0.5]]), return_std=True)
    assert mean[0] == pytest.approx(15.0) and std[0] == pytest.approx(math.sqrt(50.0))  # two at equal distance
    alone = KernelKNN(n_neighbors=1).fit(X, y)
    mean, std = alone.predict(np.array([[9.0]]), return_std=True)
    assert (mean[0], std[0]) == (1000.0, math.inf)
    far = KernelKNN(n_neighbors=3, width=1e-3).fit(X, y)  # every kernel underflows: the nearest decides
    assert far.predict(np.array([[2.2]]))[0] == pytest.approx(30.0)


@pytest.mark.parametrize("bad", [{"n_neighbors": 0}, {"width": 0.0}, {"width": math.nan},
                                 {"feature_weights": [1.0, -1.0]}, {"feature_weights": [1.0]},
                                 {"categorical": [5]}])
def test_bad_parameters_are_refused_at_fit(bad: dict) -> None:
    with pytest.raises(ValueError):
        KernelKNN(**bad).fit(np.zeros((4, 2)), np.arange(4.0))


@parametrize_with_checks([KernelKNN(), KernelKNN(n_neighbors=3, width=0.5, categorical=[0]), HeomEmbedding(),
                          HeomEmbedding(categorical=[0])])
def test_scikit_learn_estimator_checks(estimator, check) -> None:
    check(estimator)


def test_single_precision_distances_are_weighed_in_double_precision() -> None:
    d = np.array([[0.5, 1.0, 2.0]])  # exact in single precision too
    kernel = np.exp(-((d / 1.5) ** 2))
    np.testing.assert_allclose(stable_weights(d.astype(np.float32), 1.5), kernel / kernel.sum(), rtol=1e-14)


def test_one_row_may_be_given_as_a_flat_array() -> None:
    # two neighbours, whatever their weights: the mean between them and the variance (l0 - l1)^2 / 2
    v = stable_weights(np.array([0.0, 1.0]), 1.0)  # 1 and e^-1, normalised
    np.testing.assert_allclose(v, [1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1))], rtol=1e-15)
    mean, variance = weighted_variance(np.array([10.0, 20.0]), v)
    assert mean == pytest.approx(10 + 10 * v[1], rel=1e-15) and variance == pytest.approx(50.0, rel=1e-12)


def test_labels_given_as_python_objects_are_learnt_as_numbers() -> None:
    X = np.array([[0.0], [1.0], [10.0]])
    model = KernelKNN(n_neighbors=2, width=10.0).fit(X, np.array([10, 20, 1000], dtype=object))
    mean, std = model.predict(np.array([[0.5]]), return_std=True)  # rows 0 and 1, at equal distance
    assert mean.dtype == np.float64 and (mean[0], std[0]) == (15.0, math.sqrt(50.0))


@pytest.mark.parametrize(("bad", "words"), [({"n_neighbors": 0}, "n_neighbors must be an integer >= 1, got 0"),
                                            ({"n_neighbors": -3}, "n_neighbors must be an integer >= 1, got -3"),
                                            ({"n_neighbors": 2.5}, "n_neighbors must be an integer >= 1, got 2.5"),
                                            ({"width": 0.0}, "width must be a finite number > 0, got 0.0"),
                                            ({"width": math.inf}, "width must be a finite number > 0, got inf")])
def test_bad_parameters_are_named_in_the_refusal(bad: dict, words: str) -> None:
    with pytest.raises(ValueError, match=f"^{words}$"):
        KernelKNN(**bad).fit(np.zeros((4, 2)), np.arange(4.0))


def test_a_refused_fit_leaves_the_estimator_unfitted() -> None:
    from sklearn.exceptions import NotFittedError

    model = KernelKNN(n_neighbors=0)
    with pytest.raises(ValueError):
        model.fit(np.zeros((4, 2)), np.arange(4.0))
    with pytest.raises(NotFittedError):
        model.predict(np.zeros((1, 2)))


def test_prediction_refuses_columns_other_than_those_it_learnt() -> None:

    model = KernelKNN(n_neighbors=2).fit(pd.DataFrame({"a": [0.0, 1.0, 2.0], "b": [5.0, 6.0, 7.0]}), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(pd.DataFrame({"b": [5.0], "a": [0.0]}))


def test_each_number_is_divided_by_its_own_range_and_a_constant_one_counts_for_nothing() -> None:
    # ranges 10 and 0.5 in fitting; column 2 is constant there (range 0), so it never adds to a distance
    X = np.array([[0.0, 0.0, 4.0], [10.0, 0.5, 4.0]])
    embedding = HeomEmbedding().fit(X)
    a, b = embedding.transform(np.array([[0.0, 0.0, 4.0], [10.0, 0.5, 1000.0]]))
    assert np.linalg.norm(a - b) == pytest.approx(math.sqrt(1.0 + 1.0), rel=1e-15)
    assert embedding.transform(np.array([[5.0, 0.25, -3.0]])).tolist() == [[0.5, 0.5, 0.0]]


@pytest.mark.parametrize(("bad", "words"), [
    ({"feature_weights": [1.0, None]}, "feature_weights must be 2 finite numbers >= 0, got [1.0, None]"),
    ({"categorical": [2]}, "categorical columns must lie in 0..1, got [2]"),
    ({"categorical": [-1]}, "categorical columns must lie in 0..1, got [-1]")])
def test_bad_embedding_parameters_are_named_in_the_refusal(bad: dict, words: str) -> None:
    with pytest.raises(ValueError, match="^" + words.replace("[", r"\[").replace("]", r"\]") + "$"):
        HeomEmbedding(**bad).fit(np.zeros((3, 2)))


def test_an_embedding_refuses_what_it_was_not_fitted_for() -> None:
    from sklearn.exceptions import NotFittedError

    failed = HeomEmbedding(feature_weights=[-1.0, 1.0])
    with pytest.raises(ValueError):
        failed.fit(np.zeros((3, 2)))
    with pytest.raises(NotFittedError):  # a refused fit leaves it unfitted
        failed.transform(np.zeros((1, 2)))
    embedding = HeomEmbedding(categorical=[1]).fit(np.array([[0.0, 1.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="X has 3 features, but HeomEmbedding is expecting 2 features"):
        embedding.transform(np.zeros((1, 3)))


def test_rows_embedded_together_keep_different_unseen_values_apart() -> None:
    # fitted on users 1 and 2; users 7 and 8 are new: HEOM puts any two different values w apart, seen or not
    embedding = HeomEmbedding(feature_weights=[3.0], categorical=[0]).fit(np.array([[1.0], [2.0]]))
    rows = embedding.embed_together(np.array([[7.0], [8.0], [7.0], [1.0], [2.0]]))
    distance = np.linalg.norm(rows[:, None, :] - rows[None, :, :], axis=-1)
    np.testing.assert_allclose(distance, 3.0 * (1 - np.eye(5)) * (1 - np.array(
        [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])), rtol=1e-12)
    # transform keeps a fixed width (for an estimator's index): an unseen value is w from every seen one
    fixed = embedding.transform(np.array([[7.0], [1.0]]))
    assert fixed.shape == (2, 3) and np.linalg.norm(fixed[0] - fixed[1]) == pytest.approx(3.0)
    # numbers are embedded as transform does
    mixed = HeomEmbedding(categorical=[1]).fit(np.array([[0.0, 1.0], [10.0, 2.0]]))
    together = mixed.embed_together(np.array([[5.0, 9.0], [10.0, 1.0]]))
    assert together[:, 0].tolist() == [0.5, 1.0] and together.shape == (2, 1 + 2 + 1)


# ------------------------------------------------------------------------------------------------------------------
# HEOM's embedding by hand: ranges taken in floating point, the column of unseen values, no warning on a constant
# Every expected value is worked by hand.


def test_a_narrow_integer_column_has_its_range_taken_in_floating_point() -> None:
    # -100 and 100 in int8: the range is 200 (in int8 arithmetic it would wrap around to -56)
    X = np.array([[-100], [100], [0]], dtype=np.int8)
    embedding = HeomEmbedding().fit(X)
    assert embedding.scale_.tolist() == [1 / 200]
    assert embedding.transform(X).tolist() == [[-0.5], [0.5], [0.0]]


def test_the_last_column_of_a_category_marks_a_value_not_seen_in_fitting() -> None:
    # column 0 a number (range 10, weight 1), column 1 a category (weight 2) seen as 1 and 2: its one-hot
    # columns are scaled by 2 / sqrt(2) = sqrt(2), then one column for a value never seen
    embedding = HeomEmbedding(feature_weights=[1.0, 2.0], categorical=[1]).fit(np.array([[0.0, 1.0], [10.0, 2.0]]))
    got = embedding.transform(np.array([[5.0, 2.0], [5.0, 9.0], [0.0, 1.0]]))
    r = math.sqrt(2.0)
    np.testing.assert_allclose(got, [[0.5, 0.0, r, 0.0], [0.5, 0.0, 0.0, r], [0.0, r, 0.0, 0.0]], rtol=1e-15)


def test_a_constant_column_is_fitted_without_a_division_warning() -> None:
    # column 0 is constant (range 0): it weighs 0 whatever its weight, and nothing is divided by its range
    X = np.array([[4.0, 0.0], [4.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for weights in ([1.0, 1.0], [0.0, 1.0]):
            assert HeomEmbedding(feature_weights=weights).fit(X).scale_.tolist() == [0.0, 1.0]
    assert HeomEmbedding().fit(X).transform(np.array([[1000.0, 0.5]])).tolist() == [[0.0, pytest.approx(0.5)]]


# --- the inputs as a caller may give them: numbers as text or in object arrays, missing values --------------------
# Every expected value is worked by hand.


def test_numbers_written_as_text_are_read_as_numbers_by_the_estimator() -> None:
    # X = 0, 2, 4 (range 4): embedded at 0, 0.5, 1; the query 1 sits at 0.25, 0.25 from rows 0 and 1 (labels 1
    # and 2) and 0.75 from row 2. k = 2: equal weights 1/2, mean 1.5, spread 1/2 x 0.5^2 x 2 = 0.25 over
    # 1 - (1/4 + 1/4) = 0.5: variance 0.5
    model = KernelKNN(n_neighbors=2).fit([["0"], ["2"], ["4"]], [1.0, 2.0, 4.0])
    mean, std = model.predict([["1"]], return_std=True)
    assert mean.tolist() == [1.5]
    assert std[0] == pytest.approx(math.sqrt(0.5), rel=1e-15)


def test_the_embedding_reads_text_and_object_arrays_as_double_precision_numbers() -> None:
    # the range of 0 and 4 is 4: 1 embeds at 1/4 and 2 at 1/2
    embedding = HeomEmbedding().fit(np.array([[0.0], [4.0]]))
    assert embedding.transform([["1"]]).tolist() == [[0.25]]
    got = embedding.transform(np.array([[1], [2]], dtype=object))
    assert got.dtype == np.float64 and got.tolist() == [[0.25], [0.5]]


def test_a_missing_value_in_an_object_array_is_refused_in_the_estimators_own_name() -> None:
    X = np.array([[0.0], [np.nan], [4.0]], dtype=object)
    with pytest.raises(ValueError, match="KernelKNN does not accept missing values"):
        KernelKNN(n_neighbors=2).fit(X, [1.0, 2.0, 4.0])
    model = KernelKNN(n_neighbors=2).fit(np.array([[0.0], [2.0], [4.0]]), [1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="KernelKNN does not accept missing values"):
        model.predict(np.array([[np.nan]], dtype=object))
