"""The packing loop of :mod:`heuristics.packing`, with less work: the plans the engine runs.

The same choices as the model (tested over all 66 heuristics on real traces), from two shortcuts:

* **Room from the jobs that leave.** Where every job on a VM starts by the new job's start ``s``
  (a VM's latest start ``start_max <= s``, as it is for every VM when jobs are placed in order of
  arrival), the load over the run falls from ``s`` on, so the peak is the load at ``s``: the room
  is the free capacity plus the requirements of the jobs that end by ``s``. Over arrays, the jobs
  ending by the last ``s`` a call can ask about are sliced from the occupancy's jobs by end
  (:meth:`~heuristics.occupancy.Occupancy.ending_lists`) and counted by end as the call's arrivals advance;
  over lists, a VM's row is read when its earliest end is by ``s``. The peak is swept only for a
  VM with a job starting after ``s``. A rule that does not rank by room needs the room only of a VM
  whose free capacity does not already hold the job (the room is never below it). Both rest on
  what every fleet of a run holds: each VM was started by ``now`` (so it is ready by ``now +
  boot_time``), and its jobs start at or after it is ready and run a positive time (a job table's
  run times are positive), so a job ends after its VM is ready.
* **Lists for small fleets, arrays for large ones.** A fleet of at most :data:`SMALL_FLEET` slots
  (a sparse trace's: a few VMs, a job or two a tick) is packed over Python lists, where a NumPy
  call would cost more than the work it does; larger fleets over arrays.

Requirements and capacities are whole numbers, so the room found either way is the model's to the
last bit.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np

from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import Interval, peaks, room
from heuristics.rules import JobOrder, VmRule

#: Fleets of up to this many slots are packed over Python lists.
SMALL_FLEET = 48
_NONE = np.zeros(0, dtype=np.int64)
#: ``_ONE[k]`` is the array ``[k]``: a plan of one job (or one new VM) takes it instead of making it.
_ONE = tuple(np.array([k], dtype=np.int64) for k in range(4 * SMALL_FLEET))
_FIRST = _ONE[0]
for _shared in (_NONE, *_ONE):
    _shared.flags.writeable = False  # shared by every plan that uses them


def pack(batch: Batch, fleet: Fleet, job_order: JobOrder, vm_rule: VmRule, *, rng: np.random.Generator) -> Plan:
    """:func:`heuristics.packing.pack`: the same plan."""
    order = _FIRST if len(batch) == 1 else job_order(batch)
    if len(fleet) <= SMALL_FLEET:
        return _over_lists(batch, fleet, order, vm_rule, rng)
    return _over_arrays(batch, fleet, order, vm_rule, rng)


class _ListRoom:
    """The interval rule over lists during a call: each slot's earliest end and latest start, and its room.

    A slot none of whose jobs ends by a run's start ``s`` nor starts after it (the packer tells from
    :attr:`dep_min` and :attr:`start_max`, read from the fleet at the first room asked for) has its
    free capacity as room; another, :meth:`room`.
    """

    __slots__ = ("dep_min", "fleet", "new", "placed", "start_max")

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.new: list[float] = []  # the capacity of each VM the call opened
        self.placed: dict[int, list[Interval]] = {}  # the call's jobs, by slot
        self.dep_min: list[float] = []
        self.start_max: list[float] = []

    def read(self) -> None:
        """Read each slot's earliest end and latest start (the fleet's jobs and the call's)."""
        occ = self.fleet.occupancy
        assert occ is not None
        new = [math.inf] * len(self.new)
        self.dep_min, self.start_max = occ.dep_min.tolist() + new, occ.start_max.tolist() + [-x for x in new]
        for j, held in self.placed.items():
            for start, end, _ in held:
                self._bounds(j, start, end)

    def _bounds(self, j: int, start: float, end: float) -> None:
        if end < self.dep_min[j]:
            self.dep_min[j] = end
        if start > self.start_max[j]:
            self.start_max[j] = start

    def room(self, j: int, free: float, s: float, e: float) -> float:
        """Slot ``j``'s room over ``[s, e)``, its free capacity being ``free``."""
        fleet, n, occ = self.fleet, len(self.fleet), self.fleet.occupancy
        assert occ is not None
        placed = self.placed.get(j, [])
        if self.start_max[j] > s:  # a job starts after s: the peak
            capacity = float(fleet.capacity[j]) if j < n else self.new[j - n]
            return room(capacity, (occ.hosted(j) if j < n else []) + placed, s, e)
        left = sum([r for _, end, r in placed if end <= s])
        if j < n:
            left += sum([r for end, r in zip(occ.end[j].tolist(), occ.r[j].tolist(), strict=True) if end <= s])
        return free + left

    def opened(self, capacity: float) -> None:
        """The call started a VM of ``capacity`` in the next slot."""
        self.new.append(capacity)
        if self.dep_min:
            self.dep_min.append(math.inf)
            self.start_max.append(-math.inf)

    def add(self, j: int, start: float, end: float, r: float) -> None:
        """The call put a job holding ``r`` over ``[start, end)`` on slot ``j``."""
        self.placed.setdefault(j, []).append((start, end, r))
        if self.dep_min:
            self._bounds(j, start, end)


