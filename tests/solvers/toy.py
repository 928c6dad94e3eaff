"""A backend added the way any new one is: this module plus one registry line, nothing in ``broker``.

:class:`ToySolver` is CBC under another name, with its own reading of a time limit under a
deterministic limit (ten nodes a second, :data:`NODES_PER_SECOND`) and none of the common options
(its constructor takes no argument, so being given ``presolve`` would fail). The registry line is
``register_solver(NAME, TARGET)``, made for one test at a time by the ``toy_solver`` fixture.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np

from solvers.base import Limit, SolveResult
from solvers.cbc import CbcSolver
from solvers.model import MipModel

NAME = "toy"
TARGET = "tests.solvers.toy:ToySolver"
#: The toy's unit: branch-and-bound nodes per second of a time limit.
NODES_PER_SECOND = 10


class ToySolver:
    """CBC under the name ``toy``: ten nodes a second of a deterministic limit, no common option."""

    name: str = NAME
    common_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        self._cbc = CbcSolver()

    @classmethod
    def deterministic_limit(cls, seconds: float) -> Limit:
        """:data:`NODES_PER_SECOND` nodes per second of ``seconds``, at least one."""
        return Limit.deterministic(float(max(1, round(NODES_PER_SECOND * seconds))))

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        """CBC's result, under the toy's name."""
        return replace(self._cbc.solve(model, limit=limit, start=start), backend=self.name)
