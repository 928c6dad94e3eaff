"""The generic packing loop of CoH's heuristics (paper §3.3).

While jobs remain: take the next job in the job order, put it on the first VM (by the VM rule)
with room for it (over the job's interval under the interval capacity rule,
:mod:`heuristics.occupancy`; in its free capacity now under the tick rule); if no VM has room,
start a VM of the Cost-Efficient type and put the job there.
Job keys do not change during a call, so the job order is computed once; VM keys are updated after
every placement. Cost: O(m log m + m * VMs) for m jobs.
"""

from __future__ import annotations

import numpy as np

from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import CallRoom
from heuristics.rules import JobOrder, VmRule


def pack(batch: Batch, fleet: Fleet, job_order: JobOrder, vm_rule: VmRule, *, rng: np.random.Generator) -> Plan:
    """Place every job of ``batch`` on the fleet or on new VMs.

    Parameters
    ----------
    batch : Batch
        Jobs to place.
    fleet : Fleet
        VMs already leased (read only).
    job_order, vm_rule
        The job-selection and VM-selection rules.
    rng : np.random.Generator
        Used only by the random VM rule.

    Returns
    -------
    Plan
        Every job of the batch exactly once, in placement order.
    """
    order = job_order(batch)
    n, m = len(fleet), len(batch)
    free = np.full(n + m, -1.0)
    free[:n] = fleet.free
    ready = np.full(n + m, fleet.now + fleet.boot_time)
    ready[:n] = fleet.ready_at
    state = vm_rule.start(fleet, m)
    room = CallRoom(fleet.occupancy, fleet.capacity, fleet.vm_type, m) if fleet.occupancy is not None else None
    by_room = vm_rule.kind == "free"  # SM and LM rank by the room itself, the others only test it
    targets = np.empty(m, dtype=np.int64)
    new_types: list[int] = []
    r, arrival, runtime = batch.r.tolist(), batch.arrival.tolist(), batch.runtime.tolist()
    for p, i in enumerate(order.tolist()):
        if room is None:
            j = state.choose(free, r[i], rng)
        else:
            s = np.maximum(ready, max(arrival[i], fleet.now))
            j = state.choose(room.over(free, s, s + runtime[i], need=None if by_room else r[i]), r[i], rng)
        if j < 0:
            k = fleet.cost_efficient_type(r[i])
            j = n + len(new_types)
            new_types.append(k)
            free[j] = fleet.type_capacity[k]
            state.opened(j, free)
            if room is not None:
                room.opened(j, float(free[j]))
        free[j] -= r[i]
        start = max(arrival[i], fleet.now, float(ready[j]))
        if room is not None:
            room.add(j, start, start + runtime[i], r[i])
        state.placed(j, arrival[i], start + runtime[i], free)
        targets[p] = j
    return Plan(jobs=order, targets=targets, new_types=np.array(new_types, dtype=np.int64), n_slots=n)
