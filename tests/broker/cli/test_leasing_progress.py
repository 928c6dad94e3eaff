"""A single ``cloudbroker leasing`` run shows a progress bar on a terminal, and nothing of it in a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.conftest import REPO_ROOT, trace_path

KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
ARGS = ["-c", "import sys; from broker.cli import main; sys.exit(main(sys.argv[1:]))", "leasing", "--trace", KTH,
        "--limit-jobs", "3000", "--policy", "qlearning"]


def on_a_terminal(args: list[str]) -> str:
    """What ``python args`` writes to a terminal (stdout and stderr), run to its end."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, *args], stdin=terminal, stdout=terminal, stderr=terminal,
                            cwd=REPO_ROOT, env={**os.environ, "COLUMNS": "120"})
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(controller)
    assert proc.returncode == 0
    return b"".join(chunks).decode(errors="replace")


def test_a_progress_bar_on_a_terminal_and_none_in_a_pipe() -> None:
    shown = on_a_terminal(ARGS)
    assert "leasing" in shown and "3000/3000" in shown and "500/3000" in shown  # the bar moved as jobs ended
    piped = subprocess.run([sys.executable, *ARGS, "--json"], capture_output=True, text=True, cwd=REPO_ROOT,
                           check=True)
    assert "/3000" not in piped.stderr and piped.stderr.count("\n") <= 1  # at most the view's counts
