"""The bill of a cloud-cluster run and its result: instance periods, tiered egress, the per-user split.

The bill is instance periods x the hourly rate (the ledger) plus per-calendar-month tiered egress
(:mod:`broker.pricing.egress`) on the trace's clock; each user's share follows the paper's equation 6
(an instance's cost split by execution time on it; an instance that ran no job is charged to the user
whose waiting job started it) plus their bytes' share of each month's egress charge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from broker.pricing.egress import monthly_bill
from broker.sim.result import Result, SummaryMixin, wait_figures

if TYPE_CHECKING:
    from broker.cloudcluster.world import ClusterWorld


@dataclass(frozen=True, slots=True)
class ClusterSummary(SummaryMixin):
    """Headline figures of one cloud-cluster run ($, seconds, hours).

    ``cost = instance_cost + egress_cost``; ``egress_by_month`` maps ``"YYYY-MM"`` to that month's
    egress charge; overhead is time in system minus execution time.
    """

    jobs: int
    cost: float
    instance_cost: float
    egress_cost: float
    instances: int
    peak_instances: int
    instance_hours: float
    wait_mean_s: float
    wait_p95_s: float
    wait_max_s: float
    overhead_mean_s: float
    overhead_p95_s: float
    egress_by_month: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClusterResult(Result[ClusterSummary]):
    """A cloud-cluster run: the summary, jobs and instances, and ``users``, the per-user bill."""

    users: pd.DataFrame = field(default_factory=pd.DataFrame)


def peak(starts: np.ndarray, ends: np.ndarray) -> int:
    """The most intervals ``[start, end)`` open at once (0 for none)."""
    if not len(starts):
        return 0
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(len(starts)), -np.ones(len(ends))])
    order = np.lexsort((steps, times))  # an end at t before a start at t
    return int(np.cumsum(steps[order]).max())


def job_frame(world: ClusterWorld) -> pd.DataFrame:
    """One row per job: ``submit, start`` (got its instance), ``end`` (download done), ``wait``, ``overhead``, ..."""
    jobs = world.jobs
    return pd.DataFrame({"submit": jobs.submit, "start": world.begin, "end": world.done,
                         "wait": world.begin - jobs.submit, "overhead": world.done - jobs.submit - jobs.runtime,
                         "instance_id": world.on,
                         "user": jobs.user, "runtime": jobs.runtime, "input_bytes": jobs.input_bytes,
                         "output_bytes": jobs.output_bytes})


def instance_frame(world: ClusterWorld) -> pd.DataFrame:
    """The ledger, by instance id, with each instance's ``pool`` and ``starter`` (the user who started it)."""
    frame = world.ledger.frame()
    frame["pool"] = np.asarray(world.instances.pool, dtype=np.int64)[frame["instance_id"]]
    frame["starter"] = np.asarray(world.instances.starter, dtype=np.int64)[frame["instance_id"]]
    return frame


def user_bill(world: ClusterWorld, cost: np.ndarray, egress_share: np.ndarray) -> pd.DataFrame:
    """Each user's instance charge by the paper's equation 6, plus their egress share (``cost`` by instance id)."""
    jobs, on = world.jobs, world.on
    n_users = max(int(jobs.user.max()) + 1 if len(jobs) else 0, len(jobs.users))
    exec_on = np.bincount(on, weights=jobs.runtime, minlength=len(cost)) if len(jobs) else np.zeros(len(cost))
    share = np.divide(jobs.runtime, exec_on[on], out=np.zeros(len(jobs)), where=exec_on[on] > 0)
    instance = np.bincount(jobs.user, weights=cost[on] * share, minlength=n_users)
    unused = exec_on == 0
    starter = np.asarray(world.instances.starter, dtype=np.int64)
    instance += np.bincount(starter[unused], weights=cost[unused], minlength=n_users)
    egress = np.bincount(jobs.user, weights=egress_share, minlength=n_users)
    ids = list(jobs.users) if len(jobs.users) == n_users else list(range(n_users))
    return pd.DataFrame({"user": ids, "instance_cost": instance, "egress_cost": egress, "cost": instance + egress,
                         "exec_s": np.bincount(jobs.user, weights=jobs.runtime, minlength=n_users)})


def summarize(world: ClusterWorld) -> ClusterResult:
    """The result of a finished run."""
    jobs, terms = world.jobs, world.terms
    frame, instances = job_frame(world), instance_frame(world)
    by_month, egress_share = (monthly_bill(world.done, jobs.output_bytes, terms.egress, origin=jobs.origin)
                              if len(jobs) else ({}, np.zeros(0)))
    cost = instances["cost"].to_numpy()
    instance_cost, egress_cost = float(instances["cost"].sum()), float(sum(by_month.values()))
    wait_mean, wait_p95, wait_max = wait_figures(frame["wait"].to_numpy())
    overhead = frame["overhead"].to_numpy()
    summary = ClusterSummary(
        jobs=len(jobs), cost=instance_cost + egress_cost, instance_cost=instance_cost, egress_cost=egress_cost,
        instances=len(instances), peak_instances=peak(instances["hired_at"].to_numpy(),
                                                      instances["released_at"].to_numpy()),
        instance_hours=float(instances["billed_hours"].sum()), wait_mean_s=wait_mean, wait_p95_s=wait_p95,
        wait_max_s=wait_max, overhead_mean_s=float(overhead.mean()) if len(overhead) else 0.0,
        overhead_p95_s=float(np.percentile(overhead, 95)) if len(overhead) else 0.0,
        egress_by_month={str(np.datetime64(m, "M")): c for m, c in by_month.items()})
    return ClusterResult(summary=summary, jobs=frame, instances=instances, users=user_bill(world, cost, egress_share))
