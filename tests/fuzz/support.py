"""Shared pieces of the fuzz tests: example budgets, a per-case time limit, the CLI invariant, SWF builders.

Every fuzz test comes as a pair made by :func:`fuzz_pair`: a quick variant (few examples, the default
run) and a ``slow`` one (the bulk, still run in CI). The example counts are one constant per test,
recorded in :data:`FAST_EXAMPLES` and :data:`SLOW_EXAMPLES` so ``test_budget.py`` can check the total.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import random
import re
import shlex
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO_ROOT, CliRun, cloudbroker
from workloads.schema import COLUMN_NAMES, INTEGER_COLUMNS

#: Examples of each fuzz test in the default run and in its ``slow`` variant, by test name.
FAST_EXAMPLES: dict[str, int] = {}
SLOW_EXAMPLES: dict[str, int] = {}
#: Wall-clock budget of one case (one reader call or one ``cloudbroker`` run), in seconds.
CASE_SECONDS = 15.0


def fuzz_pair(strategy: st.SearchStrategy[Any], check: Callable[[Any], None], *, fast: int,
              slow: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """Two hypothesis tests of ``check`` over ``strategy``: ``fast`` examples, and ``slow`` ones marked slow.

    Deterministic (``derandomize``, no example database) so that CI sees the same inputs every run.
    """
    name = check.__name__.lstrip("_")
    FAST_EXAMPLES[name], SLOW_EXAMPLES[name] = fast, slow

    def make(n: int, suffix: str) -> Callable[[], None]:
        @settings(max_examples=n, deadline=None, derandomize=True, database=None, print_blob=False,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def test(case: Any) -> None:
            check(case)

        test.__name__ = test.__qualname__ = f"test_{name}{suffix}"
        return test

    return make(fast, ""), pytest.mark.slow(make(slow, "_slow"))


class CaseTimeout(BaseException):
    """Raised by the alarm of :func:`time_limit`; a BaseException so that ``broker.cli.main`` does not swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Fail (AssertionError naming ``what``) when the body runs longer than ``seconds`` (SIGALRM)."""

    def alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except CaseTimeout:
        raise AssertionError(f"still running after {seconds:g} s (a hang?): {what}") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A fresh temporary directory, also the working directory (a stray relative output lands in it)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder, contextlib.chdir(folder):
        yield Path(folder)


def snapshot(folder: Path) -> dict[str, int]:
    """Every file and directory under ``folder`` (relative name -> size, -1 for a directory)."""
    return {str(p.relative_to(folder)): (-1 if p.is_dir() else p.stat().st_size) for p in folder.rglob("*")}


def _reject_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON (NaN and infinities are not part of the format)")


def strict_json(text: str) -> Any:
    """Parse ``text`` as one JSON document, refusing NaN / Infinity (which ``json.dumps`` writes by default)."""
    return json.loads(text, parse_constant=_reject_constant)


def project_warnings(caught: Sequence[warnings.WarningMessage]) -> list[str]:
    """The warnings raised from the project's own code (numpy's 'invalid value in cast' and the like)."""
    roots = [str(REPO_ROOT / d) for d in ("broker", "workloads", "heuristics", "solvers")]
    return [f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}" for w in caught
            if any(w.filename.startswith(r) for r in roots)]


def run_cli(args: Sequence[str], *, tmp: Path, seconds: float = CASE_SECONDS) -> CliRun:
    """Run ``cloudbroker args`` in-process and check the invariant every run must keep.

    Exit 0 (with ``--json``: stdout is one strict JSON document), or exit 2 with stderr exactly one
    line ``error: ...`` and nothing written under ``tmp``. Never exit 1 (a traceback: a bug), never an
    uncaught exception, never longer than ``seconds``, no warning from the project's code.
    """
    args = [str(a) for a in args]
    before = snapshot(tmp)
    command = f"cloudbroker {shlex.join(args)}"
    with time_limit(seconds, command), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = cloudbroker(*args)
    shown = f"{command}\nexit status {run.code}\n--- stderr:\n{run.err[-3000:]}\n--- stdout:\n{run.out[:1500]}"
    assert run.code in (0, 2), shown
    assert not project_warnings(caught), f"{shown}\n--- warnings:\n" + "\n".join(project_warnings(caught))
    if run.code == 0:
        if "--json" in args:
            try:
                strict_json(run.out)
            except ValueError as exc:
                raise AssertionError(f"--json output is not JSON ({exc})\n{shown}") from None
    else:
        lines = run.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) > len("error: "), shown
        assert snapshot(tmp) == before, f"a refusal left files behind: {sorted(set(snapshot(tmp)) - set(before))}\n" \
                                        f"{shown}"
    return run


def refused(run: CliRun, *needles: str) -> str:
    """The error line of a refused run, checked to mention every one of ``needles``."""
    assert run.code == 2, f"expected a refusal mentioning {needles}, got exit {run.code}\n{run.err}\n{run.out[:500]}"
    line = run.err.strip()
    for needle in needles:
        assert needle in line, f"the error does not mention {needle!r}: {line}"
    return line


# --- SWF files ---------------------------------------------------------------------------------------------------

#: The SWF number syntax: the reader accepts exactly this (then checks range and integrality).
SWF_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
MAX_EXACT_INT = 2**53
#: 9999-12-31T23:59:59Z, the last Unix time a Python datetime can show.
MAX_UNIX_TIME = 253_402_300_799


def token_problem(token: str) -> str | None:
    """What the reader must refuse in one field's token (None: it parses), from SWF's syntax, independently of it.

    Only syntax is refused: a token that parses as a number is read, and an odd value settled by its
    field's rule (:func:`settled`).
    """
    return None if SWF_NUMBER.fullmatch(token) else "is not a number"


#: The SWF v2.2 columns by kind, as the format documents them (times in seconds; counts of processors;
#: numbers that name something; a code).
TIME_NAMES = ("submit_time", "wait_time", "run_time", "requested_time", "think_time")
COUNT_NAMES = ("allocated_procs", "requested_procs")
STATUS_CODES = (-1, 0, 1, 2, 3, 4, 5)


def settled(value: float, column: int) -> float:
    """The value the reader must give for ``value`` read in ``column`` (0-based; -1: unknown), by the stated rules.

    Written from the rules of ``workloads/oddities.py``'s docstring, not from its code: a value that
    overflowed, or beyond 2**53 in an integer field, or negative other than -1, is unknown; a status
    other than the documented codes is unknown; a fraction of a second is rounded half up, a fraction
    of a processor up, a fraction of an id makes it unknown; a real field keeps any value >= 0.
    """
    name = COLUMN_NAMES[column]
    integral = INT_COLUMN[column]
    if not math.isfinite(value) or (integral and abs(value) > MAX_EXACT_INT) or (value < 0 and value != -1):
        return -1.0
    if name == "status":
        return value if value in STATUS_CODES else -1.0
    if not integral or value == int(value):
        return value
    if name in TIME_NAMES:
        return float(math.floor(value + 0.5))
    if name in COUNT_NAMES:
        return float(math.ceil(value))
    return -1.0


@dataclass
class SwfDoc:
    """An SWF file as lines, knowing which lines are jobs and what each job's fields hold."""

    lines: list[str] = field(default_factory=list)
    job_lines: list[int] = field(default_factory=list)  # 0-based indices into lines
    values: list[list[float]] = field(default_factory=list)  # per job, the 18 expected values (-1: unknown)
    header: dict[str, int | None] = field(default_factory=dict)  # typed header fields expected
    newline: str = "\n"
    compress: bool = False

    def data(self) -> bytes:
        raw = (self.newline.join(self.lines) + self.newline).encode("utf-8")
        return gzip.compress(raw, mtime=0) if self.compress else raw

    def write(self, folder: Path, name: str = "t.swf") -> Path:
        path = folder / name
        path.write_bytes(self.data())
        return path


