"""The placement advisor: run here or in the cloud, from predicted waits and run times, against the oracle.

``cloudbroker advise``'s run with the paper's ten cloud slow-downs: k-NN predictions of each job's
wait and run time from the jobs before it, a cutoff fitted on the tuning entries, and the time the
advisor saves its users against an oracle that knows both. It needs the waits and run times the
log recorded and the machine's size (the header's ``MaxProcs``).

The waits it learns and is scored on are the log's (``--label log``), not those of a conservative
replay (``--label replay``, the paper's Table 5): a site's users wait what its own scheduler, with its
queues, limits and fair share, makes them wait, and that is the time a move to the cloud saves. On
a replay's waits the figures describe a scheduler the site does not run (on SDSC-BLUE, predictions
miss its waits by 9,524 s against 33,341 s on the log's; docs/EXPERIMENTS.md, issue 33). Its windows
count replayable jobs (``--count jobs``): the budget cuts the trace by jobs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from broker.advisor.decide import PAPER_OVERHEADS, LinearSpeed
from broker.advisor.evaluate import Protocol, evaluate
from broker.advisor.features import submission_features
from broker.report import figures
from broker.report.budget import Budget, estimate, sliced
from broker.report.model import Figure, ReportInput, Section
from broker.report.units import hours

#: Fewest replayable jobs the advisor is run on (half learn, half are evaluated).
MIN_JOBS = 2000
#: The jobs the paper's protocol reads (skip 10,000, evaluate 10,000): a longer trace costs no more.
PAPER_JOBS = 20_000
#: The waits learned and scored: the log's, those the site's users had (module docstring).
LABEL = "log"


def run(inp: ReportInput, budget: Budget) -> Section:
    """The advisor section."""
    section = Section("advisor", "Run here or in the cloud: the placement advisor")
    why = _missing(inp)
    if why:
        section.status, section.why = "not applicable", why
        return section
    max_procs = int(inp.header.max_procs or 0)
    frame, _ = submission_features(inp.frame, max_procs=max_procs, unix_start=inp.header.unix_start_time,
                                   time_zone=inp.header.time_zone_string)
    if len(frame) < MIN_JOBS:
        section.status, section.why = "not applicable", f"{len(frame):,} replayable jobs, fewer than {MIN_JOBS:,}"
        return section
    n = budget.slice("the advisor", lambda m: estimate("advisor", min(m, PAPER_JOBS)), len(frame), least=MIN_JOBS)
    if n is None:
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    protocol = Protocol.fitting(n, "jobs")  # the paper's, or half and half on a short trace (or slice)
    if n < min(len(frame), PAPER_JOBS):
        section.skipped_parts.append(sliced(n, len(frame), "replayable jobs"))
    result = evaluate(frame, [LinearSpeed(o) for o in PAPER_OVERHEADS], protocol=protocol, label=LABEL)
    table = pd.DataFrame([{"overhead": o, **{k: getattr(s, k) for k in (
        "jobs_to_cloud", "saved_time_s", "no_cutoff_jobs_to_cloud", "no_cutoff_saved_time_s",
        "oracle_jobs_to_cloud", "oracle_saved_time_s")}} for o, s in zip(PAPER_OVERHEADS, result.scenarios,
                                                                          strict=True)])
    section.tables["advisor_speeds"] = table
    section.numbers = {"replayable_jobs": len(frame), "label": LABEL, "tune": protocol.tune, "skip": protocol.skip,
                       "evaluate": protocol.evaluate, "rmse_wait_s": result.rmse_wait_s,
                       "rmse_run_s": result.rmse_run_s, "speeds": table.to_dict(orient="records")}
    section.commands.append(("every figure of the section",
                             f"cloudbroker advise --trace {inp.trace_cli} --label {LABEL} --count jobs --tune "
                             f"{protocol.tune} --skip {protocol.skip} --evaluate {protocol.evaluate} --json"))
    section.figures.append(_figure(table))
    section.summary, section.recommendation = _texts(table, result.rmse_wait_s, result.rmse_run_s)
    return section


def _missing(inp: ReportInput) -> str:
    if not inp.header.max_procs:
        return "the trace's header gives no MaxProcs (the machine's size the features need)"
    wait = inp.frame["wait_time"]
    if wait.notna().mean() < 0.5:
        return "the trace records no wait for most jobs: there is nothing to learn waits from"
    return ""


def _figure(table: pd.DataFrame) -> Figure:
    fig, ax = figures.new()
    x = np.arange(len(table))
    ax.bar(x - 0.27, table["saved_time_s"] / 3600, 0.27, label="advisor")
    ax.bar(x, table["no_cutoff_saved_time_s"] / 3600, 0.27, label="advisor, no cutoff")
    ax.bar(x + 0.27, table["oracle_saved_time_s"] / 3600, 0.27, label="oracle")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, [f"{o:g}" for o in table["overhead"]])
    ax.set(xlabel="cloud slow-down per processor (o)", ylabel="time saved (h)",
           title="time the advisor saves its users, by how slow the cloud is")
    ax.legend(fontsize=7)
    return Figure("advisor_saved.svg", "Hours of wait plus run time saved over the evaluated jobs by sending jobs "
                                       "to the cloud when the predictions say it is faster; the oracle knows each "
                                       "job's wait and run time.", figures.svg(fig))


def _texts(table: pd.DataFrame, rmse_wait: float, rmse_run: float) -> tuple[str, str]:
    summary = (f"Predictions miss the log's waits by {hours(rmse_wait)} and run times by {hours(rmse_run)} (RMSE): "
               "the waits this site's own scheduler gave, which a move to the cloud saves, not those of a "
               "simulated scheduler.")
    pays = table[table["saved_time_s"] > 0]
    if pays.empty:
        return summary, "Keep jobs here: at no cloud speed tried does the advisor save time."
    slow = pays.iloc[int(np.argmax(pays["overhead"].to_numpy(float)))]
    fast = pays.iloc[int(np.argmin(pays["overhead"].to_numpy(float)))]
    return summary, (f"Use the advisor while the cloud slows a job by at most {slow['overhead']:g} per processor: "
                     f"it saves its users {slow['saved_time_s'] / 3600:,.0f} h there (the oracle "
                     f"{slow['oracle_saved_time_s'] / 3600:,.0f} h) and {fast['saved_time_s'] / 3600:,.0f} h at "
                     f"{fast['overhead']:g} (the oracle {fast['oracle_saved_time_s'] / 3600:,.0f} h).")
