"""``cloudbroker advise`` on KTH-SP2 with a small protocol: the summary, the per-job table, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import cloudbroker, trace_path

KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
SMALL = ("--tune", "300", "--skip", "2000", "--evaluate", "1000")


def test_advise_reports_the_advisor_against_the_oracle_and_writes_its_decisions(tmp_path: Path) -> None:
    run = cloudbroker("advise", "--trace", KTH, *SMALL, "--speed", "linear:0.05", "--out", str(tmp_path / "o"),
                      "--format", "csv", "--json")
    assert run.code == 0, run.err
    out = json.loads(run.out)
    assert out["jobs_to_cloud"] + out["jobs_local"] == 1000 and out["oracle_saved_time_s"] >= out["saved_time_s"]
    assert out["rmse_wait_s"] > 0 and out["rmse_run_s"] > 0 and out["jobs_in"] == 28_476
    assert [s["name"] for s in out["scenarios"]] == ["linear:0.05"]
    jobs = pd.read_csv(tmp_path / "o" / "jobs.csv")
    assert len(jobs) == 1000 and int(jobs["cloud[linear:0.05]"].sum()) == out["jobs_to_cloud"]
    assert {"wait_pred_s", "run_pred_s", "wait_std_s"} <= set(jobs.columns)
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["saved_time_s"] == out["saved_time_s"] and "wall_s" not in summary


def test_advise_runs_the_papers_ten_speeds_and_a_table_of_ratios(tmp_path: Path) -> None:
    ten = json.loads(cloudbroker("advise", "--trace", KTH, *SMALL, "--no-cutoff", "--json").out)
    assert len(ten["scenarios"]) == 10 and ten["cutoff"] == {"log_alpha": None, "beta": 0.0}
    assert (ten["cutoff_used"], ten["cutoff_not_used"]) == (False, "--no-cutoff")
    assert all(s["jobs_to_cloud"] == s["no_cutoff_jobs_to_cloud"] for s in ten["scenarios"])
    (tmp_path / "speed.csv").write_text("procs,ratio\n1,1.2\n16,2.0\n")
    table = json.loads(cloudbroker("advise", "--trace", KTH, *SMALL, "--speed", f"table:{tmp_path / 'speed.csv'}",
                                   "--json").out)
    assert table["scenarios"][0]["s"] == pytest.approx((1.2 + 2.0) / 2 - 1)  # the mean ratio less 1


def test_advise_refuses_in_one_line(tmp_path: Path) -> None:
    for args, words in [(("--skip", "30000"), "needs skip + evaluate = 40,000"),
                        (("--tune", "600", "--skip", "500"), "--tune 600 must not exceed --skip 500"),
                        (("--speed", "fast"), "linear:O or table:FILE"),
                        (("--model", "svm"), "--model must be knn or gbm"),
                        (("--speed", f"table:{tmp_path / 'none.csv'}"), "none.csv")]:
        run = cloudbroker("advise", "--trace", KTH, *args)
        assert run.code == 2 and run.err.count("\n") == 1 and words in run.err, run.err


def test_advise_with_promises_scores_them_alone_and_writes_them(tmp_path: Path) -> None:
    run = cloudbroker("advise", "--trace", KTH, *SMALL, "--speed", "linear:0.05", "--promises", "--json",
                      "--out", str(tmp_path / "o"), "--format", "csv")
    assert run.code == 0, run.err
    out = json.loads(run.out)
    jobs = pd.read_csv(tmp_path / "o" / "jobs.csv")
    alone = ((jobs["promised_wait_s"] - jobs["wait_s"]) ** 2).mean() ** 0.5
    assert out["promises"] is True and out["rmse_wait_promises_alone_s"] == pytest.approx(alone)
    assert (jobs["promised_wait_s"] >= 0).all()
    refused = cloudbroker("advise", "--trace", KTH, "--weights", "ga")
    assert refused.code == 2 and "--weights must be correlation or search" in refused.err
