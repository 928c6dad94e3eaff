"""The solver race (``solvers.race``): who wins, failures of every kind, interruption, and the same winner
wherever the race runs (this process, loky's workers, a Dask cluster)."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from joblib import delayed, parallel_config, register_parallel_backend
from joblib._parallel_backends import ThreadingBackend

from broker.coh.instance import make_instance
from broker.coh.ipp import build_model
from solvers.base import Limit, SolveResult, Status, error_result, get_solver, make_result
from solvers.cbc import CbcSolver
from solvers.model import MipModel
from solvers.race import Entrant, _alone, _left, _solve, _task, _unordered, _watch, attempt, choose, race
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


# --- hand-worked cases: retries, the wall limit left, the watcher, dead workers, ties ----------------------------
# Every expected value is worked out in the comment beside it, never by running the race twice. The
# parts that normally run only inside joblib's workers (``_task``, ``_watch``) are called here in this
# process, where a test can see them.


WORK, WALL = Limit.deterministic(5.0), Limit.wall(60.0)
BEST, GOOD = [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]  # objectives -8 (the optimum) and -5


class Recorder:
    """Records the limit and start of every call; sleeps ``delay``, then ERROR when given a start
    (if ``fail_with_start``), else ``values`` with ``status``."""

    name = "recorder"

    def __init__(self, *, delay: float = 0.0, fail_with_start: bool = True, status: Status = Status.OPTIMAL,
                 values: list[float] | None = None) -> None:
        self.delay, self.fail_with_start, self.status = delay, fail_with_start, status
        self.values = values if values is not None else BEST
        self.limits: list[Limit] = []
        self.starts: list[np.ndarray | None] = []

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        self.limits.append(limit)
        self.starts.append(start)
        time.sleep(self.delay)
        if start is not None and self.fail_with_start:
            return error_result(self.name, limit, 0.0, "crashed on the start")
        return make_result(model, self.status, np.array(self.values), backend=self.name, limit=limit, wall_s=0.0,
                           bound=-8.0 if self.status is Status.OPTIMAL else None)


class RaisesWithoutStart:
    """ERROR with a warm start, raises without one."""

    name = "fragile"

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        if start is not None:
            return error_result(self.name, limit, 0.0, "crashed on the start")
        raise RuntimeError("no start either")


class Nameless:
    """A backend without a ``name`` that raises: named after its class."""

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        return make_result(model, Status.OPTIMAL, np.array([1.0 / 0.0]), backend="never", limit=limit, wall_s=0.0)


class NamelessExiting:
    """A backend without a ``name`` that kills its worker."""

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        return Exiting().solve(model, limit=limit, start=start)


class Counting:
    """Only counts the interrupts it is sent."""

    name = "counting"

    def __init__(self) -> None:
        self.interrupts = 0

    def interrupt(self) -> None:
        self.interrupts += 1


# --- _left -------------------------------------------------------------------------------------------------


def test_what_is_left_of_a_wall_limit_keeps_its_threads_and_at_least_10_ms() -> None:
    assert _left(Limit.wall(10.0, threads=4), 3.0) == Limit.wall(7.0, threads=4)  # 10 - 3
    assert _left(Limit.wall(1.0, threads=2), 5.0) == Limit.wall(0.01, threads=2)  # 1 - 5 < 0: the floor
    assert _left(Limit.wall(1.0), 0.995).seconds == pytest.approx(0.01)  # 0.005 left: the floor again
    assert _left(WORK, 100.0) is WORK  # a work limit is never shortened


# --- attempt and _solve ------------------------------------------------------------------------------------


def test_a_retry_without_the_start_gets_what_is_left_of_the_wall_limit(caplog: pytest.LogCaptureFixture) -> None:
    # The first try sleeps 0.2 s and fails on its start: the retry (no start) gets 10 s less those
    # 0.2 s and a little overhead, on the same 3 threads, and a warning names the backend and its error.
    solver = Recorder(delay=0.2)
    with caplog.at_level(logging.WARNING, logger="solvers.race"):
        result, retried = attempt(solver, MODEL, Limit.wall(10.0, threads=3), np.array(GOOD))
    assert retried and result.status is Status.OPTIMAL and result.objective == pytest.approx(-8.0)
    first, second = solver.limits
    assert first == Limit.wall(10.0, threads=3) and solver.starts[0] is not None and solver.starts[1] is None
    assert second.threads == 3 and second.seconds is not None and 9.0 < second.seconds <= 9.8
    race_log = [r.getMessage() for r in caplog.records if r.name == "solvers.race"]
    assert race_log == ["recorder failed with a warm start (crashed on the start); retrying without it"]


def test_a_retry_that_raises_is_an_error_result_of_its_own() -> None:
    result, retried = attempt(RaisesWithoutStart(), MODEL, WORK, np.array(GOOD))
    assert retried and result.status is Status.ERROR
    assert (result.backend, result.message, result.limit) == ("fragile", "RuntimeError: no start either", WORK)
    assert 0.0 <= result.wall_s < 5.0


def test_a_stopped_entrant_is_not_retried() -> None:
    stopped = threading.Event()
    stopped.set()
    solver = Recorder()
    result, retried = attempt(solver, MODEL, WORK, np.array(GOOD), stopped)
    assert result.status is Status.ERROR and not retried and len(solver.limits) == 1


def test_a_raising_backend_gives_an_error_result_named_after_it() -> None:
    limit = Limit.wall(7.0)
    out = _solve(Raising(), MODEL, limit, None, time.perf_counter())
    assert (out.status, out.backend, out.limit) == (Status.ERROR, "raising", limit)
    assert out.message == "RuntimeError: the backend fell over"
    assert 0.0 <= out.wall_s < 5.0  # seconds since the start given, not since the epoch
    out = _solve(Nameless(), MODEL, limit, None, time.perf_counter())  # type: ignore[arg-type]
    assert (out.backend, out.message) == ("Nameless", "ZeroDivisionError: float division by zero")


# --- _in_process -------------------------------------------------------------------------------------------


def test_in_this_process_a_wall_race_gives_the_next_entrant_what_is_left() -> None:
    # The first entrant takes 0.3 s and proves nothing; the second gets 10 s less those 0.3 s.
    slow = Recorder(delay=0.3, status=Status.FEASIBLE, values=GOOD)
    fast = Recorder()
    out = race([Entrant(slow, Limit.wall(10.0, threads=2)), Entrant(fast, Limit.wall(10.0, threads=2))], MODEL)
    assert out.winner == 1 and not out.in_workers
    first, second = slow.limits[0], fast.limits[0]
    assert first.seconds is not None and 9.5 < first.seconds <= 10.0 and first.threads == 2
    assert second.seconds is not None and 8.5 < second.seconds <= 9.7 and second.threads == 2


# --- _task and _watch, in this process ---------------------------------------------------------------------


def test_a_task_returns_its_index_its_result_and_whether_it_was_retried() -> None:
    k, result, retried = _task(4, Fixed("f", Status.OPTIMAL, BEST, bound=-8.0), MODEL, WORK, None, None)
    assert (k, result.status, result.objective, retried) == (4, Status.OPTIMAL, -8.0, False)
    k, result, retried = _task(2, FailsWithStart(), MODEL, WORK, np.array(GOOD), None)
    assert (k, result.status, result.objective, retried) == (2, Status.OPTIMAL, -8.0, True)


def test_a_task_whose_race_has_stopped_is_interrupted(tmp_path: Path) -> None:
    marker = tmp_path / "stop"
    marker.touch()
    began = time.perf_counter()
    _, result, _ = _task(1, Sleeper(5.0), MODEL, WALL, None, str(marker))
    assert result.message == "interrupted" and time.perf_counter() - began < 2.5


def test_a_task_without_the_marker_runs_to_its_end(tmp_path: Path) -> None:
    _, result, _ = _task(1, Sleeper(0.2), MODEL, WALL, None, str(tmp_path / "stop"))
    assert result.message == "ran out"


def test_a_task_stopped_during_its_first_try_is_not_retried(tmp_path: Path) -> None:
    # The first try fails on its start after 0.3 s; the marker is there from the beginning, so the
    # watcher (every 5 ms) has flagged the stop by then: no second try.
    marker = tmp_path / "stop"
    marker.touch()
    solver = Recorder(delay=0.3)
    _, result, retried = _task(0, solver, MODEL, WALL, np.array(GOOD), str(marker))
    assert result.status is Status.ERROR and not retried and len(solver.limits) == 1


def watch(solver: object, marker: Path, seconds: float, *,
          finished_first: bool = False) -> tuple[threading.Event, threading.Thread]:
    finished, stopped = threading.Event(), threading.Event()
    if finished_first:
        finished.set()
    thread = threading.Thread(target=_watch, args=(solver, str(marker), finished, stopped), daemon=True)
    thread.start()
    time.sleep(seconds)
    finished.set()
    thread.join(2.0)
    assert not thread.is_alive()
    return stopped, thread


def test_the_watcher_interrupts_again_and_again_until_the_solve_ends(tmp_path: Path) -> None:
    marker = tmp_path / "stop"
    marker.touch()
    solver = Counting()
    stopped, _ = watch(solver, marker, 0.3)
    assert stopped.is_set() and solver.interrupts >= 3  # one look every 5 ms: ~60 in 0.3 s
    seen = solver.interrupts
    time.sleep(0.05)
    assert solver.interrupts == seen  # none after the solve ended


def test_the_watcher_flags_the_stop_of_a_backend_without_interrupt(tmp_path: Path) -> None:
    marker = tmp_path / "stop"
    marker.touch()
    stopped, _ = watch(object(), marker, 0.2)
    assert stopped.is_set()


def test_the_watcher_does_nothing_without_the_marker_or_after_the_solve(tmp_path: Path) -> None:
    solver = Counting()
    stopped, _ = watch(solver, tmp_path / "stop", 0.2)
    assert not stopped.is_set() and solver.interrupts == 0
    marker = tmp_path / "stop"
    marker.touch()
    stopped, _ = watch(solver, marker, 0.0, finished_first=True)
    assert not stopped.is_set() and solver.interrupts == 0


# --- _alone (each in a worker of its own) ------------------------------------------------------------------


def test_an_entrant_alone_in_a_worker_keeps_its_start_and_watches_the_stop_marker(tmp_path: Path) -> None:
    result, retried = _alone(3, Entrant(FailsWithStart(), WORK), MODEL, np.array(GOOD), None)
    assert result.status is Status.OPTIMAL and retried  # it had the start, failed, and was retried
    marker = tmp_path / "stop"
    marker.touch()
    result, retried = _alone(0, Entrant(Sleeper(5.0), WALL), MODEL, None, str(marker))
    assert result.message == "interrupted" and not retried


def test_an_entrant_that_kills_its_worker_alone_is_an_error_named_after_it() -> None:
    result, retried = _alone(0, Entrant(Exiting(), WORK), MODEL, None, None)
    assert (result.status, result.backend, result.limit, result.wall_s, retried) == (Status.ERROR, "exiting", WORK,
                                                                                       0.0, False)
    assert result.message.startswith("exiting: its worker died (TerminatedWorkerError: ")
    result, _ = _alone(0, Entrant(NamelessExiting(), WORK), MODEL, None, None)  # type: ignore[arg-type]
    assert result.backend == "NamelessExiting" and result.message.startswith("NamelessExiting: its worker died")


# --- race and _in_workers ----------------------------------------------------------------------------------


def test_a_race_needs_an_entrant_and_one_entrant_runs_here() -> None:
    with pytest.raises(ValueError, match=r"^a race needs at least one entrant$"):
        race([], MODEL, workers=2)
    out = race([Entrant(Fixed("only", Status.OPTIMAL, BEST, bound=-8.0), WORK)], MODEL, workers=2)
    assert not out.in_workers and out.winner == 0 and out.result.objective == -8.0


def test_a_deterministic_race_in_workers_ends_without_a_worker_failure(caplog: pytest.LogCaptureFixture) -> None:
    # Under work limits there is no stop marker: a proven optimum touches nothing, and no worker fails.
    entrants = [Entrant(Fixed("first", Status.OPTIMAL, BEST, bound=-8.0), WORK),
                Entrant(Fixed("second", Status.FEASIBLE, GOOD), WORK)]
    with caplog.at_level(logging.WARNING, logger="solvers.race"):
        out = race(entrants, MODEL, workers=2)
    assert out.in_workers and out.winner == 0 and out.retried == (False, False)
    assert [r.getMessage() for r in caplog.records if r.name == "solvers.race"] == []


def test_a_dead_worker_is_reported_with_its_error(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="solvers.race"):
        out = race([Entrant(Exiting(), WORK), Entrant(Fixed("fine", Status.OPTIMAL, BEST, bound=-8.0), WORK)], MODEL,
                   workers=2)
    assert out.winner == 1
    failed = [r.getMessage() for r in caplog.records if r.name == "solvers.race"]
    assert len(failed) == 1 and failed[0].startswith("a race worker failed (TerminatedWorkerError: ")
    assert failed[0].endswith("); running the entrants left one by one")
    assert "was unexpectedly terminated" in failed[0]  # the error itself, after its type


def test_an_entrant_cut_off_by_a_dead_worker_runs_again_alone_on_the_same_model_and_start() -> None:
    # Entrant 0 kills its worker at once; entrant 1 is still sleeping (1 s) when the pool breaks, so
    # it runs again in a worker of its own with the race's model and start: the start makes it fail,
    # the retry without it proves the optimum -8 (BEST). So it wins, retried; entrant 0 is an error.
    slow = Recorder(delay=1.0)
    out = race([Entrant(Exiting(), WORK), Entrant(slow, WORK)], MODEL, start=np.array(GOOD), workers=2)
    assert out.winner == 1 and out.retried == (False, True)
    assert out.result.status is Status.OPTIMAL and out.result.objective == -8.0 and out.result.backend == "recorder"
    assert out.entries[0] is not None and out.entries[0].status is Status.ERROR


# --- choose and _with_best_bound, on the tie boundaries ----------------------------------------------------


def line() -> MipModel:
    """min x over -10 <= x <= 10 (continuous): a plan's objective is its x, to the last bit."""
    model = MipModel("line")
    model.add_var("x", lb=-10.0, ub=10.0, integer=False, cost=1.0)
    return model


