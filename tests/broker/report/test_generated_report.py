"""``cloudbroker report`` on the generated workload: every section, its files, and commands that give its numbers."""

from __future__ import annotations

import html
import json
import shlex
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from broker.report import ReportConfig, build_report
from tests.broker.report.conftest import SEED
from tests.conftest import cloudbroker, without_timing


def sections(out: Path) -> dict[str, dict[str, Any]]:
    return {s["key"]: s for s in json.loads((out / "report.json").read_text())["sections"]}


def run_json(command: str) -> Any:
    args = shlex.split(command)
    assert args[0] == "cloudbroker"
    result = cloudbroker(*args[1:])
    assert result.code == 0, (command, result.err)
    return json.loads(result.out)


def test_every_section_ran_or_says_why_and_its_figures_and_tables_are_on_disk_and_on_the_page(report_dir: Path) -> None:
    by_key = sections(report_dir)
    assert list(by_key) == ["trace", "coh", "reservations", "cluster", "leasing", "advisor", "elastic"]
    assert by_key["advisor"]["status"] == "not applicable" and "no wait" in by_key["advisor"]["why"]
    page = (report_dir / "index.html").read_text()
    for key, s in by_key.items():
        assert f'id="{key}"' in page
        if key == "advisor":
            assert "Did not run:" in page.split('id="advisor"')[1].split("<section")[0]
            continue
        assert s["status"] == "done" and s["figures"] and s["recommendation"] and s["commands"], key
        for figure in s["figures"]:
            assert (report_dir / figure["file"]).read_text().lstrip().startswith("<?xml")
        for table in s["tables"].values():
            assert len(pd.read_parquet(report_dir / table)) > 0
    assert page.count('src="data:image/svg+xml;base64,') == sum(len(s["figures"]) for s in by_key.values())
    assert (report_dir / "workload.swf").exists() and (report_dir / "reservation_plan.json").exists()


def test_the_commands_on_the_page_give_the_reports_numbers(report_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(report_dir)  # the commands read workload.swf, the plan and the grid beside the page
    by_key = sections(report_dir)
    coh = by_key["coh"]["numbers"]["policies"]
    for what, command in ((c["what"], c["command"]) for c in by_key["coh"]["commands"]):
        assert run_json(command)["cost"] == coh[what]["cost"], what
    plan_cmd, default_cmd, cohr_cmd = (c["command"] for c in by_key["reservations"]["commands"])
    reservations = by_key["reservations"]["numbers"]
    assert run_json(plan_cmd)["plan"] == reservations["plan"]
    assert "--replay-solver" not in default_cmd and run_json(default_cmd)["plan"] == reservations["trio_plan"]
    assert run_json(cohr_cmd)["cost"] == reservations["coh_r_cost"]
    leasing = by_key["leasing"]["numbers"]["policies"]
    for what, command in ((c["what"], c["command"]) for c in by_key["leasing"]["commands"]):
        got = run_json(command)
        assert (got["twt_s"], got["cloud_cpu_s"], got["balance"]) == (
            leasing[what]["twt_s"], leasing[what]["cloud_cpu_s"], leasing[what]["balance"]), what
    elastic = by_key["elastic"]["numbers"]["runs"]
    for what, command in ((c["what"], c["command"]) for c in by_key["elastic"]["commands"]):
        got = run_json(command)
        assert (got["w_interactive_mean"], got["core_hours"]) == (elastic[what]["w_interactive_mean"],
                                                                 elastic[what]["core_hours"]), what
    sweep = run_json(by_key["cluster"]["commands"][0]["command"])
    table = pd.read_parquet(report_dir / "tables" / "cluster_grid.parquet")
    # the sweep prints its table through pandas' JSON writer, ten significant digits
    assert [row["cost"] for row in sweep] == pytest.approx(table["cost"].tolist(), rel=1e-10, abs=0)
    assert [row["family"] for row in sweep] == table["family"].tolist()


def test_the_same_seed_gives_the_same_report(report_dir: Path, tmp_path: Path) -> None:
    again = build_report(ReportConfig(seed=SEED), tmp_path / "again")
    first = json.loads((report_dir / "report.json").read_text())
    assert without_timing(json.loads(json.dumps(again.to_dict(), default=str))) == without_timing(first)
    for figure in (report_dir / "figures").iterdir():
        assert (tmp_path / "again" / "figures" / figure.name).read_bytes() == figure.read_bytes()


def test_a_small_budget_runs_slices_of_the_sections_and_a_smaller_one_skips_what_does_not_fit(tmp_path: Path) -> None:
    report = build_report(ReportConfig(seed=SEED, budget_min=0.25), tmp_path / "small")  # 15 s, 5 of them overhead
    status = {s.key: s.status for s in report.sections}
    assert status == {"trace": "done", "coh": "done", "reservations": "done", "cluster": "done", "leasing": "done",
                      "advisor": "not applicable", "elastic": "done"}
    sliced = [p for s in report.sections for p in s.skipped_parts if p.startswith("ran on the first")
              or "ran the first" in p]
    assert sliced and report.budget["skipped"] == [] and report.budget["planned_s"] <= 15.0
    page = (tmp_path / "small" / "index.html").read_text()
    assert all(html.escape(p) in page for p in sliced)
    tiny = build_report(ReportConfig(seed=SEED, budget_min=0.12), tmp_path / "tiny")  # 7.2 s
    status = {s.key: s.status for s in tiny.sections}
    assert status["trace"] == "done" and status["coh"] == "done" and status["cluster"] == "skipped"
    page = (tmp_path / "tiny" / "index.html").read_text()
    assert "Left out to stay within the budget" in page and "the cloud-cluster grid: needs about" in page
    assert tiny.budget["planned_s"] <= 7.2


def test_bad_options_are_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    refused = cloudbroker("report", "--out", str(tmp_path / "full"))
    assert refused.code == 2 and "not empty" in refused.err
    missing = cloudbroker("report", "--out", str(tmp_path / "r"), "--trace", str(tmp_path / "none.swf"))
    assert missing.code == 2 and "none.swf" in missing.err and not (tmp_path / "r").exists()
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1\n")
    malformed = cloudbroker("report", "--out", str(tmp_path / "r"), "--trace", str(bad))
    assert malformed.code == 2 and "bad.swf:2: expected 18 fields" in malformed.err
    assert cloudbroker("report", "--out", str(tmp_path / "r"), "--budget-min", "0").code == 2


def test_a_site_larger_than_the_learners_can_hold_is_refused_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "r"
    too_many = cloudbroker("report", "--out", str(out), "--nodes", "1000001")
    assert too_many.code == 2 and "less than or equal to 1000000" in too_many.err
    huge = tmp_path / "huge.swf"
    huge.write_text("; MaxProcs: 99999999999\n1 0 5 10 4 -1 -1 4 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    header = cloudbroker("report", "--out", str(out), "--trace", str(huge))
    assert header.code == 2 and header.err == (f"error: {huge}: a site of 99,999,999,999 nodes, more than 1,000,000: "
                                               "give its size with --nodes\n")
    assert not out.exists()
