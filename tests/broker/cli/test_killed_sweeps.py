"""A sweep stopped by Ctrl-C or killed outright leaves no worker running, and keeps the cells it finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.broker.test_orphan import ENV, alive, ended_within
from tests.conftest import REPO_ROOT, trace_path

#: Ctrl-C as at a terminal: a process started in the background of a non-interactive shell (as CI may
#: start the tests) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt.
CLI = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
       "from broker.cli import main; sys.exit(main())")


def start(*args: str) -> tuple[subprocess.Popen[bytes], list[psutil.Process]]:
    """Run ``cloudbroker ARGS`` in its own session; return it once its two workers are busy."""
    proc = subprocess.Popen([sys.executable, "-c", CLI, *args], cwd=REPO_ROOT, env=ENV, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    parent, deadline = psutil.Process(proc.pid), time.monotonic() + 90
    while True:
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the workers did not start within 90 s"
        busy = [p for p in parent.children(recursive=True) if p.cpu_percent(interval=0.05) > 20]
        if len(busy) >= 2:
            return proc, parent.children(recursive=True)
        time.sleep(0.2)


def sweep_args(store: Path, backend: str) -> list[str]:
    return ["leasing", "sweep", "--trace", str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz")), "--random-runs", "200",
            "--n-jobs", "2", "--backend", backend, "--store", str(store), "--json"]


@pytest.mark.parametrize("backend", ["loky", "dask"])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_no_worker_outlives_a_stopped_sweep(tmp_path: Path, backend: str, how: signal.Signals) -> None:
    proc, workers = start(*sweep_args(tmp_path / "store", backend))
    try:
        time.sleep(2)  # some cells finish (302: the unbounded reference, V = 0..100 and 200 random runs)
        proc.send_signal(how)  # the sweep's process only: its workers must notice by themselves
        code = proc.wait(timeout=30)
        left = [w for w in workers if not ended_within(w, 10)]
        assert left == [], [(w.pid, " ".join(w.cmdline())[:120]) for w in left if alive(w)]
    finally:
        for w in workers:
            if alive(w):
                w.kill()
    assert code == (-signal.SIGKILL if how == signal.SIGKILL else 130)
    if how == signal.SIGINT:
        assert proc.stderr is not None
        said = proc.stderr.read().decode().splitlines()
        kept = len(list((tmp_path / "store").glob("*.json")))
        assert said[-2:] == [f"{kept} of 302 cells kept in --store {tmp_path / 'store'}; the same command resumes",
                             "interrupted"]
    for cell in (tmp_path / "store").glob("*.json"):  # what finished is kept, whole
        assert json.loads(cell.read_text())["key"] == cell.stem


def test_cluster_sweep_workers_end_with_it(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[workload]\ntrace = "{trace_path("LPC-EGEE-2004-1.2-cln.swf.gz")}"\n'
                    '[[family]]\nname = "caps"\ncap = [5, 10, 20, 40, 80, 160, 320, 640]\n')
    proc, workers = start("cluster", "sweep", str(spec), "--out", str(tmp_path / "out"), "--n-jobs", "2")
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert [w.pid for w in workers if not ended_within(w, 10)] == []
    finally:
        for w in workers:
            if alive(w):
                w.kill()
