"""Invariant checks of ``validate=True`` CoH runs.

Every tick: every job handed to the policy is departed, running or waiting, exactly once; each job
is placed at most once and none is lost; no VM holds more than its capacity (recomputed from the
jobs on it, not trusted from the world's counters: under the interval capacity rule at any instant
its jobs run, under the tick rule summed over every job placed on it and not departed); no job starts before its
arrival or before its VM finished booting; with reservations, no more VMs hold an option than were
bought. At every release: the billed time covers the VM's whole life and every job it hosted, and a
heavy reservation goes only once the run drains. At the end: every job placed and departed, every
VM released.
With spot VMs (:mod:`broker.coh.spot`) also: every tick, no VM runs past its preemption and the spot
VMs without notice stay within the market's cap; at every release, a VM under notice goes by its
preemption and is billed no unit past it; at the end, every job completed exactly once (a
preempted job is placed again, so placements count its restarts).
A failed check raises :class:`~broker.sim.validate.InvariantError` naming the job or VM, the time and
the values.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from broker.coh.pool import Pool
from broker.pricing.billing import BOUNDARY_TOLERANCE, Billing
from broker.pricing.book import HEAVY
from broker.pricing.reservations import SPOT_CODE, UNRESERVED, ReservedCapacity
from broker.pricing.spot_offer import SpotOffer
from broker.sim.ledger import InstanceRecord
from broker.sim.validate import EPS, InvariantError, check_conservation
from workloads.jobs import JobTable


class FleetState(Protocol):
    """What the checks read of a CoH world."""

    jobs: JobTable
    pool: Pool
    reservations: ReservedCapacity
    billing: Billing
    job_slot: np.ndarray
    job_vm: np.ndarray
    job_start: np.ndarray
    job_end: np.ndarray
    departed: int

    @property
    def handed(self) -> int:
        """Jobs handed to the policy so far (arrived or within the look-ahead)."""
        ...

    @property
    def waiting(self) -> int:
        """Jobs handed to the policy and not placed yet."""
        ...



@runtime_checkable
class SpotState(Protocol):
    """What the spot checks read of a CoH world with spot VMs (:class:`broker.coh.spot.SpotCohWorld`)."""

    pool: Pool
    billing: Billing
    offer: SpotOffer
    doomed: dict[int, float]
    preempted: dict[int, float]
    completions: np.ndarray
    jobs: JobTable

    @property
    def spot_running(self) -> int:
        """Spot VMs running and not given notice."""
        ...


def check_spot_fleet(e: SpotState, now: float) -> None:
    """No VM outlives its notice; no more spot VMs without notice than the market's cap.

    The cap of the tick before counts at a tick boundary where it changes: the market's event comes
    after the decision tick of the same instant.
    """
    pool = e.pool
    n = pool.n_slots
    ids = pool.vm_id[:n]
    late = [int(v) for v in ids[ids >= 0].tolist() if e.doomed.get(int(v), np.inf) < now - EPS]
    if late:
        raise InvariantError(f"t={now}: VM {late[0]} runs past its preemption at {e.doomed[late[0]]}")
    alive_spot = (ids >= 0) & (pool.option[:n] == SPOT_CODE)
    unwarned = sum(1 for v in ids[alive_spot].tolist() if int(v) not in e.doomed)
    if unwarned != e.spot_running:
        raise InvariantError(f"t={now}: {unwarned} spot VMs without notice, the world counts {e.spot_running}")
    offer = e.offer
    cap = offer.cap(now)
    if now == offer.tick(now) * offer.gap_s:
        cap = max(cap, offer.cap(now - offer.gap_s))
    if unwarned > cap:
        raise InvariantError(f"t={now}: {unwarned} spot VMs run without notice, the market's cap is {cap}")


def check_spot_release(e: SpotState, record: InstanceRecord) -> None:
    """A VM given notice goes by its preemption instant and is billed no unit past it."""
    due = e.doomed.get(record.instance_id)
    if due is None:
        return
    if record.released_at > due + EPS:
        raise InvariantError(f"VM {record.instance_id}: released at {record.released_at}, after its preemption "
                             f"at {due}")
    if record.units > e.billing.units(record.anchor, due):
        raise InvariantError(f"VM {record.instance_id}: billed {record.units} unit(s), past its preemption at {due}")


class Validator:
    """Checks the invariants of one CoH world (see the module docstring)."""

    def __init__(self, world: FleetState, *, interval: bool = True) -> None:
        self.world = world
        self.interval = interval
        self._checked = 0

    def at_tick(self, now: float) -> None:
        """Checks after a decision tick at ``now``."""
        e = self.world
        placed = np.flatnonzero(e.job_slot >= 0)
        check_conservation(now, submitted=e.handed, done=e.departed, running=len(placed) - e.departed,
                           queued=e.waiting)
        self._check_new_starts(placed, now)
        active = placed[~(e.job_end[placed] <= now)]
        pool = e.pool
        load = np.bincount(e.job_slot[active], weights=e.jobs.r[active], minlength=pool.n_slots)
        alive = pool.alive
        if self.interval:
            self._check_peaks(now, active)
        else:
            over = np.flatnonzero(alive & (load > pool.capacity[: pool.n_slots] + EPS))
            if len(over):
                s = over[0]
                raise InvariantError(f"t={now}: VM {pool.vm_id[s]} holds {load[s]} > capacity {pool.capacity[s]}")
        held = pool.capacity[: pool.n_slots] - pool.free[: pool.n_slots]
        drift = np.flatnonzero(alive & (np.abs(held - load) > EPS))
        if len(drift):
            s = drift[0]
            raise InvariantError(f"t={now}: VM {pool.vm_id[s]} books {held[s]} used, its jobs hold {load[s]}")
        slots = e.job_slot[active]
        if np.any(pool.vm_id[slots] < 0):
            raise InvariantError(f"t={now}: a running job sits on a released VM")
        self._check_reservations(now)
        if isinstance(e, SpotState):
            check_spot_fleet(e, now)
        booting = np.flatnonzero(e.job_start[active] < pool.ready_at[slots] - EPS)
        if len(booting):
            i = active[booting[0]]
            raise InvariantError(f"job {e.jobs.job_id[i]} starts at {e.job_start[i]} on VM {e.job_vm[i]} "
                                 f"before it finished booting at {pool.ready_at[e.job_slot[i]]}")

    def _check_peaks(self, now: float, active: np.ndarray) -> None:
        """Under the interval rule: at no instant do the jobs running on a VM need more than its capacity."""
        e = self.world
        slot, r = e.job_slot[active], e.jobs.r[active]
        events_slot = np.concatenate((slot, slot))
        events_time = np.concatenate((e.job_start[active], e.job_end[active]))
        delta = np.concatenate((r, -r))
        order = np.lexsort((delta, events_time, events_slot))  # a job leaving makes room for one starting then
        load = np.cumsum(delta[order])  # every slot's events sum to 0, so the running sum restarts per slot
        capacity = e.pool.capacity[events_slot[order]]
        over = np.flatnonzero(load > capacity + EPS)
        if len(over):
            k = order[over[0]]
            s = events_slot[k]
            raise InvariantError(f"t={now}: VM {e.pool.vm_id[s]} holds {load[over[0]]} > capacity "
                                 f"{e.pool.capacity[s]} from t={events_time[k]}")

    def _check_reservations(self, now: float) -> None:
        e = self.world
        pool = e.pool
        alive = pool.alive
        held = np.zeros_like(e.reservations.limit)
        np.add.at(held, (pool.vm_type[: pool.n_slots][alive], pool.option[: pool.n_slots][alive]), 1)
        held[:, list(UNRESERVED)] = 0  # on-demand and spot are no reservations
        if np.any(held > e.reservations.limit) or np.any(held != e.reservations.in_use):
            raise InvariantError(f"t={now}: VMs per (type, option) {held.tolist()} vs bought "
                                 f"{e.reservations.limit.tolist()} / booked in use {e.reservations.in_use.tolist()}")

    def _check_new_starts(self, placed: np.ndarray, now: float) -> None:
        e = self.world
        placements = len(placed) + getattr(e, "restarts_total", 0)  # a preempted job was placed once more
        if placements < self._checked:
            raise InvariantError(f"t={now}: a placed job lost its VM")
        self._checked = placements
        start, arrival = e.job_start[placed], e.jobs.arrival[placed]
        early = np.flatnonzero(start < arrival - EPS)
        if len(early):
            i = placed[early[0]]
            raise InvariantError(
                f"job {e.jobs.job_id[i]} starts at {start[early[0]]} before its arrival {arrival[early[0]]}"
            )

    def at_release(self, record: InstanceRecord) -> None:
        """Checks for a VM just released: billed time >= leased time >= the life of its jobs."""
        e = self.world
        billed_until = record.anchor + record.units * e.billing.btu
        slack = max(EPS, BOUNDARY_TOLERANCE * e.billing.btu)  # a release this close after a boundary is on it
        if record.anchor > record.hired_at + EPS or billed_until < record.released_at - slack:
            raise InvariantError(f"VM {record.instance_id}: billed [{record.anchor}, {billed_until}] does not cover "
                                 f"its lease [{record.hired_at}, {record.released_at}]")
        if record.option == HEAVY and not e.departed == len(e.jobs):
            raise InvariantError(f"VM {record.instance_id}: heavy reservation released at {record.released_at} "
                                 f"with {len(e.jobs) - e.departed} job(s) still to run")
        if isinstance(e, SpotState):
            check_spot_release(e, record)
        jobs = np.flatnonzero(e.job_vm == record.instance_id)
        if len(jobs) != record.jobs_hosted:
            raise InvariantError(f"VM {record.instance_id}: ledger says {record.jobs_hosted} jobs, found {len(jobs)}")
        early = len(jobs) and e.job_start[jobs].min() < record.ready_at - EPS
        if early or (len(jobs) and e.job_end[jobs].max() > record.released_at + EPS):
            raise InvariantError(f"VM {record.instance_id}: a job ran outside "
                                 f"[{record.ready_at}, {record.released_at}]")

    def at_end(self) -> None:
        """Every job placed and departed; every VM released; ledger consistent."""
        e = self.world
        missing = np.flatnonzero(e.job_slot < 0)
        if len(missing):
            raise InvariantError(f"{len(missing)} job(s) never placed, e.g. job {e.jobs.job_id[missing[0]]}")
        if e.departed != len(e.jobs):
            raise InvariantError(f"{len(e.jobs) - e.departed} job(s) never departed")
        if np.any(e.pool.alive):
            raise InvariantError("VMs still leased at the end of the run")
        if isinstance(e, SpotState) and np.any(e.completions != 1):
            i = int(np.flatnonzero(e.completions != 1)[0])
            raise InvariantError(f"job {e.jobs.job_id[i]} completed {e.completions[i]} times")
        ids = [r.instance_id for r in e.pool.ledger.records]
        if len(set(ids)) != len(ids):
            raise InvariantError("a VM was released twice")
