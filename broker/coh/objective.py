"""The IPP objective of CoH (paper formula 1, ``SPEC.md`` §3) used to score any plan.

For a plan placing new jobs at time ``now``::

    sum over new VMs:      ceilh(max_i d_i - now) * c_k
  + sum over running VMs:  ceilh(max(max_i d_i, ld_j) - s_j) * c_j

with ``ceilh`` the number of billing units, ``d_i`` a job's planned departure (start on arrival,
or when its VM has booted, plus run time), ``s_j`` where VM j's billing is counted from and
``ld_j`` the latest departure of the jobs VM j has hosted; ``c_j`` is the fleet's ``rate`` of VM j
(its own price: a reservation's, or 0 for a heavy reservation that is billed every hour anyway).
:func:`plan_cost` returns the part that depends on the plan: the new VMs plus the *increase* of the
running VMs' terms. The running VMs' terms without the plan are a constant for every candidate of a
tick, so they are left out.

With ``paid=True`` (this project's variant, not the paper's) a running VM's ``ld_j`` is taken as
``max(ld_j, now)``: the unit a VM is in now is paid whatever the plan, so a job that ends within it
costs nothing extra. The paper's reading charges from the VM's last departure, which can make an
idle VM look dearer than it is.
"""

from __future__ import annotations

import numpy as np

from broker.pricing.billing import Billing
from heuristics.fleet import Batch, Fleet, Plan


def planned_departures(plan: Plan, batch: Batch, fleet: Fleet) -> tuple[list[int], list[float]]:
    """Targets and planned departures (s) of the plan's jobs, in plan order."""
    n, now = plan.n_slots, fleet.now
    new_ready = now + fleet.boot_time
    ready = fleet.ready_at
    targets = plan.targets.tolist()
    deps = []
    for p, t in zip(plan.jobs.tolist(), targets, strict=True):
        start = max(float(batch.arrival[p]), now, float(ready[t]) if t < n else new_ready)
        deps.append(start + float(batch.runtime[p]))
    return targets, deps


def plan_cost(plan: Plan, batch: Batch, fleet: Fleet, billing: Billing, hourly: np.ndarray, *,
              paid: bool = False) -> float:
    """The plan-dependent part of the IPP objective ($); ``paid`` counts units already paid."""
    targets, deps = planned_departures(plan, batch, fleet)
    latest: dict[int, float] = {}
    for t, d in zip(targets, deps, strict=True):
        if d > latest.get(t, -np.inf):
            latest[t] = d
    n, new_anchor = plan.n_slots, billing.anchor(fleet.now)
    cost = 0.0
    for t, d in latest.items():
        if t >= n:
            cost += billing.units_until(new_anchor, d) * float(hourly[plan.new_types[t - n]])
            continue
        anchor, ld = float(fleet.anchor[t]), float(fleet.last_departure[t])
        if paid:
            ld = max(ld, fleet.now)
        extra = billing.units_until(anchor, max(d, ld)) - billing.units_until(anchor, ld)
        cost += extra * float(fleet.rate[t])
    return cost

