"""The advisor section (:mod:`broker.report.sections.advisor`): its texts on a hand-made table, when it applies,
the whole section on 2,000 jobs with recorded waits, the figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.report.budget import Budget
from broker.report.model import ReportInput
from broker.report.sections import advisor
from tests.broker.report.hand_made import Clock, data, est, small_input
from workloads.lublin import default_workload
from workloads.swf import SwfHeader
from workloads.swf_writer import write_swf

# --- the texts and rows on hand-made tables -----------------------------------------------------------------------


def test_the_advisor_counts_only_positive_savings_and_rounds_hours_half_to_even() -> None:
    table = pd.DataFrame({"overhead": [2.0, 0.5, 0.25, 1.0, 4.0],
                          "saved_time_s": [0.5, 5400.0, 0.0, 12600.0, -1.0],
                          "oracle_saved_time_s": [1.0, 19800.0, 0.0, 27000.0, 0.0]})
    summary, advice = advisor._texts(table, 1234.5, 99.5)
    assert summary == ("Predictions miss the log's waits by 0.343 h and run times by 0.0276 h (RMSE): the waits this "
                       "site's own scheduler gave, which a move to the cloud saves, not those of a simulated "
                       "scheduler.")
    # paying: 2.0 (0.5 s), 0.5 (1.5 h), 1.0 (3.5 h); the slowest 2.0, the fastest 0.5
    assert advice == ("Use the advisor while the cloud slows a job by at most 2 per processor: it saves its users 0 h "
                      "there (the oracle 0 h) and 2 h at 0.5 (the oracle 6 h).")
    table["overhead"] = [0.5, 2.0, 0.25, 1.0, 4.0]  # now 2.0 saves 1.5 h, 1.0 3.5 h, 0.5 saves 0.5 s
    _, advice = advisor._texts(table, 0.0, 0.0)
    assert advice == ("Use the advisor while the cloud slows a job by at most 2 per processor: it saves its users 2 h "
                      "there (the oracle 6 h) and 0 h at 0.5 (the oracle 0 h).")
    table["overhead"] = [4.0, 0.5, 0.25, 1.0, 2.0]
    table["saved_time_s"] = [0.0, 5400.0, 0.0, 12600.0, -1.0]
    _, advice = advisor._texts(table, 0.0, 0.0)
    assert advice == ("Use the advisor while the cloud slows a job by at most 1 per processor: it saves its users 4 h "
                      "there (the oracle 8 h) and 2 h at 0.5 (the oracle 6 h).")


def test_the_advisor_needs_max_procs_and_waits_for_at_least_half_the_jobs(tmp_path: Path) -> None:
    frame = default_workload(seed=0, n_jobs=4)
    frame["wait_time"] = pd.array([1, 2, None, None], dtype="Int64")  # exactly half recorded
    inp = small_input(tmp_path, frame)
    assert advisor._missing(inp) == ""
    frame["wait_time"] = pd.array([1, None, None, None], dtype="Int64")
    assert advisor._missing(inp) == "the trace records no wait for most jobs: there is nothing to learn waits from"
    inp.header = SwfHeader(max_procs=0)
    assert advisor._missing(inp) == "the trace's header gives no MaxProcs (the machine's size the features need)"


# --- the whole section on a small generated workload (300 jobs; 5,001 processors in all) --------------------------


def test_the_advisor_on_2000_jobs_with_recorded_waits(tmp_path: Path) -> None:
    from tests.conftest import cloudbroker
    from workloads.swf import read_swf

    frame = default_workload(seed=0, n_jobs=2000)
    frame["wait_time"] = pd.array((np.arange(2000) % 7) * 60, dtype="Int64")
    path = write_swf(frame, tmp_path / "a.swf", {"MaxProcs": 256, "UnixStartTime": 1_000_000_000,
                                                 "TimeZoneString": "Europe/Stockholm"})
    header = read_swf(path).header
    assert header.unix_start_time == 1_000_000_000 and header.time_zone_string == "Europe/Stockholm"
    inp = ReportInput(path, frame, header, "a", "a.swf", 256, 0)
    small = Budget(1.0, clock=Clock())
    s = advisor.run(inp, small)
    assert (s.status, s.why) == ("skipped", "the advisor: needs about 1.9 s, 1.0 s of the budget left")
    budget = Budget(est("advisor", 2000), clock=Clock())  # exactly the estimate: 0.05 + 9e-4 * 2000
    s = advisor.run(inp, budget)
    assert (s.key, s.status) == ("advisor", "done") and budget.left == 0.0
    n = s.numbers
    assert (n["replayable_jobs"], n["tune"], n["skip"], n["evaluate"]) == (2000, 500, 1000, 1000)
    table = s.tables["advisor_speeds"]
    assert list(table.columns) == ["overhead", "jobs_to_cloud", "saved_time_s", "no_cutoff_jobs_to_cloud",
                                   "no_cutoff_saved_time_s", "oracle_jobs_to_cloud", "oracle_saved_time_s"]
    assert table["overhead"].tolist() == [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 10.0]
    assert (table["jobs_to_cloud"] <= 1000).all() and (table["oracle_saved_time_s"] >= 0).all()
    assert n["speeds"] == table.to_dict(orient="records") and n["rmse_wait_s"] > 0 and n["rmse_run_s"] > 0
    assert s.commands == [("every figure of the section",
                           "cloudbroker advise --trace a.swf --label log --count jobs --tune 500 --skip 1000 "
                           "--evaluate 1000 --json")]
    # the page's command, in one process, is the reference for the predictions (local time of day included)
    run = cloudbroker("advise", "--trace", str(path), "--label", "log", "--count", "jobs", "--tune", "500", "--skip",
                      "1000", "--evaluate", "1000", "--json")
    assert run.code == 0, run.err
    got = json.loads(run.out)
    assert (n["rmse_wait_s"], n["rmse_run_s"]) == pytest.approx((got["rmse_wait_s"], got["rmse_run_s"]), rel=1e-12)
    assert (s.summary, s.recommendation) == advisor._texts(table, n["rmse_wait_s"], n["rmse_run_s"])
    assert [f.name for f in s.figures] == ["advisor_saved.svg"]
    for text in (">advisor<", ">advisor, no cutoff<", ">oracle<", ">time saved (h)<", ">10<", ">0.01<",
                 ">cloud slow-down per processor (o)<", ">time the advisor saves its users, by how slow the cloud is<"):
        assert text in s.figures[0].svg, text


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


def test_the_advisor_figure_draws_three_bars_per_speed(drawn: list[Any]) -> None:
    table = pd.DataFrame({"overhead": [0.01, 10.0], "saved_time_s": [3600.0, -7200.0],
                          "no_cutoff_saved_time_s": [1800.0, 0.0], "oracle_saved_time_s": [7200.0, 36000.0]})
    figure = advisor._figure(table)
    assert figure.caption == ("Hours of wait plus run time saved over the evaluated jobs by sending jobs to the cloud "
                              "when the predictions say it is faster; the oracle knows each job's wait and run time.")
    (ax,) = drawn[0].axes
    bars = ax.patches
    assert [b.get_x() + b.get_width() / 2 for b in bars] == pytest.approx([-0.27, 0.73, 0.0, 1.0, 0.27, 1.27])
    assert [b.get_width() for b in bars] == pytest.approx([0.27] * 6)
    assert [b.get_height() for b in bars] == [1.0, -2.0, 0.5, 0.0, 2.0, 10.0]
    (zero,) = ax.lines
    assert data(zero, "y") == [0, 0] and (zero.get_color(), zero.get_linewidth()) == ("k", 0.8)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.01", "10"]
    assert ax.get_legend().get_texts()[0].get_fontsize() == 7
