"""Workers that outlive their sweep exit: the orphan guard of :func:`broker.sweep.run_sweep`.

A sweep stopped by Ctrl-C shuts its engine down on the way out. One whose process is killed
outright (SIGKILL, the out-of-memory killer) cannot: loky's worker processes would wait for work
that never comes, for minutes. So each worker, on its first cell (the CLI's loky workers as they
start, :func:`local_guard` being their initializer), starts a thread that watches the process that
launched the sweep and ends the worker (``os._exit``) once that process is gone.

A process is known by its pid and its start time (``/proc/PID/stat``), so a pid reused by a new
process does not pass for the launcher. Only workers that descend from the launcher on this machine
watch it: a worker of a remote Dask or Ray cluster is its engine's business. Where there is no
``/proc`` (not Linux) the guard does nothing.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

#: A process: its pid and its start time (clock ticks after boot, as ``/proc/PID/stat`` gives it).
Process = tuple[int, str]

#: Seconds between two looks at the launcher.
EVERY = 0.5

_watched: set[Process] = set()
_declined: set[Process] = set()  # owners found not to be this process's ancestors
_lock = threading.Lock()


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3 onwards), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def identify(pid: int) -> Process | None:
    """``(pid, start time)`` of a running process, or None (no such process, or no ``/proc``)."""
    fields = _stat(pid)
    return None if fields is None or len(fields) < 20 else (pid, fields[19])


def launcher() -> Process | None:
    """The calling process, as the workers of the sweep it launches will watch it."""
    return identify(os.getpid())


def descends_from(ancestor: Process, pid: int | None = None) -> bool:
    """Whether process ``pid`` (default: this one) is a descendant of ``ancestor``, itself excluded."""
    seen: set[int] = set()
    current = os.getpid() if pid is None else pid
    while current > 1 and current not in seen:
        seen.add(current)
        fields = _stat(current)
        if fields is None:
            return False
        current = int(fields[1])  # field 4: the parent's pid
        if current == ancestor[0]:
            return identify(current) == ancestor
    return False


def guard(owner: Process | None, *, local: bool = False) -> bool:
    """In a worker: watch ``owner`` (once per process) and exit when it is gone. True if a watch started.

    ``local``: the worker is known to be the owner's child on this machine (loky's initializer), so an
    owner already gone means this worker is an orphan (it exits at once); otherwise only a descendant
    of the owner watches it.
    """
    if owner is None or owner[0] == os.getpid():
        return False
    with _lock:  # every cell calls this: an owner already watched, or found not to be an ancestor, is settled
        if owner in _watched or (not local and owner in _declined):
            return False
    if local and identify(owner[0]) != owner:
        _exit(owner)
    if not local and not descends_from(owner):
        with _lock:
            _declined.add(owner)
        return False
    with _lock:
        if owner in _watched:
            return False
        _watched.add(owner)
    threading.Thread(target=_watch, args=(owner,), name="cloudbroker-orphan-guard", daemon=True).start()
    return True


def local_guard(owner: Process | None) -> None:
    """:func:`guard` for a worker started on this machine by ``owner`` (an executor's initializer)."""
    guard(owner, local=True)


def _watch(owner: Process) -> None:
    while identify(owner[0]) == owner:
        time.sleep(EVERY)
    _exit(owner)


def _exit(owner: Process) -> None:
    log.warning("the sweep's process %d is gone: worker %d exits", owner[0], os.getpid())
    os._exit(1)
