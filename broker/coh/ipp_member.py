"""The integer program as a CoH portfolio member (paper §3.1-3.2).

:func:`make_instance` turns a tick's batch and fleet into an :class:`~broker.coh.ipp.IppInstance`:
billing units computed exactly as :func:`broker.coh.objective.plan_cost` computes them, so the IPP's
objective and the heuristics' scores agree on every plan. Candidate running VMs are those with
room for the smallest job; identical ones (same free capacity, price, units) are kept at most M
times, and ``max_vms`` keeps the cheapest-to-use ones.

:class:`IppMember` solves one- and two-job instances exactly (:mod:`broker.coh.exact`) and larger
ones, up to ``max_jobs``, with a time- or work-limited solver, warm-started from the best
heuristic plan. When that plan already costs the instance's lower bound
(:meth:`~broker.coh.ipp.IppInstance.lower_bound`) it is optimal and no solver is called: the member
returns ``None`` and records the tick as OPTIMAL ("bound"). It also returns ``None`` when the
solver finds no plan: the heuristics are the safety net.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from broker.coh.exact import MAX_JOBS, solve_exact
from broker.coh.ipp import IppInstance, Rows, Symmetry, build_model, essential_rows
from broker.pricing.billing import Billing
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.occupancy import CallRoom
from solvers.base import Limit, Solver, Status

log = logging.getLogger(__name__)

def _units(end: np.ndarray, anchor: np.ndarray | float, btu: float) -> np.ndarray:
    return np.maximum(0, np.ceil((end - anchor) / btu)).astype(np.int64)


def make_instance(batch: Batch, fleet: Fleet, billing: Billing, hourly: np.ndarray, *,
                  max_vms: int | None = None, paid: bool = False, keep: np.ndarray | None = None) -> IppInstance:
    """The IPP of one tick (units consistent with :func:`broker.coh.objective.plan_cost`, same ``paid``).

    Capacity follows the fleet's rule: rows over the jobs' intervals when it carries an
    :class:`~heuristics.occupancy.Occupancy`, one row against the free capacity now when not.
    """
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
    inst = IppInstance(
        r=batch.r.astype(np.float64), vm_slot=slots, vm_room=room, vm_rows=rows, vm_hourly=fleet.rate[slots],
        vm_base=base, vm_units=units, type_capacity=fleet.type_capacity, type_hourly=hourly,
        new_units=_units(new_dep, billing.anchor(now), btu), type_rows=type_rows, n_slots=len(fleet),
    )
    return reduce_vms(inst, max_vms, keep=keep)


def _running_at(start: np.ndarray, end: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``[points, jobs]``: whether each job runs at each instant."""
    return (start[None, :] <= points[:, None]) & (points[:, None] < end[None, :])


def _capacity(batch: Batch, fleet: Fleet) -> tuple[np.ndarray, np.ndarray, tuple[Rows, ...]]:
    """Candidate running VMs (room for some job), their room per job and their capacity rows."""
    m = len(batch)
    if fleet.occupancy is None:
        slots = np.flatnonzero(fleet.free >= batch.r.min()) if m else np.empty(0, np.int64)
        free = fleet.free[slots]
        rows = tuple((np.ones((1, m), dtype=bool), free[j:j + 1].copy()) for j in range(len(slots)))
        return slots, np.repeat(free[:, None], m, axis=1), rows
    room = CallRoom(fleet.occupancy, fleet.capacity, fleet.vm_type, 0)
    start = np.maximum(batch.arrival[None, :], np.maximum(fleet.now, fleet.ready_at)[:, None])
    end = start + batch.runtime[None, :]
    over = np.column_stack([room.over(fleet.free, start[:, i], end[:, i]) for i in range(m)]) if m else \
        np.empty((len(fleet), 0))
    fits = over >= batch.r[None, :]
    slots = np.flatnonzero(fits.any(axis=1))
    rows = tuple(_vm_rows(room, int(j), start[j], end[j], fits[j]) for j in slots.tolist())
    return slots, over[slots], rows


def _vm_rows(room: CallRoom, j: int, start: np.ndarray, end: np.ndarray, fits: np.ndarray) -> Rows:
    """The capacity rows of running VM ``j``: instants where two or more of the jobs that fit it run."""
    hosted_start, hosted_end, hosted_r = (v[0] for v in room.rows(np.array([j])))
    later = hosted_start[(hosted_start > start.min()) & (hosted_start < end.max())]
    points = np.unique(np.concatenate((start[fits], later)))
    mask = _running_at(start, end, points) & fits[None, :]
    load = _running_at(hosted_start, hosted_end, points).astype(np.float64) @ hosted_r
    return essential_rows(mask, float(room.capacity[j]) - load)