LINE = line()


def at(x: float, status: Status = Status.FEASIBLE, *, bound: float | None = None, source: str = "",
       backend: str = "x") -> SolveResult:
    return make_result(LINE, status, np.array([x]), backend=backend, limit=WORK, wall_s=0.0, bound=bound,
                       bound_source=source)


def no_plan(status: Status, backend: str, *, bound: float | None = None, source: str = "") -> SolveResult:
    return make_result(LINE, status, None, backend=backend, limit=WORK, wall_s=0.0, bound=bound, bound_source=source)


def test_plans_within_the_relative_tie_are_tied_and_the_proven_one_wins() -> None:
    # best 1.0: tolerance 1e-9 * max(1, 1) = 1e-9; 1 + 1e-9 is exactly on it, so tied: the proven plan wins
    assert choose([at(1.0 + 1e-9, Status.OPTIMAL), at(1.0)])[0] == 0
    # best -8: tolerance 8e-9 (relative to |best|); -8 + 4e-9 is within it
    assert choose([at(-8.0 + 4e-9, Status.OPTIMAL), at(-8.0)])[0] == 0
    # best 0.5: tolerance 1e-9 (never below an absolute 1e-9); 0.5 + 1.5e-9 is outside it: the cheaper wins
    assert choose([at(0.5 + 1.5e-9, Status.OPTIMAL), at(0.5)])[0] == 1


