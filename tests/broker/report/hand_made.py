"""Hand-made report inputs shared by the report's tests: a clock that stands still, a five-job trace and its
input, a copy of an input, the parts' estimates by hand, a page's command run in this process, a figure's data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from broker.report.model import ReportInput
from workloads.lublin import default_workload
from workloads.swf import SwfHeader
from workloads.swf_writer import write_swf


class Clock:
    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


def small_frame() -> pd.DataFrame:
    """Five jobs; three have a run time > 0 (A, B, C), D ran 0 s, E has no run time.

    A: submitted 0, waits 0, runs 7200 s on 4 allocated processors (user 1)
    B: submitted 1800, waits 1800, runs 1 s, no allocation, 2 requested (user 2)
    C: submitted 3600, waits 7200, runs 3600 s, no processor count (1 processor; user 1)
    """
    f = default_workload(seed=0, n_jobs=5)
    f["submit_time"] = pd.array([0, 1800, 3600, 7200, 100], dtype="Int64")
    f["wait_time"] = pd.array([0, 1800, 7200, 5, 5], dtype="Int64")
    f["run_time"] = pd.array([7200, 1, 3600, 0, None], dtype="Int64")
    f["allocated_procs"] = pd.array([4, None, None, 1, 1], dtype="Int64")
    f["requested_procs"] = pd.array([4, 2, None, 1, 1], dtype="Int64")
    f["user_id"] = pd.array([1, 2, 1, 3, 4], dtype="Int64")
    return f


def small_input(tmp_path: Path, frame: pd.DataFrame | None = None, header: SwfHeader | None = None,
                nodes: int = 4) -> ReportInput:
    f = small_frame() if frame is None else frame
    path = write_swf(f, tmp_path / "t.swf", {"MaxProcs": nodes})
    return ReportInput(path, f, SwfHeader(max_procs=nodes) if header is None else header, "t", "t.swf", nodes, 0)


def fresh(inp: ReportInput) -> ReportInput:
    return ReportInput(inp.path, inp.frame, inp.header, inp.label, inp.trace_arg, inp.nodes, inp.seed)


def est(part: str, n: float, runs: int = 1) -> float:
    """The estimate by hand: SECONDS_PER_JOB as the module's table gives it, 0.05 s fixed per run."""
    per_job = {"coh_trio": 8e-5, "coh_ipp": 2.8e-4, "coh_heuristic": 4.5e-5, "coh_r": 2.5e-4, "coh_spot": 1e-4,
               "leasing_constant": 1.5e-5, "leasing_qlearning": 9e-4, "advisor": 9e-4, "elastic_rule": 6e-5,
               "elastic_sarsa": 4e-4, "cluster_cell": 2.4e-5}[part]
    return runs * (0.05 + per_job * n + (1.4e-8 * n ** 2 if part == "elastic_sarsa" else 0.0))


def run_command(command: str) -> Any:
    """A command of the page, run in this process (the reference the page promises)."""
    import shlex

    from tests.conftest import cloudbroker

    args = shlex.split(command)
    assert args[0] == "cloudbroker"
    result = cloudbroker(*args[1:])
    assert result.code == 0, (command, result.err)
    return json.loads(result.out)


def data(line: Any, axis: str) -> list[float]:
    return np.asarray(line.get_xdata() if axis == "x" else line.get_ydata(), dtype=float).tolist()


def rgba(color: str) -> tuple[float, ...]:
    from matplotlib.colors import to_rgba

    return to_rgba(color)
