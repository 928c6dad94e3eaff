"""The solver interface: status, limits, results, the backend protocol and the backend registry.

A backend (:mod:`solvers.cbc`, :mod:`solvers.cpsat`) translates a :class:`~solvers.model.MipModel`,
solves it under a required :class:`Limit` and returns a :class:`SolveResult`; it never raises out of
``solve``. The shape follows PuLP's ``pulp/apis/core.py`` (one base with a limit) and
``pulp/apis/__init__.py`` (``getSolver`` / ``listSolvers``), in snake_case and with the limit required.

Limits come in two kinds. A wall limit (``Limit.wall(seconds)``) is what the CoH portfolio uses each
tick (CoH paper §3: 2 s for CPLEX); a deterministic limit (``Limit.deterministic(work)``) gives the
same answer on every machine and every run, for reproducible experiments:

- CP-SAT reads ``work`` as ``max_deterministic_time`` (CP-SAT's own deterministic seconds; their wall
  time depends on the model: 0.2 units took ~0.6 s on the contract instances, and one unit 3-8 s on
  35-100-job IPPs on a loaded 2-core machine) with one worker and a fixed seed;
- CBC reads ``work`` as ``maxNodes`` (branch-and-bound nodes, ``int(work)``) with its serial search
  and no time limit; the root node (cuts, heuristics) always runs to its end.

A backend class describes itself before it is built (:class:`Backend`): how a figure in seconds
becomes its own deterministic limit (``deterministic_limit``) and which of the
:data:`COMMON_OPTIONS` its constructor takes. Callers ask the class (:func:`get_backend`,
:func:`make_solver`) and never switch on a backend's name, so adding a backend is one module and
one line in the registry (or a :func:`register_solver` call).
"""

from __future__ import annotations

import enum
import importlib
import logging
import math
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from solvers.model import MipModel
from workloads.errors import ConfigError, UnknownName

log = logging.getLogger(__name__)

#: Registered backends: name -> "module:class", imported on first use (CP-SAT is slow to import).
_BACKENDS: dict[str, str] = {
    "cbc": "solvers.cbc:CbcSolver",
    "cpsat": "solvers.cpsat:CpSatSolver",
}
#: Options a caller may give every backend alike (:func:`make_solver`); each backend takes those its
#: class lists in ``common_options`` (CP-SAT: ``presolve``) and is built without the others.
COMMON_OPTIONS: frozenset[str] = frozenset({"presolve"})


