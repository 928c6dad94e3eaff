"""Running the deadline world: one run, random starts on a market, the on-demand reference.

:func:`run_spot` drives a :class:`~broker.spot.world.SpotWorld` with a policy to its end.
:func:`run_starts` runs one job from ``n`` seeded random start ticks and returns one row per
start: a start is drawn so that the job's whole window lies inside the shortest timeline when it
can (otherwise from anywhere, and the timeline's repeats are counted in the row).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from broker.pricing.spot import SpotMarket
from broker.sim.recorder import Recorder
from broker.spot.policies import SPOT_POLICIES, SpotPolicy
from broker.spot.world import SpotJob, SpotRun, SpotWorld
from workloads.errors import ConfigError

#: The columns of :func:`run_starts`' rows.
START_COLUMNS = ("policy", "start", "cost", "cost_over_on_demand", "missed", "preemptions", "launches",
                 "timeline_repeats")


def make_policy(name: str) -> SpotPolicy:
    """A fresh policy by its registered name."""
    return SPOT_POLICIES.get(name)()


def run_spot(market: SpotMarket, jobs: Sequence[SpotJob], policy: str | SpotPolicy, *, start: int = 0,
             validate: bool = False, recorder: Recorder | None = None) -> SpotRun:
    """Drive one world from ``start`` with ``policy`` (a name or an instance) to its end."""
    pol = make_policy(policy) if isinstance(policy, str) else policy
    world = SpotWorld(market, jobs, start=start, validate=validate, recorder=recorder)
    while (decision := world.advance()) is not None:
        world.act(pol.decide(decision, world))
    return world.result()


def on_demand_cost(market: SpotMarket, job: SpotJob) -> float:
    """What the job costs on on-demand alone (the reference of ``cost_over_on_demand``, $)."""
    return run_spot(market, [job], "on-demand").cost


def start_ticks(market: SpotMarket, job: SpotJob, n: int, *, seed: int) -> list[int]:
    """``n`` seeded start ticks, each leaving the job's window inside the shortest timeline when it fits."""
    if n < 1:
        raise ConfigError(f"--starts must be >= 1, got {n}")
    shortest = min(len(z) for z in market.zones)
    span = math.ceil(job.deadline_s / market.gap_s) + 1
    high = shortest - span + 1 if shortest >= span else shortest
    return [int(s) for s in np.random.default_rng(seed).integers(0, high, size=n)]


def run_starts(market: SpotMarket, job: SpotJob, policies: Sequence[str], starts: Sequence[int], *,
               validate: bool = False) -> pd.DataFrame:
    """One row per (policy, start): cost, cost over on-demand, missed, preemptions, launches, repeats."""
    reference = on_demand_cost(market, job)
    rows = []
    for name in policies:
        for start in starts:
            run = run_spot(market, [job], name, start=start, validate=validate)
            rows.append((name, start, run.cost, run.cost / reference, run.deadline_misses, run.preemptions,
                         run.launches, run.timeline_repeats))
    return pd.DataFrame(rows, columns=list(START_COLUMNS))


def summarize(rows: pd.DataFrame) -> dict[str, float | int]:
    """Means over starts (``cost``, ``cost_over_on_demand``) and totals (misses, preemptions, repeats)."""
    return {"cost": float(rows["cost"].mean()), "cost_over_on_demand": float(rows["cost_over_on_demand"].mean()),
            "deadline_misses": int(rows["missed"].sum()), "preemptions": int(rows["preemptions"].sum()),
            "timeline_repeats": int(rows["timeline_repeats"].sum()), "starts": len(rows)}
