"""The broker's job view: arrival, run time, departure and resource requirement per job.

Traces arrive as DataFrames (:mod:`workloads.swf`); the engine works on NumPy arrays. This module
is the boundary between the two: :func:`job_view` applies an explicit, documented filter to a
trace, reports what it removed and why, and returns a :class:`JobTable` sorted by arrival.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from workloads.errors import ConfigError, InputError

#: SWF status codes (field 11).
STATUS_FAILED = 0
STATUS_COMPLETED = 1
STATUS_CANCELLED = 5
#: The status codes of a partial execution's line (a job checkpointed or swapped out, SWF's usage notes).
STATUS_PARTIAL = (2, 3, 4)
#: The reasons of :func:`partial_executions`, as the views count them.
PARTIAL_REMOVED = "partial execution (status 2-4) of a job listed whole"
PARTIAL_KEPT = "partial execution (status 2-4) without a whole-job line, run as a job"


def partial_executions(trace: pd.DataFrame) -> tuple[dict[str, pd.Series], dict[str, pd.Series]]:
    """The partial-execution lines a view removes, and those it keeps as jobs of their own, by reason.

    A log with checkpointing lists a job once whole (status 0, 1 or 5, its total run time) and each
    of its partial executions again under the same job number (status 2, 3 or 4): a view runs the
    whole job and removes its partial lines, so no work counts twice. A partial line whose number
    has no whole line (a log that lists only the parts) is the only record of that work: kept.
    Both maps are empty for a log without partial executions (or without a status or job number
    column), so that a view lists these reasons only where they can apply.
    """
    if "status" not in trace.columns or "job_id" not in trace.columns:
        return {}, {}
    partial = trace["status"].isin(STATUS_PARTIAL).to_numpy(dtype=bool, na_value=False)
    if not partial.any():
        return {}, {}
    ids = trace["job_id"]
    whole = ids[~partial & ids.notna().to_numpy()]
    listed = ids.isin(whole.to_numpy()).to_numpy(dtype=bool, na_value=False)
    index = trace.index
    return ({PARTIAL_REMOVED: pd.Series(partial & listed, index=index)},
            {PARTIAL_KEPT: pd.Series(partial & ~listed, index=index)})


def count_kept(masks: dict[str, pd.Series], keep: np.ndarray) -> dict[str, int]:
    """How many of the kept rows each mask holds, by its reason."""
    return {why: int((mask.to_numpy(dtype=bool) & keep).sum()) for why, mask in masks.items()}


#: Whole numbers below this magnitude are exact doubles, and so is every sum of them that stays below it.
WHOLE_LIMIT = 2.0**53
#: What requirements and arrivals must be: whole numbers, so that every sum of them is exact in any order.
WHOLE = {"r": ("a whole number of capacity units, > 0 and below 2**53",
               "scale requirements and the price book's capacities alike to whole units"),
         "arrival": ("a whole number of seconds below 2**53 in magnitude", "round arrivals to whole seconds")}


@dataclass(frozen=True, slots=True)
class JobTable:
    """Jobs as the broker sees them, sorted by arrival (ties by job id).

    Attributes
    ----------
    job_id : np.ndarray
        int64 job numbers from the trace.
    arrival : np.ndarray
        float64 submit times in whole seconds since the trace origin (checked: sums of them are exact).
    runtime : np.ndarray
        float64 run times in seconds (strictly positive).
    r : np.ndarray
        float64 resource requirement in whole capacity units (CoH §2.1, scalar CPU requirement; checked, as
        price books check capacities, so that every sum of requirements is exact in any order).
    user : np.ndarray
        int64 user ids (-1 when the trace does not say).
    origin : int
        Unix time of the trace origin (SWF ``UnixStartTime``), 0 when unknown. Wall-clock
        charging aligns billing hours to ``origin + t``.
    source : str
        Where the jobs came from (a path, a trace name or a generator description).
    """

    job_id: np.ndarray
    arrival: np.ndarray
    runtime: np.ndarray
    r: np.ndarray
    user: np.ndarray
    origin: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        n = check_rows(self, "job_id", ("arrival", "runtime", "r", "user"), ordered="arrival",
                       hint="; build tables with JobTable.from_arrays")
        if n and np.any(self.runtime <= 0):
            raise InputError("JobTable.runtime must be strictly positive (see workloads.jobs.job_view)")
        for name in ("r", "arrival"):
            values = getattr(self, name)
            with np.errstate(invalid="ignore"):  # NaN and infinity are not whole: refused below, not warned of
                bad = np.flatnonzero((np.mod(values, 1) != 0) | ~(np.abs(values) < WHOLE_LIMIT)
                                     | ((values <= 0) if name == "r" else False))
            if n and len(bad):
                what, hint = WHOLE[name]
                raise InputError(f"JobTable.{name} must be {what}; job {self.job_id[bad[0]]} has {values[bad[0]]} "
                                 f"({hint})")

    @classmethod
    def from_arrays(
        cls,
        *,
        arrival: np.ndarray,
        runtime: np.ndarray,
        r: np.ndarray,
        job_id: np.ndarray | None = None,
        user: np.ndarray | None = None,
        origin: int = 0,
        source: str = "",
    ) -> JobTable:
        """Build a table from unsorted arrays, sorting stably by (arrival, job id)."""
        arrival = np.asarray(arrival, dtype=np.float64)
        n = len(arrival)
        ids = np.arange(1, n + 1, dtype=np.int64) if job_id is None else np.asarray(job_id, np.int64)
        users = np.full(n, -1, dtype=np.int64) if user is None else np.asarray(user, np.int64)
        order = np.lexsort((ids, arrival))
        return cls(
            job_id=ids[order],
            arrival=arrival[order],
            runtime=np.asarray(runtime, dtype=np.float64)[order],
            r=np.asarray(r, dtype=np.float64)[order],
            user=users[order],
            origin=origin,
            source=source,
        )

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def departure(self) -> np.ndarray:
        """Departure if started on arrival: ``arrival + runtime`` (seconds)."""
        return self.arrival + self.runtime

    def head(self, n: int) -> JobTable:
        """The first ``n`` jobs by arrival (a slice for tests and quick runs)."""
        return JobTable(
            job_id=self.job_id[:n],
            arrival=self.arrival[:n],
            runtime=self.runtime[:n],
            r=self.r[:n],
            user=self.user[:n],
            origin=self.origin,
            source=f"{self.source}[:{n}]",
        )

    def between(self, start: float, stop: float) -> JobTable:
        """The jobs arriving in ``[start, stop)`` seconds, times unchanged (plan on one period, replay the next)."""
        lo, hi = np.searchsorted(self.arrival, [start, stop], side="left")
        return JobTable(job_id=self.job_id[lo:hi], arrival=self.arrival[lo:hi], runtime=self.runtime[lo:hi],
                        r=self.r[lo:hi], user=self.user[lo:hi], origin=self.origin,
                        source=f"{self.source}[{start:g} s, {stop:g} s)")

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame (one row per job)."""
        return pd.DataFrame(
            {
                "job_id": self.job_id,
                "arrival": self.arrival,
                "runtime": self.runtime,
                "departure": self.departure,
                "r": self.r,
                "user": self.user,
            }
        )


