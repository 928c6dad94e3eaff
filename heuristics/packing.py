"""The generic packing loop of CoH's heuristics (paper §3.3).

While jobs remain: take the next job in the job order, put it on the first VM (by the VM rule)
with room for it (over the job's interval under the interval capacity rule,
:mod:`heuristics.occupancy`; in its free capacity now under the tick rule); if no VM has room,
start a VM of the Cost-Efficient type and put the job there.
Job keys do not change during a call, so the job order is computed once; VM keys are updated after
every placement. Cost: O(m log m + m * VMs) for m jobs.

A fleet of at most :data:`SMALL_FLEET` slots (a sparse trace's: a few VMs, a job or two a tick) is
packed over Python lists (:class:`~heuristics.rules.ScalarState`), where a NumPy call would cost
more than the work it does; larger fleets over arrays. Both make the same choices (tested).
"""

from __future__ import annotations

import math

import numpy as np

from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import CallRoom, Occupancy, row_peak
from heuristics.rules import JobOrder, ScalarState, VmRule

#: Fleets of up to this many slots are packed over Python lists.
SMALL_FLEET = 48
_FIRST = np.zeros(1, dtype=np.int64)
_NONE = np.zeros(0, dtype=np.int64)
_FIRST.flags.writeable = _NONE.flags.writeable = False  # shared by every plan that uses them


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
    order = _FIRST if len(batch) == 1 else job_order(batch)
    if len(fleet) <= SMALL_FLEET:
        return _pack_small(batch, fleet, order, vm_rule, rng)
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


def _pack_small(batch: Batch, fleet: Fleet, order: np.ndarray, vm_rule: VmRule, rng: np.random.Generator) -> Plan:
    """:func:`pack` over Python lists (module docstring)."""
    n, now = len(fleet), fleet.now
    state = ScalarState(vm_rule, fleet)
    free, ready, capacity = fleet.free.tolist(), fleet.ready_at.tolist(), fleet.capacity.tolist()
    slots = [j for j, t in enumerate(fleet.vm_type.tolist()) if t >= 0]
    occ = fleet.occupancy
    exact = _ExactRoom(occ, n) if occ is not None else None
    every = vm_rule.kind == "free"  # SM and LM rank by the room itself: every VM's is needed, not only a full one's
    targets: list[int] = []
    new_types: list[int] = []
    booted = now + fleet.boot_time
    r, arrival, runtime = batch.r.tolist(), batch.arrival.tolist(), batch.runtime.tolist()
    m = len(r)
    for i in order.tolist():
        need, arrived = r[i], arrival[i]
        a = now if now > arrived else arrived  # max(arrival, now), as max() picks among equals
        fits = []
        for j in slots:
            room = free[j]
            if exact is not None and (every or room < need):
                s = a if a > ready[j] else ready[j]
                if exact.dep_min[j] <= s or exact.start_max[j] > s:
                    room = capacity[j] - exact.peak(j, s, s + runtime[i])
            if room >= need:
                fits.append((j, room))
        j = state.choose(fits, rng)
        if j < 0:
            k = fleet.cost_efficient_type(need)
            j = n + len(new_types)
            new_types.append(k)
            slots.append(j)
            c = float(fleet.type_capacity[k])
            free.append(c), ready.append(booted), capacity.append(c)
            state.opened()
            if exact is not None:
                exact.opened()
        targets.append(j)
        if len(targets) == m:  # the last job: no later one reads what it leaves
            break
        free[j] -= need
        start = max(arrived, now, ready[j])
        if exact is not None:
            exact.add(j, start, start + runtime[i], need)
        state.placed(j, arrived, start + runtime[i])
    return Plan(jobs=order, targets=np.array(targets, dtype=np.int64),
                new_types=np.array(new_types, dtype=np.int64) if new_types else _NONE, n_slots=n)


class _ExactRoom:
    """The interval rule in :func:`_pack_small`: each VM's earliest end and latest start, and its room over a run.

    As :class:`~heuristics.occupancy.CallRoom`: a VM whose jobs all run at the job's start and none
    of which has left by then has its free capacity as room; another, its capacity less
    the peak of its jobs (the fleet's and this call's) over the run (:func:`~heuristics.occupancy.row_peak`,
    the number :func:`~heuristics.occupancy.peaks` gives).
    """

    def __init__(self, occ: Occupancy, n: int) -> None:
        self.occ, self.n = occ, n
        self.dep_min, self.start_max = occ.dep_min.tolist(), occ.start_max.tolist()
        self.placed: dict[int, list[tuple[float, float, float]]] = {}

    def opened(self) -> None:
        self.dep_min.append(np.inf)
        self.start_max.append(-np.inf)

    def add(self, j: int, start: float, end: float, r: float) -> None:
        self.placed.setdefault(j, []).append((start, end, r))
        self.dep_min[j] = min(self.dep_min[j], end)
        self.start_max[j] = max(self.start_max[j], start)

    def peak(self, j: int, s: float, e: float) -> float:
        occ = self.occ
        if j < self.n:
            start, end, r = occ.start[j].tolist(), occ.end[j].tolist(), occ.r[j].tolist()
        else:
            k = occ.r.shape[1]
            start, end, r = [-math.inf] * k, [math.inf] * k, [0.0] * k
        for a, b, x in self.placed.get(j, ()):
            start.append(a), end.append(b), r.append(x)
        return row_peak(start, end, r, s, e)