def _horizon(arrival: list[float], fleet: Fleet) -> float:
    """The latest start a call can ask about: its latest arrival, or the latest a VM is ready.

    Every VM of a fleet was started by ``now``, so it is ready by ``now + boot_time``.
    """
    return max(max(arrival, default=-math.inf), fleet.now + fleet.boot_time)


def _over_lists(batch: Batch, fleet: Fleet, order: np.ndarray, vm_rule: VmRule, rng: np.random.Generator) -> Plan:
    """:func:`pack` over Python lists."""
    n, now = len(fleet), fleet.now
    ranking = vm_rule.ranking(fleet, len(batch))
    free, ready = fleet.free.tolist(), fleet.ready_at.tolist()
    slots = [j for j, t in enumerate(fleet.vm_type.tolist()) if t >= 0]
    every = vm_rule.ranks_by_room  # SM and LM rank by the room itself: every VM's is needed, not only a full one's
    r, arrival, runtime = batch.r.tolist(), batch.arrival.tolist(), batch.runtime.tolist()
    space = _ListRoom(fleet) if fleet.occupancy is not None else None
    dep_min: list[float] = []  # the space's, once read
    start_max: list[float] = []
    targets: list[int] = []
    new_types: list[int] = []
    for i in order.tolist():
        need, arrived = r[i], arrival[i]
        a = now if now > arrived else arrived  # max(arrival, now), as max() picks among equals
        fits = []
        for j in slots:
            room_ = free[j]
            if (every or room_ < need) and space is not None:
                if not dep_min:
                    space.read()
                    dep_min, start_max = space.dep_min, space.start_max
                s = a if a > ready[j] else ready[j]
                if dep_min[j] <= s or start_max[j] > s:  # a job ends by s or starts after it
                    room_ = space.room(j, room_, s, s + runtime[i])
            if room_ >= need:
                fits.append((j, room_))
        j = ranking.choose(fits, rng)
        if j < 0:
            k = fleet.cost_efficient_type(need)
            j = n + len(new_types)
            new_types.append(k)
            slots.append(j)
            c = float(fleet.type_capacity[k])
            free.append(c), ready.append(now + fleet.boot_time)
            ranking.opened()
            if space is not None:
                space.opened(c)
        targets.append(j)
        if len(targets) == len(r):  # the last job: no later one reads what it leaves
            break
        free[j] -= need
        start = max(arrived, now, ready[j])
        if space is not None:
            space.add(j, start, start + runtime[i], need)
        ranking.placed(j, arrived, start + runtime[i])
    return Plan(jobs=order, targets=_array(targets), new_types=_array(new_types), n_slots=n)


