"""CBC backend: PuLP's bundled CBC binary, driven through PuLP's command-line interface.

The model is written by PuLP as MPS and solved by a CBC process; the log goes to a file in a
private temporary directory (removed afterwards), from which the proven bound and the reason CBC
stopped are read. Status handling follows STYLE.md: PuLP reports ``status == Optimal`` also for a
run stopped on a limit with an incumbent, so ``status`` and ``sol_status`` are combined, and
values are read only for OPTIMAL / FEASIBLE.

Per call: one process start plus an MPS write and a solution read, a few milliseconds for a
small model.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pulp

from solvers.base import Limit, SolveResult, Status, check_start, error_result, keep_better_start, make_result, polish
from solvers.model import MipModel

log = logging.getLogger(__name__)

#: The CBC binary shipped inside the PuLP wheel (read from the class, so no deprecation warning).
BUNDLED_CBC: str = pulp.PULP_CBC_CMD.pulp_cbc_path
#: Branch-and-bound nodes per second of a time limit, for a deterministic limit
#: (:meth:`CbcSolver.deterministic_limit`).
NODES_PER_SECOND = 1000

_SENSES = {"<=": pulp.LpConstraintLE, ">=": pulp.LpConstraintGE, "==": pulp.LpConstraintEQ}
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)"
_RESULT_RE = re.compile(r"^Result - (.*?)\s*$", re.MULTILINE)
_OBJECTIVE_RE = re.compile(r"^Objective value:\s+" + _NUMBER, re.MULTILINE)
_LOWER_RE = re.compile(r"^Lower bound:\s+" + _NUMBER, re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CbcLog:
    """What the CBC log says: the ``Result -`` line, ``Objective value:`` and ``Lower bound:``.

    The numbers exclude the model's objective constant (PuLP's MPS writer drops it). CBC prints
    the lower bound with three decimals only.
    """

    result: str
    objective: float | None
    lower_bound: float | None

    @property
    def stopped_on_limit(self) -> bool:
        """True when CBC stopped on its time or node limit."""
        return self.result.startswith("Stopped on")


def parse_log(text: str) -> CbcLog:
    """Read the summary of a CBC log (``-printingOptions all`` output of CBC 2.10)."""
    result = _RESULT_RE.search(text)
    objective = _OBJECTIVE_RE.search(text)
    lower = _LOWER_RE.search(text)
    return CbcLog(result=result.group(1) if result else "",
                  objective=float(objective.group(1)) if objective else None,
                  lower_bound=float(lower.group(1)) if lower else None)


def to_pulp(model: MipModel) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    """Translate ``model`` into a PuLP problem; variables are named by index (``x0``, ``x1``, ...).

    The objective constant is not given to PuLP: PuLP does not pass it to CBC, and the backend adds
    it back to CBC's numbers.
    """
    prob = pulp.LpProblem(_safe_name(model.name), pulp.LpMinimize)
    variables = [_new_var(prob, f"x{k}", lo, hi, is_int)
                 for k, (lo, hi, is_int) in enumerate(zip(model.lb, model.ub, model.integer, strict=True))]
    prob += pulp.LpAffineExpression([(variables[i], c) for i, c in model.obj.items() if c])
    for k, row in enumerate(model.rows):
        expr = pulp.LpAffineExpression([(variables[i], c) for i, c in zip(row.idx, row.coef, strict=True)])
        prob.addConstraint(pulp.LpConstraint(expr, _SENSES[row.sense], f"c{k}", row.rhs))
    return prob, variables


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "model"


def _new_var(prob: pulp.LpProblem, name: str, lo: float, hi: float, is_int: bool) -> pulp.LpVariable:
    cat = pulp.LpInteger if is_int else pulp.LpContinuous
    lo_b = lo if math.isfinite(lo) else None
    hi_b = hi if math.isfinite(hi) else None
    if hasattr(prob, "add_variable"):  # PuLP >= 3.3: the constructor is deprecated
        return prob.add_variable(name, lo_b, hi_b, cat=cat)
    return pulp.LpVariable(name, lo_b, hi_b, cat=cat)


def _set_start(model: MipModel, variables: list[pulp.LpVariable], start: np.ndarray) -> None:
    clipped = np.clip(start, model.lb, model.ub)  # PuLP silently skips out-of-bound values
    for var, value in zip(variables, clipped.tolist(), strict=True):
        var.setInitialValue(value, check=False)


def _children(parent: int, name: str) -> list[int]:
    """Processes whose parent is ``parent`` and whose command is ``name`` (truncated as ``/proc`` keeps it)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*/stat") if Path("/proc").is_dir() else ():
        try:
            text = entry.read_text()
        except OSError:
            continue
        command, _, rest = text.partition(" (")[2].rpartition(") ")
        fields = rest.split()
        if len(fields) > 1 and fields[1] == str(parent) and name.startswith(command):
            found.append(int(entry.parent.name))
    return found


def combine_status(prob_status: int, sol_status: int, cbc_log: CbcLog) -> tuple[Status, str]:
    """One :class:`Status` from PuLP's ``status`` and ``sol_status`` and CBC's ``Result -`` line."""
    if prob_status == pulp.LpStatusInfeasible:
        return Status.INFEASIBLE, cbc_log.result or "CBC: problem is infeasible"
    if prob_status == pulp.LpStatusUnbounded:
        return Status.ERROR, "CBC: problem is unbounded"
    if prob_status == pulp.LpStatusOptimal and sol_status == pulp.LpSolutionOptimal and not cbc_log.stopped_on_limit:
        return Status.OPTIMAL, ""
    if prob_status == pulp.LpStatusOptimal and sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        return Status.FEASIBLE, cbc_log.result
    if prob_status == pulp.LpStatusNotSolved:
        return Status.NO_SOLUTION, f"CBC: {cbc_log.result or 'stopped'} without an integer solution"
    return Status.ERROR, f"CBC: unexpected status {pulp.LpStatus.get(prob_status)} / sol_status {sol_status}"


