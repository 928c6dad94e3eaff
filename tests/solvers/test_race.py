"""The solver race (``solvers.race``): who wins, failures of every kind, interruption, and the same winner
wherever the race runs (this process, loky's workers, a Dask cluster)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from joblib import parallel_config

from broker.coh.instance import make_instance
from broker.coh.ipp import build_model
from solvers.base import Limit, Status, get_solver, make_result
from solvers.cbc import CbcSolver
from solvers.model import MipModel
from solvers.race import Entrant, choose, race
from tests.broker.coh.ipp_cases import BILLING, CATALOG, all_heuristic_plans, captured
from tests.conftest import cloudbroker, trace_path, without_timing
from tests.solvers.entrants import Exiting, FailsWithStart, Fixed, Raising, Sleeper, knapsack

MODEL = knapsack()
WORK, WALL = Limit.deterministic(5.0), Limit.wall(60.0)
BEST, GOOD = [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]  # objectives -8 (the optimum) and -5


def result(status: Status, values: list[float] | None, bound: float | None = None, backend: str = "x"):  # type: ignore[no-untyped-def]
    v = np.array(values, dtype=float) if values is not None else None
    return make_result(MODEL, status, v, backend=backend, limit=WORK, wall_s=0.0, bound=bound)


# --- who wins ------------------------------------------------------------------------------------------


def test_the_cheaper_plan_wins_whatever_the_order() -> None:
    assert choose([result(Status.FEASIBLE, GOOD), result(Status.OPTIMAL, BEST)])[0] == 1
    assert choose([result(Status.OPTIMAL, BEST), result(Status.FEASIBLE, GOOD)])[0] == 0


def test_of_two_plans_of_one_cost_the_proven_one_wins_then_the_first_listed() -> None:
    assert choose([result(Status.FEASIBLE, BEST), result(Status.OPTIMAL, BEST)])[0] == 1
    assert choose([result(Status.OPTIMAL, BEST, backend="a"), result(Status.OPTIMAL, BEST, backend="b")])[0] == 0
    assert choose([result(Status.FEASIBLE, BEST), result(Status.FEASIBLE, BEST)])[0] == 0


def test_another_entrants_bound_proves_the_winner() -> None:
    k, won = choose([result(Status.FEASIBLE, BEST), result(Status.NO_SOLUTION, None, bound=-8.0, backend="b")])
    assert (k, won.status, won.bound, won.gap) == (0, Status.OPTIMAL, -8.0, 0.0)
    # a bound one unit away proves nothing: the plan stays feasible, with the gap it leaves
    k, won = choose([result(Status.FEASIBLE, BEST), result(Status.NO_SOLUTION, None, bound=-9.0)])
    assert (won.status, won.bound) == (Status.FEASIBLE, -9.0) and won.gap == pytest.approx(1 / 8)


def test_without_a_plan_an_infeasibility_proof_is_the_answer() -> None:
    k, out = choose([result(Status.ERROR, None, backend="a"), result(Status.INFEASIBLE, None, backend="b")])
    assert (k, out.status) == (1, Status.INFEASIBLE)
    assert "a: error" in out.message and "b: infeasible" in out.message
    with pytest.raises(ValueError, match="no entrant ran"):
        choose([None, None])


# --- failures ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("broken", [Raising(), CbcSolver(path="/nonexistent/cbc")], ids=["raising", "missing"])
def test_a_broken_backend_leaves_the_others_plan(broken: object, workers: int) -> None:
    for entrants in ([Entrant(broken, WORK), Entrant(get_solver("cpsat"), WORK)],  # type: ignore[arg-type]
                     [Entrant(get_solver("cpsat"), WORK), Entrant(broken, WORK)]):  # type: ignore[arg-type]
        out = race(entrants, MODEL, workers=workers)
        assert out.result.status is Status.OPTIMAL and out.result.objective == pytest.approx(-8.0)
        assert out.result.backend == "cpsat"
        assert [e.status for e in out.entries if e is not None and e.backend != "cpsat"] == [Status.ERROR]


def test_a_backend_that_kills_its_worker_leaves_the_others_plan() -> None:
    out = race([Entrant(Exiting(), WORK), Entrant(get_solver("cpsat"), WORK)], MODEL, workers=2)
    assert out.result.backend == "cpsat" and out.result.objective == pytest.approx(-8.0)
    assert out.entries[0] is not None and out.entries[0].status is Status.ERROR
    assert "worker died" in out.entries[0].message
    # the workers recover: the next race runs side by side again
    again = race([Entrant(get_solver("cbc"), WORK), Entrant(get_solver("cpsat"), WORK)], MODEL, workers=2)
    assert again.in_workers and all(e is not None and e.status is Status.OPTIMAL for e in again.entries)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_backend_failing_on_the_warm_start_is_tried_without_it(workers: int) -> None:
    start = np.array(GOOD)
    out = race([Entrant(FailsWithStart(), WORK), Entrant(Fixed("slow", Status.FEASIBLE, GOOD), WORK)], MODEL,
               start=start, workers=workers)
    assert out.retried == (True, False)
    assert out.winner == 0 and out.result.objective == pytest.approx(-8.0)


# --- both run; the first proof ends a wall race ---------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_under_work_limits_every_entrant_runs_to_its_end(workers: int) -> None:
    out = race([Entrant(Sleeper(0.2), WORK), Entrant(Fixed("fast", Status.OPTIMAL, BEST, bound=-8.0), WORK)], MODEL,
               workers=workers)
    assert out.entries[0] is not None and out.entries[0].message == "ran out"
    assert out.winner == 1 and out.in_workers == (workers > 1)


def test_in_workers_the_first_proven_optimum_interrupts_the_others() -> None:
    out = race([Entrant(Sleeper(30.0), WALL), Entrant(Fixed("fast", Status.OPTIMAL, BEST, bound=-8.0), WALL)], MODEL,
               workers=2)
    assert out.winner == 1 and out.result.status is Status.OPTIMAL
    assert out.entries[0] is not None and out.entries[0].message == "interrupted"


def test_in_this_process_a_wall_race_stops_at_the_first_proven_optimum() -> None:
    fast, slow = Fixed("fast", Status.OPTIMAL, BEST, bound=-8.0), Fixed("slow", Status.FEASIBLE, GOOD)
    out = race([Entrant(fast, WALL), Entrant(slow, WALL)], MODEL)
    assert out.entries[1] is None and slow.calls == 0 and out.winner == 0
    out = race([Entrant(slow, WALL), Entrant(fast, WALL)], MODEL)  # an unproven plan lets the next one run
    assert slow.calls == 1 and fast.calls == 2 and out.winner == 1


def hard_knapsack() -> MipModel:
    """150 items, 40 weight rows: neither backend proves its optimum within a minute."""
    rng = np.random.default_rng(0)
    model = MipModel("hard")
    x = [model.add_var(f"x{i}", cost=-float(rng.integers(10, 100))) for i in range(150)]
    for k in range(40):
        w = rng.integers(5, 50, size=150)
        model.add_row(x, [float(v) for v in w], "<=", float(w.sum() // 3), f"c{k}")
    return model


@pytest.mark.parametrize("backend", ["cbc", "cpsat"])
def test_cp_sat_and_cbc_stop_in_their_workers_when_told(backend: str) -> None:
    # a (claimed) optimum after three seconds: the real backend, a minute from its limit, is interrupted
    # and returns the plan it has, which is better than the claimed one and so wins (three seconds, not
    # less: on a loaded machine a fresh worker may take over a second to start solving, and a backend
    # told to stop before its first solution rightly has no plan)
    model = hard_knapsack()
    claimed = Fixed("claimed", Status.OPTIMAL, [0.0] * 150, delay=3.0)
    out = race([Entrant(claimed, WALL), Entrant(get_solver(backend), Limit.wall(60.0, threads=1))], model, workers=2)
    entry = out.entries[1]
    assert entry is not None and entry.status is Status.FEASIBLE and not entry.limit_hit
    assert entry.objective is not None and entry.objective < 0 and out.winner == 1
    if backend == "cbc":
        assert "ctrl-c" in entry.message


# --- the same winner wherever the race runs ----------------------------------------------------------


def ipp_models() -> list:  # type: ignore[type-arg]
    out = []
    for batch, fleet in captured("LCG-2005-1.swf.gz", "heterogeneous", 13, 20, n_jobs=20_000, every=1)[:3]:
        model = build_model(make_instance(batch, fleet, BILLING, CATALOG.hourly, paid=True))
        out.append((model.model, model.encode(all_heuristic_plans(batch, fleet, ["FCFS-SM"])[0])))
    return out


def test_cbc_and_cp_sat_give_the_same_winner_here_in_loky_and_in_a_dask_cluster() -> None:
    from distributed import Client, LocalCluster

    entrants = [Entrant(get_solver("cbc"), Limit.deterministic(500)),
                Entrant(get_solver("cpsat"), Limit.deterministic(2))]
    models = ipp_models()
    assert len(models) == 3
    here = [race(entrants, m, start=s) for m, s in models]
    loky = [race(entrants, m, start=s, workers=2) for m, s in models]
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    with cluster, Client(cluster), parallel_config(backend="dask"):
        dask = [race(entrants, m, start=s, workers=2) for m, s in models]
    for a, b, c in zip(here, loky, dask, strict=True):
        assert all(e is not None for e in (*a.entries, *b.entries, *c.entries)), "both backends ran"
        assert a.winner == b.winner == c.winner
        assert a.result.objective == b.result.objective == c.result.objective
        assert [e.objective for e in a.entries] == [e.objective for e in c.entries]  # type: ignore[union-attr]
        for entry in a.entries:
            assert entry is not None and (entry.objective is None or a.result.objective <= entry.objective + 1e-9)


def test_a_deterministic_race_in_workers_repeats_its_replay_to_the_last_digit() -> None:
    trace = str(trace_path("LCG-2005-1.swf.gz"))
    args = ["simulate", "--trace", trace, "--limit-jobs", "2500", "--solver", "cbc,cpsat", "--time-limit", "0.5",
            "--deterministic", "--portfolio-jobs", "2", "--race-jobs", "0", "--ipp-exact-jobs", "2", "--json"]
    runs = [cloudbroker(*args) for _ in range(2)]
    assert all(r.code == 0 for r in runs), runs[0].err
    a, b = (json.loads(r.out) for r in runs)
    assert without_timing(a) == without_timing(b)
    stats = a["policy_stats"]
    assert stats["ipp_raced_in_workers"] > 0 and stats["ipp"]["solver"] == "cbc,cpsat"
    assert set(stats["ipp_paths"]) >= {"exact", "cbc"}
