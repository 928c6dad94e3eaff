"""Contract suite over every registered MILP backend (``solvers.base.list_solvers()``).

Modelled on PuLP's ``pulp/tests/solver_common.py`` (one suite, every solver) and joblib's
backend-parametrised tests: known optima on tiny models, infeasibility, limits that are hit, the
PuLP status trap, determinism under work limits, warm starts, and failures returned as ERROR.

Measured on the 2-core development machine (CBC 2.10.3 bundled with PuLP 3.3.2, OR-Tools 9.15):
on ``multi_knapsack(90, 8, seed=2)`` (720 binaries) with ``Limit.wall(0.2)`` both backends return
FEASIBLE with ``limit_hit`` (CBC about 0.23 s in ``solve``, CP-SAT about 0.22 s); CBC does not
prove optimality in 8 s on one thread, nor CP-SAT in 8 s on 8 workers.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pulp
import pytest

from solvers.base import Limit, Solver, SolveResult, Status, get_solver, list_solvers
from solvers.cbc import CbcSolver, combine_status, parse_log
from solvers.cpsat import CpSatSolver
from solvers.model import MipModel

SOLVERS = list_solvers()
HARD_WALL_S = {"cbc": 5.0, "cpsat": 3.0}  # bound on wall_s for Limit.wall(0.2); CBC may overrun its root


# --------------------------------------------------------------------------- instances


def knapsack(constant: float = 0.0) -> tuple[MipModel, float]:
    """max 10a + 13b + 7c + 8d + 4e st 5a + 6b + 3c + 4d + 2e <= 10: 21 ({b, d} or {a, c, e})."""
    m = MipModel(name="knapsack", obj_constant=constant)
    values, weights = [10.0, 13.0, 7.0, 8.0, 4.0], [5.0, 6.0, 3.0, 4.0, 2.0]
    xs = [m.add_var(f"x{i}", cost=-v) for i, v in enumerate(values)]
    m.add_row(xs, weights, "<=", 10, "capacity")
    return m, constant - 21.0


def assignment() -> tuple[MipModel, float]:
    """3 x 3 assignment, optimum 9 (enumerated over the 6 permutations)."""
    cost = [[9, 2, 7], [6, 4, 3], [5, 8, 1]]
    m = MipModel(name="assignment")
    x = [[m.add_var(f"x{i}{j}", cost=cost[i][j]) for j in range(3)] for i in range(3)]
    for i in range(3):
        m.add_row(x[i], [1, 1, 1], "==", 1, f"worker{i}")
        m.add_row([x[k][i] for k in range(3)], [1, 1, 1], "==", 1, f"task{i}")
    return m, 2.0 + 6.0 + 1.0  # worker0 -> task1, worker1 -> task0, worker2 -> task2


def bin_packing() -> tuple[MipModel, float]:
    """Items 4, 4, 3, 3, 2 into bins of 8 (3 bins available): 2 bins ({4,4}, {3,3,2})."""
    sizes, n_bins = [4, 4, 3, 3, 2], 3
    m = MipModel(name="bins")
    y = [m.add_var(f"y{b}", cost=1.0) for b in range(n_bins)]
    x = [[m.add_var(f"x{i}_{b}") for b in range(n_bins)] for i in range(len(sizes))]
    for i in range(len(sizes)):
        m.add_row(x[i], [1] * n_bins, "==", 1, f"place{i}")
    for b in range(n_bins):
        m.add_row([x[i][b] for i in range(len(sizes))] + [y[b]], [*sizes, -8], "<=", 0, f"cap{b}")
    return m, 2.0


def equality_integers() -> tuple[MipModel, float]:
    """min x + 2y + 3z, x + y + z == 4, integers x in [0, 3], y in [1, 5], z in [0, 2]: x=3, y=1 -> 5."""
    m = MipModel(name="equality")
    x = m.add_var("x", 0, 3, cost=1.0)
    y = m.add_var("y", 1, 5, cost=2.0)
    z = m.add_var("z", 0, 2, cost=3.0)
    m.add_row([x, y, z], [1, 1, 1], "==", 4, "total")
    return m, 5.0


def covering() -> tuple[MipModel, float]:
    """min 3a + 2b + 4c, a + b >= 1, b + c >= 1, a + c >= 1: {a, b} -> 5."""
    m = MipModel(name="cover")
    a, b, c = (m.add_var(n, cost=k) for n, k in (("a", 3.0), ("b", 2.0), ("c", 4.0)))
    for name, pair in (("ab", [a, b]), ("bc", [b, c]), ("ac", [a, c])):
        m.add_row(pair, [1, 1], ">=", 1, name)
    return m, 5.0


def fractional_coefficients() -> tuple[MipModel, float]:
    """0.25 - max(x + y), 0.5x + 0.75y <= 3.1, x in [1, 4], y in [0, 5] integers: x + y = 5 (CP-SAT scales by 100)."""
    m = MipModel(name="fractional", obj_constant=0.25)
    x = m.add_var("x", 1, 4, cost=-1.0)
    y = m.add_var("y", 0, 5, cost=-1.0)
    m.add_row([x, y], [0.5, 0.75], "<=", 3.1, "budget")
    return m, 0.25 - 5.0


def infeasible() -> MipModel:
    m = MipModel(name="infeasible")
    a, b = m.add_var("a", cost=1.0), m.add_var("b", cost=1.0)
    m.add_row([a, b], [1, 1], ">=", 3, "too_much")
    return m


def multi_knapsack(n: int, k: int, *, seed: int) -> MipModel:
    """Strongly correlated multiple knapsack (value = weight + 10), capacities half the weight / k."""
    rng = np.random.default_rng(seed)
    weight = rng.integers(10, 101, n)
    capacity = float(weight.sum() * 0.5 // k)
    m = MipModel(name=f"mkp_{n}_{k}_{seed}")
    x = [[m.add_var(f"x{i}_{j}", cost=-float(weight[i] + 10)) for j in range(k)] for i in range(n)]
    for i in range(n):
        m.add_row(x[i], [1.0] * k, "<=", 1, f"once{i}")
    for j in range(k):
        m.add_row([x[i][j] for i in range(n)], weight.astype(float).tolist(), "<=", capacity, f"cap{j}")
    return m


def greedy_start(m: MipModel, n: int, k: int) -> np.ndarray:
    """A feasible assignment of ``multi_knapsack``: first fit in index order."""
    weight = np.array(m.rows[n].coef)
    room = np.full(k, m.rows[n].rhs)
    values = np.zeros(m.n_vars)
    for i in range(n):
        fits = np.flatnonzero(room >= weight[i])
        if fits.size:
            values[i * k + fits[0]] = 1.0
            room[fits[0]] -= weight[i]
    assert m.violations(values) == []
    return values


TINY = {
    "knapsack": knapsack,
    "knapsack_constant": lambda: knapsack(constant=100.0),
    "assignment": assignment,
    "bin_packing": bin_packing,
    "equality_integers": equality_integers,
    "covering": covering,
    "fractional_coefficients": fractional_coefficients,
}


@pytest.fixture(scope="module")
def hard() -> MipModel:
    return multi_knapsack(90, 8, seed=2)


@pytest.fixture(scope="module")
def medium() -> MipModel:
    return multi_knapsack(40, 4, seed=1)


def check_solution(m: MipModel, r: SolveResult) -> float:
    """Assert ``r`` carries a feasible assignment whose objective is recomputed; return the objective."""
    assert r.status.has_solution, r.message
    assert r.values is not None and r.values.shape == (m.n_vars,)
    assert m.violations(r.values) == []
    assert r.objective is not None and r.objective == pytest.approx(m.objective(r.values))
    return r.objective


# --------------------------------------------------------------------------- the contract


@pytest.mark.parametrize("name", SOLVERS)
def test_registry_builds_a_solver(name: str) -> None:
    solver = get_solver(name)
    assert isinstance(solver, Solver)
    assert solver.name == name


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("instance", sorted(TINY))
def test_tiny_optimum(name: str, instance: str) -> None:
    m, optimum = TINY[instance]()
    r = get_solver(name).solve(m, limit=Limit.wall(10.0))
    assert r.status is Status.OPTIMAL, r.message
    check_solution(m, r)
    assert r.objective == pytest.approx(optimum, abs=1e-6)
    assert r.solver_objective == pytest.approx(optimum, abs=1e-6)
    assert r.gap == 0.0
    assert not r.limit_hit
    assert r.backend == name
    if r.bound is not None:
        assert r.bound == pytest.approx(r.objective, abs=1e-6)
        assert r.bound_source


@pytest.mark.parametrize("name", SOLVERS)
def test_infeasible(name: str) -> None:
    r = get_solver(name).solve(infeasible(), limit=Limit.wall(10.0))
    assert r.status is Status.INFEASIBLE
    assert r.values is None and r.objective is None
    assert not r.limit_hit


@pytest.mark.parametrize("name", SOLVERS)
def test_wall_limit_is_hit(name: str, hard: MipModel) -> None:
    r = get_solver(name).solve(hard, limit=Limit.wall(0.2))
    assert r.status in (Status.FEASIBLE, Status.NO_SOLUTION), r.status
    assert r.limit_hit
    assert r.wall_s < HARD_WALL_S[name]
    if r.status is Status.FEASIBLE:
        objective = check_solution(hard, r)
        if r.bound is not None:
            assert r.bound < objective
            assert r.gap is not None and r.gap > 0
    else:
        assert r.values is None


def test_cbc_status_trap(hard: MipModel) -> None:
    """PuLP says Optimal for a time-limited CBC run with an incumbent: the backend must say FEASIBLE."""
    start = greedy_start(hard, 90, 8)
    r = get_solver("cbc").solve(hard, limit=Limit.wall(0.2), start=start)
    assert r.status is Status.FEASIBLE
    assert r.limit_hit
    objective = check_solution(hard, r)
    assert r.bound is not None and r.bound < objective
    assert r.bound_source == "cbc log 'Lower bound'"
    assert objective <= hard.objective(start) + 1e-9
    assert r.solver_objective is not None and "warm start" not in r.message  # CBC's own incumbent


def test_cbc_status_combination() -> None:
    """The same trap, from PuLP's codes: (Optimal, IntegerFeasible) and a 'Stopped on' log are FEASIBLE."""
    stopped = parse_log("Result - Stopped on time limit\n\nObjective value:  -5.0\nLower bound:  -7.500\n")
    assert stopped.stopped_on_limit and stopped.objective == -5.0 and stopped.lower_bound == -7.5
    finished = parse_log("Result - Optimal solution found\n\nObjective value:  -7.0\n")
    opt, sol = pulp.LpStatusOptimal, pulp.LpSolutionOptimal
    assert combine_status(opt, pulp.LpSolutionIntegerFeasible, stopped)[0] is Status.FEASIBLE
    assert combine_status(opt, sol, stopped)[0] is Status.FEASIBLE
    assert combine_status(opt, sol, finished)[0] is Status.OPTIMAL
    assert combine_status(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound, stopped)[0] is Status.NO_SOLUTION
    assert combine_status(pulp.LpStatusInfeasible, pulp.LpSolutionNoSolutionFound, finished)[0] is Status.INFEASIBLE
    assert combine_status(pulp.LpStatusUnbounded, pulp.LpSolutionUnbounded, finished)[0] is Status.ERROR


