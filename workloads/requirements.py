"""Resource-requirement models for traces that carry none (CoH paper §5.1, ``SPEC.md`` §1).

* ``heterogeneous``: ``r = 10 * U{1..10}`` capacity units, drawn independently per job;
* ``constant-100``: ``r = 100`` for every job;
* ``constant-10``: ``r = 10`` for every job.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from workloads.errors import UnknownName

RequirementModel = Callable[[int, np.random.Generator], np.ndarray]


def _heterogeneous(n: int, rng: np.random.Generator) -> np.ndarray:
    return 10.0 * rng.integers(1, 11, size=n).astype(np.float64)


def _constant(value: float) -> RequirementModel:
    def model(n: int, rng: np.random.Generator) -> np.ndarray:
        return np.full(n, value, dtype=np.float64)

    return model


MODELS: dict[str, RequirementModel] = {
    "heterogeneous": _heterogeneous,
    "constant-100": _constant(100.0),
    "constant-10": _constant(10.0),
}


def requirements(model: str, n: int, *, seed: int | np.random.SeedSequence | None) -> np.ndarray:
    """Draw ``n`` resource requirements (capacity units) from a named model.

    Parameters
    ----------
    model : str
        ``"heterogeneous"``, ``"constant-100"`` or ``"constant-10"``.
    n : int
        Number of jobs.
    seed : int or SeedSequence
        Seed of the one generator this call uses.
    """
    try:
        draw = MODELS[model]
    except KeyError:
        raise UnknownName(f"unknown requirement model {model!r}; choose from {sorted(MODELS)}") from None
    return draw(n, np.random.default_rng(seed))
