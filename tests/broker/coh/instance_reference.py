"""The IPP instance as it was built before issue 17, VM by VM: the oracle of :mod:`broker.coh.instance`.

A plain loop over the candidate VMs (room by :func:`~heuristics.occupancy.room`, one job at a
time; each VM's rows from its own instants; implied rows by pairwise comparison; identical VMs by
their bytes). Slow, and written without the vectorized code it checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from broker.pricing.billing import Billing
from heuristics.fleet import Batch, Fleet
from heuristics.occupancy import room as room_over

Rows = tuple[np.ndarray, np.ndarray]


@dataclass
class Reference:
    vm_slot: np.ndarray
    vm_room: np.ndarray
    vm_rows: list[Rows]
    vm_hourly: np.ndarray
    vm_base: np.ndarray
    vm_units: np.ndarray
    new_units: np.ndarray
    type_rows: np.ndarray


def _units(end: np.ndarray, anchor: np.ndarray | float, btu: float) -> np.ndarray:
    return np.maximum(0, np.ceil((end - anchor) / btu)).astype(np.int64)


def _running_at(start: np.ndarray, end: np.ndarray, points: np.ndarray) -> np.ndarray:
    return (start[None, :] <= points[:, None]) & (points[:, None] < end[None, :])


def essential_rows(mask: np.ndarray, head: np.ndarray) -> Rows:
    many = mask.sum(axis=1) >= 2
    mask, head = mask[many], head[many]
    kept = []
    for p in range(len(mask)):
        dropped = False
        for q in range(len(mask)):
            if p == q:
                continue
            inside = not np.any(mask[p] & ~mask[q])
            if inside and head[q] <= head[p]:
                q_inside_p = not np.any(mask[q] & ~mask[p])
                same = q_inside_p and head[p] <= head[q]
                if not same or q < p:
                    dropped = True
                    break
        if not dropped:
            kept.append(p)
    return mask[kept], head[kept]


def reference_instance(batch: Batch, fleet: Fleet, billing: Billing, *, paid: bool = False) -> Reference:
    now, btu, m = fleet.now, billing.btu, len(batch)
    slots, room, rows = _capacity(batch, fleet)
    start = np.maximum(batch.arrival[None, :], np.maximum(now, fleet.ready_at[slots])[:, None])
    units = _units(start + batch.runtime[None, :], fleet.anchor[slots][:, None], btu)
    last = np.maximum(fleet.last_departure[slots], now) if paid else fleet.last_departure[slots]
    base = _units(last, fleet.anchor[slots], btu)
    new_start = np.maximum(batch.arrival, now + fleet.boot_time)
    new_dep = new_start + batch.runtime
    type_rows = np.ones((1, m), dtype=bool)
    if fleet.occupancy is not None:
        type_rows = essential_rows(_running_at(new_start, new_dep, new_start), np.zeros(m))[0]
    ref = Reference(slots, room, list(rows), fleet.rate[slots], base, units, _units(new_dep, billing.anchor(now), btu),
                    type_rows)
    return _drop_identical(ref, m)


def _capacity(batch: Batch, fleet: Fleet) -> tuple[np.ndarray, np.ndarray, list[Rows]]:
    m = len(batch)
    if fleet.occupancy is None:
        slots = np.flatnonzero(fleet.free >= batch.r.min()) if m else np.empty(0, np.int64)
        free = fleet.free[slots]
        return slots, np.repeat(free[:, None], m, axis=1), [(np.ones((1, m), bool), free[j:j + 1].copy())
                                                            for j in range(len(slots))]
    occ = fleet.occupancy
    start = np.maximum(batch.arrival[None, :], np.maximum(fleet.now, fleet.ready_at)[:, None])
    end = start + batch.runtime[None, :]
    over = np.array([[room_over(float(fleet.capacity[j]), occ.hosted(j), float(start[j, i]), float(end[j, i]))
                      if fleet.vm_type[j] >= 0 else -np.inf for i in range(m)] for j in range(len(fleet))])
    over = over.reshape(len(fleet), m)
    fits = over >= batch.r[None, :]
    slots = np.flatnonzero(fits.any(axis=1))
    rows = [_vm_rows(fleet, int(j), start[j], end[j], fits[j]) for j in slots.tolist()]
    return slots, over[slots], rows


def _vm_rows(fleet: Fleet, j: int, start: np.ndarray, end: np.ndarray, fits: np.ndarray) -> Rows:
    assert fleet.occupancy is not None
    held = fleet.occupancy.hosted(j)
    hosted_start, hosted_end, hosted_r = (np.array([h[k] for h in held]) for k in range(3))
    later = hosted_start[(hosted_start > start.min()) & (hosted_start < end.max())]
    points = np.unique(np.concatenate((start[fits], later)))
    mask = _running_at(start, end, points) & fits[None, :]
    load = _running_at(hosted_start, hosted_end, points).astype(np.float64) @ hosted_r
    return essential_rows(mask, float(fleet.capacity[j]) - load)


def _drop_identical(ref: Reference, m: int) -> Reference:
    seen: dict[tuple[bytes, ...], int] = {}
    chosen = []
    for j in range(len(ref.vm_slot)):
        mask, head = ref.vm_rows[j]
        key = (ref.vm_room[j].tobytes(), ref.vm_hourly[j].tobytes(), ref.vm_base[j].tobytes(),
               ref.vm_units[j].tobytes(), mask.tobytes(), head.tobytes())
        if seen.get(key, 0) < m:
            chosen.append(j)
        seen[key] = seen.get(key, 0) + 1
    return Reference(ref.vm_slot[chosen], ref.vm_room[chosen], [ref.vm_rows[j] for j in chosen],
                     ref.vm_hourly[chosen], ref.vm_base[chosen], ref.vm_units[chosen], ref.new_units, ref.type_rows)
