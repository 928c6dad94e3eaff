"""CP-SAT leaves Ctrl-C to Python: after a solve, SIGINT still raises KeyboardInterrupt."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT

#: Solve once, then deliver SIGINT to the process itself: Python's handler must still be in place.
SCRIPT = """
import os, signal
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal (a background shell ignores it)
from solvers.base import Limit
from solvers.cpsat import CpSatSolver
from solvers.model import MipModel
m = MipModel(name="one")
x = m.add_var("x", cost=-1.0)
m.add_row([x], [1.0], "<=", 1, "c")
print(CpSatSolver().solve(m, limit=Limit.deterministic(1.0)).status.name, flush=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):
        pass
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""


def test_sigint_after_a_solve_is_a_keyboard_interrupt_not_a_kill() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.split()) == (0, ["OPTIMAL", "KeyboardInterrupt"]), run.stderr


def test_cpsat_does_not_catch_sigint() -> None:
    from ortools.sat.python import cp_model

    from solvers.base import Limit
    from solvers.cpsat import CpSatSolver

    solver = cp_model.CpSolver()
    CpSatSolver()._configure(solver, Limit.wall(1.0))
    assert solver.parameters.catch_sigint_signal is False