def _array(values: list[int]) -> np.ndarray:
    """``values`` as an int64 array; a shared read-only one for no value or one small one."""
    if not values:
        return _NONE
    if len(values) == 1 and values[0] < len(_ONE):
        return _ONE[values[0]]
    return np.array(values, dtype=np.int64)


def _over_arrays(batch: Batch, fleet: Fleet, order: np.ndarray, vm_rule: VmRule, rng: np.random.Generator) -> Plan:
    """:func:`pack` over arrays of the fleet's slots and the ``m`` a call may open."""
    n, m, now = len(fleet), len(batch), fleet.now
    ready = np.full(n + m, now + fleet.boot_time)
    ready[:n] = fleet.ready_at
    ranking = vm_rule.ranking(fleet, m)
    r, arrival, runtime = batch.r.tolist(), batch.arrival.tolist(), batch.runtime.tolist()
    space: _FreeRoom | _ArrayRoom = (_FreeRoom(fleet, m) if fleet.occupancy is None else
                                     _ArrayRoom(fleet, m, ready, _horizon(arrival, fleet)))
    every = vm_rule.ranks_by_room
    targets = np.empty(m, dtype=np.int64)
    new_types: list[int] = []
    for p, i in enumerate(order.tolist()):
        j = ranking.choose_among(space.over(max(arrival[i], now), runtime[i], need=None if every else r[i]), r[i], rng)
        if j < 0:
            k = fleet.cost_efficient_type(r[i])
            j = n + len(new_types)
            new_types.append(k)
            ranking.opened()
            space.opened(j, float(fleet.type_capacity[k]))
        start = max(arrival[i], now, float(ready[j]))
        space.add(j, start, start + runtime[i], r[i])
        ranking.placed(j, arrival[i], start + runtime[i])
        targets[p] = j
    return Plan(jobs=order, targets=targets, new_types=np.array(new_types, dtype=np.int64), n_slots=n)


class _FreeRoom:
    """The tick rule during a call over arrays: a slot's room is its free capacity (``-1`` without a VM)."""

    def __init__(self, fleet: Fleet, m: int) -> None:
        self.free = np.full(len(fleet) + m, -1.0)
        self.free[:len(fleet)] = fleet.free

    def opened(self, j: int, capacity: float) -> None:
        """A new VM of ``capacity`` was started in slot ``j``."""
        self.free[j] = capacity

    def add(self, j: int, start: float, end: float, r: float) -> None:
        """A job holding ``r`` was put on slot ``j``."""
        self.free[j] -= r

    def over(self, a: float, runtime: float, *, need: float | None = None) -> np.ndarray:
        """Every slot's room (read only)."""
        return self.free