def reduce_vms(inst: IppInstance, max_vms: int | None, *, keep: np.ndarray | None = None) -> IppInstance:
    """Drop running VMs identical to M earlier ones, then keep the ``max_vms`` cheapest to use.

    Identical: the same room, rows, price and units. Slots listed in ``keep`` (those the warm start
    uses) always stay, so the start remains a feasible point of the reduced model.
    """
    if len(inst.vm_slot) == 0:
        return inst
    rank = np.zeros(len(inst.vm_slot), dtype=np.int64)
    seen: dict[tuple[bytes, ...], int] = {}
    for j in range(len(inst.vm_slot)):
        mask, head = inst.vm_rows[j]
        key = (inst.vm_room[j].tobytes(), inst.vm_hourly[j].tobytes(), inst.vm_base[j].tobytes(),
               inst.vm_units[j].tobytes(), mask.tobytes(), head.tobytes())
        rank[j] = seen.get(key, 0)
        seen[key] = rank[j] + 1
    forced = np.isin(inst.vm_slot, keep) if keep is not None else np.zeros(len(inst.vm_slot), dtype=bool)
    chosen = np.flatnonzero((rank < inst.n_jobs) | forced)
    if max_vms is not None and len(chosen) > max_vms:
        cheapest = np.where(forced[chosen], -np.inf, inst.job_costs()[:, chosen].min(axis=0))
        chosen = np.sort(chosen[np.lexsort((chosen, cheapest))[:max(max_vms, int(forced.sum()))]])
    return dataclasses.replace(inst, vm_slot=inst.vm_slot[chosen], vm_room=inst.vm_room[chosen],
                               vm_rows=tuple(inst.vm_rows[j] for j in chosen.tolist()),
                               vm_hourly=inst.vm_hourly[chosen], vm_base=inst.vm_base[chosen],
                               vm_units=inst.vm_units[chosen])


@dataclass(frozen=True, slots=True)
class IppOutcome:
    """What the IPP did at one tick: status, proven bound ($), gap, wall time (s), path taken."""

    status: Status
    bound: float | None
    gap: float | None
    wall_s: float
    limit_hit: bool
    path: str
    n_vars: int = 0


class IppMember:
    """The time-limited integer program as a portfolio member (see the module docstring)."""

    name = "IPP"
    needs_stats = False

    def __init__(self, solver: Solver, limit: Limit, *, billing: Billing, hourly: np.ndarray, max_jobs: int = 50,
                 max_vms: int | None = None, warm_start: bool = True, fast_path: bool = True,
                 symmetry: Symmetry = "order", paid: bool = True) -> None:
        self.solver, self.limit, self.billing, self.hourly = solver, limit, billing, hourly
        self.max_jobs, self.max_vms, self.warm_start, self.fast_path = max_jobs, max_vms, warm_start, fast_path
        self.symmetry: Symmetry = symmetry
        self.paid = paid
        self.last: IppOutcome | None = None
        self.retries = 0

    def exact_applies(self, n_jobs: int) -> bool:
        """Whether a batch of ``n_jobs`` is solved exactly without a solver call."""
        return self.fast_path and 0 < n_jobs <= MAX_JOBS and n_jobs < self.max_jobs

    def plan(self, batch: Batch, fleet: Fleet, rng: np.random.Generator, incumbent: Plan | None = None) -> Plan | None:
        """Solve the tick's IPP; ``None`` if the batch is too large or no solution was found."""
        self.last = None
        if len(batch) >= self.max_jobs:
            return None
        started = time.perf_counter()
        keep = incumbent.targets[incumbent.targets < incumbent.n_slots] if incumbent is not None else None
        inst = make_instance(batch, fleet, self.billing, self.hourly, max_vms=self.max_vms, paid=self.paid, keep=keep)
        if self.fast_path and len(batch) <= MAX_JOBS:
            plan, cost = solve_exact(inst)
            self.last = IppOutcome(Status.OPTIMAL, cost, 0.0, time.perf_counter() - started, False, "exact")
            return plan
        if self.fast_path and incumbent is not None and self._incumbent_proven(inst, incumbent):
            self.last = IppOutcome(Status.OPTIMAL, inst.lower_bound(), 0.0, time.perf_counter() - started, False,
                                   "bound")
            return None
        return self._solve(inst, incumbent, started)

    @staticmethod
    def _incumbent_proven(inst: IppInstance, incumbent: Plan) -> bool:
        """Whether the heuristics' plan already meets the instance's lower bound (so it is optimal)."""
        return inst.cost(incumbent) <= inst.lower_bound() + 1e-9

    def _solve(self, inst: IppInstance, incumbent: Plan | None, started: float) -> Plan | None:
        ipp = build_model(inst, symmetry=self.symmetry)
        start = ipp.encode(incumbent) if (self.warm_start and incumbent is not None) else None
        result = self.solver.solve(ipp.model, limit=self._remaining(started), start=start)
        if result.status is Status.ERROR and start is not None:
            # the bundled CBC 2.10.3 crashes on some MIP starts (BENCHMARKS.md): try once more without
            log.warning("%s failed with a warm start (%s); retrying without it", self.solver.name, result.message)
            self.retries += 1
            result = self.solver.solve(ipp.model, limit=self._remaining(started))
        wall = time.perf_counter() - started
        self.last = IppOutcome(result.status, result.bound, result.gap, wall, result.limit_hit, self.solver.name,
                               ipp.model.n_vars)
        if not result.status.has_solution or result.values is None:
            return None
        return ipp.decode(result.values)

    def _remaining(self, started: float) -> Limit:
        """The wall limit less the time already spent on this tick (work limits are kept whole)."""
        if self.limit.is_deterministic or self.limit.seconds is None:
            return self.limit
        left = max(0.01, self.limit.seconds - (time.perf_counter() - started))
        return Limit.wall(left, threads=self.limit.threads)

    def describe(self) -> dict[str, Any]:
        """Settings, for results."""
        return {"solver": self.solver.name, "limit": str(self.limit), "max_jobs": self.max_jobs,
                "retries_without_start": self.retries,
                "max_vms": self.max_vms, "warm_start": self.warm_start, "fast_path": self.fast_path,
                "symmetry": self.symmetry, "paid": self.paid}
