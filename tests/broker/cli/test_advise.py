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
    assert (out["cancelled"], out["cancelled_evaluated"], out["placed_jobs"]) == ("keep", 0, 1000)  # KTH has none
    assert [s["name"] for s in out["scenarios"]] == ["linear:0.05"]
    jobs = pd.read_csv(tmp_path / "o" / "jobs.csv")
    assert len(jobs) == 1000 and int(jobs["cloud[linear:0.05]"].sum()) == out["jobs_to_cloud"]
    assert {"wait_pred_s", "run_pred_s", "wait_std_s"} <= set(jobs.columns)
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["saved_time_s"] == out["saved_time_s"] and "wall_s" not in summary


def test_advise_runs_the_papers_ten_speeds_and_a_table_of_ratios(tmp_path: Path) -> None:
    ten = json.loads(cloudbroker("advise", "--trace", KTH, *SMALL, "--no-cutoff", "--json").out)
    assert len(ten["scenarios"]) == 10 and ten["cutoff"] == {"log_alpha": None, "beta": 0.0, "s_max": None}
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
                        (("--speed", f"table:{tmp_path / 'none.csv'}"), "none.csv"),
                        (("--label", "sim"), "--label must be log or replay"),
                        (("--count", "lines"), "--count must be entries or jobs"),
                        (("--cancelled", "ignore"), "--cancelled must be keep or drop"),
                        (("--memory", "0"), "--memory"),
                        (("--skip", "28000", "--evaluate", "477"), "the trace has 28,476 entries; the protocol needs "
                                                                   "skip + evaluate = 28,477")]:
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


def test_advise_learns_and_scores_the_label_it_names_and_counts_what_it_is_told(tmp_path: Path) -> None:
    run = cloudbroker("advise", "--trace", KTH, *SMALL, "--speed", "linear:0.05", "--label", "replay", "--count",
                      "jobs", "--memory", "500", "--json", "--out", str(tmp_path / "o"), "--format", "csv")
    assert run.code == 0, run.err
    out = json.loads(run.out)
    assert (out["label"], out["count"], out["memory"], out["evaluated_jobs"]) == ("replay", "jobs", 500, 1000)
    jobs = pd.read_csv(tmp_path / "o" / "jobs.csv")
    assert out["rmse_wait_s"] == pytest.approx(((jobs["wait_pred_s"] - jobs["wait_s"]) ** 2).mean() ** 0.5)
    log = json.loads(cloudbroker("advise", "--trace", KTH, *SMALL, "--speed", "linear:0.05",
                                    "--json").out)
    assert log["label"] == "log" and log["count"] == "entries" and log["rmse_wait_s"] != out["rmse_wait_s"]


# -- advise sweep ----------------------------------------------------------------------------------------------
SWEEP = ("advise", "sweep", "--trace", KTH, *SMALL, "--speed", "linear:0.05,linear:1", "--promises", "off,on")


