"""Ctrl-C in any command ends with one line, ``interrupted``, and exit status 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import typer

import broker.cli
from tests.broker.test_orphan import ENV
from tests.conftest import REPO_ROOT, cloudbroker

#: Ctrl-C as at a terminal (a process started in the background of a non-interactive shell ignores SIGINT).
CLI = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
       "from broker.cli import main; sys.exit(main())")


def _wrapped() -> None:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as exc:
        raise RuntimeError("a worker pool's own error") from exc


def _raise(what: BaseException) -> Any:
    def app(**_: Any) -> None:
        if isinstance(what, RuntimeError):
            _wrapped()
        raise what
    return app


@pytest.mark.parametrize("what", [KeyboardInterrupt(), typer.Abort(), RuntimeError("wrapped")],
                         ids=["keyboard-interrupt", "abort", "wrapped-by-a-library"])
def test_an_interruption_is_one_line_and_status_130(monkeypatch: pytest.MonkeyPatch, what: BaseException) -> None:
    monkeypatch.setattr(broker.cli, "app", _raise(what))
    run = cloudbroker("report", "--out", "x")
    assert (run.code, run.err, run.out) == (130, "interrupted\n", "")


def test_an_error_not_caused_by_an_interruption_is_still_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(broker.cli, "app", _raise(ValueError("x")))
    run = cloudbroker("report", "--out", "x")
    assert run.code == 1 and run.err.endswith(broker.cli.BUG + "\n")


def test_ctrl_c_in_report_says_interrupted_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-c", CLI, "report", "--out", str(out)], cwd=REPO_ROOT, env=ENV,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not (out / "workload.swf").exists():  # the report has begun its sections
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C at a terminal: the whole process group
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, err) == (130, "interrupted\n")
