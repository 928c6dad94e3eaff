"""Room on a VM over a job's own interval: the interval capacity rule.

A job holds its requirement ``r`` over ``[start, end)`` (CoH paper §2: a job ``(r, a, d)`` uses
``r`` over ``[a, d)``). A VM has room for a new job if, at every instant of the job's interval, the
requirements of the jobs it hosts then, plus the job's, stay within its capacity: jobs that leave
before the job starts do not count, nor do jobs that start after it ends.

The old rule (``"tick"``) held a job's requirement from the decision tick that placed it, so a job
decided 130 s before its arrival saw the capacity of jobs leaving in between as still taken; it is
kept so that the earlier figures can be reproduced.

:class:`Occupancy` is what a fleet snapshot carries of its VMs' hosted jobs; :class:`CallRoom` is
the room of every slot over one job's interval during a placement call, counting the jobs placed
earlier in the same call. The fast path: when every job on a VM is running at the job's start and
none has left by then (``dep_min > s`` and ``start_max <= s``), the load over the interval is the
whole load and the room is the plain free capacity; only the other VMs are looked at job by job.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Literal

import numpy as np

CapacityRule = Literal["interval", "tick"]
#: The capacity rules: a job's requirement held over its own interval, or from its decision tick.
CAPACITY_RULES: tuple[str, ...] = ("interval", "tick")
#: The arrays of an :class:`IntervalTable`.
_TABLE_ARRAYS = ("start", "end", "r", "dep_min", "start_max")


def peaks(start: np.ndarray, end: np.ndarray, r: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Row by row, the largest summed ``r`` of the intervals ``[start, end)`` at any instant of ``[s, e)``.

    ``start``, ``end``, ``r`` are ``[rows, k]`` (an unused entry is ``(-inf, inf, 0)``), ``s`` and
    ``e`` one window per row. The load at ``s``; then, for a row with a start inside the window, a
    sweep over its starts and ends in time order, an end before a start at the same instant
    (``[start, end)`` is half open). After the last event at an instant the running sum is the load
    there, and no partial sum at an instant exceeds the load just before or at it, so the peak is
    the largest running sum at an event inside ``(s, e)``, or the load at ``s``.
    """
    at_s = (start <= s[:, None]) & (end > s[:, None])
    load: np.ndarray = (at_s * r).sum(axis=1)
    later = np.flatnonzero(((start > s[:, None]) & (start < e[:, None])).any(axis=1))
    if not len(later):
        return load
    start, end, r, s, e = start[later], end[later], r[later], s[later], e[later]
    used = np.flatnonzero((end != np.inf).any(axis=0))
    start, end, r = start[:, used], end[:, used], r[:, used]
    times, deltas = np.hstack((start, end)), np.hstack((r, -r))
    order = np.lexsort((deltas, times), axis=1)
    times, running = np.take_along_axis(times, order, axis=1), np.take_along_axis(deltas, order, axis=1).cumsum(axis=1)
    inside = (times > s[:, None]) & (times < e[:, None])
    load[later] = np.maximum(load[later], np.where(inside, running, -np.inf).max(axis=1))
    return load


#: Whole numbers up to this magnitude are doubles, and so is every sum of them that stays within it.
_EXACT = float(2**53)
#: One used entry of a row: its position in the row, and the job's start, end and requirement.
Entry = tuple[int, float, float, float]


def row_peak(start: Sequence[float], end: Sequence[float], r: Sequence[float], s: float, e: float) -> float:
    """:func:`peaks` of one row (its entries as lists, unused ones included) over ``[s, e)``, in Python.

    :func:`entries_peak` of the row's used entries.
    """
    entries = [(p, a, b, x) for p, (a, b, x) in enumerate(zip(start, end, r, strict=True)) if b != math.inf]
    return entries_peak(entries, len(start), s, e)


def entries_peak(entries: Sequence[Entry], width: int, s: float, e: float) -> float:
    """:func:`peaks` over ``[s, e)`` of a row of ``width`` entries of which ``entries`` are used, in Python.

    The same number to the last bit: the load at ``s`` is added up in NumPy's order (:func:`sparse_sum`),
    the sweep over the used entries' starts and ends goes in :func:`peaks`' order (by time, an end
    before a start). Its cost grows with the jobs on the VM, not with the row's width. For the few
    jobs of a small fleet's VM, where NumPy's calls would cost more than the work.
    """
    held = []
    inside = False  # a start inside the window
    for p, a, b, x in entries:
        if a <= s:
            if s < b:
                held.append((p, x))
        elif a < e:
            inside = True
    load = sparse_sum(held, width)
    if not inside:
        return load
    events = sorted([(a, x) for _, a, _, x in entries] + [(b, -x) for _, _, b, x in entries])
    running, peak = 0.0, load
    for t, d in events:
        running += d
        if s < t < e and running > peak:
            peak = running
    return peak


