"""The report's time budget, planned from estimates so that the same trace and budget give the same report.

Each section gets a share of the budget (:meth:`Budget.share`) and plans its parts (a replay, a
learner's run, a grid) on the most of the trace's first jobs whose estimated cost fits it
(:meth:`Budget.slice`), so that a small budget runs every section on a slice. The estimate is a
cost per job measured on the 2-core machine the project's CI uses (:data:`SECONDS_PER_JOB`,
``BENCHMARKS.md``), times the jobs the part replays, never a clock reading: what runs depends on
the trace and the budget only, so the same command gives the same sections and the same numbers.
The clock is a guard only: once the wall time spent passes the budget (a machine far slower than
the estimates assume), every later part is skipped and says so, and that report is no longer
comparable.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: Estimated seconds per job (per core-job for ``elastic_*``, per cell-job for ``cluster_cell``, whose cells run on
#: both cores) of each part, on the 2-core CI machine, with a margin of about 1.2; measured on KTH-SP2 with the
#: machine shared (``BENCHMARKS.md``, the site report).
SECONDS_PER_JOB: dict[str, float] = {
    "trace": 2e-6,
    "coh_heuristic": 4.5e-5,
    "coh_trio": 8e-5,
    "coh_ipp": 2.8e-4,
    "coh_r": 2.5e-4,
    "coh_spot": 1e-4,
    "leasing_constant": 1.5e-5,
    "leasing_qlearning": 9e-4,
    "cluster_cell": 2.4e-5,
    "advisor": 9e-4,
    "elastic_rule": 6e-5,
    "elastic_sarsa": 4e-4,
}
#: Estimated seconds per job squared: SARSA's queue grows with the jobs on a busy site (KTH-SP2's first
#: 10,000 core-jobs 6 s, 16,000 12-15 s in a report, 18,000 9 s alone, 45,000 41 s).
SECONDS_PER_JOB_SQUARED: dict[str, float] = {"elastic_sarsa": 1.4e-8}
#: A fixed cost per run (a world built, a learner set up), seconds.
FIXED_SECONDS = 0.05
#: Seconds of what every report does besides its sections: the interpreter's imports, reading the trace,
#: writing the page (planned first, so that the command as a whole keeps to the budget).
OVERHEAD_SECONDS = 5.0
#: The fewest jobs a section is run on when the budget cannot hold the whole trace.
LEAST_JOBS = 1000


def estimate(part: str, jobs: float, *, runs: int = 1) -> float:
    """Estimated seconds of ``runs`` runs of ``part`` over ``jobs`` jobs."""
    return runs * (FIXED_SECONDS + SECONDS_PER_JOB[part] * jobs + SECONDS_PER_JOB_SQUARED.get(part, 0.0) * jobs ** 2)


class Budget:
    """Seconds planned against the budget, section by section; what was sliced or left out, and why.

    Each section gets a share of what is left (:meth:`share`): its weight over the weights of the
    sections still to run, so that a section that needs less leaves the rest to the later ones. A
    section plans its parts on the most jobs whose estimated cost fits its share (:meth:`slice`):
    the whole trace, or its first jobs, so that a small budget runs every section on a slice rather
    than skipping some. Each planned part's wall time is kept beside its estimate (:attr:`parts`).

    Parameters
    ----------
    seconds : float
        The whole budget.
    clock : callable, optional
        The wall clock of the overrun guard and of the parts' measured times (``time.perf_counter``).
    """

    def __init__(self, seconds: float, clock: object = time.perf_counter) -> None:
        if not seconds > 0:
            raise ValueError(f"a budget must be > 0 s, got {seconds}")
        self.seconds = seconds
        self.planned = 0.0
        self.skipped: list[str] = []
        self.parts: list[dict[str, object]] = []
        self._clock = clock
        self._started = self._now()
        self._share = seconds
        self._share_planned = 0.0
        self._open: tuple[dict[str, object], float] | None = None

    def _now(self) -> float:
        clock = self._clock
        assert callable(clock)
        return float(clock())

    @property
    def left(self) -> float:
        """Seconds not yet planned."""
        return self.seconds - self.planned

    @property
    def share_left(self) -> float:
        """Seconds of the current section's share not yet planned."""
        return min(self._share - self._share_planned, self.left)

    @property
    def spent(self) -> float:
        """Wall seconds since the budget began."""
        return self._now() - self._started

    def share(self, weight: float, weights_left: float) -> float:
        """Begin a section of ``weight`` among ``weights_left`` (its own included); its share (s) of what is left."""
        self.close()
        self._share = self.left * weight / weights_left if weights_left > 0 else self.left
        self._share_planned = 0.0
        return self._share

    def allow(self, what: str, seconds: float) -> bool:
        """Plan ``seconds`` for ``what`` if they fit in the section's share (and the clock has not run out)."""
        if self.spent > self.seconds:
            self._skip(f"{what}: the budget ran out ({self.spent:.0f} s of {self.seconds:.0f} s spent)")
            return False
        if seconds > self.share_left:
            left = in_seconds(max(self.share_left, 0.0))
            self._skip(f"{what}: needs about {in_seconds(seconds)}, {left} of the budget left")
            return False
        self.planned += seconds
        self._share_planned += seconds
        self.start(what, seconds)
        return True

    def slice(self, what: str, cost: Callable[[int], float], n: int, *, least: int) -> int | None:
        """The most of the first ``n`` jobs, at least ``least`` (or all ``n`` if fewer), whose ``cost`` fits; planned.

        ``cost(m)`` is the estimated seconds of the section's parts on ``m`` jobs (non-decreasing in
        ``m``). None, and the reason kept, when even the smallest slice does not fit.
        """
        low = min(least, n)
        if self.spent <= self.seconds and cost(n) > self.share_left:
            if cost(low) > self.share_left:
                n = low  # not even the smallest slice fits: the reason names its cost
            else:
                hi = n  # cost(low) fits, cost(hi) does not: the largest m that fits, by bisection
                while hi - low > 1:
                    mid = (low + hi) // 2
                    low, hi = (mid, hi) if cost(mid) <= self.share_left else (low, mid)
                n = _round_down(low, min(least, n))
        return n if self.allow(what, cost(n)) else None

    def start(self, what: str, estimated: float) -> None:
        """Begin timing the part ``what`` (estimated at ``estimated`` s); the previous part ends here."""
        self.close()
        part: dict[str, object] = {"part": what, "estimated_s": round(estimated, 3)}
        self.parts.append(part)
        self._open = (part, self._now())

    def close(self) -> None:
        """End the part being timed (its wall time counts up to now)."""
        if self._open is not None:
            part, began = self._open
            part["wall_s"] = round(self._now() - began, 3)
            self._open = None

    def _skip(self, reason: str) -> None:
        log.info("skipped %s", reason)
        self.skipped.append(reason)


def in_seconds(seconds: float) -> str:
    """Seconds in words: one decimal below ten."""
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:,.0f} s"


def _round_down(m: int, least: int) -> int:
    """``m`` jobs rounded down to two significant digits (a slice a reader can repeat), never below ``least``."""
    if m < 100:
        return max(m, least)
    step = 10 ** (len(str(m)) - 2)
    return max(m - m % step, least)


def limit_flag(n: int, total: int) -> str:
    """`` --limit-jobs N`` when a section ran on the first ``n`` of ``total`` jobs, else nothing."""
    return f" --limit-jobs {n}" if n < total else ""


def sliced(n: int, total: int, what: str = "jobs") -> str:
    """What a section left out by running on a slice."""
    return f"ran on the first {n:,} of {total:,} {what} (the budget)"
