"""What a leasing run measured (``SPEC.md`` §5): the result shape, and the paper's balance against references.

A run's total wait ``twt_s`` and cloud CPU-seconds ``cloud_cpu_s`` are the site's integrals; the paper
normalizes them by two references over the same jobs, the wait with ``V = 0`` and the cloud use with
``V`` unbounded: ``twt% = 100 twt / twt(V=0)``, ``c% = 100 c / c(V=inf)``, ``balance = (100 - twt%) - c%``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from broker.hybrid.world import CLOUD, HybridWorld
from broker.sim.result import Result, SummaryMixin, wait_figures


@dataclass(frozen=True, slots=True)
class Balance:
    """The paper's normalized figures of a run against the two references (percent)."""

    twt_pct: float
    c_pct: float

    @property
    def twt_imp_pct(self) -> float:
        """Improvement of the total wait over local-only scheduling."""
        return 100.0 - self.twt_pct

    @property
    def balance(self) -> float:
        """``twt_imp% - c%``."""
        return self.twt_imp_pct - self.c_pct


def balance(twt: float, cost: float, twt_ref: float, c_ref: float) -> Balance:
    """Normalize ``(twt, c)`` by the V = 0 wait and the unbounded-V cloud use (0 % when a reference is 0).

    The 0 % is the learner's convention for a step without waits or without cloud use (its rewards
    need a number); a report says undefined instead (:func:`normalized`).
    """
    return Balance(100.0 * twt / twt_ref if twt_ref > 0 else 0.0, 100.0 * cost / c_ref if c_ref > 0 else 0.0)


def normalized(twt: float, cost: float, twt_ref: float, c_ref: float) -> dict[str, Any]:
    """The paper's figures of a run as a report gives them: ``None`` where a reference is 0, with the reason.

    ``twt_pct`` and ``twt_imp_pct`` are undefined when the V = 0 reference waits 0 s (there is no
    wait to improve), ``cost_pct`` when the unbounded reference uses no cloud node; ``balance`` when
    either is. ``undefined`` maps each undefined figure to its reason.
    """
    twt_pct = 100.0 * twt / twt_ref if twt_ref > 0 else None
    c_pct = 100.0 * cost / c_ref if c_ref > 0 else None
    undefined: dict[str, str] = {}
    if twt_pct is None:
        undefined.update(twt_pct="the V = 0 reference waits 0 s: no wait to improve",
                         twt_imp_pct="the V = 0 reference waits 0 s: no wait to improve")
    if c_pct is None:
        undefined["cost_pct"] = "the unbounded reference uses no cloud node"
    if undefined:
        undefined["balance"] = "twt_imp_pct or cost_pct is undefined"
    twt_imp = None if twt_pct is None else 100.0 - twt_pct
    return {"twt_pct": twt_pct, "cost_pct": c_pct, "twt_imp_pct": twt_imp,
            "balance": None if twt_imp is None or c_pct is None else twt_imp - c_pct, "undefined": undefined}


@dataclass(frozen=True, slots=True)
class LeasingSummary(SummaryMixin):
    """Headline figures of one leasing run (seconds; ``cloud_cpu_s`` in node-seconds; caps in nodes).

    ``caps`` is the cap ``V`` of every step; ``clones_simulated`` counts the site runs the policy
    needed (one a step for fixed caps, one per distinct clone for the learners).
    """

    policy: str
    jobs: int
    nodes: int
    discipline: str
    step_s: float
    twt_s: float
    cloud_cpu_s: float
    cloud_jobs: int
    wait_mean_s: float
    wait_p95_s: float
    wait_max_s: float
    clones_simulated: int
    caps: list[float] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LeasingResult(Result[LeasingSummary]):
    """A leasing run: the summary, jobs (where and when each ran) and the cloud leases (``instances``).

    ``steps`` has one row per step (its start, cap, and the site's cumulative ``twt_s`` and
    ``cloud_cpu_s`` at its end); ``q`` the learner's final action values (``None`` for fixed caps).
    """

    steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    q: np.ndarray | None = None


def summarize(world: HybridWorld, start: np.ndarray, site: np.ndarray, steps: pd.DataFrame, *, policy: str,
              step_s: float, simulated: int, q: np.ndarray | None) -> LeasingResult:
    """The result of a finished run from its world and the per-job starts and sites the driver recorded."""
    jobs = world.jobs
    wait = start - jobs.submit
    cloud = np.flatnonzero(site == CLOUD)
    lease = np.full(len(jobs), -1, dtype=np.int64)
    lease[cloud] = np.arange(len(cloud))
    frame = pd.DataFrame({"submit": jobs.submit, "start": start, "end": start + jobs.runtime, "wait": wait,
                          "site": np.where(site == CLOUD, "cloud", "local"), "nodes": jobs.nodes,
                          "runtime": jobs.runtime, "estimate": jobs.estimate, "instance_id": lease})
    leases = pd.DataFrame({"instance_id": np.arange(len(cloud)), "job": cloud, "nodes": jobs.nodes[cloud],
                           "hired_at": start[cloud], "released_at": start[cloud] + jobs.runtime[cloud],
                           "cloud_cpu_s": jobs.nodes[cloud] * jobs.runtime[cloud]})
    wait_mean, wait_p95, wait_max = wait_figures(wait)
    caps = [float(c) for c in steps["cap"]] if len(steps) else []
    summary = LeasingSummary(policy=policy, jobs=len(jobs), nodes=world.cluster.m, discipline=world.cluster.discipline,
                             step_s=step_s, twt_s=world.wait_s, cloud_cpu_s=world.cloud_cpu_s, cloud_jobs=len(cloud),
                             wait_mean_s=wait_mean, wait_p95_s=wait_p95, wait_max_s=wait_max,
                             clones_simulated=simulated, caps=caps)
    return LeasingResult(summary=summary, jobs=frame, instances=leases, steps=steps, q=q)


def cumulative_balance(run: LeasingResult, ref0: LeasingResult, refinf: LeasingResult) -> np.ndarray:
    """The balance of ``run`` so far after each step, against the references so far (Figure 6)."""
    steps = min(len(run.steps), len(ref0.steps), len(refinf.steps))
    twt, cpu = run.steps["twt_s"].to_numpy(), run.steps["cloud_cpu_s"].to_numpy()
    twt0, cpu_inf = ref0.steps["twt_s"].to_numpy(), refinf.steps["cloud_cpu_s"].to_numpy()
    return np.array([balance(twt[i], cpu[i], twt0[i], cpu_inf[i]).balance for i in range(steps)])
