"""The ``cloudbroker`` CLI, run in-process as a user would call it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from broker.cli import app
from tests.conftest import SOURCES_JOBS, trace_path, without_timing

runner = CliRunner()


def invoke(*args: str) -> dict:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("filename", sorted(SOURCES_JOBS))
def test_trace_info_reports_the_sources_job_count(filename: str) -> None:
    info = invoke("trace", "info", str(trace_path(filename)), "--json")
    assert info["jobs"] == SOURCES_JOBS[filename]
    assert {"first_submit", "last_submit", "max_procs"} <= set(info)


def test_trace_info_table() -> None:
    result = runner.invoke(app, ["trace", "info", str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))])
    assert result.exit_code == 0 and "28476" in result.stdout


def test_simulate_synthetic_twice_gives_identical_json() -> None:
    args = ("simulate", "--synthetic", "--synthetic-jobs", "600", "--seed", "11", "--json")
    first, second = invoke(*args), invoke(*args)
    assert {"jobs", "cost", "lower_bound", "cost_over_lb", "utilization", "vm_hours", "wall_s"} <= set(first)
    first.pop("wall_s"), second.pop("wall_s")
    assert first == second
    assert first["cost"] >= first["lower_bound"]
    other = invoke("simulate", "--synthetic", "--synthetic-jobs", "600", "--seed", "12", "--json")
    assert other["cost"] != first["cost"]


def test_simulate_table_on_a_real_trace_slice() -> None:
    result = runner.invoke(app, ["simulate", "--trace", str(trace_path("LCG-2005-1.swf.gz")), "--limit-jobs", "2000",
                                 "--policy", "coh"])
    assert result.exit_code == 0, result.output
    for label in ("cost / LB", "utilization", "VMs large", "portfolio wins"):
        assert label in result.stdout


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_simulate_writes_tables(tmp_path: Path, fmt: str) -> None:
    payload = invoke("simulate", "--synthetic", "--synthetic-jobs", "300", "--reqs", "constant-100",
                     "--policy", "FCFS-CFH", "--charging", "wall-clock", "--out", str(tmp_path), "--format", fmt,
                     "--json")
    read = pd.read_csv if fmt == "csv" else pd.read_parquet
    jobs, vms = read(tmp_path / f"jobs.{fmt}"), read(tmp_path / f"vms.{fmt}")
    assert len(jobs) == payload["jobs"] == 300
    assert vms["cost"].sum() == pytest.approx(payload["cost"])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cost"] == payload["cost"] and summary["config"]["charging"] == "wall-clock"


def test_clear_errors() -> None:
    missing = runner.invoke(app, ["simulate", "--trace", "no-such-trace"])
    assert missing.exit_code == 2 and "no-such-trace" in missing.output
    bad = runner.invoke(app, ["simulate", "--synthetic", "--heuristics", "FCFS-XYZ"])
    assert bad.exit_code != 0 and "FCFS-XYZ" in bad.output


@pytest.mark.parametrize("backend", ["cpsat", "cbc"])
def test_simulate_with_the_ipp_deterministic(backend: str) -> None:
    args = ("simulate", "--synthetic", "--synthetic-jobs", "300", "--seed", "3", "--solver", backend,
            "--time-limit", "0.05", "--deterministic", "--json")
    first, second = invoke(*args), invoke(*args)
    assert {"ipp_wins", "heuristic_wins", "ipp_optimal_ticks", "mean_gap"} <= set(first)
    assert first["ipp_wins"] + first["heuristic_wins"] == first["policy_stats"]["portfolio_ticks"]
    assert without_timing(first) == without_timing(second)
    assert first["config"]["solver"] == backend and first["config"]["deterministic"] is True


def test_simulate_ipp_alone_and_win_counts_in_the_table() -> None:
    payload = invoke("simulate", "--synthetic", "--synthetic-jobs", "200", "--policy", "ipp", "--solver", "cpsat",
                     "--time-limit", "0.05", "--deterministic", "--json")
    assert payload["policy"] == "ipp" and payload["ipp_wins"] > 0
    table = runner.invoke(app, ["simulate", "--synthetic", "--synthetic-jobs", "200", "--solver", "cpsat",
                                "--time-limit", "0.05"])
    assert table.exit_code == 0 and "IPP" in table.stdout and "portfolio wins" in table.stdout
    bad = runner.invoke(app, ["simulate", "--synthetic", "--policy", "FCFS-SM", "--solver", "cpsat"])
    assert bad.exit_code != 0 and "--solver needs" in bad.output
