"""Shared fixtures: where the real traces are (``../shared/traces`` beside the checkout), a toy solver backend."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# pytest-xdist workers share the machine's cores: one OpenMP thread each (as joblib gives its loky
# workers), else scikit-learn's spinning thread pools oversubscribe them (gradient boosting ran 9x slower)
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
TRACES_DIR = REPO_ROOT.parent / "shared" / "traces"
#: The spot timelines and the spot advisor's data (../shared/spot/SOURCES.md).
SPOT_DIR = REPO_ROOT.parent / "shared" / "spot"
#: The paper's nine p3.2xlarge zones (195 s ticks, 20,158 each).
P3_ZONES_DIR = SPOT_DIR / "skypilot-spot-traces" / "availability" / "1-node" / "aws-02-15-2023"

#: Job counts (data lines) of the shared traces, from ../shared/traces/SOURCES.md.
SOURCES_JOBS = {
    "KTH-SP2-1996-2.1-cln.swf.gz": 28_476,
    "SDSC-SP2-1998-4.2-cln.swf.gz": 59_715,
    "SDSC-BLUE-2000-4.2-cln.swf.gz": 243_306,
    "LCG-2005-1.swf.gz": 188_041,
    "LPC-EGEE-2004-1.2-cln.swf.gz": 234_889,
    "LLNL-Atlas-2006-2.1-cln.swf.gz": 43_778,
    "NASA-iPSC-1993-3.1-cln.swf.gz": 18_239,
    "OSC-Clust-2000-3.1-cln.swf.gz": 36_097,
    "lublin_256.swf.gz": 10_000,
}


def without_timing(value: Any) -> Any:
    """Drop measured wall times (keys ending in ``wall_s``): the only fields identical runs may differ in."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if not k.endswith("wall_s")}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def trace_path(filename: str) -> Path:
    """Path of a shared trace; fails the test (never skips) when the trace is missing."""
    path = TRACES_DIR / filename
    if not path.exists():
        pytest.fail(f"shared trace {path} is missing: tests need ../shared/traces beside the checkout")
    return path


def spot_path(relative: str) -> Path:
    """Path of a file under ../shared/spot; fails the test (never skips) when it is missing."""
    path = SPOT_DIR / relative
    if not path.exists():
        pytest.fail(f"shared spot data {path} is missing: tests need ../shared/spot beside the checkout")
    return path


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    if not TRACES_DIR.is_dir():
        pytest.fail(f"{TRACES_DIR} is missing: tests need ../shared/traces beside the checkout")
    return TRACES_DIR


@dataclass(frozen=True)
class CliRun:
    """What ``cloudbroker`` did: its exit status, stdout and stderr."""

    code: int
    out: str
    err: str


def cloudbroker(*args: str) -> CliRun:
    """Run the ``cloudbroker`` entry point (:func:`broker.cli.main`) in this process, capturing its output."""
    from broker.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return CliRun(code, out.getvalue(), err.getvalue())


@pytest.fixture
def toy_solver() -> Iterator[str]:
    """The toy backend (``tests/solvers/toy.py``) registered for one test; its name."""
    from solvers.base import register_solver, unregister_solver
    from tests.solvers.toy import NAME, TARGET

    register_solver(NAME, TARGET)
    try:
        yield NAME
    finally:
        unregister_solver(NAME)