class CbcSolver:
    """CBC through PuLP (:class:`pulp.COIN_CMD` on the binary bundled with PuLP).

    Parameters
    ----------
    path : str or None
        CBC executable; None for the binary bundled with PuLP.
    options : sequence of str
        Extra CBC command-line options without the leading dash, e.g. ``["cuts off"]``.

    Notes
    -----
    ``Limit.wall`` passes ``-sec`` (and ``-threads`` when more than one thread is asked for);
    ``Limit.deterministic(work)`` passes ``-maxNodes int(work)``, no time limit, and runs CBC's
    serial (deterministic) search. CBC may overrun a wall limit when the root node's cut loop is
    long. CBC's threaded search can stall on a lock (coin-or/Cbc#640): ``-threads 1`` did so in
    about 15 % of runs of the bundled CBC 2.10.3, so one thread means serial CBC, not
    ``-threads 1``. A warm start (``start``) is written as a CBC MIP start
    (``-mips``) via ``setInitialValue`` and PuLP's ``warmStart=True``. It takes none of the
    :data:`~solvers.base.COMMON_OPTIONS` (CBC's presolve stays on).
    """

    name: str = "cbc"
    common_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, *, path: str | None = None, options: Sequence[str] = ()) -> None:
        self.path = path
        self.options = list(options)

    @classmethod
    def deterministic_limit(cls, seconds: float) -> Limit:
        """:data:`NODES_PER_SECOND` nodes per second of ``seconds``, rounded, and at least one node.

        Examples: 2.0 s -> 2000 nodes, 0.0004 s -> 1 node.
        """
        return Limit.deterministic(float(max(1, round(NODES_PER_SECOND * seconds))))

    def interrupt(self) -> None:
        """Stop the CBC processes this process started (SIGINT: CBC stops and writes what it has found).

        CBC runs as a child process; they are found in ``/proc`` (Linux). Elsewhere this does
        nothing and CBC runs to its limit.
        """
        executable = Path(self.path or BUNDLED_CBC).name
        for pid in _children(os.getpid(), executable):
            try:
                os.kill(pid, signal.SIGINT)
            except OSError:  # it ended meanwhile
                continue

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        """Solve ``model`` with CBC within ``limit`` (see :class:`solvers.base.Solver`)."""
        t0 = time.perf_counter()
        try:
            return self._solve(model, limit, start, t0)
        except Exception as exc:  # a backend failure of any kind is a result, never an exception
            return error_result(self.name, limit, time.perf_counter() - t0, f"cbc: {type(exc).__name__}: {exc}")

    def _solve(self, model: MipModel, limit: Limit, start: np.ndarray | None, t0: float) -> SolveResult:
        executable = self.path or BUNDLED_CBC
        if shutil.which(executable) is None:
            return error_result(self.name, limit, time.perf_counter() - t0,
                                f"cbc: CBC binary not found or not executable: {executable}")
        start_arr = check_start(model, start)
        prob, variables = to_pulp(model)
        if start_arr is not None:
            _set_start(model, variables, start_arr)
        with tempfile.TemporaryDirectory(prefix="cloudbroker-cbc-") as tmp:
            log_path = Path(tmp) / "cbc.log"
            prob.solve(self._command(executable, limit, tmp, log_path, warm=start_arr is not None))
            cbc_log = parse_log(log_path.read_text(errors="replace"))
        return keep_better_start(model, self._result(model, prob, variables, cbc_log, limit, t0), start_arr)

    def _command(self, executable: str, limit: Limit, tmp: str, log_path: Path, *, warm: bool) -> pulp.COIN_CMD:
        # "-threads 1" is not serial CBC: it starts CBC's threaded search with one worker, which in the
        # bundled CBC 2.10.3 stalls ~15 % of runs for 10 s (coin-or/Cbc#640). One thread = no option.
        threads = limit.threads if limit.threads > 1 else None
        if limit.work is not None:
            timing: dict[str, float | int | None] = {"maxNodes": int(limit.work)}
        else:
            timing = {"timeLimit": limit.seconds, "threads": threads}
        command = pulp.COIN_CMD(path=executable, msg=False, options=list(self.options), logPath=str(log_path),
                                warmStart=warm, **timing)
        command.tmpDir = tmp
        return command

    def _result(self, model: MipModel, prob: pulp.LpProblem, variables: list[pulp.LpVariable], cbc_log: CbcLog,
                limit: Limit, t0: float) -> SolveResult:
        status, message = combine_status(prob.status, prob.sol_status, cbc_log)
        values = polish(model, [v.varValue for v in variables]) if status.has_solution else None
        const = model.obj_constant
        bound, source = None, ""
        if cbc_log.lower_bound is not None:
            bound, source = cbc_log.lower_bound + const, "cbc log 'Lower bound'"
        elif status is Status.OPTIMAL and cbc_log.objective is not None:
            bound, source = cbc_log.objective + const, "cbc log 'Optimal solution found'"
        solver_objective = cbc_log.objective + const if cbc_log.objective is not None and values is not None else None
        return make_result(model, status, values, backend=self.name, limit=limit, wall_s=time.perf_counter() - t0,
                           solver_objective=solver_objective, bound=bound, bound_source=source,
                           limit_hit=cbc_log.stopped_on_limit, message=message)