def check_rows(table: object, key: str, columns: tuple[str, ...], *, ordered: str | None = None,
               hint: str = "") -> int:
    """The row count of ``table``'s ``key`` column, after checking its other columns and order.

    Every column in ``columns`` must have as many rows, and ``ordered`` (default: ``key``) must be
    sorted; a ValueError names the column that is not.
    """
    kind = type(table).__name__
    n = len(getattr(table, key))
    for name in columns:
        if len(getattr(table, name)) != n:
            raise InputError(f"{kind}.{name} has {len(getattr(table, name))} rows, expected {n}")
    ordered = ordered or key
    if n and np.any(np.diff(getattr(table, ordered)) < 0):
        raise InputError(f"{kind}.{ordered} must be sorted{hint}")
    return n


#: The most tasks a view may expand a trace's parallel jobs into (LLNL-Atlas, the widest shared trace: 16.6 million).
MAX_TASKS = 100_000_000


def expanded(width: np.ndarray) -> np.ndarray:
    """``width`` (tasks per kept job) once its total is at most :data:`MAX_TASKS`, checked before the tasks are made."""
    total = int(width.sum()) if len(width) else 0
    if total > MAX_TASKS:
        raise ConfigError(f"parallel 'expand' makes {total:,} one-core tasks of the trace's {len(width):,} jobs (the "
                          f"widest has {int(width.max()):,} processors); at most {MAX_TASKS:,}: run each job as one "
                          "task (parallel 'one')")
    return width


