"""Small hand-made IPP instances, fleets and batches, shared by the tests of the subset solver
(:mod:`broker.coh.subsets`), the instance builder (:mod:`broker.coh.instance`) and the IPP (:mod:`broker.coh.ipp`).

Two VM types, the price book's small (capacity 100, $0.065 an hour) and large (410, $0.26); one-hour billing units
counted from the start (``tests.broker.coh.ipp_cases.BILLING``, ``Billing()``: anchor(now) = now).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from broker.coh.ipp import CapacityRows, IppInstance
from heuristics.fleet import Batch, Fleet
from heuristics.occupancy import Occupancy

CAPACITY = np.array([100.0, 410.0])  # the price book's small and large VM types
HOURLY = np.array([0.065, 0.26])


def no_vms(m: int, **changes: Any) -> IppInstance:
    """``m`` jobs of r 10, each one unit on a new VM, all running at once (one type row); no running VM."""
    fields: dict[str, Any] = {
        "r": np.full(m, 10.0), "vm_slot": np.zeros(0, np.int64), "vm_room": np.zeros((0, m)),
        "vm_rows": CapacityRows.empty(0, m), "vm_hourly": np.zeros(0), "vm_base": np.zeros(0, np.int64),
        "vm_units": np.zeros((0, m), np.int64), "type_capacity": CAPACITY, "type_hourly": HOURLY,
        "new_units": np.ones(m, dtype=np.int64), "type_rows": np.ones((1, m), dtype=bool), "n_slots": 5}
    fields.update(changes)
    return IppInstance(**fields)


def one_vm(m: int, **changes: Any) -> IppInstance:
    """:func:`no_vms` plus one running VM (slot 3, $1 an hour, base 0, one unit for any job) with room 100
    for each job and no row."""
    fields: dict[str, Any] = {
        "vm_slot": np.array([3]), "vm_room": np.full((1, m), 100.0), "vm_rows": CapacityRows.empty(1, m),
        "vm_hourly": np.ones(1), "vm_base": np.zeros(1, np.int64), "vm_units": np.ones((1, m), np.int64)}
    fields.update(changes)
    return no_vms(m, **fields)


def fleet(free: list[float], capacity: list[float], vm_type: list[int], rate: list[float], *, now: float = 870.0,
          occupancy: Occupancy | None = None) -> Fleet:
    """VMs billed from 0, ready, idle since 0; boot 120 s, one-hour units."""
    n = len(free)
    one, nan = np.ones(n), np.full(n, np.nan)
    return Fleet(now=now, boot_time=120.0, free=np.array(free), capacity=np.array(capacity),
                 vm_type=np.array(vm_type, np.int64), ready_at=0 * one, anchor=0 * one, last_departure=0 * one,
                 n_jobs=np.zeros(n, np.int64), arr_min=nan, arr_max=nan, arr_sum=0 * one, dep_min=nan, dep_max=nan,
                 btu=3600.0, new_rollover=3600.0, type_capacity=CAPACITY, type_order=np.array([1, 0]),
                 rate=np.array(rate), occupancy=occupancy)


def batch(arrival: list[float], runtime: list[float], r: list[float]) -> Batch:
    m = len(arrival)
    return Batch(index=np.arange(m), arrival=np.array(arrival, float), runtime=np.array(runtime, float),
                 r=np.array(r, float), user=np.zeros(m, np.int64))