class Status(enum.Enum):
    """Outcome of one solve, combining everything a backend reports into one value."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    NO_SOLUTION = "no_solution"
    INFEASIBLE = "infeasible"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        """True when the result carries an assignment (OPTIMAL or FEASIBLE)."""
        return self in (Status.OPTIMAL, Status.FEASIBLE)


@dataclass(frozen=True, slots=True)
class Limit:
    """How long a backend may search: exactly one of ``seconds`` (wall) or ``work`` (deterministic).

    Parameters
    ----------
    seconds : float or None
        Wall-clock limit in seconds (> 0).
    work : float or None
        Deterministic work limit (> 0): CP-SAT deterministic seconds, CBC branch-and-bound nodes
        (see the module docstring).
    threads : int
        Solver threads (>= 1). A deterministic limit always runs on one thread: any other value is
        replaced by 1 (with a logged warning).
    """

    seconds: float | None = None
    work: float | None = None
    threads: int = 1

    def __post_init__(self) -> None:
        if (self.seconds is None) == (self.work is None):
            raise ConfigError(f"Limit needs exactly one of seconds / work, got seconds={self.seconds} work={self.work}")
        value = self.seconds if self.seconds is not None else self.work
        if value is None or not math.isfinite(value) or value <= 0:
            raise ConfigError(f"Limit must be finite and > 0, got {value}")
        if self.threads < 1:
            raise ConfigError(f"Limit threads must be >= 1, got {self.threads}")
        if self.work is not None and self.threads != 1:
            log.warning("deterministic limit: threads=%d replaced by 1", self.threads)
            object.__setattr__(self, "threads", 1)

    @classmethod
    def wall(cls, seconds: float, *, threads: int = 1) -> Limit:
        """A wall-clock limit of ``seconds`` on ``threads`` threads."""
        return cls(seconds=seconds, threads=threads)

    @classmethod
    def deterministic(cls, work: float) -> Limit:
        """A deterministic work limit (one thread); see the module docstring for the units."""
        return cls(work=work)

    @property
    def is_deterministic(self) -> bool:
        """True for a work limit, False for a wall-clock limit."""
        return self.work is not None

    def __str__(self) -> str:
        if self.work is not None:
            return f"work {self.work:g}"
        return f"{self.seconds:g} s on {self.threads} thread(s)"


@dataclass(frozen=True, slots=True)
class SolveResult:
    """What one ``solve`` call returns.

    Attributes
    ----------
    status : Status
        Outcome; ``values`` is set exactly when ``status.has_solution``.
    values : numpy.ndarray or None
        One value per model variable (integers rounded), never LP leftovers.
    objective : float or None
        ``MipModel.objective(values)``, recomputed here, not the solver's number.
    solver_objective : float or None
        The objective the solver reported, in model units (objective constant included).
    bound : float or None
        Proven lower bound on the optimum, in model units, where the backend gives one.
    bound_source : str
        Where ``bound`` came from ("" when there is none).
    gap : float or None
        ``(objective - bound) / max(|objective|, 1e-9)`` (>= 0); 0 when optimal; None without both.
    wall_s : float
        Seconds spent in ``solve``, translation and process start included.
    limit_hit : bool
        True when the search stopped on the limit rather than by finishing.
    backend : str
        Name of the backend.
    limit : Limit
        The limit that applied.
    message : str
        Why, for ERROR / NO_SOLUTION / INFEASIBLE (may be "" otherwise).
    """

    status: Status
    values: np.ndarray | None
    objective: float | None
    solver_objective: float | None
    bound: float | None
    bound_source: str
    gap: float | None
    wall_s: float
    limit_hit: bool
    backend: str
    limit: Limit
    message: str = ""


@runtime_checkable
class Solver(Protocol):
    """A MILP backend: translates a :class:`MipModel` and solves it under a required limit."""

    name: str

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        """Solve ``model`` (minimisation) within ``limit``, optionally warm-started from ``start``.

        ``start`` is a full assignment (one value per variable). Never raises: failures of any kind
        come back as a result with status ERROR and a message.
        """
        ...


class Backend(Protocol):
    """A backend class as the registry holds it: what it says about itself before it is built.

    Attributes
    ----------
    common_options : frozenset of str
        The :data:`COMMON_OPTIONS` its constructor takes (a class variable).
    """

    common_options: frozenset[str]

    def __call__(self, *args: Any, **options: Any) -> Solver:
        """A new instance (the backend's constructor)."""
        ...

    def deterministic_limit(self, seconds: float) -> Limit:
        """The deterministic work limit standing for a time limit of ``seconds`` (> 0), in the backend's unit.

        The mapping is fixed (never measured), so the same figure gives the same limit, and the
        same run, on every machine.
        """
        ...


def relative_gap(status: Status, objective: float | None, bound: float | None) -> float | None:
    """Relative gap ``(objective - bound) / max(|objective|, 1e-9)``, clipped at 0; 0 when optimal."""
    if objective is None:
        return None
    if status is Status.OPTIMAL:
        return 0.0
    if bound is None:
        return None
    return max(0.0, (objective - bound) / max(abs(objective), 1e-9))


def make_result(model: MipModel, status: Status, values: np.ndarray | None, *, backend: str, limit: Limit,
                wall_s: float, solver_objective: float | None = None, bound: float | None = None,
                bound_source: str = "", limit_hit: bool = False, message: str = "") -> SolveResult:
    """Assemble a result: drop values without a solution, recompute the objective and the gap."""
    if not status.has_solution:
        values = None
    elif values is None:
        return error_result(backend, limit, wall_s, f"{backend}: status {status.value} but no values")
    objective = model.objective(values) if values is not None else None
    if bound is not None and not math.isfinite(bound):
        bound, bound_source = None, ""
    return SolveResult(status=status, values=values, objective=objective, solver_objective=solver_objective,
                       bound=bound, bound_source=bound_source if bound is not None else "",
                       gap=relative_gap(status, objective, bound), wall_s=wall_s, limit_hit=limit_hit,
                       backend=backend, limit=limit, message=message)


def error_result(backend: str, limit: Limit, wall_s: float, message: str) -> SolveResult:
    """An ERROR result (no values, no bound) carrying ``message``."""
    log.warning("%s", message)
    return SolveResult(status=Status.ERROR, values=None, objective=None, solver_objective=None, bound=None,
                       bound_source="", gap=None, wall_s=wall_s, limit_hit=False, backend=backend, limit=limit,
                       message=message)


def check_start(model: MipModel, start: np.ndarray | None) -> np.ndarray | None:
    """Validate a warm start: a finite vector with one value per model variable."""
    if start is None:
        return None
    arr = np.asarray(start, dtype=float)
    if arr.shape != (model.n_vars,):
        raise ValueError(f"start has shape {arr.shape}, expected ({model.n_vars},)")
    if not np.all(np.isfinite(arr)):
        raise ValueError("start has non-finite values")
    return arr


def polish(model: MipModel, raw: list[float | None]) -> np.ndarray:
    """Backend values -> model values: integers rounded, everything clipped to its bounds.

    A variable the backend never saw (in no row and not in the objective) comes back as None and
    gets its bound closest to zero, which is feasible and costs nothing.
    """
    out = np.empty(model.n_vars, dtype=float)
    for k, (v, lo, hi, is_int) in enumerate(zip(raw, model.lb, model.ub, model.integer, strict=True)):
        x = min(max(0.0 if v is None else float(v), lo), hi)
        if is_int:
            x = float(round(x))
            x = x if lo <= x <= hi else float(math.ceil(lo))
        out[k] = x
    return out


def keep_better_start(model: MipModel, result: SolveResult, start: np.ndarray | None) -> SolveResult:
    """Return ``start`` instead of the solver's answer when it is feasible and strictly better.

    A warm start (e.g. a heuristic's plan) is never lost: a solver stopped in presolve, or one that
    ignored the hint, still yields at least the start. The status is then FEASIBLE.
    """
    if start is None or result.status in (Status.ERROR, Status.INFEASIBLE):
        return result
    values = polish(model, start.tolist())
    objective = model.objective(values)
    if result.objective is not None and objective >= result.objective - 1e-9:
        return result
    if model.violations(values):
        return result
    return replace(result, status=Status.FEASIBLE, values=values, objective=objective,
                   gap=relative_gap(Status.FEASIBLE, objective, result.bound),
                   message=f"{result.message}; the warm start is better and is returned".lstrip("; "))


def list_solvers() -> list[str]:
    """Names accepted by :func:`get_solver`, sorted."""
    return sorted(_BACKENDS)


def register_solver(name: str, target: str) -> None:
    """Register the backend class ``target`` (``"module:Class"``, imported on first use) as ``name``.

    Raises
    ------
    KeyError
        When ``name`` is already registered.
    ValueError
        When ``target`` is not of the form ``"module:Class"``.
    """
    if name in _BACKENDS:
        raise KeyError(f"solver {name!r} is already registered ({_BACKENDS[name]})")
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name or ":" in class_name:
        raise ConfigError(f"solver {name!r}: target must be 'module:Class', got {target!r}")
    _BACKENDS[name] = target


def unregister_solver(name: str) -> None:
    """Remove the backend registered as ``name`` (what :func:`register_solver` added).

    Raises
    ------
    KeyError
        For an unknown name (the message lists the known ones).
    """
    _target(name)
    del _BACKENDS[name]


def _target(name: str) -> str:
    try:
        return _BACKENDS[name]
    except KeyError:
        raise UnknownName(f"unknown solver {name!r}; known solvers: {', '.join(list_solvers())}") from None


def get_backend(name: str) -> Backend:
    """The backend class registered as ``name``, imported but not instantiated.

    Raises
    ------
    KeyError
        For an unknown name (the message lists the known ones).
    """
    module_name, class_name = _target(name).split(":")
    backend: Backend = getattr(importlib.import_module(module_name), class_name)
    return backend


def get_solver(name: str, **options: Any) -> Solver:
    """A new backend instance by name (``"cbc"``, ``"cpsat"``); ``options`` go to its constructor.

    Raises
    ------
    KeyError
        For an unknown name (the message lists the known ones).
    """
    return get_backend(name)(**options)


def make_solver(name: str, **common: Any) -> Solver:
    """A new backend instance given those of the ``common`` options it takes.

    ``common`` holds :data:`COMMON_OPTIONS` only, set once for every backend of a configuration
    (e.g. ``presolve``); a backend whose class does not list an option in ``common_options`` is
    built without it.

    Raises
    ------
    KeyError
        For an unknown name.
    ValueError
        For an option outside :data:`COMMON_OPTIONS`.
    """
    unknown = sorted(common.keys() - COMMON_OPTIONS)
    if unknown:
        raise ConfigError(f"{unknown} are not options common to every backend ({', '.join(sorted(COMMON_OPTIONS))})")
    backend = get_backend(name)
    return backend(**{key: value for key, value in common.items() if key in backend.common_options})
