"""A report on the generated workload, built once per test process and shared by the report's tests; a small
generated input (300 jobs) for the sections' tests and the figures the sections draw, kept for inspection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker.report.model import ReportInput
from tests.conftest import cloudbroker
from workloads.lublin import default_workload
from workloads.swf import SwfHeader
from workloads.swf_writer import write_swf

#: The seed of the shared report.
SEED = 2


@pytest.fixture(scope="session")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "r"
    run = cloudbroker("report", "--out", str(out), "--seed", str(SEED))
    assert run.code == 0, run.err
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> ReportInput:
    frame = default_workload(seed=0, n_jobs=300)
    path = write_swf(frame, tmp_path_factory.mktemp("g") / "g.swf", {"MaxProcs": 256})
    return ReportInput(path, frame, SwfHeader(max_procs=256), "g", "g.swf", 256, 0)


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The matplotlib figures the sections turn into SVG, kept for inspection."""
    from broker.report import figures

    kept: list[Any] = []
    original = figures.svg

    def keep(fig: Any) -> str:
        kept.append(fig)
        return original(fig)

    monkeypatch.setattr(figures, "svg", keep)
    return kept
