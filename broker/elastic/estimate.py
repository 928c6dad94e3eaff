"""What a site knows of a job's run time before it ends (the elastic RL paper §3.2, "Workload Descriptors").

- ``oracle``: the actual run time, known at submission (an upper bound on what the learner can do).
- ``median``: the median run time of the job's class (interactive or batch) over the last ``window``
  jobs of that class that have *completed*; before any has, ``prior`` seconds. The class is known
  at submission: the paper lets users declare it and trusts them (interactive: run time below
  900 s).

Estimates change only when a job completes (:meth:`RunTimeEstimates.completed`); every job of a
class shares its class's estimate, so the estimate never reveals one job's own run time.
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Literal

import numpy as np

from workloads.errors import ConfigError

Estimate = Literal["oracle", "median"]
ESTIMATES: tuple[Estimate, ...] = ("oracle", "median")


class RunTimeEstimates:
    """Per-job run-time estimates of one run (see the module docstring)."""

    def __init__(self, runtime: np.ndarray, interactive: np.ndarray, kind: Estimate = "oracle", *,
                 window: int = 1000, prior: float = 900.0) -> None:
        if kind not in ESTIMATES:
            raise ConfigError(f"the run-time estimate must be one of {', '.join(ESTIMATES)}, got {kind!r}")
        if window < 1 or not prior >= 0:
            raise ConfigError(f"the median estimate needs window >= 1 and prior >= 0, got {window}, {prior}")
        self.kind, self.window = kind, window
        self.runtime, self.interactive = runtime, interactive.astype(np.int64)
        self.recent: tuple[deque[float], deque[float]] = (deque(), deque())
        self.ordered: tuple[list[float], list[float]] = ([], [])
        self.median = np.array([prior, prior])  # batch, interactive

    def of(self, jobs: np.ndarray) -> np.ndarray:
        """The estimates of ``jobs`` (indices) now."""
        if self.kind == "oracle":
            return self.runtime[jobs]
        return self.median[self.interactive[jobs]]

    def one(self, job: int) -> float:
        """The estimate of one job now."""
        if self.kind == "oracle":
            return float(self.runtime[job])
        return float(self.median[self.interactive[job]])

    def completed(self, job: int) -> None:
        """``job`` ended: its run time joins its class's window (median estimates only)."""
        if self.kind == "oracle":
            return
        k = int(self.interactive[job])
        recent, ordered, value = self.recent[k], self.ordered[k], float(self.runtime[job])
        recent.append(value)
        bisect.insort(ordered, value)
        if len(recent) > self.window:
            del ordered[bisect.bisect_left(ordered, recent.popleft())]
        n = len(ordered)
        self.median[k] = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2.0

    def copy(self) -> RunTimeEstimates:
        """An independent copy (the job arrays shared)."""
        twin = RunTimeEstimates.__new__(RunTimeEstimates)
        twin.kind, twin.window, twin.runtime, twin.interactive = self.kind, self.window, self.runtime, self.interactive
        twin.recent = (deque(self.recent[0]), deque(self.recent[1]))
        twin.ordered = (list(self.ordered[0]), list(self.ordered[1]))
        twin.median = self.median.copy()
        return twin
