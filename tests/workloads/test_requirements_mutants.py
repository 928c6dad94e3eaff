"""Requirement models on their definitions (CoH paper §5.1, ``SPEC.md`` §1): exact values, mutation testing.

``MODELS`` is built once when the module is imported, so the constant models are also checked through the
factory ``_constant`` that builds them: a constant model of value ``v`` gives ``n`` copies of ``v`` as float64.
"""

from __future__ import annotations

import numpy as np

from workloads.requirements import MODELS, _constant, requirements


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
