"""The report's elastic section on KTH-SP2, whole (its 50,000 first core-jobs): the recommendation is the highest W."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.report.budget import Budget
from broker.report.build import report_input
from broker.report.model import ReportConfig
from broker.report.sections import elastic
from tests.conftest import trace_path


@pytest.mark.slow
def test_on_kth_the_elastic_section_recommends_the_threshold_autoscaler_the_most_responsive(tmp_path: Path) -> None:
    inp = report_input(ReportConfig(trace=str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))), tmp_path)
    s = elastic.run(inp, Budget(600.0), runs=elastic.PAPER_RUNS)  # the wait learner: test_generated_report
    assert s.status == "done" and s.numbers["core_jobs"] == elastic.MOST
    runs = s.numbers["runs"]
    rule = runs["threshold (elastic)"]
    # W = run / (run + wait): higher is better; the rule is also the quickest to answer and the cheapest
    for other in ("fcfs (rigid)", "sarsa (elastic)"):
        assert rule["w_interactive_mean"] > runs[other]["w_interactive_mean"]
        assert rule["wait_interactive_mean_s"] < runs[other]["wait_interactive_mean_s"]
        assert rule["core_hours"] < runs[other]["core_hours"]
    assert s.recommendation.startswith("Run the threshold autoscaler: the most responsive pool (W ")
    assert "SARSA loses " in s.recommendation
