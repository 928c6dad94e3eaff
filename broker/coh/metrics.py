"""Run metrics (``SPEC.md`` §3) as a summary plus per-job and per-VM DataFrames.

Rental cost, the lower bound LB, cost/LB, utilization, VM-hours by type and wait times.
With reserved instances the cost is the billed units at each VM's own rate plus the run's share of
the upfront prices (``upfront * run hours / term hours``); ``cost_by_option`` splits the billed part
by billing option.

``LB = sum_i r_i (d_i - a_i) / w_k * c_k / BTU`` with ``(w_k, c_k)`` the most cost-efficient
type: an ideal VM that scales vertically and is charged exactly for what it uses (CoH §5.1).
Utilization is the capacity-time the jobs used over the capacity-time billed; the leased
variant divides by the time from boot start to release instead.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from broker.coh.world import RunRecord
from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from workloads.jobs import JobTable


@dataclass(frozen=True, slots=True)
class Summary:
    """Headline figures of one run ($, seconds, hours, fractions)."""

    policy: str
    jobs: int
    cost: float
    lower_bound: float
    cost_over_lb: float
    utilization: float
    utilization_leased: float
    vm_hours: dict[str, float]
    vms: dict[str, int]
    wait_mean_s: float
    wait_p95_s: float
    wait_max_s: float
    ticks: int
    events: int
    policy_stats: dict[str, Any] = field(default_factory=dict)
    upfront_amortized: float = 0.0
    cost_by_option: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RunResult:
    """A summary plus the per-job and per-VM tables."""

    summary: Summary
    jobs: pd.DataFrame
    vms: pd.DataFrame


def lower_bound(jobs: JobTable, catalog: Catalog, billing: Billing) -> float:
    """CoH's cost lower bound LB ($)."""
    k = catalog.most_cost_efficient()
    work = float(np.dot(jobs.r, jobs.runtime))
    return work / float(catalog.capacity[k]) * float(catalog.hourly[k]) / billing.btu


def job_frame(record: RunRecord) -> pd.DataFrame:
    """One row per job: times (s), requirement, the VM it ran on."""
    frame = record.jobs.to_frame().drop(columns="departure")
    frame["start"] = record.job_start
    frame["end"] = record.job_end
    frame["wait"] = record.job_start - record.jobs.arrival
    frame["vm_id"] = record.job_vm
    return frame


def vm_frame(record: RunRecord, billing: Billing) -> pd.DataFrame:
    """One row per VM: its ledger line plus billed hours and utilization."""
    frame = pd.DataFrame([asdict(v) for v in record.ledger])
    if frame.empty:
        return frame
    frame["billed_hours"] = frame["units"] * billing.btu / 3600.0
    frame["utilization"] = frame["busy_capacity_s"] / (frame["capacity"] * frame["units"] * billing.btu)
    return frame.sort_values("vm_id", ignore_index=True)


def summarize(record: RunRecord, catalog: Catalog, billing: Billing, *, policy: str) -> RunResult:
    """Build the summary and tables of a finished run."""
    jobs, vms = job_frame(record), vm_frame(record, billing)
    cost = (float(vms["cost"].sum()) if len(vms) else 0.0) + record.upfront
    lb = lower_bound(record.jobs, catalog, billing)
    used = float(np.dot(record.jobs.r, record.jobs.runtime))
    billed = float((vms["capacity"] * vms["units"]).sum() * billing.btu) if len(vms) else 0.0
    leased = float((vms["capacity"] * (vms["released_at"] - vms["boot_start"])).sum()) if len(vms) else 0.0
    wait = jobs["wait"].to_numpy()
    hours = vms.groupby("vm_type")["billed_hours"].sum() if len(vms) else pd.Series(dtype=float)
    counts = vms.groupby("vm_type").size() if len(vms) else pd.Series(dtype=int)
    by_option = vms.groupby("option")["cost"].sum() if len(vms) else pd.Series(dtype=float)
    summary = Summary(
        policy=policy, jobs=len(record.jobs), cost=round(cost, 10), lower_bound=lb,
        cost_over_lb=cost / lb if lb > 0 else float("nan"),
        utilization=used / billed if billed else float("nan"),
        utilization_leased=used / leased if leased else float("nan"),
        vm_hours={str(k): float(v) for k, v in hours.items()},
        vms={str(k): int(v) for k, v in counts.items()},
        wait_mean_s=float(wait.mean()) if len(wait) else 0.0,
        wait_p95_s=float(np.percentile(wait, 95)) if len(wait) else 0.0,
        wait_max_s=float(wait.max()) if len(wait) else 0.0,
        ticks=record.ticks, events=record.events, policy_stats=record.policy_stats,
        upfront_amortized=record.upfront, cost_by_option={str(k): float(v) for k, v in by_option.items()},
    )
    return RunResult(summary=summary, jobs=jobs, vms=vms)