DETERMINISTIC_WORK = {"cbc": 5.0, "cpsat": 0.05}  # 5 nodes; 0.05 CP-SAT deterministic seconds


@pytest.mark.parametrize("name", SOLVERS)
def test_deterministic_limit_repeats(name: str, medium: MipModel) -> None:
    limit = Limit.deterministic(DETERMINISTIC_WORK[name])
    first, second = (get_solver(name).solve(medium, limit=limit) for _ in range(2))
    assert first.status is second.status
    assert first.status.has_solution, first.message
    assert first.values is not None and second.values is not None
    np.testing.assert_array_equal(first.values, second.values)
    assert first.objective == second.objective
    assert first.bound == second.bound
    assert first.limit is limit and first.limit.threads == 1


@pytest.mark.parametrize("name", SOLVERS)
def test_warm_start_is_never_lost(name: str, hard: MipModel) -> None:
    start = greedy_start(hard, 90, 8)
    tiny_work = {"cbc": 0.5, "cpsat": 1e-4}[name]  # CBC: root node only; CP-SAT: stops inside presolve
    r = get_solver(name).solve(hard, limit=Limit.deterministic(tiny_work), start=start)
    assert check_solution(hard, r) <= hard.objective(start) + 1e-9


@pytest.mark.parametrize("name", SOLVERS)
def test_warm_start_with_optimum_on_tiny_model(name: str) -> None:
    m, optimum = knapsack()
    start = np.array([0.0, 1.0, 0.0, 1.0, 0.0])  # the optimum
    r = get_solver(name).solve(m, limit=Limit.wall(10.0), start=start)
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(optimum)


