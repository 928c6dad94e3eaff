"""The advisor's features: each job as the site saw it at its submission (``SPEC.md`` §8, the paper's Table 1).

Categories: ``user``, ``group``, ``queue``. Numbers: ``submit_s``, ``requested_time_s``,
``requested_procs`` (requested, else allocated), ``queue_size`` (jobs waiting), ``queued_work``
(their processors x requested time), ``remaining_work`` (running jobs' processors x the requested
time they have left, never below 0), ``weekday`` and ``time_of_day_s`` (the wall clock in the
trace's time zone), ``free_procs`` (the machine's processors less those the running jobs hold:
allocated, else requested; negative where the log's own starts overlap beyond the machine).

The state is replayed from the trace's own start and end times, one pass over its events in time
order. At one instant, jobs end, then requests run out, then submissions and starts come in the
trace's order, a job's start right after its own submission: a query sees every job submitted
before it (in the trace's order) as waiting, running or done as of that instant, and no job
submitted after it. Only what the site knew enters: requested times, never run times, for the work
still to do.

The labels (``wait_s``, ``run_s``) come with when each became known: a wait when the job started
(``wait_known_at``), a run time when it ended (``run_known_at``). :func:`known` selects, for a query,
the labels a predictor may learn from.

A job with no submit time, wait or run time, no processor count, or wider than the machine cannot
be replayed; it is removed and counted. A job with no requested time is kept (its
``requested_time_s`` is NaN, its work counts as 0) and counted in ``kept_flagged``.

A job whose run time is unknown but whose wait is known was **cancelled while queued** (the cleaned
archive logs write run time -1 for them): it never ran. With ``cancelled="keep"`` it is kept, its
``cancelled`` column True: it waits in the queue from its submission to submission + wait (its
cancellation, an event of the start's rank that takes it out of the queue and never onto the
machine), so it counts in the queue features of the jobs submitted meanwhile, as on the real
machine. Its wait is a label (how long it sat before it was cancelled, known at the cancellation);
its run time is NaN and never known. With ``cancelled="drop"`` it is removed as "run time unknown".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workloads.errors import ConfigError
from workloads.jobs import FilterReport, count_kept, filter_rows, partial_executions

CATEGORIES = ("user", "group", "queue")
NUMBERS = ("submit_s", "requested_time_s", "requested_procs", "queue_size", "queued_work", "remaining_work",
           "weekday", "time_of_day_s", "free_procs")
LABELS = ("wait_s", "run_s")
#: What :func:`submission_features` does with the jobs cancelled while queued (module docstring).
CANCELLED = ("keep", "drop")

# event kinds, in their order at one instant (submissions and starts share one rank, ordered by job)
_END, _EXPIRE, _ARRIVE = 0, 1, 2


def submission_features(trace: pd.DataFrame, *, max_procs: int, unix_start: int | None = None,
                        time_zone: str | None = None, cancelled: str = "drop") -> tuple[pd.DataFrame, FilterReport]:
    """The features and labels of every replayable job of an SWF ``trace`` on a ``max_procs`` machine.

    Rows follow the trace's submission order (stable). Columns: ``job_id``, ``entry`` (the row's
    position among the trace's entries, from 0: the SWF file's line of data, counting the entries
    the replay removed), :data:`CATEGORIES`, :data:`NUMBERS`, :data:`LABELS`, ``cancelled`` (cancelled
    while queued: no run time, never known), ``wait_known_at``, ``run_known_at`` (seconds, trace time).
    ``frame.attrs["entries"]`` holds the trace's number of entries. ``cancelled``: ``keep`` or ``drop``
    the jobs cancelled while queued (module docstring).
    ``unix_start`` and ``time_zone`` (an IANA name; UTC when None) place the trace's time 0 for the
    weekday and the time of day.
    """
    if max_procs < 1:
        raise ConfigError(f"the machine needs max_procs >= 1, got {max_procs}")
    jobs, report = replayable_jobs(trace, max_procs, cancelled)
    state = _replay(jobs, max_procs)
    gone = jobs["cancelled"].to_numpy(dtype=bool)
    when = _local_times(jobs["submit_time"].to_numpy(dtype=np.int64), unix_start, time_zone)
    frame = pd.DataFrame({
        "job_id": jobs["job_id"].to_numpy(dtype=np.int64, na_value=-1),
        "entry": jobs["entry"].to_numpy(dtype=np.int64),
        "user": jobs["user_id"].to_numpy(dtype=np.int64), "group": jobs["group_id"].to_numpy(dtype=np.int64),
        "queue": jobs["queue"].to_numpy(dtype=np.int64),
        "submit_s": jobs["submit_time"].to_numpy(dtype=np.float64),
        "requested_time_s": jobs["requested_time"].where(jobs["requested_time"] > 0).to_numpy(
            dtype=np.float64, na_value=np.nan),
        "requested_procs": jobs["procs"].to_numpy(dtype=np.float64),
        **state, **when,
        "wait_s": jobs["wait_time"].to_numpy(dtype=np.float64),
        "run_s": np.where(gone, np.nan, jobs["run_time"].to_numpy(dtype=np.float64, na_value=np.nan)),
        "cancelled": gone,
    })
    frame["wait_known_at"] = frame["submit_s"] + frame["wait_s"]
    frame["run_known_at"] = np.where(gone, np.inf, frame["wait_known_at"] + frame["run_s"])  # never known
    frame.attrs["entries"] = len(trace)
    return frame, report


def known(frame: pd.DataFrame, query: int, label: str) -> np.ndarray:
    """Rows whose ``label`` (``wait_s`` or ``run_s``) was known when row ``query`` was submitted.

    Known means submitted before the query (in the trace's order) and started (for the wait) or
    ended (for the run time) by the query's submit time.
    """
    if label not in LABELS:
        raise ConfigError(f"label must be one of {LABELS}, got {label!r}")
    at = frame[f"{label.removesuffix('_s')}_known_at"].to_numpy()
    mask = at <= frame["submit_s"].iat[query]
    mask[query:] = False
    return mask


def replayable_jobs(trace: pd.DataFrame, max_procs: int, cancelled: str = "drop") -> tuple[pd.DataFrame, FilterReport]:
    """The rows of ``trace`` the advisor replays (in submission order, the trace's index kept) and what was removed.

    ``entry``: each row's position in ``trace``; ``cancelled``: True for a job cancelled while queued
    (run time unknown, wait known), kept with ``cancelled="keep"`` (module docstring).
    """
    if cancelled not in CANCELLED:
        raise ConfigError(f"cancelled must be one of {', '.join(CANCELLED)}, got {cancelled!r}")
    held = trace["allocated_procs"].where(trace["allocated_procs"] > 0, trace["requested_procs"])
    procs = trace["requested_procs"].where(trace["requested_procs"] > 0, trace["allocated_procs"])
    parts, alone = partial_executions(trace)
    no_run = (trace["run_time"].isna() | (trace["run_time"] < 0)).to_numpy(dtype=bool, na_value=True)
    checks = {
        **parts,
        "submit time unknown": trace["submit_time"].isna(),
        "wait time unknown": trace["wait_time"].isna() | (trace["wait_time"] < 0),
        "run time unknown": pd.Series(no_run & (cancelled == "drop"), index=trace.index),
        "processors unknown": held.isna() | (held <= 0),
        f"wider than the machine's {max_procs} processors": held > max_procs,
    }
    keep, removed = filter_rows(checks, len(trace))
    jobs = trace[keep].assign(procs=procs[keep], held=held[keep], entry=np.flatnonzero(keep), cancelled=no_run[keep])
    jobs = jobs.iloc[np.argsort(jobs["submit_time"].to_numpy(dtype=np.int64), kind="stable")]
    jobs = jobs.fillna({"user_id": -1, "group_id": -1, "queue": -1})
    unknown = ~(jobs["requested_time"] > 0).fillna(False)
    flagged = {"requested time unknown (its work counts as 0)": int(unknown.sum()), **count_kept(alone, keep)}
    if cancelled == "keep":
        flagged["cancelled while queued (run time unknown: wait scored, no placement)"] = int(jobs["cancelled"].sum())
    return jobs, FilterReport(read=len(trace), kept=len(jobs), removed=removed, kept_flagged=flagged)


def _replay(jobs: pd.DataFrame, max_procs: int) -> dict[str, np.ndarray]:
    """Queue size, queued and remaining work and free processors at each job's submission (module docstring)."""
    submit = jobs["submit_time"].to_numpy(dtype=np.int64)
    start = submit + jobs["wait_time"].to_numpy(dtype=np.int64)  # a cancelled job's cancellation
    run = jobs["run_time"].where(~jobs["cancelled"], 0).to_numpy(dtype=np.int64)
    end = start + run  # a cancelled job leaves the queue and never holds the machine
    procs = jobs["held"].to_numpy(dtype=np.int64)  # what a job occupied (allocated, else requested)
    request = jobs["requested_time"].where(jobs["requested_time"] > 0, 0).to_numpy(dtype=np.int64)
    events = _events(submit, start, end, request)
    n = len(submit)
    out = {name: np.zeros(n, dtype=np.float64) for name in ("queue_size", "queued_work", "remaining_work",
                                                             "free_procs")}
    queued = queued_work = busy = promised = counted = 0  # remaining work = promised - t * counted
    for t, kind, order in events.tolist():
        job = order >> 1 if kind == _ARRIVE else order
        p, asked = int(procs[job]), int(request[job])
        due = int(start[job]) + asked  # when its request runs out
        if kind == _END:
            busy -= p
            if asked and due >= t:  # its request had not run out before
                promised, counted = promised - p * due, counted - p
        elif kind == _EXPIRE:
            promised, counted = promised - p * due, counted - p
        elif order & 1:  # a start: out of the queue, onto the machine (a run of 0 s is over at once)
            queued, queued_work = queued - 1, queued_work - p * asked
            if end[job] > t:
                busy += p
                if asked:
                    promised, counted = promised + p * due, counted + p
        else:  # a submission: the query, then into the queue
            out["queue_size"][job], out["queued_work"][job] = queued, queued_work
            out["remaining_work"][job], out["free_procs"][job] = promised - t * counted, max_procs - busy
            queued, queued_work = queued + 1, queued_work + p * asked
    return out


def _events(submit: np.ndarray, start: np.ndarray, end: np.ndarray, request: np.ndarray) -> np.ndarray:
    """``(time, kind, order)`` rows in replay order; for arrivals ``order`` is ``2 job`` (submit) or ``2 job + 1``."""
    index = np.arange(len(submit), dtype=np.int64)
    ran = end > start
    expires = (request > 0) & (start + request < end)
    parts = [
        np.column_stack([end[ran], np.full(ran.sum(), _END), index[ran]]),
        np.column_stack([(start + request)[expires], np.full(expires.sum(), _EXPIRE), index[expires]]),
        np.column_stack([submit, np.full(len(submit), _ARRIVE), 2 * index]),
        np.column_stack([start, np.full(len(submit), _ARRIVE), 2 * index + 1]),
    ]
    events = np.concatenate(parts).astype(np.int64)
    return events[np.lexsort((events[:, 2], events[:, 1], events[:, 0]))]


def _local_times(submit: np.ndarray, unix_start: int | None, time_zone: str | None) -> dict[str, np.ndarray]:
    stamps = pd.to_datetime(submit + (unix_start or 0), unit="s", utc=True)
    if time_zone:
        try:
            stamps = stamps.tz_convert(time_zone)
        except Exception as exc:  # pytz / zoneinfo raise their own unknown-zone errors
            raise ConfigError(f"unknown time zone {time_zone!r}: {exc}") from exc
    clock = stamps.hour * 3600 + stamps.minute * 60 + stamps.second  # the wall clock, whatever the day's length
    return {"weekday": np.asarray(stamps.day_of_week, dtype=np.float64),
            "time_of_day_s": np.asarray(clock, dtype=np.float64)}
