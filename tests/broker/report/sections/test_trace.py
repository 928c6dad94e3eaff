"""The trace section (:mod:`broker.report.sections.trace`) on hand-made traces, with hand-worked answers: the
hourly table, the numbers, the texts and the figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.report.budget import Budget
from broker.report.sections import trace
from tests.broker.report.hand_made import Clock, data, small_frame, small_input

# --- the section on hand-made traces ------------------------------------------------------------------------------


def test_the_hourly_table_of_no_jobs_has_the_three_columns() -> None:
    empty = trace.hourly_state(np.array([]), np.array([]), np.array([]), np.array([]), span_end=0.0)
    assert list(empty.columns) == ["hour", "busy_procs", "queued_jobs"] and len(empty) == 0


def test_the_hours_count_from_the_first_submission_and_nothing_is_busy_before_the_first_start() -> None:
    # one job on 3 processors: submitted 10000, starts 13600 (waits 1 h), ends 17200; span_end 17200
    table = trace.hourly_state(np.array([10000.0]), np.array([13600.0]), np.array([17200.0]), np.array([3.0]),
                               span_end=17200.0)
    assert table["hour"].tolist() == [0.0, 1.0, 2.0]
    assert table["busy_procs"].tolist() == [0.0, 3.0, 0.0]
    assert table["queued_jobs"].tolist() == [1, 0, 0]


def test_the_procs_are_the_allocation_else_the_request_else_one() -> None:
    frame = pd.DataFrame({"allocated_procs": pd.array([4, 0, None, -1, None], dtype="Int64"),
                          "requested_procs": pd.array([8, 2, 6, None, 0], dtype="Int64")})
    assert trace._procs(frame).tolist() == [4.0, 2.0, 6.0, 1.0, 1.0]
    one = pd.DataFrame({"allocated_procs": pd.array([1], dtype="Int64"),
                        "requested_procs": pd.array([8], dtype="Int64")})
    assert trace._procs(one).tolist() == [1.0]  # one allocated processor is an allocation


def test_the_trace_section_on_three_jobs(tmp_path: Path) -> None:
    budget = Budget(60.0, clock=Clock())
    s = trace.run(small_input(tmp_path), budget)
    assert budget.planned == 0.0  # the trace's summary always runs: it is not planned
    assert budget.parts == [{"part": "trace summary", "estimated_s": round(0.05 + 2e-6 * 5, 3)}]  # five jobs
    assert (s.key, s.title, s.status) == ("trace", "The trace", "done")
    n = s.numbers
    assert n == {"jobs_in_trace": 5, "jobs_with_run_time": 3, "span_days": pytest.approx(1 / 24), "users": 2,
                 "site_nodes": 4, "run_time_mean_s": pytest.approx(10801 / 3), "run_time_median_s": 3600.0,
                 "procs_mean": pytest.approx(7 / 3), "offered_load": pytest.approx(32402 / 14400),
                 "waits_recorded": True, "recorded_wait_mean_s": 3000.0, "busy_peak_procs": 6.0,
                 "queue_peak_jobs": 1}
    assert isinstance(n["queue_peak_jobs"], int) and isinstance(n["busy_peak_procs"], float)
    hourly = s.tables["trace_hourly"]  # the same three jobs as test_parts' hourly test
    assert hourly["busy_procs"].tolist() == [4.0, 6.0, 0.0, 1.0, 0.0]
    assert hourly["queued_jobs"].tolist() == [0, 1, 1, 0, 0]
    assert s.summary == ("3 jobs with a run time over 0.0 days from 2 users on a site of 4 processors; they offer "
                         "225% of the site's capacity.")
    assert s.recommendation == ("Offered load 225%: more than the site can run: jobs queue for long, and cloud "
                                "capacity pays.")
    assert s.commands == [("the trace's header and fields", "cloudbroker trace info t.swf --json")]
    (figure,) = s.figures
    assert figure.name == "trace_load.svg"
    assert figure.caption == ("Processors busy and jobs waiting at every hour, from the submissions, waits and run "
                              "times the log recorded.")
    for text in (">busy processors / M (M = 4)<", ">load (the log's own schedule)<", ">jobs waiting<",
                 ">queue (the log's own schedule)<", ">day<"):
        assert text in figure.svg, text


def test_the_trace_section_without_recorded_waits_counts_jobs_from_their_submission(tmp_path: Path) -> None:
    frame = small_frame()
    frame["wait_time"] = pd.array([None] * 5, dtype="Int64")
    frame["submit_time"] += 86400  # a day later: the span is still 3600 s
    s = trace.run(small_input(tmp_path, frame, nodes=16), Budget(60.0, clock=Clock()))
    assert s.numbers["span_days"] == pytest.approx(1 / 24)
    n = s.numbers
    assert n["waits_recorded"] is False and n["recorded_wait_mean_s"] is None and n["queue_peak_jobs"] is None
    # A busy [0, 7200) on 4, B [1800, 1801) on 2, C [3600, 7200) on 1: at 0 h 4, at 1 h 4 + 1, at 2 h none
    assert s.tables["trace_hourly"]["busy_procs"].tolist() == [4.0, 5.0, 0.0]
    assert n["busy_peak_procs"] == 5.0
    assert n["offered_load"] == pytest.approx(32402 / (16 * 3600))  # 56 %
    assert s.recommendation == ("Offered load 56%: a site mostly idle: leasing pays only at the peaks, and reserved "
                                "instances need a steady base. The log records no waits, so the advisor has nothing "
                                "to learn from.")
    caption = s.figures[0].caption
    assert caption.endswith("recorded (no waits recorded: jobs counted from their submission).")
    assert ">the trace records no waits<" in s.figures[0].svg and ">queue<" in s.figures[0].svg
    assert ">jobs waiting<" not in s.figures[0].svg


def test_a_trace_without_a_run_time_spans_no_time(tmp_path: Path) -> None:
    frame = small_frame()
    frame["run_time"] = pd.array([0, None, 0, 0, None], dtype="Int64")
    s = trace.run(small_input(tmp_path, frame), Budget(60.0, clock=Clock()))
    n = s.numbers
    assert (n["jobs_with_run_time"], n["span_days"], n["users"]) == (0, 0.0, 0)
    assert n["run_time_mean_s"] is None and n["run_time_median_s"] is None and n["procs_mean"] is None
    assert n["offered_load"] is None and n["waits_recorded"] is False and n["busy_peak_procs"] == 0.0
    assert n["queue_peak_jobs"] is None and len(s.tables["trace_hourly"]) == 0
    assert s.summary == "0 jobs with a run time over 0.0 days from 0 users on a site of 4 processors."
    assert s.recommendation == "The trace spans no time: the other sections have little to measure."


def test_a_trace_of_one_second_offers_a_load_and_the_trace_part_runs_on_a_spent_budget(tmp_path: Path) -> None:
    frame = small_frame().head(2)
    frame["submit_time"] = pd.array([0, 1], dtype="Int64")
    frame["wait_time"] = pd.array([0, 0], dtype="Int64")
    frame["run_time"] = pd.array([1, 1], dtype="Int64")
    budget = Budget(0.1, clock=Clock())
    s = trace.run(small_input(tmp_path, frame), budget)
    assert s.status == "done" and budget.skipped == []
    # span 1 s; 4 + 2 processor-seconds over 4 processors
    assert s.numbers["offered_load"] == 6 / 4 and s.numbers["span_days"] == 1 / 86400


def test_the_trace_summary_groups_thousands() -> None:
    n: dict[str, object] = {"offered_load": 0.615, "jobs_with_run_time": 12345, "span_days": 1.25, "users": 1000,
                            "site_nodes": 1024}
    assert trace._summary(n) == ("12,345 jobs with a run time over 1.2 days from 1,000 users on a site of 1,024 "
                                 "processors; they offer 62% of the site's capacity.")


def test_the_trace_advice_in_full_at_each_level() -> None:
    assert trace._advice(0.95, True) == ("Offered load 95%: more than the site can run: jobs queue for long, and "
                                         "cloud capacity pays.")
    assert trace._advice(0.7, True) == ("Offered load 70%: a busy site: queues form at peaks, where leased capacity "
                                        "shortens waits.")
    assert trace._advice(0.6, True) == ("Offered load 60%: a site mostly idle: leasing pays only at the peaks, and "
                                        "reserved instances need a steady base.")


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


def test_the_trace_figure_draws_load_over_m_and_the_queue_by_day(drawn: list[Any]) -> None:
    hourly = pd.DataFrame({"hour": [0.0, 1.0, 2.0, 3.0, 4.0], "busy_procs": [4.0, 6.0, 0.0, 1.0, 0.0],
                           "queued_jobs": [0, 1, 1, 0, 0]})
    trace._figure(hourly, 4, True)
    load, queue = drawn[0].axes
    days = [0.0, 1 / 24, 2 / 24, 3 / 24, 4 / 24]
    line, limit = load.lines
    assert data(line, "x") == pytest.approx(days) and data(line, "y") == [1.0, 1.5, 0.0, 0.25, 0.0]
    assert line.get_linewidth() == 0.6
    assert data(limit, "y") == [1.0, 1.0] and limit.get_color() == "k"
    assert (limit.get_linewidth(), limit.get_linestyle()) == (0.8, "--")
    assert (load.get_xlabel(), load.get_ylabel()) == ("day", "busy processors / M (M = 4)")
    (waiting,) = queue.lines
    assert data(waiting, "x") == pytest.approx(days) and data(waiting, "y") == [0, 1, 1, 0, 0]
    assert (waiting.get_linewidth(), waiting.get_color()) == (0.6, "tab:red")
    assert (queue.get_xlabel(), queue.get_ylabel(), queue.get_title()) == ("day", "jobs waiting",
                                                                          "queue (the log's own schedule)")
    trace._figure(hourly, 4, False)
    queue = drawn[1].axes[1]
    (text,) = queue.texts
    assert (text.get_text(), text.get_position(), text.get_ha(), text.get_va()) == (
        "the trace records no waits", (0.5, 0.5), "center", "center")
    assert text.get_transform() is queue.transAxes
    assert list(queue.get_xticks()) == [] and list(queue.get_yticks()) == [] and queue.get_title() == "queue"