@pytest.mark.parametrize("name", SOLVERS)
def test_bad_start_is_an_error_not_an_exception(name: str) -> None:
    m, _ = knapsack()
    r = get_solver(name).solve(m, limit=Limit.wall(1.0), start=np.zeros(2))
    assert r.status is Status.ERROR and "start" in r.message
    assert r.values is None


# --------------------------------------------------------------------------- backend specifics


def test_cpsat_rejects_continuous_variable() -> None:
    m, _ = knapsack()
    m.add_var("slack", 0.0, 1.0, integer=False, cost=1.0)
    r = CpSatSolver().solve(m, limit=Limit.wall(1.0))
    assert r.status is Status.ERROR
    assert "continuous" in r.message and "slack" in r.message
    assert get_solver("cbc").solve(m, limit=Limit.wall(5.0)).status is Status.OPTIMAL


def test_cpsat_rejects_unscalable_coefficients() -> None:
    m = MipModel(name="third")
    x = m.add_var("x", 0, 9, cost=-1.0)
    m.add_row([x], [1 / 3], "<=", 2, "thirds")
    r = CpSatSolver().solve(m, limit=Limit.wall(1.0))
    assert r.status is Status.ERROR and "thirds" in r.message
    cbc = get_solver("cbc").solve(m, limit=Limit.wall(5.0))
    assert cbc.status is Status.OPTIMAL and cbc.objective == pytest.approx(-6.0)


