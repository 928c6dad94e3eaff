"""CP-SAT backend (OR-Tools): integer programs with integer coefficients.

CP-SAT has no continuous variables and needs integer coefficients: each row (with its right-hand
side) and the objective are scaled by the smallest power of ten (at most 10^6) that makes every
coefficient integral within 1e-9; a model that cannot be scaled, or that has a continuous or an
unbounded variable, comes back as an ERROR result. Objective and bound are scaled back and the
objective constant added, so they are in model units.

Status mapping (the OR-Tools samples accept only OPTIMAL; a time-limited portfolio also needs
FEASIBLE): OPTIMAL, FEASIBLE, INFEASIBLE as such, MODEL_INVALID -> ERROR, UNKNOWN -> NO_SOLUTION.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from ortools.sat.python import cp_model

from solvers.base import Limit, SolveResult, Status, check_start, error_result, keep_better_start, make_result, polish
from solvers.model import MipModel

log = logging.getLogger(__name__)

#: Largest scale tried to make coefficients integral.
MAX_SCALE_EXPONENT = 6
#: Absolute tolerance (on the scaled value, relative above 1) for "integral".
INTEGRAL_TOL = 1e-9
#: CP-SAT may stop a little short of its own limit (seen: 0.97 x with 8 workers on 2 cores).
_CLOCK_SLACK = 0.9
#: Parameters set from the limit or the constructor, refused as extra parameters.
_RESERVED = frozenset({"max_time_in_seconds", "max_deterministic_time", "num_workers", "num_search_workers",
                       "random_seed", "cp_model_presolve"})
_STATUS = {
    cp_model.OPTIMAL: Status.OPTIMAL,
    cp_model.FEASIBLE: Status.FEASIBLE,
    cp_model.INFEASIBLE: Status.INFEASIBLE,
    cp_model.MODEL_INVALID: Status.ERROR,
    cp_model.UNKNOWN: Status.NO_SOLUTION,
}


class Unsupported(ValueError):
    """The model uses something CP-SAT cannot represent (continuous variable, unscalable row)."""


class EmptyDomain(ValueError):
    """An integer variable has no integer between its bounds: the model is infeasible."""


def scale_to_int(coefs: Sequence[float], what: str) -> tuple[int, list[int]]:
    """Smallest ``10**p`` (p <= 6) making every coefficient integral, and the scaled integers.

    Raises
    ------
    Unsupported
        When no such power of ten exists.
    """
    if all(float(c).is_integer() for c in coefs):
        return 1, [int(c) for c in coefs]
    for exponent in range(MAX_SCALE_EXPONENT + 1):
        scale = 10**exponent
        scaled = [c * scale for c in coefs]
        if all(abs(v - round(v)) <= INTEGRAL_TOL * max(1.0, abs(v)) for v in scaled):
            return scale, [round(v) for v in scaled]
    raise Unsupported(f"{what}: coefficients cannot be made integral by a power of ten <= 10^{MAX_SCALE_EXPONENT}")


def _integer_bounds(model: MipModel, k: int) -> tuple[int, int]:
    name, lo, hi = model.names[k], model.lb[k], model.ub[k]
    if not model.integer[k]:
        raise Unsupported(f"continuous variable {name}: CP-SAT supports integer variables only")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise Unsupported(f"variable {name} has an infinite bound [{lo}, {hi}]: CP-SAT needs finite bounds")
    lo_i, hi_i = math.ceil(lo - INTEGRAL_TOL), math.floor(hi + INTEGRAL_TOL)
    if lo_i > hi_i:
        raise EmptyDomain(f"integer variable {name} has no integer in [{lo}, {hi}]")
    return lo_i, hi_i


def to_cp_model(model: MipModel) -> tuple[cp_model.CpModel, list[cp_model.IntVar], int]:
    """Translate ``model``; returns the CP-SAT model, its variables (model order) and the objective scale."""
    cp = cp_model.CpModel()
    variables = [cp.new_int_var(*_integer_bounds(model, k), f"x{k}") for k in range(model.n_vars)]
    for row in model.rows:
        _, ints = scale_to_int([*row.coef, row.rhs], f"row {row.name}")
        expr = cp_model.LinearExpr.weighted_sum([variables[i] for i in row.idx], ints[:-1])
        lower = cp_model.INT_MIN if row.sense == "<=" else ints[-1]
        upper = cp_model.INT_MAX if row.sense == ">=" else ints[-1]
        cp.add_linear_constraint(expr, lower, upper)
    terms = [(i, c) for i, c in model.obj.items() if c]
    scale, obj_ints = scale_to_int([c for _, c in terms], "objective")
    if terms:
        cp.minimize(cp_model.LinearExpr.weighted_sum([variables[i] for i, _ in terms], obj_ints))
    return cp, variables, scale


class CpSatSolver:
    """OR-Tools CP-SAT.

    Parameters
    ----------
    num_workers : int or None
        Search workers under a wall limit; None uses ``limit.threads``. A deterministic limit
        always uses one worker.
    presolve : bool
        False sets ``cp_model_presolve = False``.
    seed : int
        CP-SAT ``random_seed``.
    **params
        Further ``SatParameters`` fields (e.g. ``log_search_progress=True``); the limit, worker,
        seed and presolve fields are refused here (ValueError), as is an unknown field.

    Notes
    -----
    ``Limit.wall`` sets ``max_time_in_seconds``; ``Limit.deterministic(work)`` sets
    ``max_deterministic_time = work`` (CP-SAT deterministic seconds) with one worker. A warm start
    becomes a hint on every variable (``add_hint``). Of the :data:`~solvers.base.COMMON_OPTIONS` it
    takes ``presolve``.
    """

    name: str = "cpsat"
    common_options: ClassVar[frozenset[str]] = frozenset({"presolve"})

    def __init__(self, *, num_workers: int | None = None, presolve: bool = True, seed: int = 0, **params: Any) -> None:
        reserved = sorted(_RESERVED & params.keys())
        if reserved:
            raise ValueError(f"CpSatSolver: set {reserved} through Limit / num_workers / seed / presolve")
        if num_workers is not None and num_workers < 1:
            raise ValueError(f"CpSatSolver: num_workers must be >= 1, got {num_workers}")
        self.num_workers = num_workers
        self.presolve = presolve
        self.seed = seed
        self.params = dict(params)
        self._active: cp_model.CpSolver | None = None
        self._configure(cp_model.CpSolver(), Limit.wall(1.0))  # an unknown field fails here, not in solve

    @classmethod
    def deterministic_limit(cls, seconds: float) -> Limit:
        """``seconds`` of CP-SAT's deterministic time (its own unit, one worker): 2.0 s -> 2.0."""
        return Limit.deterministic(seconds)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_active": None}

    def interrupt(self) -> None:
        """Stop the search running in another thread now; its solve returns what it has found."""
        active = self._active
        if active is not None:
            active.stop_search()

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        """Solve ``model`` with CP-SAT within ``limit`` (see :class:`solvers.base.Solver`)."""
        t0 = time.perf_counter()
        try:
            return self._solve(model, limit, start, t0)
        except EmptyDomain as exc:
            return make_result(model, Status.INFEASIBLE, None, backend=self.name, limit=limit,
                               wall_s=time.perf_counter() - t0, message=f"cpsat: {exc}")
        except Exception as exc:  # a backend failure of any kind is a result, never an exception
            return error_result(self.name, limit, time.perf_counter() - t0, f"cpsat: {type(exc).__name__}: {exc}")

    def _solve(self, model: MipModel, limit: Limit, start: np.ndarray | None, t0: float) -> SolveResult:
        start_arr = check_start(model, start)
        cp, variables, scale = to_cp_model(model)
        if start_arr is not None:
            for var, value in zip(variables, np.rint(start_arr).astype(np.int64).tolist(), strict=True):
                cp.add_hint(var, value)
        solver = cp_model.CpSolver()
        self._configure(solver, limit)
        self._active = solver
        try:
            code = solver.solve(cp)
        finally:
            self._active = None
        return keep_better_start(model, self._result(model, cp, solver, code, scale, limit, t0), start_arr)

    def _configure(self, solver: cp_model.CpSolver, limit: Limit) -> None:
        params = solver.parameters
        for key, value in self.params.items():
            setattr(params, key, value)
        params.random_seed = self.seed
        params.cp_model_presolve = self.presolve
        # CP-SAT's own SIGINT handler stops the search quietly (Ctrl-C swallowed) and then resets SIGINT to
        # the default action (the next Ctrl-C kills the process): leave SIGINT to Python (KeyboardInterrupt).
        params.catch_sigint_signal = False
        if limit.work is not None:
            params.max_deterministic_time = limit.work
            params.num_workers = 1
        elif limit.seconds is not None:
            params.max_time_in_seconds = limit.seconds
            params.num_workers = self.num_workers or limit.threads

    def _result(self, model: MipModel, cp: cp_model.CpModel, solver: cp_model.CpSolver, code: Any, scale: int,
                limit: Limit, t0: float) -> SolveResult:
        status = _STATUS.get(code, Status.ERROR)
        message = "" if status.has_solution else f"cpsat: {solver.status_name(code)}"
        if code == cp_model.MODEL_INVALID:
            message = f"cpsat: MODEL_INVALID: {cp.validate()}"
        values = None
        if status.has_solution:
            values = polish(model, [float(v) for v in solver.response_proto.solution])
        const = model.obj_constant
        solver_objective = solver.objective_value / scale + const if status.has_solution else None
        raw_bound = _bound(solver, status)
        bound = raw_bound / scale + const if raw_bound is not None else None
        return make_result(model, status, values, backend=self.name, limit=limit, wall_s=time.perf_counter() - t0,
                           solver_objective=solver_objective, bound=bound,
                           bound_source="cp-sat best_objective_bound",
                           limit_hit=_limit_hit(status, solver, limit), message=message)


def _bound(solver: cp_model.CpSolver, status: Status) -> float | None:
    """CP-SAT's proven bound (scaled units), or None when it has none.

    A search stopped inside presolve reports ``best_objective_bound == 0`` as a mere default (no
    variable loaded yet): not a bound, so it is dropped.
    """
    if status is Status.OPTIMAL:
        return float(solver.best_objective_bound)
    if status not in (Status.FEASIBLE, Status.NO_SOLUTION):
        return None
    response = solver.response_proto
    if response.num_booleans + response.num_integers == 0:
        return None
    return float(solver.best_objective_bound)


def _limit_hit(status: Status, solver: cp_model.CpSolver, limit: Limit) -> bool:
    """True when CP-SAT stopped early (FEASIBLE / UNKNOWN) and its clock reached the limit."""
    if status not in (Status.FEASIBLE, Status.NO_SOLUTION):
        return False
    if limit.work is not None:
        return bool(solver.deterministic_time >= _CLOCK_SLACK * limit.work)
    return bool(solver.wall_time >= _CLOCK_SLACK * (limit.seconds or 0.0))
