"""Every command that reads a trace, with its defaults, on the corpus of archive quirks (``tests/quirks.py``).

A log that can be read runs: exit 0, every job line accounted for in ``--json`` (read = removed +
kept, the reader's flags and skips by reason, as the log was built). A log that cannot be read is
one refusal line naming the file's line (and ``--lenient``, which reads it); ``--strict`` refuses
the first undocumented value in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRun, cloudbroker
from tests.quirks import QUIRKS, Quirk
from workloads.jobs import PARTIAL_REMOVED

#: Every command that reads a trace, with its defaults (and the report, below: it writes a page).
COMMANDS: dict[str, tuple[str, ...]] = {
    "simulate": ("simulate", "--trace"),
    "simulate FCFS-LD": ("simulate", "--policy", "FCFS-LD", "--trace"),
    "plan-reservations": ("plan-reservations", "--trace"),
    "leasing": ("leasing", "--trace"),
    "cluster": ("cluster", "--trace"),
    "advise": ("advise", "--trace"),
    "elastic": ("elastic", "--trace"),
}


def _log(tmp_path: Path, quirk: Quirk) -> Path:
    path = tmp_path / (quirk.name.replace(" ", "_").replace(",", "") + ".swf")
    path.write_text(quirk.build())
    return path


def _refusal(run: CliRun, parts: tuple[str, ...]) -> str:
    lines = run.err.splitlines()
    assert run.code == 2 and len(lines) == 1 and lines[0].startswith("error: "), run
    assert "Traceback" not in run.err and run.out == ""
    assert all(p in lines[0] for p in parts), (lines[0], parts)
    return lines[0]


def _counts_hold(payload: dict, quirk: Quirk) -> None:
    assert payload["jobs_in"] == quirk.jobs
    assert sum(payload["jobs_removed"].values()) + payload["jobs_kept"] == payload["jobs_in"]
    assert payload["lines_skipped"] == quirk.skipped
    reader_flags = {why: n for why, n in payload["jobs_flagged"].items() if why in quirk.flagged}
    assert reader_flags == quirk.flagged
    assert payload["jobs_removed"].get(PARTIAL_REMOVED, 0) == quirk.partial
    if quirk.kept_none:
        assert payload["jobs_kept"] == 0 and payload["nothing_to_run"].startswith("no job left to run")
    else:
        assert payload["jobs_kept"] > 0 and "nothing_to_run" not in payload


CASES = [(q, c) for q in QUIRKS for c in COMMANDS]


@pytest.mark.parametrize(("quirk", "command"), CASES, ids=[f"{q.name}-{c}" for q, c in CASES])
def test_every_command_runs_a_quirk_with_its_defaults_and_accounts_for_every_line(
        tmp_path: Path, quirk: Quirk, command: str) -> None:
    path = _log(tmp_path, quirk)
    run = cloudbroker(*COMMANDS[command], str(path), "--json")
    if quirk.refusal:
        _refusal(run, (path.name, *quirk.refusal))
        run = cloudbroker(*COMMANDS[command], str(path), "--json", "--lenient")
    assert run.code == 0, run
    assert "Traceback" not in run.err
    _counts_hold(json.loads(run.out), quirk)


STRICT = [(q, c) for q in QUIRKS if q.strict for c in COMMANDS]


@pytest.mark.parametrize(("quirk", "command"), STRICT, ids=[f"{q.name}-{c}" for q, c in STRICT])
def test_strict_refuses_the_first_undocumented_value_in_one_line_in_every_command(
        tmp_path: Path, quirk: Quirk, command: str) -> None:
    path = _log(tmp_path, quirk)
    _refusal(cloudbroker(*COMMANDS[command], str(path), "--json", "--strict"), (path.name, *quirk.strict))


@pytest.mark.parametrize("quirk", QUIRKS, ids=lambda q: q.name)
def test_trace_info_accounts_for_every_line_of_a_quirk(tmp_path: Path, quirk: Quirk) -> None:
    path = _log(tmp_path, quirk)
    run = cloudbroker("trace", "info", str(path), "--json")
    if quirk.refusal:
        _refusal(run, (path.name, *quirk.refusal))
        run = cloudbroker("trace", "info", str(path), "--json", "--lenient")
    assert run.code == 0, run
    info = json.loads(run.out)
    assert (info["jobs"], info["flagged"], info["skipped_by_reason"]) == (quirk.jobs, quirk.flagged, quirk.skipped)
    table = cloudbroker("trace", "info", str(path), *(["--lenient"] if quirk.refusal else []))
    assert table.code == 0, table
    text = " ".join(table.out.replace("│", " ").split())  # the table's wrapped cells as one line
    assert all(f"{n} line(s): {why}" in text for why, n in quirk.flagged.items()), text


@pytest.mark.parametrize("quirk", QUIRKS, ids=lambda q: q.name)
def test_the_report_runs_a_quirk_with_its_defaults_and_accounts_for_every_line(tmp_path: Path, quirk: Quirk) -> None:
    path = _log(tmp_path, quirk)
    args = ("report", "--trace", str(path), "--json")
    run = cloudbroker(*args, "--out", str(tmp_path / "report"))
    if quirk.refusal:
        _refusal(run, (path.name, *quirk.refusal))
        assert not (tmp_path / "report").exists()  # refused before any work
        run = cloudbroker(*args, "--out", str(tmp_path / "report"), "--lenient")
    assert run.code == 0 and "Traceback" not in run.err, run
    _counts_hold(json.loads(run.out), quirk)
    assert (tmp_path / "report" / "index.html").is_file()