class _ArrayRoom:
    """The interval rule during a call over arrays: every slot's room over a job's run (module docstring).

    Slots ``[0, n)`` are the fleet's VMs, ``[n, n + m)`` the VMs the call may open; a slot without
    a VM has no room (``-inf``). A slot's room at a run's start ``s = max(a, ready)`` is its free
    capacity plus what the jobs that end by ``s`` hold. A job ends after its VM is ready (it starts
    there, and runs), so the jobs ending by ``s`` are those ending by ``a``: they are kept by end with
    the room for the last ``a`` asked about. A later ``a`` adds the jobs ending in between (jobs
    placed in arrival order ask in order); an earlier one counts again.
    """

    def __init__(self, fleet: Fleet, m: int, ready: np.ndarray, horizon: float) -> None:
        occ = fleet.occupancy
        assert occ is not None
        n = len(fleet)
        self.fleet, self.occ, self.n, self.ready, self.horizon = fleet, occ, n, ready, horizon
        self.alive = fleet.vm_type >= 0
        self.free = np.full(n + m, -np.inf)  # a slot without a VM has no room, whatever its row holds
        np.copyto(self.free[:n], fleet.free, where=self.alive)
        self.new: dict[int, float] = {}  # the capacity of each VM the call opened, by slot
        self.latest = occ.latest_start()  # the latest start of any job
        self._start_max: np.ndarray | None = None  # each slot's, once a job may start after a run does
        # the jobs ending by the horizon (the fleet's, by end, and the call's): their slots, ends, requirements
        self.slot, self.end, self.r = occ.ending_lists(horizon)
        self.counted = 0  # the jobs ended by the last a asked about, counted in room
        self.room = self.free.copy()
        self.placed: dict[int, list[Interval]] = {}

    def start_max(self) -> np.ndarray:
        """Each slot's latest start (the fleet's jobs and the call's)."""
        if self._start_max is None:
            occ = self.occ
            self._start_max = np.full(len(self.free), -np.inf)
            self._start_max[:self.n] = np.where(self.alive, occ.start_max, -np.inf)
            for j, held in self.placed.items():
                self._start_max[j] = max(self._start_max[j], *(a for a, _, _ in held))
        return self._start_max

    def opened(self, j: int, capacity: float) -> None:
        """A new VM of ``capacity`` was started in slot ``j``."""
        self.new[j] = self.free[j] = self.room[j] = capacity

    def add(self, j: int, start: float, end: float, r: float) -> None:
        """A job holding ``r`` over ``[start, end)`` was put on slot ``j``."""
        self.free[j] -= r
        self.room[j] -= r
        self.placed.setdefault(j, []).append((start, end, r))
        if self._start_max is not None and start > self._start_max[j]:
            self._start_max[j] = start
        if start > self.latest:
            self.latest = start
        if end <= self.horizon:  # it ends after the a it was placed at: among those not counted yet
            q = bisect_right(self.end, end)
            self.slot.insert(q, j)
            self.end.insert(q, end)
            self.r.insert(q, r)

    def _ended_by(self, a: float) -> np.ndarray:
        """Every slot's room at ``max(a, ready)`` while no job starts after it."""
        k = bisect_right(self.end, a)
        lo = self.counted
        if k < lo:  # an earlier a than the last: count again
            self.room, lo = self.free.copy(), 0
        room, slot, r = self.room, self.slot, self.r
        for p in range(lo, k):
            room[slot[p]] += r[p]
        self.counted = k
        return room

    def over(self, a: float, runtime: float, *, need: float | None = None) -> np.ndarray:
        """Every slot's room for a job handed over at ``a`` running ``runtime`` s (read only).

        With ``need``, a slot whose free capacity already holds it may show no more than that
        (enough to tell whether the job fits, not to rank by room).
        """
        room = self._ended_by(a)
        if self.latest > a:  # a job may start after the run does (the run starts at a or later)
            s = np.maximum(self.ready, a)
            late = self.start_max() > s
            if need is not None:
                late &= self.free < need
            rows = np.flatnonzero(late)
            if len(rows):
                room = room.copy()
                room[rows] = self._capacity(rows) - peaks(*self._rows(rows), s[rows], s[rows] + runtime)
        return room

    def _capacity(self, rows: np.ndarray) -> np.ndarray:
        """The capacity of the VMs in ``rows``."""
        return np.array([float(self.fleet.capacity[j]) if j < self.n else self.new[j] for j in rows.tolist()])

    def _rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The intervals on ``rows``: the fleet's jobs, then this call's, padded."""
        occ, n = self.occ, self.n
        lists = [(occ.hosted(j) if j < n else []) + self.placed.get(j, []) for j in rows.tolist()]
        width = max(1, *(len(x) for x in lists))
        shape = (len(rows), width)
        start, end, r = np.full(shape, -np.inf), np.full(shape, np.inf), np.zeros(shape)
        for p, held in enumerate(lists):
            for q, (a, b, x) in enumerate(held):
                start[p, q], end[p, q], r[p, q] = a, b, x
        return start, end, r
