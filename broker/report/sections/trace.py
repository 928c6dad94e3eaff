"""The trace at a glance: jobs, span, users, the load it offers the site and the queue it recorded."""

from __future__ import annotations

import numpy as np
import pandas as pd

from broker.report import figures
from broker.report.budget import Budget, estimate
from broker.report.model import Figure, ReportInput, Section

HOUR = 3600.0


def run(inp: ReportInput, budget: Budget) -> Section:
    """The trace section (always runs: it costs microseconds per job)."""
    section = Section("trace", "The trace")
    budget.start("trace summary", estimate("trace", len(inp.frame)))  # always runs: it is not planned
    frame = inp.frame
    ran = frame[(frame["run_time"].fillna(0) > 0)]
    submit = ran["submit_time"].to_numpy(dtype=float)
    run_s = ran["run_time"].to_numpy(dtype=float)
    procs = _procs(ran)
    wait = ran["wait_time"].to_numpy(dtype=float, na_value=np.nan)
    recorded = bool(len(wait)) and bool(np.isfinite(wait).any())
    span = float(submit.max() - submit.min()) if len(submit) else 0.0
    start = submit + np.where(np.isfinite(wait), wait, 0.0)
    end = start + run_s
    hourly = hourly_state(submit, start, end, procs, span_end=float(end.max()) if len(end) else 0.0)
    offered = float((procs * run_s).sum() / (inp.nodes * span)) if span > 0 else None
    section.numbers = {
        "jobs_in_trace": len(frame), "jobs_with_run_time": len(ran), "span_days": span / 86400.0,
        "users": int(ran["user_id"].nunique()), "site_nodes": inp.nodes,
        "run_time_mean_s": float(run_s.mean()) if len(run_s) else None,
        "run_time_median_s": float(np.median(run_s)) if len(run_s) else None,
        "procs_mean": float(procs.mean()) if len(procs) else None, "offered_load": offered,
        "waits_recorded": recorded,
        "recorded_wait_mean_s": float(np.nanmean(wait)) if recorded else None,
        "busy_peak_procs": float(hourly["busy_procs"].max()) if len(hourly) else 0.0,
        "queue_peak_jobs": int(hourly["queued_jobs"].max()) if len(hourly) and recorded else None,
    }
    section.tables["trace_hourly"] = hourly
    section.figures.append(_figure(hourly, inp.nodes, recorded))
    section.summary = _summary(section.numbers)
    section.recommendation = _advice(offered, recorded)
    section.commands.append(("the trace's header and fields", f"cloudbroker trace info {inp.trace_cli} --json"))
    return section


def _procs(frame: pd.DataFrame) -> np.ndarray:
    alloc = frame["allocated_procs"].to_numpy(dtype=float, na_value=np.nan)
    req = frame["requested_procs"].to_numpy(dtype=float, na_value=np.nan)
    return np.where(alloc > 0, alloc, np.where(req > 0, req, 1.0))


def hourly_state(submit: np.ndarray, start: np.ndarray, end: np.ndarray, procs: np.ndarray, *,
                 span_end: float) -> pd.DataFrame:
    """At every whole hour from the first submission: processors busy and jobs queued (submitted, not started).

    A job is busy over ``[start, end)`` and queued over ``[submit, start)``: at the instant ``t`` the
    busy processors are the sum over jobs with ``start <= t < end``, the queue the count with
    ``submit <= t < start``.
    """
    if not len(submit):
        return pd.DataFrame({"hour": [], "busy_procs": [], "queued_jobs": []})
    t0 = float(submit.min())
    t = t0 + HOUR * np.arange(int((span_end - t0) // HOUR) + 1)
    by_start, by_end = np.argsort(start, kind="stable"), np.argsort(end, kind="stable")
    started = np.concatenate(([0.0], np.cumsum(procs[by_start])))[np.searchsorted(start[by_start], t, "right")]
    ended = np.concatenate(([0.0], np.cumsum(procs[by_end])))[np.searchsorted(end[by_end], t, "right")]
    submitted = np.searchsorted(np.sort(submit), t, "right")
    begun = np.searchsorted(np.sort(start), t, "right")
    return pd.DataFrame({"hour": (t - t0) / HOUR, "busy_procs": started - ended, "queued_jobs": submitted - begun})


def _figure(hourly: pd.DataFrame, nodes: int, recorded: bool) -> Figure:
    fig, (load, queue) = figures.new(2)
    days = hourly["hour"] / 24.0
    load.plot(days, hourly["busy_procs"] / nodes, lw=0.6)
    load.axhline(1.0, color="k", lw=0.8, ls="--")
    load.set(xlabel="day", ylabel=f"busy processors / M (M = {nodes})", title="load (the log's own schedule)")
    if recorded:
        queue.plot(days, hourly["queued_jobs"], lw=0.6, color="tab:red")
        queue.set(xlabel="day", ylabel="jobs waiting", title="queue (the log's own schedule)")
    else:
        queue.text(0.5, 0.5, "the trace records no waits", ha="center", va="center", transform=queue.transAxes)
        queue.set(title="queue", xticks=[], yticks=[])
    caption = ("Processors busy and jobs waiting at every hour, from the submissions, waits and run times the log "
               "recorded" + ("" if recorded else " (no waits recorded: jobs counted from their submission)") + ".")
    return Figure("trace_load.svg", caption, figures.svg(fig))


def _summary(n: dict[str, object]) -> str:
    load = n["offered_load"]
    text = (f"{n['jobs_with_run_time']:,} jobs with a run time over {n['span_days']:.1f} days from {n['users']:,} "
            f"users on a site of {n['site_nodes']:,} processors")
    return text + (f"; they offer {load:.0%} of the site's capacity." if isinstance(load, float) else ".")


def _advice(offered: float | None, recorded: bool) -> str:
    if offered is None:
        return "The trace spans no time: the other sections have little to measure."
    level = ("more than the site can run: jobs queue for long, and cloud capacity pays" if offered > 0.9 else
             "a busy site: queues form at peaks, where leased capacity shortens waits" if offered > 0.6 else
             "a site mostly idle: leasing pays only at the peaks, and reserved instances need a steady base")
    waits = "" if recorded else " The log records no waits, so the advisor has nothing to learn from."
    return f"Offered load {offered:.0%}: {level}.{waits}"