def test_cpsat_empty_integer_domain_is_infeasible() -> None:
    m = MipModel(name="no_integer")
    m.add_var("x", 0.2, 0.8, cost=1.0)
    assert CpSatSolver().solve(m, limit=Limit.wall(1.0)).status is Status.INFEASIBLE


def test_cpsat_refuses_limit_parameters() -> None:
    with pytest.raises(ValueError, match="max_time_in_seconds"):
        CpSatSolver(max_time_in_seconds=3.0)
    assert CpSatSolver(presolve=False, seed=3, log_search_progress=False).solve(
        knapsack()[0], limit=Limit.wall(5.0)).status is Status.OPTIMAL


def test_cbc_missing_binary_is_an_error() -> None:
    r = CbcSolver(path="/nonexistent/cbc").solve(knapsack()[0], limit=Limit.wall(1.0))
    assert r.status is Status.ERROR
    assert "/nonexistent/cbc" in r.message and "not found" in r.message
    assert r.values is None and r.backend == "cbc"


def test_cbc_variable_in_no_row_gets_a_feasible_value() -> None:
    m, optimum = knapsack()
    m.add_var("idle", 2.0, 6.0)  # neither in a row nor in the objective: PuLP never sees it
    r = CbcSolver().solve(m, limit=Limit.wall(5.0))
    check_solution(m, r)
    assert r.objective == pytest.approx(optimum)


def test_cbc_leaves_no_temporary_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    CbcSolver().solve(knapsack()[0], limit=Limit.wall(5.0), start=np.zeros(5))
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- limits and registry


def test_limit_validation() -> None:
    with pytest.raises(ValueError):
        Limit()
    with pytest.raises(ValueError):
        Limit(seconds=1.0, work=1.0)
    with pytest.raises(ValueError):
        Limit.wall(0.0)
    with pytest.raises(ValueError):
        Limit.deterministic(-1.0)
    with pytest.raises(ValueError):
        Limit.wall(1.0, threads=0)
    assert Limit(work=3.0, threads=4).threads == 1
    assert Limit.deterministic(3.0).is_deterministic and not Limit.wall(1.0, threads=2).is_deterministic


def test_unknown_solver_lists_known_ones() -> None:
    with pytest.raises(KeyError, match=r"cbc.*cpsat"):
        get_solver("cplex")
    assert SOLVERS == ["cbc", "cpsat"]


@pytest.mark.parametrize("name", SOLVERS)
def test_per_call_overhead_is_small(name: str) -> None:
    """A tiny model costs milliseconds per call (the portfolio solves one per tick).

    Also the regression test for CBC's ``-threads 1`` stall (coin-or/Cbc#640): with it, about one
    call in seven took 10 s; 30 calls catch it with probability > 0.99.
    """
    solver, m = get_solver(name), knapsack()[0]
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        solver.solve(m, limit=Limit.wall(5.0))
        times.append(time.perf_counter() - t0)
    assert float(np.median(times)) < 0.25
    assert max(times) < 2.0
