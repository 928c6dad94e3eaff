"""The report's time budget, planned from estimates so that the same trace and budget give the same report.

Every part of a section (a replay, a learner's run, a grid) asks :meth:`Budget.allow` with its
estimated cost before it runs. The estimate is a cost per job measured on the 2-core machine the
project's CI uses (:data:`SECONDS_PER_JOB`, ``BENCHMARKS.md``), times the jobs the part replays,
never a clock reading: what runs depends on the trace and the budget only, so the same command
gives the same sections and the same numbers. The clock is a guard only: once the wall time
spent passes the budget (a machine far slower than the estimates assume), every later part is
skipped and says so, and that report is no longer comparable.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)

#: Estimated seconds per job (per core-job for ``elastic_*``) of each part, on the 2-core CI machine,
#: with a margin; measured on KTH-SP2, SDSC-SP2 and the generated workload (``BENCHMARKS.md``).
SECONDS_PER_JOB: dict[str, float] = {
    "trace": 2e-6,
    "coh_heuristic": 6e-5,
    "coh_trio": 2.5e-4,
    "coh_ipp": 1e-3,
    "coh_r": 3e-4,
    "leasing_constant": 4e-5,
    "leasing_qlearning": 8e-4,
    "cluster_cell": 6e-5,
    "advisor": 1.5e-3,
    "elastic_rule": 8e-5,
    "elastic_sarsa": 8e-4,
}
#: A fixed cost per part (imports, worker start, a solver's first call), seconds.
FIXED_SECONDS = 0.5


def estimate(part: str, jobs: float, *, runs: int = 1) -> float:
    """Estimated seconds of ``runs`` runs of ``part`` over ``jobs`` jobs."""
    return runs * (FIXED_SECONDS + SECONDS_PER_JOB[part] * jobs)


class Budget:
    """Seconds planned against the budget; what was left out, and why.

    Parameters
    ----------
    seconds : float
        The whole budget.
    clock : callable, optional
        The wall clock of the overrun guard (``time.perf_counter``).
    """

    def __init__(self, seconds: float, clock: object = time.perf_counter) -> None:
        if not seconds > 0:
            raise ValueError(f"a budget must be > 0 s, got {seconds}")
        self.seconds = seconds
        self.planned = 0.0
        self.skipped: list[str] = []
        self._clock = clock
        self._started = self._now()

    def _now(self) -> float:
        clock = self._clock
        assert callable(clock)
        return float(clock())

    @property
    def left(self) -> float:
        """Seconds not yet planned."""
        return self.seconds - self.planned

    @property
    def spent(self) -> float:
        """Wall seconds since the budget began."""
        return self._now() - self._started

    def allow(self, what: str, seconds: float) -> bool:
        """Plan ``seconds`` for ``what`` if they fit in what is left (and the clock has not run out)."""
        if self.spent > self.seconds:
            self._skip(f"{what}: the budget ran out ({self.spent:.0f} s of {self.seconds:.0f} s spent)")
            return False
        if seconds > self.left:
            self._skip(f"{what}: needs about {seconds:.0f} s, {max(self.left, 0.0):.0f} s of the budget left")
            return False
        self.planned += seconds
        return True

    def _skip(self, reason: str) -> None:
        log.info("skipped %s", reason)
        self.skipped.append(reason)
