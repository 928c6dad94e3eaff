"""The leased VMs of a run, as arrays indexed by *slot* (``SPEC.md`` §2, VM lifecycle).

A VM is *booting* until ``ready_at``, then *running* while it hosts jobs and *idle* when it hosts
none, until it is *released*; its slot is then reused by a later VM (always the lowest free slot),
and free slots at the end are dropped, so that a snapshot is as long as the fleet's highest slot.
Arrays make a fleet snapshot for the heuristics a handful of slices; per-slot job sets keep the
statistics of hosted jobs (arrival / departure min, max, mean), refreshed lazily for the slots a
departure touched. Each slot array is a NumPy view of an :class:`array.array` column (:attr:`Pool.col`)
over the same memory: the engine reads and writes single slots through the columns, at the speed of
a Python list, and the snapshots see every write without a copy.
Every released VM is closed in the instance ledger (:class:`broker.sim.ledger.Ledger`).
"""

from __future__ import annotations

import copy
import heapq
from array import array
from collections.abc import Sequence
from functools import reduce
from operator import add

import numpy as np

from broker.coh.intervals import IntervalTable
from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from broker.pricing.reservations import HEAVY_CODE, OD_CODE, OPTIONS
from broker.sim.ledger import InstanceRecord, Ledger
from heuristics.fleet import Fleet

_FLOAT_FIELDS = ("capacity", "free", "boot_start", "ready_at", "anchor", "last_departure", "busy",
                 "arr_min", "arr_max", "arr_sum", "dep_min", "dep_max", "rate", "marginal")
_INT_FIELDS = ("vm_id", "vm_type", "n_jobs", "hosted", "option")
#: The slot arrays a fleet snapshot shows, in :class:`~heuristics.fleet.Fleet`'s order.
_SNAPSHOT = ("free", "capacity", "vm_type", "ready_at", "anchor", "last_departure", "n_jobs", "arr_min", "arr_max",
             "arr_sum", "dep_min", "dep_max", "marginal")


class Columns:
    """The :class:`array.array` column behind each slot array of a :class:`Pool`, by the array's name."""

    free: array[float]
    capacity: array[float]
    boot_start: array[float]
    ready_at: array[float]
    anchor: array[float]
    last_departure: array[float]
    busy: array[float]
    arr_min: array[float]
    arr_max: array[float]
    arr_sum: array[float]
    dep_min: array[float]
    dep_max: array[float]
    rate: array[float]
    marginal: array[float]
    vm_id: array[int]
    vm_type: array[int]
    n_jobs: array[int]
    hosted: array[int]
    option: array[int]


