"""One-core jobs for a pool of cores shared by groups (``SPEC.md`` §6, the elastic RL paper §4.2).

The paper's EGEE log holds sequential jobs only, each asking for one core, submitted by virtual
organisations (VOs). A job here has a submit time, a run time, a group (the SWF group, field 13,
standing for the VO) and the wait the log recorded (field 3), which is the *native* scheduler's
answer the policies are compared with.

Parallel-job logs hold jobs of ``p`` processors; two documented choices turn them into one-core
work (``parallel``):

- ``"expand"`` (default): ``p`` one-core jobs with the job's submit and run time, group and native
  wait. The work and the number of cores asked for are kept; the gang is not (the tasks may start
  at different times), which a pool without co-scheduling cannot express anyway.
- ``"one"``: one core whatever ``p`` (the job's work is divided by ``p``).

Removed and counted: unknown submit time, unknown or negative run time. Jobs with an unknown group
share the group code of ``group = -1`` and are counted in ``kept_flagged``; with ``"expand"``,
jobs with an unknown processor count become one task and are counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from workloads.errors import ConfigError, InputError
from workloads.jobs import FilterReport, check_rows, count_kept, expanded, filter_rows, partial_executions

Parallel = Literal["expand", "one"]


@dataclass(frozen=True, slots=True)
class CoreJobs:
    """One-core jobs sorted by ``submit`` (s): ``runtime`` (s), ``group`` code, the log's ``native_wait`` (s).

    ``groups[code]`` is the trace's group id of a code (-1: unknown); ``native_wait`` is NaN where the
    log has none; ``ids`` are the SWF job numbers (shared by the tasks of an expanded job); ``origin``
    is the Unix time of time 0.
    """

    submit: np.ndarray
    runtime: np.ndarray
    group: np.ndarray
    native_wait: np.ndarray
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    groups: tuple[int, ...] = ()
    origin: float = 0.0

    def __post_init__(self) -> None:
        if not len(self.ids):
            object.__setattr__(self, "ids", np.arange(len(self.submit), dtype=np.int64))
        n = check_rows(self, "submit", ("runtime", "group", "native_wait", "ids"))
        if n and np.any(self.runtime < 0):
            raise InputError("CoreJobs need non-negative run times")
        if n and (self.group.min() < 0 or self.group.max() >= max(len(self.groups), 1)):
            raise InputError(f"CoreJobs.group codes must lie in 0..{max(len(self.groups), 1) - 1}")

    def __len__(self) -> int:
        return len(self.submit)

    @property
    def n_groups(self) -> int:
        """The number of group codes (at least 1)."""
        return max(len(self.groups), 1)

    def slice(self, start: int, stop: int) -> CoreJobs:
        """Jobs ``start`` to ``stop - 1`` (by submit time)."""
        part = slice(start, stop)
        return CoreJobs(self.submit[part], self.runtime[part], self.group[part], self.native_wait[part],
                        self.ids[part], self.groups, self.origin)

    def head(self, n: int) -> CoreJobs:
        """The first ``n`` jobs."""
        return self.slice(0, n)

    def window(self, first_s: float, span_s: float) -> CoreJobs:
        """The jobs submitted in ``[first_s, first_s + span_s)`` (seconds on the trace clock)."""
        lo, hi = np.searchsorted(self.submit, [first_s, first_s + span_s], side="left")
        return self.slice(int(lo), int(hi))


def cores_view(trace: pd.DataFrame, *, parallel: Parallel = "expand",
               origin: float = 0.0) -> tuple[CoreJobs, FilterReport]:
    """The one-core jobs of a trace DataFrame (see the module docstring)."""
    if parallel not in ("expand", "one"):
        raise ConfigError(f"parallel must be 'expand' or 'one', got {parallel!r}")
    parts, alone = partial_executions(trace)
    checks = {
        **parts,
        "submit time unknown": trace["submit_time"].isna(),
        "run time unknown or < 0": trace["run_time"].isna() | (trace["run_time"] < 0),
    }
    keep, removed = filter_rows(checks, len(trace))
    kept = trace[keep]
    group_ids = kept["group_id"].fillna(-1).to_numpy(dtype=np.int64)
    flagged = {"with unknown group (one shared group)": int((group_ids == -1).sum()), **count_kept(alone, keep)}
    width = np.ones(len(kept), dtype=np.int64)
    procs = kept["allocated_procs"].where(kept["allocated_procs"] > 0, kept["requested_procs"])
    if parallel == "expand":
        flagged["with unknown processors (one task)"] = int(procs.isna().sum())
        width = expanded(procs.fillna(1).clip(lower=1).to_numpy(dtype=np.float64)).astype(np.int64)
    else:
        flagged["wider than one processor (run on one core)"] = int((procs > 1).sum())
    groups, codes = np.unique(group_ids, return_inverse=True)
    submit = np.repeat(kept["submit_time"].to_numpy(dtype=np.float64), width)
    order = np.argsort(submit, kind="stable")
    wait = kept["wait_time"].to_numpy(dtype=np.float64, na_value=np.nan)
    jobs = CoreJobs(submit=submit[order],
                    runtime=np.repeat(kept["run_time"].to_numpy(dtype=np.float64), width)[order],
                    group=np.repeat(codes.astype(np.int64), width)[order],
                    native_wait=np.repeat(wait, width)[order],
                    ids=np.repeat(kept["job_id"].fillna(-1).to_numpy(dtype=np.int64), width)[order],
                    groups=tuple(int(g) for g in groups), origin=float(origin))
    # the report counts the log's jobs (read = removed + kept); the view's tasks are len(jobs)
    return jobs, FilterReport(read=len(trace), kept=len(kept), removed=removed, kept_flagged=flagged)
