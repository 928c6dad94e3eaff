"""The intervals of the jobs each VM of a CoH run hosts: the engine's side of the interval capacity rule.

:class:`IntervalTable` keeps one padded row of ``(start, end, r)`` per slot and hands the fleet
snapshot read-only views of it (:class:`heuristics.occupancy.Occupancy`): the heuristics see plain
arrays, the engine writes them one entry at a time.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from heapq import heappop, heappush

import numpy as np

from heuristics.occupancy import Interval, Occupancy, peak

#: The arrays of an :class:`IntervalTable`.
_TABLE_ARRAYS = ("start", "end", "r", "dep_min", "start_max")


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
        self._rows: list[dict[int, Interval]] = [{} for _ in range(size)]  # each row's used entries, by column
        # every entry by end: ends, slots, requirements (jobs of equal end in the order they came)
        self._by_end: tuple[list[float], list[int], list[float]] = ([], [], [])

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
        self._rows[slot][col] = (start, end, r)
        by_ends, by_slots, by_rs = self._by_end
        q = bisect_right(by_ends, end)
        by_ends.insert(q, end)
        by_slots.insert(q, slot)
        by_rs.insert(q, r)

    def remove(self, job: int) -> None:
        """Job ``job`` left its slot.

        The slot's earliest end and latest start are looked for again only when the job held one of
        them, among the row's used entries.
        """
        slot, col = self._where.pop(job)
        heappush(self._free[slot], col)
        starts, ends, rs, dep_min, start_max = self._cols
        row = self._rows[slot]
        start, end, r = row.pop(col)
        self._drop_by_end(slot, end, r)
        k = slot * self._width + col
        starts[k], ends[k], rs[k] = -math.inf, math.inf, 0.0
        if end == dep_min[slot] or start == start_max[slot]:  # both again, in one pass (the other one stays)
            first_end, last_start = math.inf, -math.inf
            for a, b, _ in row.values():
                if b < first_end:
                    first_end = b
                if a > last_start:
                    last_start = a
            dep_min[slot], start_max[slot] = first_end, last_start

    def _drop_by_end(self, slot: int, end: float, r: float) -> None:
        """Drop an entry ``(slot, end, r)`` from the by-end lists (jobs leave at their end: mostly the first)."""
        ends, slots, rs = self._by_end
        q = bisect_left(ends, end)
        while slots[q] != slot or rs[q] != r:
            q += 1
        del ends[q], slots[q], rs[q]

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
        twin._by_end = (list(self._by_end[0]), list(self._by_end[1]), list(self._by_end[2]))
        return twin

    def occupancy(self, n: int) -> Occupancy:
        """The snapshot of slots ``[0, n)``: read-only views, valid until the table changes."""
        views = []
        for values in (self.start[:n], self.end[:n], self.r[:n], self.dep_min[:n], self.start_max[:n]):
            view = values.view()
            view.flags.writeable = False
            views.append(view)
        start, end, r, dep_min, start_max = views
        return Occupancy(start, end, r, dep_min, start_max, by_end=self._by_end)

    @property
    def width(self) -> int:
        """Entries per row."""
        return self._width

    def peak(self, slot: int, s: float, e: float) -> float:
        """:func:`heuristics.occupancy.peak` of the jobs on ``slot`` over ``[s, e)``.

        When no job on the slot starts after ``s`` (the usual case: jobs are placed in order of
        arrival) the load only falls from ``s`` on, so the peak is the load at ``s``.
        """
        row = self._rows[slot].values()
        if self._cols[4][slot] > s:
            return peak(row, s, e)
        return sum([r for a, b, r in row if b > s])  # every job starts by s

    def entries(self, slot: int) -> list[Interval]:
        """The intervals on ``slot``, in no set order."""
        return list(self._rows[slot].values())
