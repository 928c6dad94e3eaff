"""Backends for testing races: a fixed answer, a failure of each kind, and a slow one that can be interrupted.

Module-level classes, so that joblib's workers can import them.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

from solvers.base import Limit, SolveResult, Status, error_result, make_result
from solvers.model import MipModel


def knapsack() -> MipModel:
    """max 5a + 4b + 3c s.t. 2a + 3b + c <= 4 (as a minimisation): optimum a = c = 1, objective -8."""
    model = MipModel("knapsack")
    a, b, c = (model.add_var(n, cost=-v) for n, v in (("a", 5.0), ("b", 4.0), ("c", 3.0)))
    model.add_row([a, b, c], [2.0, 3.0, 1.0], "<=", 4.0, "weight")
    return model


class Fixed:
    """Returns ``values`` with ``status`` (and ``bound``) after ``delay`` seconds."""

    def __init__(self, name: str, status: Status, values: list[float] | None, bound: float | None = None,
                 delay: float = 0.0) -> None:
        self.name, self.status, self.values, self.bound, self.delay = name, status, values, bound, delay
        self.calls = 0

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        self.calls += 1
        time.sleep(self.delay)
        values = np.array(self.values, dtype=float) if self.values is not None else None
        return make_result(model, self.status, values, backend=self.name, limit=limit, wall_s=self.delay,
                           bound=self.bound)


class Raising:
    """Breaks the backend contract: raises out of ``solve``."""

    name = "raising"

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        raise RuntimeError("the backend fell over")


class Exiting:
    """Kills the process it runs in (a segfaulting solver library, say)."""

    name = "exiting"

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        os._exit(3)


class FailsWithStart:
    """ERROR when given a warm start, the optimum without one (the bundled CBC on some MIP starts)."""

    name = "fails-with-start"

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        if start is not None:
            return error_result(self.name, limit, 0.0, "crashed on the start")
        return make_result(model, Status.OPTIMAL, np.array([1.0, 0.0, 1.0]), backend=self.name, limit=limit,
                           wall_s=0.0, bound=-8.0)


class Sleeper:
    """Searches for up to ``seconds`` (finding nothing) unless interrupted; says which in its message."""

    name = "sleeper"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._stop = threading.Event()

    def __getstate__(self) -> dict[str, object]:
        return {"seconds": self.seconds}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.seconds = float(state["seconds"])  # type: ignore[arg-type]
        self._stop = threading.Event()

    def interrupt(self) -> None:
        self._stop.set()

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        began = time.perf_counter()
        stopped = self._stop.wait(self.seconds)
        return make_result(model, Status.NO_SOLUTION, None, backend=self.name, limit=limit,
                           wall_s=time.perf_counter() - began, message="interrupted" if stopped else "ran out")
