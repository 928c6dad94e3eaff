"""Every command on every shared trace, whole, with its defaults: what each run reads, keeps and removes.

Slow (the whole set takes minutes on two cores) but run by CI: a real log that a command refuses
or crashes on is the first thing a user meets. Each run must end with exit 0 and account for every
line of the log: the lines the archive's table counts (``SOURCES.md``) are read, none skipped, and
read = removed (by reason) + kept. The counts of every run are written to
``$CLOUDBROKER_ARTIFACTS/whole_traces.json`` when CI sets it (docs/TESTING.md has the table).

``elastic`` runs where it applies, on the elastic paper's grid log (LPC-EGEE, 220,695 one-core jobs),
with its rule policy (``--policy fcfs``, the default 81-core pool): 20 s. Not the learner: SARSA over
a whole log takes tens of minutes (it is tested on windows of the same log in ``tests/broker/elastic``);
the reading, the view and the accounting are the same for every policy. Not the other logs: a
parallel job becomes one task per processor, and an 81-core pool facing LCG's 188,041 jobs in 11
days holds a backlog of about 10^5 tasks that every decision scans (over 10 minutes; KTH and
NASA take 24 and 27 s).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import SOURCES_JOBS, cloudbroker, trace_path

#: Every command that reads a trace, as a user would run it on a whole log.
COMMANDS: dict[str, tuple[str, ...]] = {
    "simulate FCFS-LD": ("simulate", "--policy", "FCFS-LD"),
    "simulate CoH": ("simulate",),
    "plan-reservations": ("plan-reservations",),
    "leasing constant": ("leasing", "--policy", "constant:31"),
    "cluster": ("cluster",),
    "advise": ("advise",),
}
#: The elastic pool's run, on the log it applies to.
ELASTIC = ("LPC-EGEE-2004-1.2-cln.swf.gz", "elastic", ("elastic", "--policy", "fcfs"))

RUNS = [(t, c) for t in sorted(SOURCES_JOBS) for c in COMMANDS] + [ELASTIC[:2]]
_COUNTS: dict[str, dict] = {}


@pytest.fixture(scope="module", autouse=True)
def _write_counts():
    yield
    where = os.environ.get("CLOUDBROKER_ARTIFACTS")
    if where and _COUNTS:
        Path(where).mkdir(parents=True, exist_ok=True)
        (Path(where) / "whole_traces.json").write_text(json.dumps(_COUNTS, indent=1, sort_keys=True))


@pytest.mark.slow
@pytest.mark.parametrize("filename", sorted(SOURCES_JOBS))
def test_trace_info_reads_every_line_of_a_shared_trace(filename: str) -> None:
    run = cloudbroker("trace", "info", str(trace_path(filename)), "--json")
    assert run.code == 0, run
    info = json.loads(run.out)
    assert info["jobs"] == SOURCES_JOBS[filename] and info["skipped"] == 0
    _COUNTS[f"{filename} trace info"] = {"jobs": info["jobs"], "flagged": info["flagged"]}


@pytest.mark.slow
@pytest.mark.parametrize(("filename", "command"), RUNS, ids=[f"{t.split('.')[0]}-{c}" for t, c in RUNS])
def test_every_command_runs_a_whole_shared_trace_with_its_defaults(filename: str, command: str) -> None:
    args = ELASTIC[2] if (filename, command) == ELASTIC[:2] else COMMANDS[command]
    run = cloudbroker(*args, "--trace", str(trace_path(filename)), "--json")
    assert run.code == 0 and "Traceback" not in run.err, run
    payload = json.loads(run.out)
    assert payload["jobs_in"] == SOURCES_JOBS[filename] and payload["lines_skipped"] == {}
    assert sum(payload["jobs_removed"].values()) + payload["jobs_kept"] == payload["jobs_in"]
    _COUNTS[f"{filename} {command}"] = {k: payload[k] for k in ("jobs_in", "jobs_removed", "jobs_kept",
                                                                "jobs_flagged")}
