"""One tick's integer program: :func:`make_instance` turns a batch and a fleet into an IPP instance.

Billing units are computed exactly as :func:`broker.coh.objective.plan_cost` computes them, so the
IPP's objective and the heuristics' scores agree on every plan. Candidate running VMs are those with
room for some job; identical ones (same room, rows, price, units) are kept at most M times
(:func:`reduce_vms`), and ``max_vms`` keeps the cheapest to use.

Capacity follows the fleet's rule (:mod:`heuristics.occupancy`). Under the tick rule a VM has one
row, every job against its free capacity now. Under the interval rule a VM's room for a job is
measured over the job's own run, and its rows are the instants at which two or more of the jobs
that fit it alone would run on it, against its capacity less its own jobs' load then (the load
only rises where a job starts, so the instants are the new jobs' starts and the hosted jobs' later
starts; implied rows are dropped, :func:`broker.coh.ipp.essential`). Every step works on all VMs at
once: a tick's instance costs a few array operations, not a loop over the fleet.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from broker.coh.ipp import CapacityRows, IppInstance, essential, essential_rows
from broker.pricing.billing import Billing
from heuristics.fleet import Batch, Fleet
from heuristics.occupancy import peaks


def _units(end: np.ndarray, anchor: np.ndarray | float, btu: float) -> np.ndarray:
    return np.maximum(0, np.ceil((end - anchor) / btu)).astype(np.int64)


def make_instance(batch: Batch, fleet: Fleet, billing: Billing, hourly: np.ndarray, *,
                  max_vms: int | None = None, paid: bool = False, keep: np.ndarray | None = None,
                  reduce: bool = True) -> IppInstance:
    """The IPP of one tick (units consistent with :func:`broker.coh.objective.plan_cost`, same ``paid``).

    Capacity follows the fleet's rule: rows over the jobs' intervals when it carries an
    :class:`~heuristics.occupancy.Occupancy`, one row against the free capacity now when not.
    ``reduce=False`` keeps every candidate VM (:func:`reduce_vms` is not applied): the exact paths
    never pick a VM identical to M earlier ones, so they need not look for them.
    """
    now, btu, m = fleet.now, billing.btu, len(batch)
    start = np.maximum(batch.arrival[None, :], np.maximum(now, fleet.ready_at)[:, None])
    if fleet.occupancy is None:
        slots, room, rows = _tick_rule(batch, fleet)
    else:
        slots, room, rows = _interval_rule(batch, fleet, start, start + batch.runtime[None, :])
    start = start[slots]
    units = _units(start + batch.runtime[None, :], fleet.anchor[slots][:, None], btu)
    last = np.maximum(fleet.last_departure[slots], now) if paid else fleet.last_departure[slots]
    base = _units(last, fleet.anchor[slots], btu)
    new_start = np.maximum(batch.arrival, now + fleet.boot_time)
    new_dep = new_start + batch.runtime
    type_rows = np.ones((1, m), dtype=bool)
    if fleet.occupancy is not None:
        type_rows = essential_rows(_running_at(new_start, new_dep, new_start), np.zeros(m))[0]
    inst = IppInstance(
        r=batch.r.astype(np.float64), vm_slot=slots, vm_room=room, vm_rows=rows, vm_hourly=fleet.rate[slots],
        vm_base=base, vm_units=units, type_capacity=fleet.type_capacity, type_hourly=hourly,
        new_units=_units(new_dep, billing.anchor(now), btu), type_rows=type_rows, n_slots=len(fleet),
    )
    return reduce_vms(inst, max_vms, keep=keep) if reduce else inst


def _running_at(start: np.ndarray, end: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``[points, jobs]``: whether each job runs at each instant."""
    return (start[None, :] <= points[:, None]) & (points[:, None] < end[None, :])


def _tick_rule(batch: Batch, fleet: Fleet) -> tuple[np.ndarray, np.ndarray, CapacityRows]:
    """Candidate VMs (free capacity for the smallest job), their room (the free capacity) and one row each."""
    m = len(batch)
    slots = np.flatnonzero(fleet.free >= batch.r.min()) if m else np.empty(0, np.int64)
    free = fleet.free[slots]
    rows = CapacityRows(np.ones((len(slots), 1, m), dtype=bool), free[:, None].copy())
    return slots, np.repeat(free[:, None], m, axis=1), rows


def _interval_rule(batch: Batch, fleet: Fleet, start: np.ndarray,
                   end: np.ndarray) -> tuple[np.ndarray, np.ndarray, CapacityRows]:
    """Candidate VMs (room for some job over its run), their room per job and their capacity rows."""
    over = room_over(fleet, start, end)
    fits = over >= batch.r[None, :]
    slots = np.flatnonzero(fits.any(axis=1))
    return slots, over[slots], capacity_rows(fleet, slots, start[slots], end[slots], fits[slots])


