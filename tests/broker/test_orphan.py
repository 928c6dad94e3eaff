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


def fresh_env() -> dict[str, str]:
    """The environment as it is now (not at import), so a child sees what this process sees."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}


def test_a_process_whose_name_holds_a_parenthesis_is_read_past_its_last_one() -> None:
    me = orphan.launcher()
    assert me is not None
    code = "import time; open('/proc/self/comm', 'w').write('x) 1 2 3'); print(flush=True); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        child.stdout.readline()
        text = Path(f"/proc/{child.pid}/stat").read_text()
        assert "(x) 1 2 3)" in text
        assert orphan.identify(child.pid) == (child.pid, text.rpartition(")")[2].split()[19])
        assert orphan.descends_from(me, child.pid)
    finally:
        child.kill()
        child.wait()


def test_descent_of_a_pid_without_a_process_is_false() -> None:
    me = orphan.launcher()
    assert me is not None
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not orphan.descends_from(me, gone.pid)


# In a child of the test process: which guards start a watch, and the watch thread that runs.
GUARDS = """
import os, sys, threading, time
from broker import orphan
me, owner, gone = orphan.launcher(), orphan.identify(os.getppid()), (int(sys.argv[1]), "1")
print(orphan.guard(me, local=True), orphan.guard(gone), orphan.guard(owner), orphan.guard(owner),
      orphan.guard(owner, local=True), flush=True)
time.sleep(2 * orphan.EVERY)
print(sorted((t.name, t.daemon) for t in threading.enumerate() if t is not threading.main_thread()), flush=True)
"""


def test_guards_in_a_child_start_one_daemon_watch_of_the_live_parent_and_let_it_end() -> None:
    assert not orphan.guard(None)  # no owner, nothing to watch
    assert orphan.local_guard(None) is None
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    run = subprocess.run([sys.executable, "-c", GUARDS, str(gone.pid)], env=fresh_env(), capture_output=True,
                         text=True, timeout=30)  # a non-daemon watch would keep it alive: TimeoutExpired
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.splitlines() == ["False False True False False", "[('cloudbroker-orphan-guard', True)]"]


def test_a_local_guard_of_a_launcher_already_gone_exits_with_a_warning() -> None:
    assert orphan.local_guard(None) is None
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    code = f"from broker import orphan; orphan.local_guard(({gone.pid}, '1')); print('still here')"
    run = subprocess.run([sys.executable, "-c", code], env=fresh_env(), capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (1, "")
    [said] = run.stderr.splitlines()  # one line: the warning, no traceback
    head, _, pid = said.removesuffix(" exits").rpartition(" worker ")
    assert (head, pid.isdigit(), said.endswith(" exits")) == (f"the sweep's process {gone.pid} is gone:", True, True)
