"""The backend registry (``solvers.base``): classes reached without building them, the limits each
backend reads from a time limit, common options, and a backend registered for one test only."""

from __future__ import annotations

import pytest

from solvers.base import (
    COMMON_OPTIONS,
    Limit,
    Solver,
    Status,
    get_backend,
    get_solver,
    list_solvers,
    make_solver,
    register_solver,
    unregister_solver,
)
from solvers.cbc import CbcSolver
from solvers.cpsat import CpSatSolver
from tests.solvers.entrants import knapsack
from tests.solvers.toy import TARGET, ToySolver
from workloads.errors import ConfigError


def test_a_backend_class_is_reached_without_building_it() -> None:
    assert get_backend("cbc") is CbcSolver and get_backend("cpsat") is CpSatSolver
    with pytest.raises(KeyError, match=r"cbc, cpsat"):
        get_backend("cplex")


@pytest.mark.parametrize(("seconds", "nodes"), [(2.0, 2000.0), (1.5, 1500.0), (2.3, 2300.0), (0.0016, 2.0),
                                                (0.0004, 1.0), (1e-9, 1.0)])
def test_cbc_reads_a_time_limit_as_a_thousand_nodes_a_second(seconds: float, nodes: float) -> None:
    assert get_backend("cbc").deterministic_limit(seconds) == Limit(work=nodes)


@pytest.mark.parametrize("seconds", [2.0, 1.5, 0.0004])
def test_cpsat_reads_a_time_limit_as_its_deterministic_seconds(seconds: float) -> None:
    assert get_backend("cpsat").deterministic_limit(seconds) == Limit(work=seconds)


def test_common_options_go_to_the_backends_that_take_them() -> None:
    assert {"presolve"} == COMMON_OPTIONS
    assert CpSatSolver.common_options == {"presolve"} and CbcSolver.common_options == set()
    off = make_solver("cpsat", presolve=False)
    assert isinstance(off, CpSatSolver) and off.presolve is False
    assert isinstance(make_solver("cbc", presolve=False), CbcSolver)  # CBC is built without it
    with pytest.raises(ConfigError, match="num_workers"):
        make_solver("cpsat", num_workers=2)  # a CP-SAT option, not a common one: get_solver's
    with pytest.raises(KeyError, match="unknown solver"):
        make_solver("cplex", presolve=True)


def test_registration_refuses_duplicates_and_malformed_targets() -> None:
    with pytest.raises(KeyError, match="already registered"):
        register_solver("cbc", TARGET)
    for bad in ("tests.solvers.toy", ":ToySolver", "tests.solvers.toy:", "a:b:c"):
        with pytest.raises(ConfigError, match="module:Class"):
            register_solver("toy", bad)
    with pytest.raises(KeyError, match="unknown solver"):
        unregister_solver("toy")
    assert list_solvers() == ["cbc", "cpsat"]


def test_a_registered_backend_is_one_for_one_test(toy_solver: str) -> None:
    assert list_solvers() == ["cbc", "cpsat", toy_solver]
    assert get_backend(toy_solver) is ToySolver
    solver = make_solver(toy_solver, presolve=True)  # the toy takes no common option: not given it
    assert isinstance(solver, Solver) and solver.name == toy_solver
    assert ToySolver.deterministic_limit(2.0) == Limit(work=20.0) and ToySolver.deterministic_limit(0.04).work == 1
    result = get_solver(toy_solver).solve(knapsack(), limit=ToySolver.deterministic_limit(1.0))
    assert (result.status, result.objective, result.backend) == (Status.OPTIMAL, -8.0, toy_solver)


def test_the_toy_left_no_trace_behind() -> None:
    """Whichever order the tests run in: after the fixture, only the built-in backends."""
    assert list_solvers() == ["cbc", "cpsat"]