def room_over(fleet: Fleet, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``[slots, jobs]``: each VM's room for each job over ``[start, end)`` (``-inf`` where no VM).

    The free capacity where every job on the VM runs at the job's start and none has left by then;
    elsewhere the capacity less the peak of its jobs' load over the interval.
    """
    occ = fleet.occupancy
    assert occ is not None
    alive = fleet.vm_type >= 0
    room = np.repeat(np.where(alive, fleet.free, -np.inf)[:, None], start.shape[1], axis=1)
    exact = alive[:, None] & ((occ.dep_min[:, None] <= start) | (occ.start_max[:, None] > start))
    vm, job = np.nonzero(exact)
    if len(vm):
        room[vm, job] = fleet.capacity[vm] - peaks(occ.start[vm], occ.end[vm], occ.r[vm], start[vm, job],
                                                   end[vm, job])
    return room


def capacity_rows(fleet: Fleet, slots: np.ndarray, start: np.ndarray, end: np.ndarray,
                  fits: np.ndarray) -> CapacityRows:
    """The capacity rows of the running VMs ``slots`` (module docstring), for jobs running ``[start, end)`` on each.

    ``start``, ``end`` and ``fits`` (the job fits the VM alone) are ``[len(slots), jobs]``. A row is
    an instant at which two or more of the jobs that fit run, in time order; a VM with fewer than
    two such jobs has none.
    """
    n, m = start.shape
    multi = np.flatnonzero(fits.sum(axis=1) >= 2)
    if not len(multi):
        return CapacityRows.empty(n, m)
    occ = fleet.occupancy
    assert occ is not None
    vms = slots[multi]
    hs, he, hr = occ.start[vms], occ.end[vms], occ.r[vms]
    s, e, f = start[multi], end[multi], fits[multi]
    later = (hs > s.min(axis=1, keepdims=True)) & (hs < e.max(axis=1, keepdims=True))
    cols = np.flatnonzero(later.any(axis=0))
    points = np.sort(np.hstack((np.where(f, s, np.nan), np.where(later[:, cols], hs[:, cols], np.nan))), axis=1)
    valid = ~np.isnan(points)
    valid[:, 1:] &= points[:, 1:] != points[:, :-1]
    at = points[:, :, None]
    mask = (s[:, None, :] <= at) & (at < e[:, None, :]) & f[:, None, :] & valid[:, :, None]
    load = (((hs[:, None, :] <= at) & (at < he[:, None, :])) * hr[:, None, :]).sum(axis=2)
    head = fleet.capacity[vms][:, None] - load
    keep = essential(mask, head, valid)
    width = int(keep.sum(axis=1).max())
    first = np.argsort(~keep, axis=1, kind="stable")[:, :width]  # kept rows first, in time order
    kept = np.take_along_axis(keep, first, axis=1)
    rows = CapacityRows(np.zeros((n, width, m), dtype=bool), np.full((n, width), np.inf))
    rows.mask[multi] = np.take_along_axis(mask, first[:, :, None], axis=1) & kept[:, :, None]
    rows.head[multi] = np.where(kept, np.take_along_axis(head, first, axis=1), np.inf)
    return rows


def reduce_vms(inst: IppInstance, max_vms: int | None, *, keep: np.ndarray | None = None) -> IppInstance:
    """Drop running VMs identical to M earlier ones, then keep the ``max_vms`` cheapest to use.

    Identical: the same room, rows, price and units. Slots listed in ``keep`` (those the warm start
    uses) always stay, so the start remains a feasible point of the reduced model.
    """
    n = len(inst.vm_slot)
    if n == 0:
        return inst
    rank = _rank_among_identical(inst)
    forced = np.isin(inst.vm_slot, keep) if keep is not None else np.zeros(n, dtype=bool)
    chosen = np.flatnonzero((rank < inst.n_jobs) | forced)
    if max_vms is not None and len(chosen) > max_vms:
        cheapest = np.where(forced[chosen], -np.inf, inst.job_costs()[:, chosen].min(axis=0))
        chosen = np.sort(chosen[np.lexsort((chosen, cheapest))[:max(max_vms, int(forced.sum()))]])
    if len(chosen) == n:
        return inst
    return dataclasses.replace(inst, vm_slot=inst.vm_slot[chosen], vm_room=inst.vm_room[chosen],
                               vm_rows=inst.vm_rows.take(chosen), vm_hourly=inst.vm_hourly[chosen],
                               vm_base=inst.vm_base[chosen], vm_units=inst.vm_units[chosen])


def _rank_among_identical(inst: IppInstance) -> np.ndarray:
    """For each running VM, how many earlier VMs are identical to it (byte for byte)."""
    n = len(inst.vm_slot)
    parts = (inst.vm_room, inst.vm_hourly, inst.vm_base, inst.vm_units, inst.vm_rows.mask, inst.vm_rows.head)
    raw = np.ascontiguousarray(np.hstack([np.ascontiguousarray(a).reshape(n, -1).view(np.uint8) for a in parts]))
    _, group = np.unique(raw.view(np.dtype((np.void, raw.shape[1])))[:, 0], return_inverse=True)
    order = np.argsort(group, kind="stable")
    sorted_group = group[order]
    first = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(first, np.diff(np.r_[first, n]))
    return rank