def row_sum(values: list[float]) -> float:
    """The sum of a row as NumPy's ``add.reduce`` makes it (:func:`sparse_sum` of its values that are not zero)."""
    return sparse_sum([(p, x) for p, x in enumerate(values) if x != 0.0], len(values))


def sparse_sum(items: list[tuple[int, float]], n: int) -> float:
    """NumPy's sum of a row of ``n`` values that are zero but at the ``(position, value)`` ``items``.

    NumPy adds pairwise (``pairwise_sum`` in ``loops_utils.h.src``); adding a zero changes no sum of
    values that are not negative zeros, so only the positions of the others decide the order. With
    at most two, any order gives the same sum; so it does when every value is a whole number and
    their magnitudes add up to less than 2**53 (every partial sum is then exact), as requirements
    are in the workloads of this toolkit.
    """
    if len(items) > 2:
        total = size = 0.0
        for _, x in items:
            if not x.is_integer():
                return _pairwise(sorted(items), 0, n)
            total += x
            size += abs(x)
        if size >= _EXACT:  # a size below it was added up exactly, and so is every partial sum
            return _pairwise(sorted(items), 0, n)
        return total
    return sum([x for _, x in items], 0.0)


def _pairwise(items: list[tuple[int, float]], lo: int, n: int) -> float:
    """The pairwise sum of the ``n`` values from position ``lo`` (``items``: those not zero, by position).

    Below 8 values one after another; up to 128 in 8 lanes (position modulo 8) over the whole blocks
    of 8, the rest after; above, the two halves (the first rounded down to a multiple of 8) added.
    """
    if n < 8:
        total = 0.0
        for _, x in items:
            total += x
        return total
    if n > 128:
        half = n // 2
        half -= half % 8
        cut = lo + half
        return (_pairwise([i for i in items if i[0] < cut], lo, half)
                + _pairwise([i for i in items if i[0] >= cut], cut, n - half))
    acc = [0.0] * 8
    tail = lo + n - n % 8
    rest = []
    for p, x in items:
        if p < tail:
            acc[(p - lo) % 8] += x
        else:
            rest.append(x)
    total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    for x in rest:
        total += x
    return total


