"""Resource-requirement models (CoH paper §5.1): heterogeneous 10 * U{1..10}, two constants."""

from __future__ import annotations

import numpy as np
import pytest

from workloads.requirements import MODELS, _constant, requirements


def test_model_names() -> None:
    assert sorted(MODELS) == ["constant-10", "constant-100", "heterogeneous"]


def test_heterogeneous_values_are_multiples_of_ten_up_to_one_hundred() -> None:
    r = requirements("heterogeneous", 50_000, seed=0)
    assert r.dtype == np.float64 and r.shape == (50_000,)
    values, counts = np.unique(r, return_counts=True)
    assert values.tolist() == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    # Uniform: each value 1/10 of the draws, within 4 binomial standard errors.
    se = np.sqrt(len(r) * 0.1 * 0.9)
    assert np.abs(counts - len(r) / 10).max() < 4 * se
    assert r.mean() == pytest.approx(55.0, abs=4 * r.std() / np.sqrt(len(r)))


@pytest.mark.parametrize(("model", "value"), [("constant-100", 100.0), ("constant-10", 10.0)])
def test_constant_models_are_exact(model: str, value: float) -> None:
    r = requirements(model, 1000, seed=None)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, np.full(1000, value))


def test_same_seed_same_draws_different_seed_different() -> None:
    first = requirements("heterogeneous", 500, seed=11)
    np.testing.assert_array_equal(first, requirements("heterogeneous", 500, seed=11))
    np.testing.assert_array_equal(
        first, requirements("heterogeneous", 500, seed=np.random.SeedSequence(11))
    )
    assert not np.array_equal(first, requirements("heterogeneous", 500, seed=12))


def test_zero_jobs_and_unknown_model() -> None:
    assert requirements("heterogeneous", 0, seed=0).shape == (0,)
    with pytest.raises(ValueError, match="unknown requirement model 'tiny'"):
        requirements("tiny", 3, seed=0)


# Requirement models on their definitions (CoH paper §5.1, ``SPEC.md`` §1): exact values.
#
# ``MODELS`` is built once when the module is imported, so the constant models are also checked through the
# factory ``_constant`` that builds them: a constant model of value ``v`` gives ``n`` copies of ``v`` as float64.


def test_a_constant_model_gives_n_copies_of_its_value_as_float64() -> None:
    model = _constant(100.0)
    draw = model(3, np.random.default_rng(0))
    assert draw.dtype == np.float64
    assert draw.tolist() == [100.0, 100.0, 100.0]  # r = 100 for every job, three jobs
    assert _constant(10.0)(2, np.random.default_rng(0)).tolist() == [10.0, 10.0]
    assert _constant(10.0)(0, np.random.default_rng(0)).tolist() == []  # zero jobs: an empty array


def test_the_named_constant_models_are_the_documented_values() -> None:
    assert requirements("constant-100", 4, seed=None).tolist() == [100.0] * 4
    assert requirements("constant-10", 1, seed=None).tolist() == [10.0]
    assert sorted(MODELS) == ["constant-10", "constant-100", "heterogeneous"]
