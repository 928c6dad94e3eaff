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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from broker.coh.world import RunRecord
from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from broker.sim.ledger import Ledger
from broker.sim.result import Result, SummaryMixin, wait_figures
from workloads.jobs import JobTable


@dataclass(frozen=True, slots=True)
class CohSummary(SummaryMixin):
    """Headline figures of one CoH run ($, seconds, hours, fractions).

    ``instances`` VMs were leased for ``instance_hours`` billed hours in all (``..._by_type`` per
    instance type); ``ticks`` decision ticks ran and the kernel handled ``events`` events.
    """

    policy: str
    jobs: int
    cost: float
    lower_bound: float
    cost_over_lb: float
    utilization: float
    utilization_leased: float
    instances: int
    instance_hours: float
    instances_by_type: dict[str, int]
    instance_hours_by_type: dict[str, float]
    wait_mean_s: float
    wait_p95_s: float
    wait_max_s: float
    ticks: int
    events: int
    policy_stats: dict[str, Any] = field(default_factory=dict)
    upfront_amortized: float = 0.0
    cost_by_option: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpotCohSummary(CohSummary):
    """A CoH run with spot VMs (:mod:`broker.coh.spot`): :class:`CohSummary` and the preemptions.

    ``preemptions`` spot VMs were preempted; jobs were placed again ``restarts`` times in all and
    lost ``lost_s`` seconds of run; the market's timeline was read again ``timeline_repeats`` times.
    ``cost_by_option`` has a ``spot`` part. ``vms_started`` counts the VMs no reservation covered by
    what they were started as: ``spot``, on demand as a ``fallback`` (the market had no room), or on
    demand for the jobs that may not or should not run on spot (``on_demand_jobs``).
    """

    preemptions: int = 0
    restarts: int = 0
    lost_s: float = 0.0
    timeline_repeats: int = 0
    vms_started: dict[str, int] = field(default_factory=dict)


#: A CoH run's result: :class:`CohSummary`, one row per job, one row per VM.
RunResult = Result[CohSummary]


def lower_bound(jobs: JobTable, catalog: Catalog, billing: Billing) -> float:
    """CoH's cost lower bound LB ($)."""
    k = catalog.most_cost_efficient()
    work = float(np.dot(jobs.r, jobs.runtime))
    return work / float(catalog.capacity[k]) * float(catalog.hourly[k]) / billing.btu


def job_frame(record: RunRecord, vms: pd.DataFrame) -> pd.DataFrame:
    """One row per job: ``job_id, submit, runtime, r, user, start, end, wait, instance_id, cost`` (times in s, $).

    ``cost`` is :func:`job_costs`. With spot VMs also ``restarts`` and ``lost_s``; ``start``, ``end``
    and ``instance_id`` are then the final run's, and ``wait`` is from submission to the final start.
    """
    jobs = record.jobs
    frame = pd.DataFrame({"job_id": jobs.job_id, "submit": jobs.arrival, "runtime": jobs.runtime, "r": jobs.r,
                          "user": jobs.user, "start": record.job_start, "end": record.job_end,
                          "wait": record.job_start - jobs.arrival, "instance_id": record.job_vm})
    if record.spot is not None:
        frame["restarts"], frame["lost_s"] = record.spot.restarts, record.spot.lost_s
    frame["cost"] = job_costs(record, vms)
    return frame


