"""What an elastic-pool run measured: the paper's Tables 2-5 figures, the pool's use, and the log's own schedule.

The statistics leave out the first and last ``trim`` jobs by submission (the paper drops 500 at each
end, the ramp-up and draining). Per class (interactive: run time below 900 s): the responsiveness
``W`` (mean, standard deviation, share above 0.9); for interactive jobs the queueing delay (mean,
standard deviation, share over 2 minutes). For the pool: utilization (the execution time of every
job over the pool's core-seconds from the first submission to the last termination), mean and peak
cores, core-hours, and the pool against the demand (:func:`size_against_demand`: the correlation of the
pool's size with the running + waiting jobs, sampled every ``DEMAND_STEP_S``). How often a decision with a
choice took the oldest waiting job
(``share_oldest_first``: 1 for FCFS), and how often a decision with both classes waiting took an interactive
job (``share_interactive_when_both``: the signature of the paper's reward, issue 34). Fairness: the mean of ``F``
(:func:`broker.elastic.rewards.fairness`, with each
job's actual run time) at each counted job's start, replayed from the schedule.

:func:`native_figures` gives the same job figures for the schedule the log itself recorded (its
wait times): the paper's "nat" row. A figure that cannot be computed is ``None`` and its reason is
under ``undefined``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from broker.elastic.rewards import fairness, responsiveness, target_shares
from broker.elastic.world import ElasticWorld
from broker.sim.result import Result, SummaryMixin
from workloads.cores import CoreJobs

#: An interactive job that waits longer than this is not answered "quickly" (the paper's 2 minutes).
QUICK_S = 120.0
#: How often the pool's size is compared with the demand (s).
DEMAND_STEP_S = 300.0
#: The responsiveness the paper counts jobs above.
W_GOOD = 0.9
#: The job figures, in the order a table prints them.
JOB_FIGURES = ("w_interactive_mean", "w_interactive_std", "w_batch_mean", "w_batch_std", "wait_interactive_mean_s",
               "wait_interactive_std_s", "wait_batch_mean_s", "share_interactive_wait_over_120s",
               "share_interactive_w_over_0_9", "share_batch_w_over_0_9", "fairness_mean")


@dataclass(frozen=True, slots=True)
class ElasticSummary(SummaryMixin):
    """Headline figures of one elastic-pool run (times in seconds; see the module docstring)."""

    policy: str
    mode: str
    lam: float
    estimate: str
    cores: int
    min_cores: int
    max_cores: int | None
    jobs: int
    jobs_counted: int
    decisions: int
    figures: dict[str, float | None]
    utilization: float
    mean_cores: float
    peak_cores: int
    resizes: int
    core_hours: float
    span_s: float
    share_oldest_first: float | None = None
    trainings: int = 0
    reward: str = "paper"
    share_interactive_when_both: float | None = None
    demand_mean: float | None = None
    size_demand_corr: float | None = None
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain values, the job figures at the top level."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "figures"}
        return {**out, **self.figures}


def counted(n: int, trim: int) -> np.ndarray:
    """The mask of jobs kept in the statistics: all but the first and last ``trim`` (by submission)."""
    mask = np.zeros(n, dtype=bool)
    mask[trim:n - trim] = True
    return mask


def job_figures(runtime: np.ndarray, wait: np.ndarray, interactive: np.ndarray, fair: np.ndarray,
                keep: np.ndarray) -> tuple[dict[str, float | None], dict[str, str]]:
    """The job figures of the ``keep`` jobs; ``None`` with a reason where a class has no job."""
    w = responsiveness(runtime, wait)
    out: dict[str, float | None] = {}
    undefined: dict[str, str] = {}
    for label, mask in (("interactive", keep & interactive), ("batch", keep & ~interactive)):
        if mask.any():
            out[f"w_{label}_mean"], out[f"w_{label}_std"] = float(w[mask].mean()), float(w[mask].std())
            out[f"share_{label}_w_over_0_9"] = float((w[mask] > W_GOOD).mean())
            out[f"wait_{label}_mean_s"] = float(wait[mask].mean())
            if label == "interactive":
                out["wait_interactive_std_s"] = float(wait[mask].std())
                out["share_interactive_wait_over_120s"] = float((wait[mask] > QUICK_S).mean())
        else:
            names = [f"w_{label}_mean", f"w_{label}_std", f"share_{label}_w_over_0_9", f"wait_{label}_mean_s"]
            if label == "interactive":
                names += ["wait_interactive_std_s", "share_interactive_wait_over_120s"]
            for name in names:
                out[name] = None
                undefined[name] = f"no {label} job among the counted ones"
    if keep.any():
        out["fairness_mean"] = float(fair[keep].mean())
    else:
        out["fairness_mean"] = None
        undefined["fairness_mean"] = "no counted job"
    return {name: out[name] for name in JOB_FIGURES}, undefined


def fairness_at_starts(start: np.ndarray, runtime: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """``F`` of each job at its start (its actual run time counted), replaying the schedule's starts and ends.

    Jobs starting at one instant are elected in job order, each seeing the ones before it; a job
    ending at an instant has ended for a job starting then.
    """
    shares = target_shares(runtime, group, groups)
    served, count, start_sum = np.zeros(groups), np.zeros(groups), np.zeros(groups)
    ends: list[tuple[float, int]] = []
    out = np.empty(len(start))
    for j in np.lexsort((np.arange(len(start)), start)):
        t = float(start[j])
        while ends and ends[0][0] <= t:
            _, k = heapq.heappop(ends)
            g = group[k]
            served[g] += runtime[k]
            count[g] -= 1
            start_sum[g] -= start[k]
        g = group[j]
        out[j] = fairness(served + count * t - start_sum, shares, int(g), float(runtime[j]))
        count[g] += 1
        start_sum[g] += t
        heapq.heappush(ends, (t + float(runtime[j]), int(j)))
    return out


def summarize(world: ElasticWorld, *, policy: str, lam: float, trim: int = 500,
              trainings: int = 0, reward: str = "paper") -> Result[ElasticSummary]:
    """The result of a finished run of ``world``."""
    jobs, pool = world.jobs, world.pool
    n = len(jobs)
    wait = world.start - jobs.submit
    fair = fairness_at_starts(world.start, jobs.runtime, jobs.group, jobs.n_groups)
    keep = counted(n, trim)
    figures, undefined = job_figures(jobs.runtime, wait, world.interactive, fair, keep)
    end = float(world.end.max()) if n else world.t0
    core_s = world.core_seconds(end)
    span = end - world.t0
    sizes = [s for _, s in world.sizes]
    demand, corr = size_against_demand(jobs.submit, world.end, world.sizes, world.t0, end)
    undefined = dict(undefined)
    if not world.mixed:
        undefined["share_interactive_when_both"] = "no decision had both classes waiting"
    if corr is None:
        undefined["size_demand_corr"] = ("the pool's size or the demand never changed" if pool.elastic
                                         else "a rigid pool keeps its size")
    summary = ElasticSummary(
        policy=policy, mode="elastic" if pool.elastic else "rigid", lam=lam, estimate=pool.estimate,
        cores=pool.cores, min_cores=pool.min_cores if pool.elastic else pool.cores,
        max_cores=None if pool.no_ceiling else pool.ceiling,
        jobs=n, jobs_counted=int(keep.sum()), decisions=world.decisions, figures=figures,
        utilization=float(jobs.runtime.sum() / core_s) if core_s > 0 else 0.0,
        mean_cores=core_s / span if span > 0 else float(world.size), peak_cores=max(sizes),
        resizes=len(sizes) - 1, core_hours=core_s / 3600.0, span_s=span,
        share_oldest_first=world.oldest_first / world.contested if world.contested else None, trainings=trainings,
        reward=reward, demand_mean=demand, size_demand_corr=corr,
        share_interactive_when_both=world.mixed_interactive / world.mixed if world.mixed else None,
        undefined=undefined if world.contested else {**undefined, "share_oldest_first": "no decision had a choice"})
    table = pd.DataFrame({"job_id": jobs.ids, "submit": jobs.submit, "start": world.start, "end": world.end,
                          "wait": wait, "runtime": jobs.runtime, "group": np.asarray(jobs.groups)[jobs.group]
                          if jobs.groups else jobs.group, "interactive": world.interactive,
                          "w": responsiveness(jobs.runtime, wait), "fairness": fair, "counted": keep})
    return Result(summary, table, pool_periods(world.sizes, end))


Sizes = list[tuple[float, int]] | tuple[tuple[float, int], ...]


def size_against_demand(submit: np.ndarray, end: np.ndarray, sizes: Sizes, t0: float, t1: float,
                        step_s: float = DEMAND_STEP_S) -> tuple[float | None, float | None]:
    """The mean demand (running + waiting jobs) and its correlation with the pool's size.

    Both are sampled every ``step_s`` from ``t0`` to ``t1`` (s); the correlation is ``None`` when
    either is constant, both ``None`` for an empty span.
    """
    if not t1 > t0:
        return None, None
    grid = np.arange(t0, t1, step_s)
    demand = (np.searchsorted(np.sort(submit), grid, side="right")
              - np.searchsorted(np.sort(end), grid, side="right")).astype(np.float64)
    times = np.array([t for t, _ in sizes])
    size = np.array([c for _, c in sizes], dtype=np.float64)[np.searchsorted(times, grid, side="right") - 1]
    if demand.std() == 0 or size.std() == 0:
        return float(demand.mean()), None
    return float(demand.mean()), float(np.corrcoef(size, demand)[0, 1])


def pool_periods(sizes: list[tuple[float, int]], end: float) -> pd.DataFrame:
    """One row per period of constant size: ``start_s``, ``end_s``, ``cores``, ``core_s``."""
    starts = [t for t, _ in sizes]
    ends = [*starts[1:], max(end, starts[-1])]
    cores = [c for _, c in sizes]
    frame = pd.DataFrame({"start_s": starts, "end_s": ends, "cores": cores})
    frame["core_s"] = (frame["end_s"] - frame["start_s"]) * frame["cores"]
    return frame


def native_figures(jobs: CoreJobs, interactive_s: float = 900.0,
                   trim: int = 500) -> tuple[dict[str, float | None], dict[str, str], int]:
    """The job figures of the schedule the log recorded (its own waits), and how many counted jobs had no wait.

    Counted jobs without a recorded wait are left out of the figures (and counted); with none left,
    every figure is ``None``.
    """
    wait = jobs.native_wait
    known = ~np.isnan(wait)
    keep = counted(len(jobs), trim)
    missing = int((keep & ~known).sum())
    if not (keep & known).any():
        why = "the log records no wait for the counted jobs" if keep.any() else "no counted job"
        return dict.fromkeys(JOB_FIGURES), dict.fromkeys(JOB_FIGURES, why), missing
    start = jobs.submit + np.where(known, wait, 0.0)
    fair = fairness_at_starts(start, jobs.runtime, jobs.group, jobs.n_groups)
    figures, undefined = job_figures(jobs.runtime, np.where(known, wait, 0.0), jobs.runtime < interactive_s, fair,
                                     keep & known)
    return figures, undefined, missing
