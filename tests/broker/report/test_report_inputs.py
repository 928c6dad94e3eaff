"""What ``cloudbroker report`` reads: a trace with nothing to run, its first jobs, lenient reading, odd paths."""

from __future__ import annotations

import html
import json
import shlex
import tomllib
from pathlib import Path

import pytest

from tests.conftest import cloudbroker
from workloads.lublin import default_workload
from workloads.swf_writer import write_swf

#: Two jobs the broker cannot replay (no run time), no MaxProcs and no processor counts.
NO_RUN_TIME = ("; Version: 2.2\n1 0 5 -1 -1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
               "2 9 5 -1 -1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n")
#: Three jobs, every one cancelled before it ran (status 5, no run time).
CANCELLED = "; Version: 2.2\n; MaxProcs: 8\n" + "".join(
    f"{i} {10 * i} 5 -1 4 -1 -1 4 60 -1 5 1 1 -1 -1 -1 -1 -1\n" for i in (1, 2, 3))


def sections(out: Path) -> dict[str, dict]:
    return {s["key"]: s for s in json.loads((out / "report.json").read_text())["sections"]}


@pytest.mark.parametrize("text,nodes", [(NO_RUN_TIME, []), (NO_RUN_TIME, ["--nodes", "4"]), (CANCELLED, [])],
                         ids=["no-run-time", "no-run-time-with-nodes", "all-cancelled"])
def test_a_trace_with_no_job_to_run_is_a_nothing_to_run_result_with_the_counts(tmp_path: Path, text: str,
                                                                                  nodes: list[str]) -> None:
    trace, out = tmp_path / "t.swf", tmp_path / "r"
    trace.write_text(text)
    run = cloudbroker("report", "--trace", str(trace), "--out", str(out), "--json", *nodes)
    assert run.code == 0, run.err
    read = text.count("\n") - text.count(";")
    payload = json.loads(run.out)
    assert (payload["jobs_in"], payload["jobs_kept"], payload["jobs"]) == (read, 0, 0)
    assert sum(payload["jobs_removed"].values()) == read
    assert run.err.splitlines()[-1] == f"{trace}: {payload['nothing_to_run']}"
    assert "--nodes" not in run.err and "$" not in run.out
    assert json.loads((out / "summary.json").read_text()) == payload
    page = (out / "index.html").read_text()
    assert "Nothing to run." in page and f"Of the {read:,} job(s) read" in page
    for why, count in payload["jobs_removed"].items():
        assert f"<td>{html.escape(why)}</td><td>{count:,}</td>" in page
    assert not (out / "report.json").exists()


def test_a_section_whose_view_keeps_no_job_says_so_instead_of_costing_nothing(tmp_path: Path) -> None:
    # cancelled after running 10 s: the broker's job view keeps them (flagged), the cloud cluster's removes them
    trace, out = tmp_path / "t.swf", tmp_path / "r"
    trace.write_text("; Version: 2.2\n; MaxProcs: 8\n" + "".join(
        f"{i} {10 * i} 5 10 4 -1 -1 4 60 -1 5 1 1 -1 -1 -1 -1 -1\n" for i in (1, 2)))
    run = cloudbroker("report", "--trace", str(trace), "--out", str(out), "--budget-min", "1")
    assert run.code == 0, run.err
    cluster = sections(out)["cluster"]
    assert cluster["status"] == "not applicable" and cluster["why"].startswith(
        "no job of the trace is left to run on instances (read 2, kept 0, removed 2")
    assert "$0.00" not in (out / "index.html").read_text().split('id="cluster"')[1].split("<section")[0]


def small_trace(path: Path, n: int = 400) -> Path:
    frame = default_workload(seed=3, n_jobs=n)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_swf(frame, path, {"MaxProcs": 256, "UnixStartTime": 1_000_000_000})


def test_limit_jobs_makes_the_report_on_the_traces_first_jobs_written_beside_it(tmp_path: Path) -> None:
    trace, out = small_trace(tmp_path / "t.swf"), tmp_path / "r"
    run = cloudbroker("report", "--trace", str(trace), "--out", str(out), "--limit-jobs", "150", "--budget-min",
                      "1", "--json")
    assert run.code == 0, run.err
    by_key = sections(out)
    assert by_key["trace"]["numbers"]["jobs_in_trace"] == 150
    payload = json.loads(run.out)
    assert payload["trace"] == f"the first 150 jobs of {trace}"
    assert (payload["jobs_in"], payload["jobs_kept"]) == (150, 150)  # the reading counts, as every command gives
    info = cloudbroker("trace", "info", str(out / "trace.swf"), "--json")
    assert json.loads(info.out)["header"]["MaxProcs"] == "256"
    for s in by_key.values():
        for c in s["commands"]:
            args = shlex.split(c["command"])
            if "--trace" in args:
                assert args[args.index("--trace") + 1] == "trace.swf", c
    refused = cloudbroker("report", "--trace", str(trace), "--out", str(tmp_path / "x"), "--limit-jobs", "0")
    assert refused.code == 2 and "--limit-jobs" in refused.err


def test_the_commands_name_a_path_with_spaces_quoted_and_relative_and_read_it_as_the_report_did(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = small_trace(tmp_path / "my traces" / "site log.swf")
    with trace.open("a") as f:
        f.write("this line is not SWF\n")
    out = tmp_path / "out dir" / "r"
    refused = cloudbroker("report", "--trace", str(trace), "--out", str(out))
    assert refused.code == 2 and "--lenient" in refused.err
    run = cloudbroker("report", "--trace", str(trace), "--out", str(out), "--lenient", "--budget-min", "1")
    assert run.code == 0, run.err
    by_key = sections(out)
    assert by_key["cluster"]["status"] == "done"  # it reads the trace again, leniently
    commands = [c["command"] for s in by_key.values() for c in s["commands"]]
    assert commands and all("/" not in c.split()[0] for c in commands)
    for command in commands:
        args = shlex.split(command)
        if "--trace" in args or args[1:3] == ["trace", "info"]:
            given = args[args.index("--trace") + 1] if "--trace" in args else args[3]
            assert given == "../../my traces/site log.swf" and "--lenient" in args, command
    grid = tomllib.loads((out / "cluster_grid.toml").read_text())
    assert grid["workload"]["trace"] == "../../my traces/site log.swf" and grid["workload"]["lenient"] is True
    monkeypatch.chdir(out)
    trace_info = next(c for c in commands if " trace info " in c)
    info = cloudbroker(*shlex.split(trace_info)[1:])
    assert info.code == 0 and json.loads(info.out)["skipped"] == 1, info.err
    coh = by_key["coh"]
    first = coh["commands"][0]
    assert json.loads(cloudbroker(*shlex.split(first["command"])[1:]).out)["cost"] == \
        coh["numbers"]["policies"][first["what"]]["cost"]
