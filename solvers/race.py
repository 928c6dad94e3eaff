"""Several backends on one model at once: the first proven optimum wins, or the best plan once all have stopped.

:func:`race` hands the same :class:`~solvers.model.MipModel` and warm start to each
:class:`Entrant` (a backend and its limit) and returns the winner's result with every entrant's.

- **Where.** With ``workers`` above one the entrants run side by side in joblib workers, under
  whatever backend joblib is configured with (loky's persistent process pool by default; Dask or
  Ray inside ``joblib.parallel_config``); otherwise one after another in this process.
- **Who wins.** The cheapest plan (objective within ``1e-9`` relative), a proven optimum before an
  unproven plan of the same cost, then the entrant listed first. Every entrant's proven bound is a
  bound of the model, so the winner carries the best of them, and a plan that meets it is optimal.
- **Work limits** (:meth:`~solvers.base.Limit.deterministic`): every entrant runs to its own end and
  the rule above picks the winner, so the same model gives the same winner wherever and however fast
  the entrants run.
- **Wall limits**: the first proven optimum ends the race. In workers, the others are told to stop
  (a marker file their worker watches; a backend with an ``interrupt()`` method, as both of ours
  have, stops its search and returns what it has) and their results are collected; in this process
  the later entrants do not start, and each entrant only has what is left of the first's limit.
- **Failures.** An entrant that raises, returns ERROR or has no plan simply does not win; one that
  fails with a warm start is tried once more without it (the bundled CBC crashes on some MIP starts).
  If a worker dies, the entrants without a result are run again, each alone in a worker of its own,
  so that one that kills its process takes only itself out.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from solvers.base import Limit, Solver, SolveResult, Status, error_result, relative_gap
from solvers.model import MipModel

log = logging.getLogger(__name__)

#: Seconds between two looks of a worker at its race's stop marker.
POLL = 0.005
#: Relative tolerance under which two objectives are the same.
TIE = 1e-9


@dataclass(frozen=True, slots=True)
class Entrant:
    """A backend and the limit it runs under."""

    solver: Solver
    limit: Limit


@dataclass(frozen=True, slots=True)
class RaceResult:
    """The winner's result (with the best bound of all), each entrant's result, and how the race ran.

    ``entries[k]`` is entrant ``k``'s result, ``None`` when it never ran (a wall race in this process
    ended before its turn); ``retried[k]`` says it was run again without the warm start.
    """

    result: SolveResult
    winner: int
    entries: tuple[SolveResult | None, ...]
    retried: tuple[bool, ...]
    in_workers: bool


def race(entrants: Sequence[Entrant], model: MipModel, *, start: np.ndarray | None = None,
         workers: int = 1) -> RaceResult:
    """Run ``entrants`` on ``model`` (module docstring); ``workers > 1`` runs them side by side."""
    if not entrants:
        raise ValueError("a race needs at least one entrant")
    deterministic = all(e.limit.is_deterministic for e in entrants)
    if workers > 1 and len(entrants) > 1:
        done = _in_workers(entrants, model, start, workers, deterministic)
        in_workers = True
    else:
        done = _in_process(entrants, model, start, deterministic)
        in_workers = False
    entries = tuple(done[k][0] if k in done else None for k in range(len(entrants)))
    retried = tuple(done[k][1] if k in done else False for k in range(len(entrants)))
    winner, result = choose(entries)
    return RaceResult(result, winner, entries, retried, in_workers)


def choose(entries: Sequence[SolveResult | None]) -> tuple[int, SolveResult]:
    """The winner of finished entries (module docstring): its index and its result with the best bound."""
    ran = [(k, r) for k, r in enumerate(entries) if r is not None]
    if not ran:
        raise ValueError("no entrant ran")
    solved = [(k, r) for k, r in ran if r.status.has_solution and r.objective is not None]
    if not solved:
        k, first = next(((k, r) for k, r in ran if r.status is Status.INFEASIBLE), ran[0])
        message = "; ".join(f"{r.backend}: {r.status.value} {r.message}".strip() for _, r in ran)
        return k, dataclasses.replace(first, message=message)
    best = min(r.objective for _, r in solved if r.objective is not None)
    tied = [(k, r) for k, r in solved if r.objective is not None and r.objective <= best + TIE * max(1.0, abs(best))]
    k, winner = min(tied, key=lambda kr: (kr[1].status is not Status.OPTIMAL, kr[0]))
    return k, _with_best_bound(winner, [r for _, r in ran])


def _with_best_bound(winner: SolveResult, results: Iterable[SolveResult]) -> SolveResult:
    """``winner`` with the highest bound any entrant proved; optimal when its objective meets it."""
    bounds = [(r.bound, r.bound_source) for r in results if r.bound is not None and math.isfinite(r.bound)]
    if not bounds or winner.objective is None:
        return winner
    bound, source = max(bounds, key=lambda b: b[0])
    if winner.bound is not None and winner.bound >= bound:  # its own bound is the best: keep it, and its source
        bound, source = winner.bound, winner.bound_source
    status = winner.status
    if status is Status.FEASIBLE and winner.objective <= bound + TIE * max(1.0, abs(bound)):
        status = Status.OPTIMAL
    if status is winner.status and bound == winner.bound:
        return winner
    return dataclasses.replace(winner, status=status, bound=bound, bound_source=source,
                               gap=relative_gap(status, winner.objective, bound))


def attempt(solver: Solver, model: MipModel, limit: Limit, start: np.ndarray | None,
            stopped: threading.Event | None = None) -> tuple[SolveResult, bool]:
    """One entrant's solve, never raising; an ERROR with a warm start is tried once more without it."""
    started = time.perf_counter()
    result = _solve(solver, model, limit, start, started)
    if result.status is Status.ERROR and start is not None and not (stopped is not None and stopped.is_set()):
        log.warning("%s failed with a warm start (%s); retrying without it", solver.name, result.message)
        return _solve(solver, model, _left(limit, time.perf_counter() - started), None, started), True
    return result, False


