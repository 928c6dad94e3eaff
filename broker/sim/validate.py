"""What every world's invariant checks share: the error, and conservation of jobs.

Each world checks its own invariants under ``validate=True`` (``broker/<system>/validate.py``); a
failed check raises :class:`InvariantError` naming the job or instance, the time and the values.
"""

from __future__ import annotations

#: Slack for comparisons of times and capacities (seconds, capacity units).
EPS = 1e-6


class InvariantError(AssertionError):
    """A simulation invariant does not hold."""


def check_conservation(t: float, *, submitted: int, done: int, running: int, queued: int) -> None:
    """Every job submitted so far is done, running or queued, exactly once."""
    if submitted != done + running + queued:
        raise InvariantError(f"t={t}: {submitted} job(s) submitted but {done} done + {running} running + "
                             f"{queued} queued = {done + running + queued}")
