"""Shared fixtures: where the real traces are (``../shared/traces`` beside the checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TRACES_DIR = REPO_ROOT.parent / "shared" / "traces"


def trace_path(filename: str) -> Path:
    """Path of a shared trace; fails the test (never skips) when the trace is missing."""
    path = TRACES_DIR / filename
    if not path.exists():
        pytest.fail(f"shared trace {path} is missing: tests need ../shared/traces beside the checkout")
    return path


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    if not TRACES_DIR.is_dir():
        pytest.fail(f"{TRACES_DIR} is missing: tests need ../shared/traces beside the checkout")
    return TRACES_DIR
