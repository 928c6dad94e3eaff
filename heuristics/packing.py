"""The generic packing loop of CoH's heuristics (paper §3.3): the readable model.

While jobs remain: take the next job in the job order, put it on the first VM (by the VM rule)
with room for it; if no VM has room, start a VM of the Cost-Efficient type and put the job there.
A VM's room for a job is, under the interval capacity rule (:mod:`heuristics.occupancy`), its
capacity less the peak of the jobs it holds over the job's run (the fleet's and those this call put
there), the run starting at ``max(arrival, now, ready)``; under the tick rule, its free capacity now.

This is the model: every VM's room is worked out for every job, as written above. The engine runs
:mod:`heuristics.fastpack`, which makes the same plans with less work (tested over all 66
heuristics on real traces).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import Interval, room
from heuristics.rules import JobOrder, VmRule


@dataclass(slots=True)
class _Vm:
    """A VM during a call: capacity, free capacity, when it is ready, and the jobs it holds (interval rule)."""

    capacity: float
    free: float
    ready: float
    intervals: list[Interval] | None = field(default=None)

    def room(self, arrival: float, runtime: float) -> float:
        """Room for a job arriving (or handed over) at ``arrival`` and running ``runtime`` s."""
        if self.intervals is None:
            return self.free
        s = max(arrival, self.ready)
        return room(self.capacity, self.intervals, s, s + runtime)

    def take(self, start: float, end: float, r: float) -> None:
        """A job holding ``r`` over ``[start, end)`` was put here."""
        self.free -= r
        if self.intervals is not None:
            self.intervals.append((start, end, r))


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
    n, now = len(fleet), fleet.now
    order = job_order(batch)
    ranking = vm_rule.ranking(fleet, len(batch))
    vms = _vms(fleet)
    targets, new_types = [], []
    for i in order.tolist():
        need, arrival, runtime = float(batch.r[i]), float(batch.arrival[i]), float(batch.runtime[i])
        handed = max(arrival, now)
        fits = [(j, vm.room(handed, runtime)) for j, vm in enumerate(vms) if vm is not None]
        j = ranking.choose([(j, room) for j, room in fits if room >= need], rng)
        if j < 0:
            k = fleet.cost_efficient_type(need)
            j = len(vms)
            capacity = float(fleet.type_capacity[k])
            vms.append(_Vm(capacity, capacity, now + fleet.boot_time, [] if fleet.occupancy is not None else None))
            new_types.append(k)
            ranking.opened()
        vm = vms[j]
        assert vm is not None
        start = max(handed, vm.ready)
        vm.take(start, start + runtime, need)
        ranking.placed(j, arrival, start + runtime)
        targets.append(j)
    return Plan(jobs=order, targets=np.array(targets, dtype=np.int64), new_types=np.array(new_types, dtype=np.int64),
                n_slots=n)


def _vms(fleet: Fleet) -> list[_Vm | None]:
    """The fleet's VMs by slot (``None`` for a slot without one)."""
    occ = fleet.occupancy
    return [_Vm(float(fleet.capacity[j]), float(fleet.free[j]), float(fleet.ready_at[j]),
                occ.hosted(j) if occ is not None else None) if fleet.vm_type[j] >= 0 else None
            for j in range(len(fleet))]
