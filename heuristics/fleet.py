"""What a placement heuristic sees and returns.

The jobs to place (:class:`Batch`), the VMs already leased (:class:`Fleet`), and the placement
(:class:`Plan`).

These are plain snapshots of arrays so that heuristics stay pure functions, independent of the
engine: same batch, fleet and seed give the same plan. They are read only by contract, not frozen
dataclasses: the engine makes a fleet, a batch and a plan at every decision tick, and a frozen
dataclass sets each field through ``object.__setattr__`` (2 us for the fleet's 20, against 0.3 us).
A frozen dataclass would not keep its arrays from being written either.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from heuristics.occupancy import Occupancy


@dataclass(slots=True)
class Batch:
    """Jobs to place at one tick, in arrival order.

    ``index`` are the jobs' positions in the run's job table; ``arrival`` and ``runtime`` are in
    seconds, ``r`` in capacity units, ``user`` an integer id (-1 unknown).
    """

    index: np.ndarray
    arrival: np.ndarray
    runtime: np.ndarray
    r: np.ndarray
    user: np.ndarray

    def __len__(self) -> int:
        return len(self.index)

    def part(self, lo: int, hi: int) -> Batch:
        """The jobs at positions ``lo`` to ``hi - 1``."""
        return Batch(index=self.index[lo:hi], arrival=self.arrival[lo:hi], runtime=self.runtime[lo:hi],
                     r=self.r[lo:hi], user=self.user[lo:hi])


#: The statistics of a VM's jobs that every fleet snapshot shows as they are; the others are
#: refreshed only when the snapshot is asked for them (``SimulationView.fleet(stats=True)``): a VM's
#: latest departure does not change when a job leaves (jobs leave in order of their departures).
CURRENT_STATS = frozenset({"dep_max"})


@dataclass(slots=True)
class Fleet:
    """The leased VMs at one tick, one entry per engine slot (dead slots have ``vm_type < 0``, ``free < 0``).

    Times are seconds; capacities in capacity units. Statistics of a VM's current jobs
    (``arr_min``, ``arr_max``, ``dep_*``) are ``nan`` for a VM that hosts none; ``arr_sum`` is the
    sum of their arrivals. :attr:`rollover` is the time until the VM's current billing unit of
    ``btu`` seconds rolls over; ``new_rollover`` the same for a VM started now.
    ``anchor`` is where a VM's billing units are counted from and ``last_departure`` the latest
    departure of any job it has hosted (its boot start if none): the IPP objective needs both.
    ``type_capacity`` lists every VM type's capacity and ``type_order`` the types by decreasing
    capacity per dollar (the Cost-Efficient VM-type rule takes the first that holds the job).
    ``rate`` is what one more billing unit of each VM costs ($): its price, or 0 for a reservation
    billed every hour whether it runs or not (a heavy reserved instance).
    Every VM was started by ``now`` (it is ready by ``now + boot_time``) and its jobs start at or
    after it is ready; requirements and capacities are whole numbers (checked where they enter).
    ``occupancy`` is the VMs' hosted jobs as intervals under the interval capacity rule
    (:mod:`heuristics.occupancy`), ``None`` under the tick rule, where a VM has room for a job when
    its ``free`` capacity holds it. A slot holds a VM when its ``vm_type`` is not negative (under the
    interval rule a VM's ``free`` can be below zero: jobs that never overlap share its capacity).
    """

    now: float
    boot_time: float
    free: np.ndarray
    capacity: np.ndarray
    vm_type: np.ndarray
    ready_at: np.ndarray
    anchor: np.ndarray
    last_departure: np.ndarray
    n_jobs: np.ndarray
    arr_min: np.ndarray
    arr_max: np.ndarray
    arr_sum: np.ndarray
    dep_min: np.ndarray
    dep_max: np.ndarray
    btu: float
    new_rollover: float
    type_capacity: np.ndarray
    type_order: np.ndarray
    rate: np.ndarray
    occupancy: Occupancy | None = None

    def __len__(self) -> int:
        return len(self.free)

    @property
    def arr_mean(self) -> np.ndarray:
        """Mean arrival (s) of each VM's jobs; ``nan`` for a VM hosting none."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_jobs > 0, self.arr_sum / self.n_jobs, np.nan)

    @property
    def rollover(self) -> np.ndarray:
        """Seconds until each VM's current billing unit rolls over."""
        return self.btu - np.mod(self.now - self.anchor, self.btu)

    def cost_efficient_type(self, r: float) -> int:
        """The most cost-efficient VM type whose capacity holds requirement ``r``."""
        for k in self.type_order:
            if self.type_capacity[k] >= r:
                return int(k)
        raise ValueError(f"no VM type holds a job of requirement {r}")


@dataclass(slots=True)
class Plan:
    """A placement of every job of a batch.

    ``jobs[p]`` (a position in the batch) goes to VM ``targets[p]``: an existing fleet slot when
    ``targets[p] < n_slots``, else the new VM ``targets[p] - n_slots``, of type
    ``new_types[targets[p] - n_slots]``, started now.
    """

    jobs: np.ndarray
    targets: np.ndarray
    new_types: np.ndarray
    n_slots: int

    def __len__(self) -> int:
        return len(self.jobs)


def placed(fleet: Fleet, batch: Batch, plan: Plan, *, anchor: float, hourly: np.ndarray) -> Fleet:
    """The fleet as ``plan`` leaves it at ``fleet.now``.

    The plan's new VMs come after the others, booting, billed from ``anchor`` at ``hourly`` of their
    type; each job runs on its VM from ``max(arrival, now, ready)`` for its run time, and counts in
    the VM's free capacity, statistics, latest departure and (under the interval rule) occupancy.
    """
    n, now = len(fleet), fleet.now
    types = plan.new_types
    k = len(types)

    def grow(values: np.ndarray, new: np.ndarray | float) -> np.ndarray:
        return np.concatenate((values, np.broadcast_to(np.asarray(new, dtype=values.dtype), (k,))))

    capacity = grow(fleet.capacity, fleet.type_capacity[types])
    ready = grow(fleet.ready_at, now + fleet.boot_time)
    target = plan.targets
    arrival, r = batch.arrival[plan.jobs], batch.r[plan.jobs]
    start = np.maximum(np.maximum(arrival, now), ready[target])
    end = start + batch.runtime[plan.jobs]
    free, n_jobs, last = grow(fleet.free, capacity[n:]), grow(fleet.n_jobs, 0), grow(fleet.last_departure, now)
    arr_min, arr_max, arr_sum = grow(fleet.arr_min, np.nan), grow(fleet.arr_max, np.nan), grow(fleet.arr_sum, 0.0)
    dep_min, dep_max = grow(fleet.dep_min, np.nan), grow(fleet.dep_max, np.nan)
    for ufunc, values, out in ((np.subtract, r, free), (np.add, 1, n_jobs), (np.maximum, end, last),
                               (np.fmin, arrival, arr_min), (np.fmax, arrival, arr_max), (np.add, arrival, arr_sum),
                               (np.fmin, end, dep_min), (np.fmax, end, dep_max)):
        ufunc.at(out, target, values)
    occupancy = fleet.occupancy.with_jobs(target, start, end, r, n + k) if fleet.occupancy is not None else None
    return dataclasses.replace(
        fleet, free=free, capacity=capacity, vm_type=grow(fleet.vm_type, types), ready_at=ready,
        anchor=grow(fleet.anchor, anchor), last_departure=last, n_jobs=n_jobs, arr_min=arr_min, arr_max=arr_max,
        arr_sum=arr_sum, dep_min=dep_min, dep_max=dep_max, rate=grow(fleet.rate, hourly[types]), occupancy=occupancy)