def job_costs(record: RunRecord, vms: pd.DataFrame) -> np.ndarray:
    """Each job's share ($) of the bills of the VMs it ran on, its runs cut short by preemptions included.

    A VM's billed cost (``vms["cost"]``: its units at its rate; reservations' upfront prices are
    not in it) is shared among the runs it hosted in proportion to ``r`` times the seconds each
    ran there (a run cut short by a preemption: the seconds it ran before it; a VM whose runs all
    ran 0 s: in equal parts), so a VM's idle time is paid by its jobs in the same proportions and
    the jobs' costs add up to the VMs' billed cost.
    """
    jobs, n = record.jobs, len(record.jobs)
    vm, job, seconds = [record.job_vm], [np.arange(n)], [record.job_end - record.job_start]
    if record.spot is not None and record.spot.cut:
        cut_vm, cut_job, cut_s = zip(*record.spot.cut, strict=True)
        vm.append(np.array(cut_vm, dtype=np.int64))
        job.append(np.array(cut_job, dtype=np.int64))
        seconds.append(np.array(cut_s, dtype=np.float64))
    vm_of, job_of, ran = np.concatenate(vm), np.concatenate(job), np.concatenate(seconds)
    placed = vm_of >= 0  # a job never placed (a run stopped early) has no VM and costs nothing
    vm_of, job_of = vm_of[placed], job_of[placed]
    work = jobs.r[job_of] * ran[placed]
    ids = vms["instance_id"].to_numpy(dtype=np.int64)
    row = np.searchsorted(ids, vm_of)  # the instance frame is by id
    busy = np.bincount(row, weights=work, minlength=len(ids))
    runs = np.bincount(row, minlength=len(ids)).astype(np.float64)
    share = np.where(busy[row] > 0, work / np.where(busy[row] > 0, busy[row], 1.0), 1.0 / runs[row])
    return np.bincount(job_of, weights=vms["cost"].to_numpy(dtype=np.float64)[row] * share, minlength=n)


def instance_frame(record: RunRecord, billing: Billing) -> pd.DataFrame:
    """One row per VM: its ledger record plus billed hours and utilization."""
    ledger = Ledger(billing)
    ledger.records = list(record.ledger)
    return ledger.frame()


def summarize(record: RunRecord, catalog: Catalog, billing: Billing, *, policy: str) -> RunResult:
    """Build the summary and tables of a finished run."""
    vms = instance_frame(record, billing)
    jobs = job_frame(record, vms)
    cost = float(vms["cost"].sum()) + record.upfront
    lb = lower_bound(record.jobs, catalog, billing)
    used = float(np.dot(record.jobs.r, record.jobs.runtime))
    billed = float((vms["capacity"] * vms["units"]).sum() * billing.btu)
    leased = float((vms["capacity"] * (vms["released_at"] - vms["hired_at"])).sum())
    wait_mean, wait_p95, wait_max = wait_figures(jobs["wait"].to_numpy())
    hours = vms.groupby("instance_type")["billed_hours"].sum()
    counts = vms.groupby("instance_type").size()
    summary_type, extra = _spot_fields(record)
    summary = summary_type(
        **extra, policy=policy, jobs=len(record.jobs), cost=round(cost, 10), lower_bound=lb,
        cost_over_lb=cost / lb if lb > 0 else float("nan"),
        utilization=used / billed if billed else float("nan"),
        utilization_leased=used / leased if leased else float("nan"),
        instances=len(vms), instance_hours=float(vms["billed_hours"].sum()),
        instances_by_type={str(k): int(v) for k, v in counts.items()},
        instance_hours_by_type={str(k): float(v) for k, v in hours.items()},
        wait_mean_s=wait_mean, wait_p95_s=wait_p95, wait_max_s=wait_max,
        ticks=record.ticks, events=record.events, policy_stats=record.policy_stats, upfront_amortized=record.upfront,
        cost_by_option={str(k): float(v) for k, v in vms.groupby("option")["cost"].sum().items()},
    )
    return Result(summary=summary, jobs=jobs, instances=vms)



def _spot_fields(record: RunRecord) -> tuple[type[CohSummary], dict[str, Any]]:
    """The summary's class and its spot figures (none for a run without spot)."""
    spot = record.spot
    if spot is None:
        return CohSummary, {}
    return SpotCohSummary, {"preemptions": spot.preemptions, "restarts": int(spot.restarts.sum()),
                            "lost_s": float(spot.lost_s.sum()), "timeline_repeats": spot.timeline_repeats,
                            "vms_started": dict(spot.started)}
