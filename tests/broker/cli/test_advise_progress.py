"""``cloudbroker advise`` shows a progress bar on a terminal, and nothing of it in a pipe (issue 31)."""

from __future__ import annotations

import subprocess
import sys

from tests.broker.cli.test_leasing_progress import on_a_terminal
from tests.conftest import REPO_ROOT, trace_path

KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
#: 500 tuning and 2,000 evaluated entries: 5,000 predictions, the wait's then the run time's.
ARGS = ["-c", "import sys; from broker.cli import main; sys.exit(main(sys.argv[1:]))", "advise", "--trace", KTH,
        "--skip", "2000", "--evaluate", "2000", "--speed", "linear:0.1"]


def test_a_progress_bar_on_a_terminal_and_none_in_a_pipe() -> None:
    shown = on_a_terminal(ARGS)
    assert "advising" in shown and "5000/5000" in shown and "2500/5000" in shown  # it moved through both labels
    piped = subprocess.run([sys.executable, *ARGS, "--json"], capture_output=True, text=True, cwd=REPO_ROOT,
                           check=True)
    assert "/5000" not in piped.stderr and "advising" not in piped.stderr