INT_COLUMN = [name in INTEGER_COLUMNS for name in COLUMN_NAMES]


def int_token(rng: random.Random) -> tuple[str, float]:
    """A valid token of an integer column and its value, in the spellings SWF files use."""
    kind = rng.randrange(8)
    value = -1 if kind < 2 else rng.randint(0, 100) if kind < 5 else rng.randint(0, 10**7) if kind < 7 else \
        rng.randint(0, MAX_EXACT_INT)
    if 0 <= value < 10**6 and rng.random() < 0.3:
        return rng.choice([f"{value}.0", f"+{value}", f"{value}e0", f"{value}.", f"0{value}"]), float(value)
    return str(value), float(value)


def float_token(rng: random.Random) -> tuple[str, float]:
    """A valid token of a real column (``avg_cpu_time``, memory columns)."""
    kind = rng.randrange(6)
    if kind == 0:
        return "-1", -1.0
    value = rng.uniform(-1, 1e6) if kind < 4 else 10 ** rng.uniform(-300, 300) if kind < 5 else float(rng.randrange(99))
    spelled = rng.choice([repr(value), f"{value:.3f}", f"{value:g}"])
    return spelled, float(spelled)


def job_tokens(rng: random.Random) -> list[tuple[str, float]]:
    """The 18 (token, value) pairs of a valid job line."""
    return [int_token(rng) if integral else float_token(rng) for integral in INT_COLUMN]