def filter_rows(checks: dict[str, pd.Series], n: int) -> tuple[np.ndarray, dict[str, int]]:
    """Apply ``checks`` (reason -> rows to remove) in order to ``n`` rows.

    Returns the kept mask and, per reason, how many of the rows the earlier reasons kept it removed
    (an unknown value does not remove a row).
    """
    keep = np.ones(n, dtype=bool)
    removed = {}
    for why, bad in checks.items():
        hit = bad.to_numpy(dtype=bool, na_value=False) & keep
        removed[why] = int(hit.sum())
        keep &= ~hit
    return keep, removed


@dataclass(frozen=True, slots=True)
class FilterReport:
    """What :func:`job_view` kept and removed, by reason.

    ``removed`` maps a reason to a count; ``kept_flagged`` counts jobs that were kept although
    their status says failed or cancelled (they still occupied a machine for their run time).
    """

    read: int
    kept: int
    removed: dict[str, int] = field(default_factory=dict)
    kept_flagged: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for logs and CLI output."""
        parts = [f"read {self.read}", f"kept {self.kept}"]
        parts += [f"removed {n} ({why})" for why, n in self.removed.items() if n]
        parts += [f"kept {n} {why}" for why, n in self.kept_flagged.items() if n]
        return ", ".join(parts)


#: Status groups that :func:`job_view` can remove on request.
STATUS_GROUPS: dict[str, int] = {"failed": STATUS_FAILED, "cancelled": STATUS_CANCELLED}


def job_view(
    trace: pd.DataFrame,
    *,
    reqs: str,
    seed: int | np.random.SeedSequence | None,
    drop_status: frozenset[str] = frozenset(),
    origin: int = 0,
    source: str = "",
) -> tuple[JobTable, FilterReport]:
    """Turn a trace DataFrame into the broker's :class:`JobTable`.

    The filter, applied in this order, counts every job it removes:

    1. a partial execution of a job listed whole (:func:`partial_executions`; one without a whole
       line is kept and counted in ``FilterReport.kept_flagged``);
    2. ``submit time unknown``: SWF field 2 is ``-1``;
    3. ``run time unknown or <= 0``: SWF field 4 is ``-1`` or not positive, so the job occupies
       no machine time and cannot be placed meaningfully;
    4. ``status failed`` / ``status cancelled`` (SWF field 11 = 0 / 5): removed only when named in
       ``drop_status``; by default they are kept, because they held a machine for their run time,
       and counted in ``FilterReport.kept_flagged``.

    Requirements are drawn for every row of the trace before filtering, so a job's ``r`` does not
    depend on which other jobs the filter removes.

    Parameters
    ----------
    trace : pd.DataFrame
        Columns as in :mod:`workloads.schema`.
    reqs : str
        Requirement model name (:mod:`workloads.requirements`).
    seed : int or SeedSequence
        Seed for the requirement model.
    drop_status : frozenset of str
        Subset of ``{"failed", "cancelled"}``.
    origin : int
        Unix time of the trace's time 0.
    source : str
        Description stored in the table.
    """
    from workloads.requirements import requirements

    unknown = set(drop_status) - set(STATUS_GROUPS)
    if unknown:
        raise InputError(f"drop_status: unknown status group(s) {sorted(unknown)}; use {sorted(STATUS_GROUPS)}")
    r_all = requirements(reqs, len(trace), seed=seed)
    run = trace["run_time"]
    status = trace["status"]
    parts, alone = partial_executions(trace)
    keep, removed = filter_rows({**parts, "submit time unknown": trace["submit_time"].isna(),
                                 "run time unknown or <= 0": run.isna() | (run <= 0)}, len(trace))
    flagged: dict[str, int] = count_kept(alone, keep)
    for group, code in STATUS_GROUPS.items():
        hit = (status == code).to_numpy(dtype=bool, na_value=False) & keep
        if group in drop_status:
            removed[f"status {group}"] = int(hit.sum())
            keep &= ~hit
        else:
            flagged[f"status {group}"] = int(hit.sum())
    kept = trace[keep]
    table = JobTable.from_arrays(
        arrival=kept["submit_time"].to_numpy(dtype=np.float64),
        runtime=kept["run_time"].to_numpy(dtype=np.float64),
        r=r_all[keep],
        job_id=kept["job_id"].to_numpy(dtype=np.int64, na_value=-1),
        user=kept["user_id"].to_numpy(dtype=np.int64, na_value=-1),
        origin=origin,
        source=source,
    )
    report = FilterReport(read=len(trace), kept=len(table), removed=removed, kept_flagged=flagged)
    return table, report