class IntervalTable:
    """The intervals of the jobs each slot hosts, one row per slot, padded to a common width.

    An unused entry is ``(start, end, r) = (-inf, inf, 0)``: it holds nothing at any instant, never
    starts inside a window, and leaves a row's earliest end (``dep_min``, ``inf`` for an empty row)
    and latest start (``start_max``, ``-inf``) to the real entries. Each array is a NumPy view of an
    :class:`array.array` column (flat, row after row) that :meth:`add` and :meth:`remove` write one
    entry at a time at the speed of a Python list.
    """

    start: np.ndarray
    end: np.ndarray
    r: np.ndarray
    dep_min: np.ndarray
    start_max: np.ndarray
    _cols: tuple[array[float], ...]  # the columns behind them, in that order

    def __init__(self, size: int, width: int = 8) -> None:
        self._width = width
        self._adopt(np.full((size, width), -np.inf), np.full((size, width), np.inf), np.zeros((size, width)),
                    np.full(size, np.inf), np.full(size, -np.inf))
        self._where: dict[int, tuple[int, int]] = {}
        self._free = [list(range(width)) for _ in range(size)]  # unused columns of each row, as heaps
        self._rows: list[dict[int, Entry]] = [{} for _ in range(size)]  # each row's used entries, by column

    def _adopt(self, *arrays: np.ndarray) -> None:
        """Copies of ``arrays`` (start, end, r, dep_min, start_max) become the columns and their views."""
        columns = []
        for name, values in zip(_TABLE_ARRAYS, arrays, strict=True):
            column = array("d")
            column.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            columns.append(column)
            setattr(self, name, np.frombuffer(column, dtype=np.float64).reshape(values.shape))
        self._cols = tuple(columns)

    def grow(self, size: int) -> None:
        """Room for ``size`` slots."""
        more, width = size - len(self.r), self._width
        self._adopt(np.vstack((self.start, np.full((more, width), -np.inf))),
                    np.vstack((self.end, np.full((more, width), np.inf))), np.vstack((self.r, np.zeros((more, width)))),
                    np.concatenate((self.dep_min, np.full(more, np.inf))),
                    np.concatenate((self.start_max, np.full(more, -np.inf))))
        self._free.extend(list(range(width)) for _ in range(more))
        self._rows.extend({} for _ in range(more))

    def add(self, slot: int, job: int, start: float, end: float, r: float) -> None:
        """Job ``job`` holds ``r`` on ``slot`` over ``[start, end)``."""
        free = self._free[slot]
        if not free:
            self._widen()
            free = self._free[slot]
        col = heappop(free)
        starts, ends, rs, dep_min, start_max = self._cols
        k = slot * self._width + col
        starts[k], ends[k], rs[k] = start, end, r
        if end < dep_min[slot]:
            dep_min[slot] = end
        if start > start_max[slot]:
            start_max[slot] = start
        self._where[job] = (slot, col)
        self._rows[slot][col] = (col, start, end, r)

    def remove(self, job: int) -> None:
        """Job ``job`` left its slot.

        The slot's earliest end and latest start are looked for again only when the job held one of
        them, among the row's used entries.
        """
        slot, col = self._where.pop(job)
        heappush(self._free[slot], col)
        starts, ends, rs, dep_min, start_max = self._cols
        row = self._rows[slot]
        _, start, end, _ = row.pop(col)
        k = slot * self._width + col
        starts[k], ends[k], rs[k] = -math.inf, math.inf, 0.0
        if end == dep_min[slot] or start == start_max[slot]:  # both again, in one pass (the other one stays)
            first_end, last_start = math.inf, -math.inf
            for _, a, b, _ in row.values():
                if b < first_end:
                    first_end = b
                if a > last_start:
                    last_start = a
            dep_min[slot], start_max[slot] = first_end, last_start

    def _widen(self) -> None:
        size, width = self.r.shape
        self._adopt(np.hstack((self.start, np.full((size, width), -np.inf))),
                    np.hstack((self.end, np.full((size, width), np.inf))), np.hstack((self.r, np.zeros((size, width)))),
                    self.dep_min, self.start_max)
        self._width = 2 * width
        for free in self._free:
            free.extend(range(width, 2 * width))

    def copy(self) -> IntervalTable:
        """An independent copy."""
        twin = IntervalTable(0, self._width)
        twin._adopt(self.start, self.end, self.r, self.dep_min, self.start_max)
        twin._where = dict(self._where)
        twin._free = [list(free) for free in self._free]
        twin._rows = [dict(row) for row in self._rows]
        return twin

    def occupancy(self, n: int) -> Occupancy:
        """The snapshot of slots ``[0, n)``: views, valid until the table changes."""
        return Occupancy(self.start[:n], self.end[:n], self.r[:n], self.dep_min[:n], self.start_max[:n], self)

    @property
    def width(self) -> int:
        """Entries per row."""
        return self._width

    def entries(self, slot: int) -> list[Entry]:
        """``slot``'s used entries (position in the row, start, end, requirement), in no set order."""
        return list(self._rows[slot].values())