HEADER_COUNTS = ("MaxJobs", "MaxRecords", "MaxNodes", "MaxProcs")


@st.composite
def header_lines(draw: st.DrawFn) -> tuple[list[str], dict[str, int | None]]:
    """A valid header block and the typed fields it gives."""
    lines = [draw(st.sampled_from(["; Version: 2.2", ";", "; Computer: IBM SP2", "; Note: a note"]))]
    expected: dict[str, int | None] = {}
    keys = draw(st.lists(st.sampled_from([*HEADER_COUNTS, "UnixStartTime"]), unique=True, max_size=5))
    for key in keys:
        value = draw(st.integers(0, 10**6) if key != "UnixStartTime" else st.integers(0, 2**31))
        pad = draw(st.sampled_from(["", "   "]))
        tail = draw(st.sampled_from(["", "  (dual)", " "]))
        lines.append(f";{pad} {key}: {value}{tail}")
        expected[key] = value
    return lines, expected


@st.composite
def swf_docs(draw: st.DrawFn, *, min_jobs: int = 0, max_jobs: int = 8) -> SwfDoc:
    """A valid SWF file: header, job lines with varied spacing, comments and blank lines between them."""
    header, expected = draw(header_lines())
    doc = SwfDoc(lines=list(header), header=expected)
    # one draw per job line (a seed): drawing each of the 18 tokens from hypothesis costs ~30 ms a file
    for seed in draw(st.lists(st.integers(0, 2**32), min_size=min_jobs, max_size=max_jobs)):
        rng = random.Random(seed)
        if rng.randrange(6) == 0:
            doc.lines.append(rng.choice(["", "; a comment", "   ", ";"]))
        tokens = job_tokens(rng)
        seps = rng.choices([" ", "  ", "\t", " \t "], weights=[8, 1, 1, 1], k=17)
        line = tokens[0][0] + "".join(s + t for s, (t, _) in zip(seps, tokens[1:], strict=True))
        line = rng.choice(["", "", " ", "\t"]) + line + rng.choice(["", "", " ", " ; note", "\t"])
        doc.job_lines.append(len(doc.lines))
        doc.lines.append(line)
        doc.values.append([v for _, v in tokens])
    doc.newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    doc.compress = draw(st.booleans())
    return doc


def tiny_trace(folder: Path, n_jobs: int = 12, *, max_procs: int | None = 8, start: int | None = 1_000_000_000,
               name: str = "tiny.swf", gap: int = 600, extra_header: Sequence[str] = ()) -> Path:
    """A small plausible SWF trace (completed jobs, 1-4 processors, arrivals ``gap`` s apart)."""
    lines = ["; Version: 2.2", *extra_header]
    if max_procs is not None:
        lines.append(f"; MaxProcs: {max_procs}")
    if start is not None:
        lines.append(f"; UnixStartTime: {start}")
    for i in range(1, n_jobs + 1):
        procs, run = 1 + i % 4, 300 + 97 * i % 5000
        lines.append(f"{i} {gap * i} 0 {run} {procs} {run * 0.9:.1f} -1 {procs} {run * 2} -1 1 {1 + i % 3} 1 -1 "
                     f"1 -1 -1 -1")
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path