def test_without_a_plan_the_first_entry_answers_with_every_message() -> None:
    k, out = choose([no_plan(Status.NO_SOLUTION, "a"), no_plan(Status.ERROR, "b")])
    assert (k, out.backend, out.status) == (0, "a", Status.NO_SOLUTION)
    assert out.message == "a: no_solution; b: error"
    with pytest.raises(ValueError, match=r"^no entrant ran$"):
        choose([None])


def test_the_winner_takes_the_first_of_the_highest_bounds_with_its_source() -> None:
    # bounds -9 ("z") and -8 twice ("a", then "z"): the highest, -8, first listed: source "a"
    k, out = choose([at(-7.0), no_plan(Status.NO_SOLUTION, "b", bound=-9.0, source="z"),
                     no_plan(Status.NO_SOLUTION, "c", bound=-8.0, source="a"),
                     no_plan(Status.NO_SOLUTION, "d", bound=-8.0, source="z")])
    assert (k, out.bound, out.bound_source, out.status) == (0, -8.0, "a", Status.FEASIBLE)
    assert out.gap == pytest.approx(1 / 7)  # (-7 - -8) / 7


def test_a_plan_within_the_tie_of_the_best_bound_is_optimal() -> None:
    # bound 1.0 (tolerance 1e-9): a plan at exactly 1 + 1e-9 meets it
    _, out = choose([at(1.0 + 1e-9), no_plan(Status.NO_SOLUTION, "b", bound=1.0, source="lp")])
    assert (out.status, out.bound, out.bound_source, out.gap) == (Status.OPTIMAL, 1.0, "lp", 0.0)
    # bound -8 (tolerance 8e-9): -8 + 4e-9 meets it, with a gap of exactly 0
    _, out = choose([at(-8.0 + 4e-9), no_plan(Status.NO_SOLUTION, "b", bound=-8.0)])
    assert (out.status, out.gap) == (Status.OPTIMAL, 0.0)
    # bound 0.5 (tolerance 1e-9): 0.5 + 1.5e-9 does not
    _, out = choose([at(0.5 + 1.5e-9), no_plan(Status.NO_SOLUTION, "b", bound=0.5)])
    assert out.status is Status.FEASIBLE


