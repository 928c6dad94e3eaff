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
from heuristics.occupancy import CallRoom, entries_peak
from heuristics.rules import JobOrder, ScalarState, VmRule

#: Fleets of up to this many slots are packed over Python lists.
SMALL_FLEET = 48
_NONE = np.zeros(0, dtype=np.int64)
#: ``_ONE[k]`` is the array ``[k]``: a plan of one job (or one new VM) takes it instead of making it.
_ONE = tuple(np.array([k], dtype=np.int64) for k in range(4 * SMALL_FLEET))
_FIRST = _ONE[0]
for _shared in (_NONE, *_ONE):
    _shared.flags.writeable = False  # shared by every plan that uses them


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
    n, m = len(fleet), len(batch)
    order = _FIRST if m == 1 else job_order(batch)
    if n <= SMALL_FLEET:
        return _pack_small(batch, fleet, n, order, vm_rule, rng)
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


def _pack_small(batch: Batch, fleet: Fleet, n: int, order: np.ndarray, vm_rule: VmRule,
                rng: np.random.Generator) -> Plan:
    """:func:`pack` over Python lists (module docstring), on a fleet of ``n`` slots."""
    now = fleet.now
    state = ScalarState(vm_rule, fleet)
    free, ready = fleet.free.tolist(), fleet.ready_at.tolist()
    slots = [j for j, t in enumerate(fleet.vm_type.tolist()) if t >= 0]
    exact = _ExactRoom(fleet, n) if fleet.occupancy is not None else None
    every = vm_rule.kind == "free"  # SM and LM rank by the room itself: every VM's is needed, not only a full one's
    targets: list[int] = []
    new_types: list[int] = []
    r, arrival, runtime = batch.r.tolist(), batch.arrival.tolist(), batch.runtime.tolist()
    m = len(r)
    dep_min: list[float] = []  # each slot's earliest end and latest start, read when first needed
    start_max: list[float] = []
    for i in order.tolist():
        need, arrived = r[i], arrival[i]
        a = now if now > arrived else arrived  # max(arrival, now), as max() picks among equals
        fits = []
        for j in slots:
            room = free[j]
            if (every or room < need) and exact is not None:
                s = a if a > ready[j] else ready[j]
                if not dep_min:
                    dep_min, start_max = exact.read_bounds()
                if dep_min[j] <= s or start_max[j] > s:  # not every job runs over s: the peak
                    room = exact.room(j, s, s + runtime[i])
            if room >= need:
                fits.append((j, room))
        j = state.choose(fits, rng)
        if j < 0:
            k = fleet.cost_efficient_type(need)
            j = n + len(new_types)
            new_types.append(k)
            slots.append(j)
            c = float(fleet.type_capacity[k])
            free.append(c), ready.append(now + fleet.boot_time)
            state.opened()
            if exact is not None:
                exact.opened(c)
        targets.append(j)
        if len(targets) == m:  # the last job: no later one reads what it leaves
            break
        free[j] -= need
        start = max(arrived, now, ready[j])
        if exact is not None:
            exact.add(j, start, start + runtime[i], need)
        state.placed(j, arrived, start + runtime[i])
    return Plan(jobs=order, targets=_array(targets), new_types=_array(new_types), n_slots=n)


def _array(values: list[int]) -> np.ndarray:
    """``values`` as an int64 array; a shared read-only one for no value or one small one."""
    if not values:
        return _NONE
    if len(values) == 1 and values[0] < len(_ONE):
        return _ONE[values[0]]
    return np.array(values, dtype=np.int64)


class _ExactRoom:
    """The interval rule in :func:`_pack_small`: each VM's earliest end and latest start, and its room over a run.

    As :class:`~heuristics.occupancy.CallRoom`: a VM whose jobs all run at the job's start and none
    of which has left by then (the packer tells from :attr:`bounds`) has its free capacity as room;
    another, its capacity less the peak of its jobs (the fleet's and this call's) over the run
    (:meth:`room`: :func:`~heuristics.occupancy.entries_peak`, the number :func:`~heuristics.occupancy.peaks`
    gives). The fleet's earliest ends and latest starts are read when the packer first needs them.
    """

    __slots__ = ("bounds", "capacity", "fleet", "n", "occ", "placed")

    def __init__(self, fleet: Fleet, n: int) -> None:
        assert fleet.occupancy is not None
        self.occ, self.fleet, self.n = fleet.occupancy, fleet, n
        self.capacity: list[float] = []  # of the VMs the call starts
        self.bounds: tuple[list[float], list[float]] | None = None
        self.placed: dict[int, list[tuple[float, float, float]]] = {}

    def read_bounds(self) -> tuple[list[float], list[float]]:
        """Each slot's earliest end and latest start (:attr:`bounds`), read from the fleet at the first call."""
        if self.bounds is None:
            new, occ = len(self.capacity), self.occ
            self.bounds = dep_min, start_max = occ.dep_min.tolist(), occ.start_max.tolist()
            if new:
                dep_min.extend([math.inf] * new)
                start_max.extend([-math.inf] * new)
        return self.bounds

    def opened(self, capacity: float) -> None:
        self.capacity.append(capacity)
        if self.bounds is not None:
            self.bounds[0].append(math.inf)
            self.bounds[1].append(-math.inf)

    def add(self, j: int, start: float, end: float, r: float) -> None:
        self.placed.setdefault(j, []).append((start, end, r))
        dep_min, start_max = self.read_bounds()
        dep_min[j] = min(dep_min[j], end)
        start_max[j] = max(start_max[j], start)

    def room(self, j: int, s: float, e: float) -> float:
        """Slot ``j``'s capacity less the peak of its jobs over ``[s, e)``."""
        occ, n = self.occ, self.n
        width = occ.r.shape[1]
        if j >= n:
            capacity, entries = self.capacity[j - n], []
        elif occ.table is not None:
            capacity, entries = float(self.fleet.capacity[j]), occ.table.entries(j)
        else:
            capacity = float(self.fleet.capacity[j])
            entries = [(p, a, b, x) for p, (a, b, x) in
                       enumerate(zip(occ.start[j].tolist(), occ.end[j].tolist(), occ.r[j].tolist(), strict=True))
                       if b != math.inf]
        placed = self.placed.get(j, ())
        entries += [(width + p, a, b, x) for p, (a, b, x) in enumerate(placed)]  # after the row, as CallRoom.rows
        return capacity - entries_peak(entries, width + len(placed), s, e)
