"""A backend-neutral mixed-integer linear program, built once and translated by each backend.

Variables have bounds and an integrality flag; constraints are sparse rows ``sum a_v x_v (<=, >=,
==) rhs``; the objective is minimised and may carry a constant. Each backend (:mod:`solvers.cbc`,
:mod:`solvers.cpsat`) translates this structure; nothing here knows any solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Sense = Literal["<=", ">=", "=="]


@dataclass(frozen=True, slots=True)
class Row:
    """One linear constraint ``sum(coef[t] * x[idx[t]]) sense rhs``."""

    idx: tuple[int, ...]
    coef: tuple[float, ...]
    sense: Sense
    rhs: float
    name: str


@dataclass(slots=True)
class MipModel:
    """A minimisation MILP (see the module docstring)."""

    name: str = "model"
    names: list[str] = field(default_factory=list)
    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    obj: dict[int, float] = field(default_factory=dict)
    obj_constant: float = 0.0
    rows: list[Row] = field(default_factory=list)

    @property
    def n_vars(self) -> int:
        """Number of variables."""
        return len(self.names)

    def add_var(self, name: str, lb: float = 0.0, ub: float = 1.0, *, integer: bool = True, cost: float = 0.0) -> int:
        """Add a variable (binary by default) and return its index."""
        if lb > ub:
            raise ValueError(f"variable {name}: lb {lb} > ub {ub}")
        self.names.append(name)
        self.lb.append(float(lb))
        self.ub.append(float(ub))
        self.integer.append(integer)
        if cost:
            self.obj[len(self.names) - 1] = float(cost)
        return len(self.names) - 1

    def add_row(self, idx: list[int] | tuple[int, ...], coef: list[float] | tuple[float, ...], sense: Sense,
                rhs: float, name: str) -> None:
        """Add the constraint ``sum(coef * x[idx]) sense rhs``."""
        if len(idx) != len(coef):
            raise ValueError(f"row {name}: {len(idx)} indices but {len(coef)} coefficients")
        if sense not in ("<=", ">=", "=="):
            raise ValueError(f"row {name}: unknown sense {sense!r}")
        self.rows.append(Row(tuple(int(i) for i in idx), tuple(float(c) for c in coef), sense, float(rhs), name))

    def objective(self, values: np.ndarray) -> float:
        """Objective value of a full assignment."""
        return self.obj_constant + sum(c * float(values[i]) for i, c in self.obj.items())

    def violations(self, values: np.ndarray, tol: float = 1e-6) -> list[str]:
        """Names of the bounds, integrality conditions and rows that ``values`` violates."""
        bad = [f"bounds of {n}" for n, v, lo, hi in zip(self.names, values, self.lb, self.ub, strict=True)
               if v < lo - tol or v > hi + tol]
        bad += [f"integrality of {n}" for n, v, is_int in zip(self.names, values, self.integer, strict=True)
                if is_int and abs(v - round(v)) > tol]
        for row in self.rows:
            lhs = sum(c * float(values[i]) for i, c in zip(row.idx, row.coef, strict=True))
            ok = {"<=": lhs <= row.rhs + tol, ">=": lhs >= row.rhs - tol, "==": abs(lhs - row.rhs) <= tol}[row.sense]
            if not ok:
                bad.append(row.name)
        return bad