def test_a_plan_that_meets_its_own_bound_is_optimal_as_when_another_entrant_proved_it() -> None:
    # the winner's own bound -8 is the highest; its objective -8 meets it: optimal, whoever proved the bound
    own = choose([at(-8.0, bound=-8.0, source="own"), no_plan(Status.NO_SOLUTION, "b", bound=-9.0, source="lp")])[1]
    other = choose([at(-8.0), no_plan(Status.NO_SOLUTION, "b", bound=-8.0, source="lp")])[1]
    assert (own.status, own.bound, own.bound_source, own.gap) == (Status.OPTIMAL, -8.0, "own", 0.0)
    assert (other.status, other.bound, other.bound_source, other.gap) == (Status.OPTIMAL, -8.0, "lp", 0.0)
    # another entrant listed first proved the same bound: the winner keeps its own, and its source
    k, tied = choose([no_plan(Status.NO_SOLUTION, "b", bound=-8.0, source="lp"), at(-8.0, bound=-8.0, source="own")])
    assert (k, tied.status, tied.bound_source) == (1, Status.OPTIMAL, "own")
    # its own bound -8.5 is the highest but not met: feasible, unchanged
    mine = at(-8.0, bound=-8.5, source="own")
    assert choose([mine, no_plan(Status.NO_SOLUTION, "b", bound=-9.0)])[1] is mine


