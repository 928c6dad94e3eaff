"""Room on a VM over a job's own interval: the interval capacity rule.

A job holds its requirement ``r`` over ``[start, end)`` (CoH paper §2: a job ``(r, a, d)`` uses
``r`` over ``[a, d)``). A VM has room for a new job if, at every instant of the job's interval, the
requirements of the jobs it hosts then, plus the job's, stay within its capacity: jobs that leave
before the job starts do not count, nor do jobs that start after it ends.

The old rule (``"tick"``) held a job's requirement from the decision tick that placed it, so a job
decided 130 s before its arrival saw the capacity of jobs leaving in between as still taken; it is
kept so that the earlier figures can be reproduced.

:class:`Occupancy` is the plain data a fleet snapshot carries of its VMs' hosted jobs: one padded
row of intervals per slot. :func:`peak` and :func:`room` are the rule as written above, over a
handful of intervals; :func:`peaks` is the same peak over many rows at once (NumPy).

Requirements and capacities are whole numbers (checked where job tables and price books are
built), so every sum of them here is exact in any order.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

CapacityRule = Literal["interval", "tick"]
#: The capacity rules: a job's requirement held over its own interval, or from its decision tick.
CAPACITY_RULES: tuple[str, ...] = ("interval", "tick")
#: One hosted job: its start, end and requirement.
Interval = tuple[float, float, float]


def peak(intervals: Iterable[Interval], s: float, e: float) -> float:
    """The largest summed requirement of ``intervals`` (``[start, end)``, ``r``) at any instant of ``[s, e)``.

    The load is a step function that rises only at a start, so its largest value over the window is
    at ``s`` or at a start inside it.
    """
    held = list(intervals)
    instants = [s, *(a for a, _, _ in held if s < a < e)]
    return max(sum(r for a, b, r in held if a <= t < b) for t in instants)


def room(capacity: float, intervals: Iterable[Interval], s: float, e: float) -> float:
    """A VM's room over ``[s, e)``: its capacity less the :func:`peak` of the jobs it holds."""
    return capacity - peak(intervals, s, e)


def peaks(start: np.ndarray, end: np.ndarray, r: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Row by row, :func:`peak` of the intervals ``[start, end)`` over ``[s, e)`` (``[rows, k]`` arrays).

    An unused entry is ``(-inf, inf, 0)``. The load at ``s``; then, for a row with a start inside
    the window, a sweep over its starts and ends in time order, an end before a start at the same
    instant (``[start, end)`` is half open). After the last event at an instant the running sum is
    the load there, and no partial sum at an instant exceeds the load just before or at it, so the
    peak is the largest running sum at an event inside ``(s, e)``, or the load at ``s``.
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


@dataclass(frozen=True, slots=True)
class Occupancy:
    """The jobs each slot of a fleet hosts (placed, not departed), as intervals: plain arrays.

    ``start``, ``end`` and ``r`` are ``[slots, k]``, one row per slot, its jobs in any order and the
    rest of the row unused (``(-inf, inf, 0)``: it holds nothing at any instant and never starts
    inside a window); ``dep_min`` and ``start_max`` are each row's earliest end (``inf`` for an
    empty row) and latest start (``-inf``). Read only: the engine hands out read-only views, valid
    for the decision they are given to.

    :meth:`ending_by` and :meth:`latest_start` are kept once asked for, so that every member of a
    portfolio reads them at the cost of one; the engine calls :meth:`forget` when the arrays change
    under the views (each time it hands a fleet out).

    ``by_end``, when given, is the same jobs as three lists ordered by end: their ends, slots and
    requirements (the engine keeps them as jobs are placed and leave; read only, like the arrays).
    :meth:`ending_lists` then slices them instead of reading the arrays (the same jobs, checked).
    """

    start: np.ndarray
    end: np.ndarray
    r: np.ndarray
    dep_min: np.ndarray
    start_max: np.ndarray
    by_end: tuple[list[float], list[int], list[float]] | None = field(default=None, repr=False, compare=False)
    _ending: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _latest: list[float] = field(default_factory=list, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, rows: Sequence[Sequence[Interval]], width: int | None = None) -> Occupancy:
        """The occupancy of slots hosting ``rows[j]`` (each ``(start, end, r)``), padded to ``width``."""
        k = max([width or 0, *(len(row) for row in rows)]) or 1
        start, end, r = np.full((len(rows), k), -np.inf), np.full((len(rows), k), np.inf), np.zeros((len(rows), k))
        for j, row in enumerate(rows):
            for p, (a, b, x) in enumerate(row):
                start[j, p], end[j, p], r[j, p] = a, b, x
        return cls(start, end, r, end.min(axis=1), start.max(axis=1))

    def ending_by(self, horizon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The slot, end and requirement of every hosted job that ends by ``horizon``, by end (read only)."""
        kept = self._ending.get(horizon)
        if kept is None:
            rows = (self.dep_min <= horizon).nonzero()[0]  # the rows holding one (most hold none)
            held, col = (self.end[rows] <= horizon).nonzero()
            slots = rows[held]
            end = self.end[slots, col]
            order = np.argsort(end, kind="stable")
            kept = self._ending[horizon] = (_read_only(slots[order]), _read_only(end[order]),
                                            _read_only(self.r[slots, col][order]))
        return kept

    def ending_lists(self, horizon: float) -> tuple[list[int], list[float], list[float]]:
        """:meth:`ending_by` as fresh lists the caller owns (jobs of equal end in any order)."""
        if self.by_end is None:
            slots, end, r = self.ending_by(horizon)
            return slots.tolist(), end.tolist(), r.tolist()
        ends, held, rs = self.by_end
        k = bisect_right(ends, horizon)
        return held[:k], ends[:k], rs[:k]

    def latest_start(self) -> float:
        """The latest start of any hosted job (``-inf`` for none)."""
        if not self._latest:
            self._latest.append(float(self.start_max.max()) if len(self.start_max) else -math.inf)
        return self._latest[0]

    def forget(self) -> None:
        """Drop what :meth:`ending_by` and :meth:`latest_start` kept: the arrays changed."""
        self._ending.clear()
        self._latest.clear()

    def hosted(self, slot: int) -> list[Interval]:
        """The intervals of the jobs on ``slot``."""
        used = self.end[slot] != np.inf
        return list(zip(self.start[slot, used].tolist(), self.end[slot, used].tolist(), self.r[slot, used].tolist(),
                        strict=True))

    def frozen(self) -> Occupancy:
        """A copy that no longer reads the live run (for keeping a snapshot past its decision)."""
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


def _read_only(values: np.ndarray) -> np.ndarray:
    values.flags.writeable = False
    return values
