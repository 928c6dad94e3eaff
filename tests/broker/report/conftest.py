"""A report on the generated workload, built once per test process and shared by the report's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cloudbroker

#: The seed of the shared report.
SEED = 2


@pytest.fixture(scope="session")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "r"
    run = cloudbroker("report", "--out", str(out), "--seed", str(SEED))
    assert run.code == 0, run.err
    return out