def test_advise_sweep_writes_its_table_store_and_figure_and_resumes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import broker.advisor.sweep as advisor_sweep

    out = tmp_path / "o"
    run = cloudbroker(*SWEEP, "--n-jobs", "1", "--out", str(out), "--json")
    assert run.code == 0, run.err
    rows = json.loads(run.out)
    assert [(r["options"], r["scenario"]) for r in rows] == [(o, s) for o in ("promises off", "promises on")
                                                             for s in ("linear:0.05", "linear:1")]
    assert sorted(p.name for p in out.iterdir()) == ["cells", "saved_time.png", "table.csv"]
    assert len(list((out / "cells").glob("*.json"))) == 2 and (out / "saved_time.png").stat().st_size > 10_000
    assert pd.read_csv(out / "table.csv")["saved_time_s"].tolist() == pytest.approx([r["saved_time_s"] for r in rows])
    # no line in (s, log variance) fits here: the cutoff is a cut on s alone, between the two speeds
    assert rows[0]["rmse_wait_promises_alone_s"] is None and rows[0]["log_alpha"] is None
    assert 0.05 < rows[0]["s_max"] <= 1 and rows[1]["jobs_to_cloud"] == 0 < rows[0]["jobs_to_cloud"]
    # each cell is the single run of its options (k-NN with correlation weights draws nothing from the seed);
    # the single run has one speed, so its cutoff differs: compare what does not depend on it
    single = json.loads(cloudbroker("advise", "--trace", KTH, *SMALL, "--speed", "linear:1", "--promises",
                                    "--json").out)
    for key in ("rmse_wait_s", "rmse_run_s", "rmse_wait_promises_alone_s"):
        assert rows[3][key] == single[key], key
    for key in ("no_cutoff_saved_time_s", "no_cutoff_jobs_to_cloud", "oracle_saved_time_s"):
        assert rows[3][key] == single["scenarios"][0][key], key
    # killed before its table was written: the same command resumes, running the missing cell only
    for name in ("table.csv", "saved_time.png"):
        (out / name).unlink()
    sorted((out / "cells").glob("*.json"))[0].unlink()
    ran: list[dict] = []
    cell = advisor_sweep.advise_cell
    monkeypatch.setattr(advisor_sweep, "advise_cell", lambda config, seed: ran.append(config) or cell(config, seed))
    again = cloudbroker(*SWEEP, "--n-jobs", "1", "--out", str(out), "--json")
    assert again.code == 0 and json.loads(again.out) == rows and len(ran) == 1
    refused = cloudbroker(*SWEEP, "--n-jobs", "1", "--out", str(out))  # its table is there now
    assert refused.code == 2 and "holds saved_time.png of an earlier run" in refused.err and "--force" in refused.err
    forced = cloudbroker(*SWEEP, "--n-jobs", "1", "--out", str(out), "--force")
    assert forced.code == 0 and len(ran) == 1 and "promises on" in forced.out and "linear:1" not in forced.out


@pytest.mark.parametrize(("args", "words"), [
    (("--model", "knn,svm"), "--model takes knn, gbm (comma-separated), got 'svm'"),
    (("--promises", "yes"), "--promises takes off, on"),
    (("--cutoff", "on,"), "--cutoff takes off, on (comma-separated), got ''"),
    (("--weights", "ga"), "--weights takes correlation, search"),
    (("--k", "0"), "--k takes integers in [1, 1000] (comma-separated), got '0'"),
    (("--k", "6,1001"), "got '1001'"),
    (("--width", "0.1,0"), "--width takes finite numbers > 0 (comma-separated), got '0'"),
    (("--width", "nan"), "got 'nan'"),
    (("--speed", "linear:0.1,fast"), "--speed 'fast': use linear:O or table:FILE"),
    (("--speed", "table:none.csv"), "none.csv"),
    (("--tune", "600", "--skip", "500"), "--tune 600 must not exceed --skip 500"),
    (("--skip", "30000"), "needs skip + evaluate = 40,000"),
    (("--backend", "spark"), "--backend must be one of loky, dask, ray"),
    (("--cancelled", "all"), "--cancelled must be keep or drop"),
    (("--scheduler", "tcp://127.0.0.1:1"), "--scheduler is for the dask and ray backends"),
    (("--out", "taken"), "--out taken: a file is there"),
    (("--trace", "nope.swf"), "nope.swf"),
])
def test_advise_sweep_refuses_in_one_line_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          args: tuple[str, ...], words: str) -> None:
    def boom(*_: object, **__: object) -> None:
        raise AssertionError("work started before the input was refused")

    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("a file\n")
    for target in ("broker.cli.backends.sweep", "broker.sweep.run_sweep"):
        monkeypatch.setattr(target, boom)
    run = cloudbroker("advise", "sweep", "--trace", KTH, *args)
    lines = run.err.splitlines()
    assert run.code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no --out directory left behind


def test_advise_is_a_group_whose_default_still_needs_a_trace_and_whose_help_draws_nothing() -> None:
    from tests.broker.cli.test_app import imported_by

    missing = cloudbroker("advise", "--json")
    assert missing.code == 2 and missing.err == "error: Missing option '--trace'. (see: cloudbroker advise --help)\n"
    shown = cloudbroker("advise", "--help")
    assert shown.code == 0 and all(w in shown.out for w in ("--trace", "--no-cutoff", "--promises", "sweep"))
    assert not {"matplotlib", "sklearn", "joblib"} & set(imported_by("advise", "sweep", "--help"))
