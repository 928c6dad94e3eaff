"""Rigid parallel jobs for a space-shared cluster (``SPEC.md`` §5): width, run time, requested time.

A job's width is SWF field 5 (allocated processors), or field 8 (requested) when 5 is unknown: the
allocated count is what the job held on the real machine. Its estimate is field 9 (requested
time), the only run time a scheduler knows in advance; where a log has none, the actual run time
stands in and the jobs are counted. Jobs with an unknown submit time, an unknown or negative run
time, no processor count, or wider than the cluster are removed and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from workloads.errors import InputError
from workloads.jobs import FilterReport, check_rows, count_kept, filter_rows, partial_executions


@dataclass(frozen=True, slots=True)
class RigidJobs:
    """Jobs sorted by ``submit`` (s): ``nodes`` (>= 1), actual ``runtime`` and requested ``estimate`` (s).

    ``ids`` names each job in its source (the SWF job number, so results join back to the trace);
    left empty, a job's id is its position.
    """

    submit: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    nodes: np.ndarray
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def __post_init__(self) -> None:
        if not len(self.ids):
            object.__setattr__(self, "ids", np.arange(len(self.submit), dtype=np.int64))
        n = check_rows(self, "submit", ("runtime", "estimate", "nodes", "ids"))
        if n and (np.any(self.nodes < 1) or np.any(self.runtime < 0) or np.any(self.estimate < 0)):
            raise InputError("RigidJobs need nodes >= 1 and non-negative run times and estimates")

    def __len__(self) -> int:
        return len(self.submit)

    def head(self, n: int) -> RigidJobs:
        """The first ``n`` jobs (by submit time)."""
        return RigidJobs(self.submit[:n], self.runtime[:n], self.estimate[:n], self.nodes[:n], self.ids[:n])


def rigid_view(trace: pd.DataFrame, *, nodes: int) -> tuple[RigidJobs, FilterReport]:
    """The jobs of an SWF trace for an ``nodes``-node cluster (see the module docstring)."""
    width = trace["allocated_procs"].where(trace["allocated_procs"] > 0, trace["requested_procs"])
    parts, alone = partial_executions(trace)
    checks = {
        **parts,
        "submit time unknown": trace["submit_time"].isna(),
        "run time unknown or < 0": trace["run_time"].isna() | (trace["run_time"] < 0),
        "processors unknown": width.isna() | (width <= 0),
        f"wider than {nodes} nodes": width > nodes,
    }
    keep, removed = filter_rows(checks, len(trace))
    kept = trace[keep]
    unknown = kept["requested_time"].isna() | (kept["requested_time"] <= 0)  # NA compares to neither
    estimate = kept["requested_time"].where(~unknown, kept["run_time"])
    flagged = {"requested time unknown (run time used)": int(unknown.sum()), **count_kept(alone, keep)}
    order = np.argsort(kept["submit_time"].to_numpy(dtype=np.float64), kind="stable")
    jobs = RigidJobs(submit=kept["submit_time"].to_numpy(dtype=np.float64)[order],
                     runtime=kept["run_time"].to_numpy(dtype=np.float64)[order],
                     estimate=estimate.to_numpy(dtype=np.float64)[order],
                     nodes=width[keep].to_numpy(dtype=np.int64)[order],
                     ids=kept["job_id"].fillna(-1).to_numpy(dtype=np.int64)[order])
    return jobs, FilterReport(read=len(trace), kept=int(keep.sum()), removed=removed, kept_flagged=flagged)