def test_an_entrant_that_never_ran_was_not_retried() -> None:
    fast = Fixed("fast", Status.OPTIMAL, BEST, bound=-8.0)
    out = race([Entrant(fast, WALL), Entrant(Fixed("slow", Status.FEASIBLE, GOOD), WALL)], MODEL)
    assert out.entries[1] is None and out.retried == (False, False)


# --- _unordered under a backend that cannot stream results (Ray's) -----------------------------------------


class NoGenerators(ThreadingBackend):
    """Threads, but results only as a list (as Ray's joblib backend)."""

    supports_return_generator = False


register_parallel_backend("no-generators", NoGenerators)


class Meeting:
    """Proves the optimum only once another entrant is solving at the same time (a barrier of two)."""

    name = "meeting"

    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier

    def solve(self, model: MipModel, *, limit: Limit, start: np.ndarray | None = None) -> SolveResult:
        self.barrier.wait()
        return make_result(model, Status.OPTIMAL, np.array(BEST), backend=self.name, limit=limit, wall_s=0.0,
                           bound=-8.0)


def test_a_backend_without_streamed_results_still_runs_the_tasks_side_by_side() -> None:
    barrier = threading.Barrier(2, timeout=5.0)  # one task at a time would break it: both would fail
    tasks = [delayed(_task)(k, Meeting(barrier), MODEL, WORK, None, None) for k in range(2)]
    with parallel_config(backend="no-generators"):
        out = sorted(_unordered(tasks, 2), key=lambda t: t[0])
    assert [(k, r.status, r.objective, retried) for k, r, retried in out] == [(0, Status.OPTIMAL, -8.0, False),
                                                                             (1, Status.OPTIMAL, -8.0, False)]
