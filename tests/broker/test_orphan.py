"""The orphan guard: a worker knows the process that launched its sweep, and exits once it is killed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

from broker import orphan
from tests.conftest import REPO_ROOT

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE  # an orphan's zombie may stay
    except psutil.NoSuchProcess:
        return False


def ended_within(process: psutil.Process, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(process):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_process_is_its_pid_and_start_time() -> None:
    me = orphan.launcher()
    assert me is not None and me[0] == os.getpid()
    assert me[1] == Path(f"/proc/{os.getpid()}/stat").read_text().rpartition(")")[2].split()[19]
    assert orphan.identify(os.getpid()) == me  # the same process, looked at twice
    assert me[1].isdigit() and int(me[1]) >= int(orphan.identify(1)[1])  # started after init


def test_a_pid_without_a_process_has_no_identity() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert orphan.identify(child.pid) is None


def test_descent_is_by_pid_and_start_time() -> None:
    me = orphan.launcher()
    assert me is not None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert orphan.descends_from(me, child.pid)
        assert not orphan.descends_from(me)  # not from itself
        assert not orphan.descends_from((me[0], str(int(me[1]) + 1)), child.pid)  # a pid reused by another process
        assert not orphan.descends_from((child.pid, orphan.identify(child.pid)[1]))  # not from a child
        assert orphan.descends_from(orphan.identify(os.getppid()))  # from the parent
    finally:
        child.kill()
        child.wait()


def test_the_launcher_itself_and_a_stranger_are_not_watched() -> None:
    assert not orphan.guard(None)
    assert not orphan.guard(orphan.launcher())
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert not orphan.guard(orphan.identify(stranger.pid))  # a sibling, not an ancestor: a remote worker's case
    finally:
        stranger.kill()
        stranger.wait()


# A middle process starts a worker that guards it and prints whether the watch started (once only), then waits.
MIDDLE = """
import subprocess, sys
from broker import orphan
worker = subprocess.Popen([sys.executable, "-c", '''
import sys, time
from broker import orphan
owner = (int(sys.argv[1]), sys.argv[2])
print(orphan.guard(owner), orphan.guard(owner), flush=True)
time.sleep(60)
''', *map(str, orphan.launcher())])
print(worker.pid, flush=True)
worker.wait()
"""


def test_a_worker_exits_soon_after_its_launcher_is_killed() -> None:
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert middle.stdout is not None
        worker = psutil.Process(int(middle.stdout.readline()))
        assert middle.stdout.readline().split() == ["True", "False"]  # watched, once
        middle.kill()
        middle.wait()
        assert ended_within(worker, 3 * orphan.EVERY + 1)
    finally:
        if middle.poll() is None:
            middle.kill()


def test_a_worker_lives_while_its_launcher_does() -> None:
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert middle.stdout is not None
        worker = psutil.Process(int(middle.stdout.readline()))
        middle.stdout.readline()
        time.sleep(4 * orphan.EVERY)
        assert alive(worker)
    finally:
        middle.kill()
        middle.wait()


def test_a_local_worker_whose_launcher_is_already_gone_exits_at_once() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    code = f"from broker import orphan; orphan.local_guard(({gone.pid}, '1')); print('still here')"
    run = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (1, "")


LOCAL = """
import sys, time
from broker import orphan
owner = (int(sys.argv[1]), sys.argv[2])
print(orphan.guard(owner), orphan.guard(owner, local=True), orphan.guard(owner, local=True), flush=True)
time.sleep(60)
"""


def test_a_local_worker_watches_a_live_launcher_without_looking_at_its_ancestry() -> None:
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    owner = orphan.identify(stranger.pid)
    assert owner is not None
    worker = subprocess.Popen([sys.executable, "-c", LOCAL, *map(str, owner)], stdout=subprocess.PIPE, text=True,
                              env=ENV)
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().split() == ["False", "True", "False"]  # not an ancestor, yet watched once
        stranger.kill()
        stranger.wait()
        assert worker.wait(timeout=3 * orphan.EVERY + 5) == 1
    finally:
        for p in (stranger, worker):
            if p.poll() is None:
                p.kill()