@dataclass(frozen=True, slots=True)
class Occupancy:
    """The jobs each slot of a fleet hosts (placed, not departed), as intervals.

    ``[slots, k]`` rows of :class:`IntervalTable` (an unused entry is ``(-inf, inf, 0)``), and each
    row's earliest end and latest start.
    """

    start: np.ndarray
    end: np.ndarray
    r: np.ndarray
    dep_min: np.ndarray
    start_max: np.ndarray
    #: The live table the arrays are views of (rows read at list speed), ``None`` for a copy.
    table: IntervalTable | None = None

    def frozen(self) -> Occupancy:
        """A copy that no longer reads the live run (for keeping a snapshot past its tick)."""
        return Occupancy(self.start.copy(), self.end.copy(), self.r.copy(), self.dep_min.copy(),
                         self.start_max.copy())

    def with_jobs(self, slots: np.ndarray, start: np.ndarray, end: np.ndarray, r: np.ndarray, n: int) -> Occupancy:
        """A copy over ``n`` slots (new ones empty) with jobs ``r`` added on ``slots`` over ``[start, end)``."""
        extra = n - len(self.r)
        rank = np.zeros(len(slots), dtype=np.int64)
        order = np.argsort(slots, kind="stable")
        first = np.searchsorted(slots[order], slots[order])
        rank[order] = np.arange(len(slots)) - first
        width = int(rank.max()) + 1 if len(slots) else 0
        grown = [np.vstack((a, np.full((extra, a.shape[1]), fill))) for a, fill in
                 ((self.start, -np.inf), (self.end, np.inf), (self.r, 0.0))]
        added = [np.full((n, width), fill) for fill in (-np.inf, np.inf, 0.0)]
        for table, values in zip(added, (start, end, r), strict=True):
            table[slots, rank] = values
        dep_min = np.concatenate((self.dep_min, np.full(extra, np.inf)))
        start_max = np.concatenate((self.start_max, np.full(extra, -np.inf)))
        np.minimum.at(dep_min, slots, end)
        np.maximum.at(start_max, slots, start)
        start_, end_, r_ = (np.hstack((old, new)) for old, new in zip(grown, added, strict=True))
        return Occupancy(start_, end_, r_, dep_min, start_max)

    def hosted(self, slot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The starts, ends and requirements of the jobs on ``slot``."""
        used = self.end[slot] != np.inf
        return self.start[slot, used], self.end[slot, used], self.r[slot, used]


class CallRoom:
    """The room of each slot over one job's interval, during a call placing ``m`` jobs on a fleet.

    Slots ``[0, n)`` are the fleet's VMs, ``[n, n + m)`` the VMs the call may start; a slot is
    alive once it holds a VM (``alive`` from the fleet's VM types, then :meth:`opened`). The jobs the
    call places are kept beside the fleet's (which it only reads).
    """

    def __init__(self, occupancy: Occupancy, capacity: np.ndarray, vm_type: np.ndarray, m: int) -> None:
        self.occupancy, self.n = occupancy, len(capacity)
        self.capacity = np.concatenate((capacity, np.full(m, np.nan)))
        self.alive = np.concatenate((vm_type >= 0, np.zeros(m, dtype=bool)))
        self.dep_min = np.concatenate((occupancy.dep_min, np.full(m, np.inf)))
        self.start_max = np.concatenate((occupancy.start_max, np.full(m, -np.inf)))
        self._placed: dict[int, tuple[list[float], list[float], list[float]]] = {}

    def opened(self, j: int, capacity: float) -> None:
        """A new VM of ``capacity`` was started in slot ``j``."""
        self.alive[j], self.capacity[j] = True, capacity

    def add(self, j: int, start: float, end: float, r: float) -> None:
        """A job holding ``r`` over ``[start, end)`` was put on slot ``j``."""
        starts, ends, rs = self._placed.setdefault(j, ([], [], []))
        starts.append(start)
        ends.append(end)
        rs.append(r)
        self.dep_min[j] = min(self.dep_min[j], end)
        self.start_max[j] = max(self.start_max[j], start)

    def rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The intervals on ``rows``: the fleet's jobs, then this call's."""
        occ, n = self.occupancy, self.n
        if len(rows) and rows.max() < n:
            start, end, r = occ.start[rows], occ.end[rows], occ.r[rows]
        else:
            k = occ.r.shape[1]
            start, end, r = np.full((len(rows), k), -np.inf), np.full((len(rows), k), np.inf), np.zeros((len(rows), k))
            old = rows < n
            start[old], end[old], r[old] = occ.start[rows[old]], occ.end[rows[old]], occ.r[rows[old]]
        if not self._placed:
            return start, end, r
        touched = [(p, self._placed[j]) for p, j in enumerate(rows.tolist()) if j in self._placed]
        if not touched:
            return start, end, r
        width = max(len(placed[0]) for _, placed in touched)
        more = np.full((3, len(rows), width), [[[-np.inf]], [[np.inf]], [[0.0]]])
        for p, (starts, ends, rs) in touched:
            more[:, p, :len(starts)] = starts, ends, rs
        return np.hstack((start, more[0])), np.hstack((end, more[1])), np.hstack((r, more[2]))

    def over(self, free: np.ndarray, s: np.ndarray, e: np.ndarray, *, need: float | None = None) -> np.ndarray:
        """Room of every slot over ``[s[j], e[j])`` (``-inf`` for a slot without a VM).

        ``free`` is each slot's capacity less every job it hosts or was given in this call, a lower
        bound of the room and the room itself where every job is running at ``s`` and none ends by
        then. With ``need``, slots whose ``free`` already holds it keep ``free`` (enough to tell
        whether a job of that size fits, not to rank by room).
        """
        exact = self.alive & ((self.dep_min <= s) | (self.start_max > s))
        if need is not None:
            exact &= free < need
        room = np.where(self.alive, free, -np.inf)
        rows = np.flatnonzero(exact)
        if len(rows):
            room[rows] = self.capacity[rows] - peaks(*self.rows(rows), s[rows], e[rows])
        return room