class Pool:
    """Slot arrays of the VMs currently leased, and the ledger of the released ones."""

    vm_id: np.ndarray
    vm_type: np.ndarray
    n_jobs: np.ndarray
    hosted: np.ndarray
    capacity: np.ndarray
    free: np.ndarray
    boot_start: np.ndarray
    ready_at: np.ndarray
    anchor: np.ndarray
    last_departure: np.ndarray
    busy: np.ndarray
    arr_min: np.ndarray
    arr_max: np.ndarray
    arr_sum: np.ndarray
    dep_min: np.ndarray
    dep_max: np.ndarray
    option: np.ndarray
    rate: np.ndarray
    marginal: np.ndarray

    def __init__(self, catalog: Catalog, billing: Billing, boot_time: float, *, intervals: bool = True) -> None:
        self.catalog, self.billing, self.boot_time = catalog, billing, boot_time
        self.size = 0
        self.col = Columns()
        self.n_slots = 0
        self.next_id = 0
        self._spare: list[int] = []
        self.members: list[set[int]] = []
        self.dirty: set[int] = set()
        self.ledger = Ledger(billing)
        # the hosted jobs' intervals, kept only for the interval capacity rule
        self.table: IntervalTable | None = IntervalTable(0) if intervals else None
        self._type_order = catalog.efficiency_order()
        self._live: tuple[tuple[int, int, int], Fleet] | None = None
        self._grow(64)

    def _grow(self, size: int) -> None:
        for name in _FLOAT_FIELDS:
            self._resize(name, size, "d", -1.0 if name == "free" else np.nan)
        for name in _INT_FIELDS:
            self._resize(name, size, "q", -1 if name in ("vm_id", "vm_type") else 0)
        self.members.extend(set() for _ in range(size - self.size))
        if self.table is not None:
            self.table.grow(size)
        self.size = size

    def _resize(self, name: str, size: int, code: str, fill: float) -> None:
        column: array[float] = array(code, getattr(self.col, name)) if self.size else array(code)
        column.extend(array(code, [fill]) * (size - len(column)))
        self._set_column(name, column)

    def _set_column(self, name: str, column: array[float]) -> None:
        """``column`` behind slot array ``name``: the array becomes a view of it."""
        setattr(self.col, name, column)
        setattr(self, name, np.frombuffer(column, dtype=column.typecode))

    @property
    def alive(self) -> np.ndarray:
        """Boolean mask over ``[0, n_slots)`` of slots holding a leased VM."""
        return self.vm_id[: self.n_slots] >= 0

    def state(self, slot: int, now: float) -> str:
        """Lifecycle state of ``slot`` at ``now``: booting, running, idle or released."""
        if self.vm_id[slot] < 0:
            return "released"
        if now < self.ready_at[slot]:
            return "booting"
        return "running" if self.n_jobs[slot] else "idle"

    def start(self, vm_type: int, now: float, *, option: int = OD_CODE, rate: float | None = None,
              booted: bool = False) -> int:
        """Lease a VM of ``vm_type`` now; returns its slot.

        It boots for ``boot_time`` s unless ``booted``; it is billed ``rate`` $ per unit (the type's
        on-demand price by default) under billing ``option`` (a code of :data:`broker.pricing.reservations.OPTIONS`).
        """
        if self._spare:
            slot = heapq.heappop(self._spare)
        else:
            if self.n_slots == self.size:
                self._grow(2 * self.size)
            slot = self.n_slots
            self.n_slots += 1
        col = self.col  # single slots through the columns (a NumPy scalar write costs several times more)
        cap = float(self.catalog.capacity[vm_type])
        col.vm_id[slot], col.vm_type[slot] = self.next_id, vm_type
        col.capacity[slot] = col.free[slot] = cap
        col.boot_start[slot], col.ready_at[slot] = now, now + (0.0 if booted else self.boot_time)
        col.option[slot] = option
        col.rate[slot] = unit = float(self.catalog.hourly[vm_type]) if rate is None else rate
        # what one more unit costs: nothing for a heavy reservation, billed every hour anyway
        col.marginal[slot] = 0.0 if option == HEAVY_CODE else unit
        col.anchor[slot] = self.billing.anchor(now)
        col.last_departure[slot] = now
        col.busy[slot], col.hosted[slot], col.n_jobs[slot] = 0.0, 0, 0
        self.next_id += 1
        self._clear_stats(slot)
        return slot

    def add(self, slot: int, job: int, r: float, arrival: float, departure: float, runtime: float, *,
            start: float | None = None) -> None:
        """Put a job that runs from ``start`` (``departure - runtime`` if not given) to ``departure`` on ``slot``.

        ``free`` counts it until it departs; the interval capacity rule reads its interval from the
        slot's row of :attr:`table`.
        """
        if self.table is not None:
            self.table.add(slot, job, departure - runtime if start is None else start, departure, r)
        col = self.col
        col.free[slot] -= r
        self.members[slot].add(job)
        n = col.n_jobs[slot]
        col.n_jobs[slot] = n + 1
        col.hosted[slot] += 1
        col.busy[slot] += r * runtime
        if departure > col.last_departure[slot]:
            col.last_departure[slot] = departure
        if slot in self.dirty:  # refreshed from the members when a snapshot asks, but for the latest departure
            if departure > col.dep_max[slot]:
                col.dep_max[slot] = departure
            return
        if n == 0:
            col.arr_min[slot] = col.arr_max[slot] = col.arr_sum[slot] = arrival
            col.dep_min[slot] = col.dep_max[slot] = departure
            return
        if arrival < col.arr_min[slot]:
            col.arr_min[slot] = arrival
        if arrival > col.arr_max[slot]:
            col.arr_max[slot] = arrival
        if departure < col.dep_min[slot]:
            col.dep_min[slot] = departure
        if departure > col.dep_max[slot]:
            col.dep_max[slot] = departure
        col.arr_sum[slot] += arrival

    def remove(self, slot: int, job: int, r: float) -> None:
        """A job left ``slot`` at its departure: free its capacity.

        It leaves no later than any job the slot still hosts (those left before it), so their latest
        departure stays (:data:`heuristics.fleet.CURRENT_STATS`); the other statistics wait for a
        refresh, but those of a slot left without jobs, which are known.
        """
        col = self.col
        col.free[slot] += r
        self.members[slot].discard(job)
        if self.table is not None:
            self.table.remove(job)
        n = col.n_jobs[slot] = col.n_jobs[slot] - 1
        if n:
            self.dirty.add(slot)
        else:
            self._clear_stats(slot)
            self.dirty.discard(slot)

    def evict(self, slot: int, job: int, r: float, run_s: float, done_s: float) -> None:
        """Take a job off ``slot`` before its departure (a preemption): its ``run_s`` s run is cut after ``done_s``.

        The slot no longer counts it among the jobs it hosted, and its busy capacity-time keeps only
        the ``done_s`` seconds the job ran, so a VM emptied this way can be released (:meth:`release`).
        """
        self.remove(slot, job, r)
        col = self.col
        col.hosted[slot] -= 1
        col.busy[slot] -= r * (run_s - done_s)

    def release(self, slot: int, now: float) -> InstanceRecord:
        """Release an idle VM now, close it in the ledger, and free the slot."""
        col = self.col
        if col.n_jobs[slot]:
            raise RuntimeError(f"VM {col.vm_id[slot]} released at {now} while hosting {col.n_jobs[slot]} job(s)")
        record = self.ledger.close(
            col.vm_id[slot], self.catalog.names[col.vm_type[slot]], hired_at=col.boot_start[slot],
            ready_at=col.ready_at[slot], released_at=now, anchor=col.anchor[slot], hourly=col.rate[slot],
            jobs_hosted=col.hosted[slot], busy_capacity_s=col.busy[slot], capacity=col.capacity[slot],
            option=OPTIONS[col.option[slot]])
        col.vm_id[slot], col.vm_type[slot], col.free[slot] = -1, -1, -1.0
        self.dirty.discard(slot)
        heapq.heappush(self._spare, slot)
        if slot == self.n_slots - 1:
            self._trim()
        return record

    def _trim(self) -> None:
        """Drop the free slots at the end: snapshots stay as long as the VMs, not the busiest hour.

        The next VM still takes the lowest free slot (a trimmed slot is taken again by growing).
        """
        n = self.n_slots
        while n and self.vm_id[n - 1] < 0:
            n -= 1
        self.n_slots = n
        self._spare = [slot for slot in self._spare if slot < n]
        heapq.heapify(self._spare)

    def copy(self) -> Pool:
        """An independent copy of the slots and the ledger (the catalog and billing are shared)."""
        twin = copy.copy(self)
        twin.col = Columns()
        for name in (*_FLOAT_FIELDS, *_INT_FIELDS):
            column = getattr(self.col, name)
            twin._set_column(name, array(column.typecode, column))
        twin.members = [set(m) for m in self.members]
        twin.dirty, twin._spare, twin.ledger = set(self.dirty), list(self._spare), self.ledger.copy()
        twin.table = self.table.copy() if self.table is not None else None
        twin._live = None
        return twin

    def fleet(self, now: float, *, stats: bool, arrival: Sequence[float], departure: Sequence[float]) -> Fleet:
        """Snapshot for the heuristics; ``stats`` refreshes the hosted-job statistics first.

        Under the interval capacity rule the snapshot carries the hosted jobs' intervals
        (:class:`~heuristics.occupancy.Occupancy`, views of :attr:`table`). The snapshot is live: its
        arrays are read-only views of the pool's, made again only when the slot count or an array
        changes, and the same object is handed out again with its clock (``now``, ``new_rollover``)
        set; a caller that keeps a snapshot past the tick keeps a copy.
        """
        if stats and self.dirty:
            self._refresh(arrival, departure)
        key = (self.n_slots, self.size, self.table.width if self.table is not None else 0)
        live = self._live
        fleet = live[1] if live is not None and live[0] == key else self._snapshot(now, key)
        if fleet.occupancy is not None:
            fleet.occupancy.forget()  # the table changed since the last decision
        billing = self.billing
        fleet.now, fleet.new_rollover = now, billing.time_to_rollover(billing.anchor(now), now)
        return fleet

    def _snapshot(self, now: float, key: tuple[int, int, int]) -> Fleet:
        """The live fleet of :meth:`fleet`: views of slots ``[0, n_slots)``, kept with ``key`` (slot count, arrays)."""
        n, table = self.n_slots, self.table
        (free, capacity, vm_type, ready_at, anchor, last_departure, n_jobs, arr_min, arr_max, arr_sum, dep_min, dep_max,
         rate) = (_read_only(getattr(self, name)[:n]) for name in _SNAPSHOT)
        fleet = Fleet(now, self.boot_time, free, capacity, vm_type, ready_at, anchor, last_departure, n_jobs, arr_min,
                      arr_max, arr_sum, dep_min, dep_max, self.billing.btu, 0.0, self.catalog.capacity,
                      self._type_order, rate, table.occupancy(n) if table is not None else None)
        self._live = (key, fleet)
        return fleet

    def _clear_stats(self, slot: int) -> None:
        col = self.col
        col.arr_min[slot] = col.arr_max[slot] = col.dep_min[slot] = col.dep_max[slot] = np.nan
        col.arr_sum[slot] = 0.0

    def _refresh(self, arrival: Sequence[float], departure: Sequence[float]) -> None:
        col = self.col
        for slot in self.dirty:
            members = list(self.members[slot])  # not empty: a slot left without jobs is not dirty
            a, d = [arrival[i] for i in members], [departure[i] for i in members]
            # added one after another, as add() does; arrivals are whole seconds (JobTable), exact in any order
            col.arr_min[slot], col.arr_max[slot], col.arr_sum[slot] = min(a), max(a), reduce(add, a)
            col.dep_min[slot], col.dep_max[slot] = min(d), max(d)
        self.dirty.clear()


def _read_only(view: np.ndarray) -> np.ndarray:
    """``view``, no longer writable: a heuristic reads the fleet, it never writes the pool through it."""
    view.flags.writeable = False
    return view
