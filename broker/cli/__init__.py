"""The ``cloudbroker`` command line, one module per command (with the sweep store, what in ``broker`` writes files).

:func:`main` is the entry point: a refusal (a bad option, a bad input file, something unreachable)
is one line on stderr, ``error: ...``, and exit status 2; an interruption (Ctrl-C, in any command,
also when a library wraps it in an error of its own) is one line, ``interrupted``, and exit status
130; anything else that escapes is a bug, shown with its traceback and a request to report it (exit
status 1).
"""

from __future__ import annotations

import sys
import traceback

import typer

from broker.cli.app import app
from workloads.errors import CloudbrokerError

__all__ = ["app", "main"]

#: click's base of user-facing errors, as the installed typer bundles it (typer >= 0.20 vendors click).
ClickException: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
BUG = ("this is a bug in cloudbroker, not a problem with your input: please report it with the command line "
       "and the traceback above")


def main(argv: list[str] | None = None) -> int:
    """Run ``cloudbroker`` with ``argv`` (default: the process's arguments); the exit status."""
    try:
        status = app(args=argv, prog_name="cloudbroker", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        return _interrupted()
    except ClickException as exc:  # a bad option or argument
        ctx = getattr(exc, "ctx", None)
        where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        message = getattr(exc, "format_message", exc.__str__)() + _given(exc) + where
        return _refuse(message, int(getattr(exc, "exit_code", 2)))
    except CloudbrokerError as exc:
        return _refuse(str(exc))
    except Exception as exc:
        if _caused_by_interrupt(exc):  # e.g. a worker pool that reports the Ctrl-C as its own failure
            return _interrupted()
        traceback.print_exc()
        print(BUG, file=sys.stderr)
        return 1
    if status == 130:  # typer returns Ctrl-C as status 130 (no command of ours exits with it)
        return _interrupted()
    return status if isinstance(status, int) else 0


def _interrupted() -> int:
    print("interrupted", file=sys.stderr)
    return 130


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a ``KeyboardInterrupt`` is in ``exc``'s chain of causes and contexts."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


def _given(exc: BaseException) -> str:
    """``; got VALUE`` when the option's value was refused by typer's validation (which keeps the input)."""
    errors = getattr(exc.__cause__, "errors", None)
    if not callable(errors):
        return ""
    try:
        first = errors()[0]
    except (IndexError, TypeError):
        return ""
    return f"; got {first['input']!r}" if isinstance(first, dict) and "input" in first else ""


def _refuse(message: str, status: int = 2) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return status
