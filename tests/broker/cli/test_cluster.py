"""``cloudbroker cluster``: one run, errors, and a sweep that writes its table and plots and resumes."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from broker.cli import app
from tests.conftest import cloudbroker, trace_path, without_timing

runner = CliRunner()


def run_json(*args: str) -> dict:
    result = cloudbroker(*["cluster", *args, "--json"])
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_synthetic_json_has_the_bill_and_the_overheads():
    payload = run_json("--synthetic", "--limit-jobs", "3000")
    for key in ("cost", "instance_cost", "egress_cost", "instance_hours", "overhead_mean_s", "overhead_p95_s"):
        assert key in payload
    assert payload["jobs"] == 3000
    assert payload["cost"] == payload["instance_cost"] + payload["egress_cost"]
    assert abs(payload["instance_cost"] - payload["instance_hours"] * 0.145) < 1e-6
    again = run_json("--synthetic", "--limit-jobs", "3000")
    assert without_timing(again) == without_timing(payload)


def test_out_writes_jobs_instances_and_the_per_user_bill(tmp_path):
    payload = run_json("--synthetic", "--limit-jobs", "1500", "--out", str(tmp_path), "--format", "csv")
    jobs, inst, users = (pd.read_csv(tmp_path / f"{n}.csv") for n in ("jobs", "instances", "users"))
    assert len(jobs) == 1500 and inst["units"].sum() == payload["instance_hours"]
    assert abs(users["cost"].sum() - payload["cost"]) < 1e-6
    assert json.loads((tmp_path / "summary.json").read_text())["cost"] == payload["cost"]


def test_options_change_the_run_as_documented():
    base = run_json("--synthetic", "--limit-jobs", "3000", "--boot", "120")
    kept = run_json("--synthetic", "--limit-jobs", "3000", "--boot", "120", "--keepalive", "fixed:0.5")
    assert kept["overhead_mean_s"] < base["overhead_mean_s"] and kept["instance_cost"] > base["instance_cost"]
    capped = run_json("--synthetic", "--limit-jobs", "3000", "--cap", "5", "--per-user")
    assert capped["peak_instances"] <= 5 and capped["merge"] is False
    wall = run_json("--synthetic", "--limit-jobs", "3000", "--charging", "wall-clock", "--wait-next-hour", "20",
                    "--delay", "5", "--burst-ratio", "0.5", "--cap", "50")
    assert wall["charging"] == "wall-clock" and wall["wait_mean_s"] > 0


def test_real_trace_and_errors():
    payload = run_json("--trace", str(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz")), "--limit-jobs", "2000",
                       "--idle-timeout", "10")
    assert payload["jobs"] == 2000 and payload["egress_by_month"]
    one = run_json("--trace", str(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")), "--limit-jobs", "500")
    expanded = run_json("--trace", str(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")), "--limit-jobs", "500",
                        "--parallel", "expand")
    assert expanded["parallel"] == "expand" and expanded["jobs"] == 500
    assert expanded["peak_instances"] > one["peak_instances"]  # the first 500 tasks come from fewer, wider jobs
    for args in (["--synthetic", "--keepalive", "sometimes"], ["--synthetic", "--parallel", "many"],
                 ["--synthetic", "--cap", "0"], [],
                 ["--synthetic", "--trace", "x"], ["--synthetic", "--charging", "hourly"],
                 ["--synthetic", "--idle-timeout", "5", "--keepalive", "fixed:0.2"]):
        result = cloudbroker(*["cluster", *args])
        assert result.code != 0
    missing = cloudbroker(*["cluster", "--trace", "no-such-trace.swf"])
    assert missing.code == 2 and "no-such-trace" in missing.err


SPEC = """
name = "tiny"
[workload]
trace = "{trace}"
limit = 1500
seed = 3
[base]
boot_s = 60
[[family]]
name = "caps"
cap = [2, 5, 20, "none"]
[[family]]
name = "keep"
keepalive = ["fixed:0", "fixed:0.5"]
"""


def test_sweep_writes_table_plots_and_resumes(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC.format(trace=trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")))
    out, store = tmp_path / "out", tmp_path / "store"
    args = ["cluster", "sweep", str(spec), "--out", str(out), "--store", str(store), "--n-jobs", "1", "--json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = json.loads(first.stdout)
    assert len(rows) == 6 and {r["family"] for r in rows} == {"caps", "keep"}
    assert (out / "pareto.png").stat().st_size > 0 and (out / "cap_benefit.png").stat().st_size > 0
    table = pd.read_csv(out / "table.csv")
    assert table["pareto"].any() and table["benefit_bc"].notna().sum() == 2  # caps 5 and 20 after cap 2
    assert len(list(store.glob("*.json"))) == 6
    (store / sorted(p.name for p in store.glob("*.json"))[0]).unlink()
    refused = cloudbroker(*args)  # the table of the first run is in --out: refused before any cell runs
    assert refused.code == 2 and "--force" in refused.err and len(list(store.glob("*.json"))) == 5
    again = runner.invoke(app, [*args, "--force"])
    assert again.exit_code == 0 and json.loads(again.stdout) == rows


def test_sweep_spec_errors_name_the_file(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('[workload]\nsynthetic = 1.0\n[[family]]\nname = "x"\ncapp = [1, 2]\n')
    result = cloudbroker(*["cluster", "sweep", str(spec)])
    assert result.code == 2 and "bad.toml" in result.err and "capp" in result.err