def _solve(solver: Solver, model: MipModel, limit: Limit, start: np.ndarray | None, started: float) -> SolveResult:
    try:
        return solver.solve(model, limit=limit, start=start)
    except Exception as exc:  # an entrant that breaks its contract loses the race, nothing more
        return error_result(getattr(solver, "name", type(solver).__name__), limit, time.perf_counter() - started,
                            f"{type(exc).__name__}: {exc}")


def _in_process(entrants: Sequence[Entrant], model: MipModel, start: np.ndarray | None,
                deterministic: bool) -> dict[int, tuple[SolveResult, bool]]:
    done: dict[int, tuple[SolveResult, bool]] = {}
    began = time.perf_counter()
    for k, entrant in enumerate(entrants):
        limit = entrant.limit if deterministic else _left(entrant.limit, time.perf_counter() - began)
        done[k] = attempt(entrant.solver, model, limit, start)
        if not deterministic and done[k][0].status is Status.OPTIMAL:
            break
    return done


def _left(limit: Limit, spent: float) -> Limit:
    """What remains of a wall limit after ``spent`` seconds (at least 10 ms)."""
    if limit.seconds is None:
        return limit
    return Limit.wall(max(0.01, limit.seconds - spent), threads=limit.threads)


def _in_workers(entrants: Sequence[Entrant], model: MipModel, start: np.ndarray | None, workers: int,
                deterministic: bool) -> dict[int, tuple[SolveResult, bool]]:
    done: dict[int, tuple[SolveResult, bool]] = {}
    with tempfile.TemporaryDirectory(prefix="cloudbroker-race-") as tmp:
        stop = None if deterministic else str(Path(tmp) / "stop")
        tasks = [delayed(_task)(k, e.solver, model, e.limit, start, stop) for k, e in enumerate(entrants)]
        try:
            for k, result, retried in _unordered(tasks, min(workers, len(tasks))):
                done[k] = (result, retried)
                if stop is not None and result.status is Status.OPTIMAL:
                    Path(stop).touch()
        except Exception as exc:  # a worker died: run the rest again, each alone
            log.warning("a race worker failed (%s: %s); running the entrants left one by one", type(exc).__name__, exc)
            for k, e in enumerate(entrants):
                if k not in done:
                    done[k] = _alone(k, e, model, start, stop)
    return done


def _alone(k: int, entrant: Entrant, model: MipModel, start: np.ndarray | None,
           stop: str | None) -> tuple[SolveResult, bool]:
    try:
        [(_, result, retried)] = list(_unordered([delayed(_task)(k, entrant.solver, model, entrant.limit, start,
                                                                  stop)], 1, isolated=True))
    except Exception as exc:
        name = getattr(entrant.solver, "name", type(entrant.solver).__name__)
        return error_result(name, entrant.limit, 0.0, f"{name}: its worker died ({type(exc).__name__}: {exc})"), False
    return result, retried


def _unordered(tasks: list, n_jobs: int, *, isolated: bool = False) -> Iterable[tuple[int, SolveResult, bool]]:
    """The tasks' results as they finish, under the active joblib backend (in a worker even for one task)."""
    n_jobs = max(n_jobs, 2) if isolated else n_jobs
    try:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    except ValueError:  # a backend that cannot stream results (Ray's)
        parallel = Parallel(n_jobs=n_jobs, return_as="list")
    yield from parallel(tasks)


def _task(k: int, solver: Solver, model: MipModel, limit: Limit, start: np.ndarray | None,
          stop: str | None) -> tuple[int, SolveResult, bool]:
    """One entrant in a worker; a thread watches the race's stop marker and interrupts the solver."""
    finished, stopped = threading.Event(), threading.Event()
    if stop is not None:
        threading.Thread(target=_watch, args=(solver, stop, finished, stopped), daemon=True).start()
    try:
        result, retried = attempt(solver, model, limit, start, stopped)
    finally:
        finished.set()
    return k, result, retried


def _watch(solver: Solver, stop: str, finished: threading.Event, stopped: threading.Event) -> None:
    interrupt = getattr(solver, "interrupt", None)
    while not finished.wait(POLL):
        if Path(stop).exists():
            stopped.set()
            if interrupt is not None:
                interrupt()  # repeated until the solve returns: it may not have started yet
