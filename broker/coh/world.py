"""The tick engine: time, events, the policy hook and nothing specific to any policy.

Events are kept in one heap of ``(time, kind, sequence, payload)`` so that simultaneous events
resolve in a fixed order (SimPy's kernel does the same): job departures first, then the decision
tick, then billing deadlines — a VM that becomes idle at a deadline can still take new work before
it would be released. Billing deadlines are handled at their exact instant (``m`` seconds before a
unit rolls over), not on the tick grid, so a release is never late when ``m`` is below the tick.

Decision ticks lie on the grid ``k * tick``. The engine schedules only those on which something
can change: the next job entering the policy's look-ahead, a time the policy asks for
(``Policy.wakeup``), and — while jobs wait unplaced — the tick after any departure or release.
A job placed at time ``t`` on a VM that is ready at ``ready_at`` starts at
``max(arrival, t, ready_at)`` and departs ``runtime`` later; its requirement is held on the VM
from ``t`` to its departure.

With reserved instances (:class:`broker.reservations.ReservedCapacity`, CoH-R) the heavy ones are
leased, already booted, at the first tick and kept until the run drains; every VM the policy starts
takes a medium reservation of its type if one is free, else a light one, else it is on-demand.
The policy sees what one more unit of each VM costs in the fleet's ``rate`` (0 for heavy ones).
"""

from __future__ import annotations

import heapq
import itertools
import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from broker.coh.policy import Policy, batch_of
from broker.coh.pool import Pool
from broker.coh.validate import Validator
from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from broker.pricing.reservations import HEAVY_CODE, ReservedCapacity
from broker.sim.recorder import Recorder
from heuristics.fleet import Fleet, Plan
from workloads.jobs import JobTable

DEPARTURE, TICK, DEADLINE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Engine settings: ``tick`` and ``boot_time`` in seconds; ``validate`` checks invariants."""

    tick: float = 10.0
    boot_time: float = 120.0
    billing: Billing = field(default_factory=Billing)
    validate: bool = False

    def __post_init__(self) -> None:
        if self.tick <= 0:
            raise ValueError(f"tick must be > 0 s, got {self.tick}")
        if self.boot_time < 0:
            raise ValueError(f"boot_time must be >= 0 s, got {self.boot_time}")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What a run produced: per-job placement and times, the VM ledger, engine counters."""

    jobs: JobTable
    job_vm: np.ndarray
    job_start: np.ndarray
    job_end: np.ndarray
    ledger: list
    ticks: int
    events: int
    policy_stats: dict
    began: float = 0.0
    ended: float = 0.0
    upfront: float = 0.0


class Engine:
    """Replays a job table through a policy (see the module docstring)."""

    def __init__(self, jobs: JobTable, catalog: Catalog, policy: Policy, config: EngineConfig,
                 recorder: Recorder | None = None, reservations: ReservedCapacity | None = None) -> None:
        self.jobs, self.catalog, self.policy, self.config = jobs, catalog, policy, config
        self.reservations = reservations
        self.billing, self.boot_time = config.billing, config.boot_time
        self.recorder = recorder if recorder is not None else Recorder()
        self.pool = Pool(catalog, config.billing, config.boot_time)
        self.now = 0.0
        n = len(jobs)
        self._arrival, self._runtime, self._r = jobs.arrival.tolist(), jobs.runtime.tolist(), jobs.r.tolist()
        self.job_slot = np.full(n, -1, dtype=np.int64)
        self.job_vm = np.full(n, -1, dtype=np.int64)
        self.job_start = np.full(n, np.nan)
        self.job_end = np.full(n, np.nan)
        self._heap: list[tuple[float, int, int, object]] = []
        self._seq = itertools.count()
        self._next_new = 0
        self._waiting: list[int] = []
        self._tick_at, self._tick_gen, self._last_tick = math.inf, 0, -math.inf
        self.ticks = self.events = self.departed = 0
        self._validator = Validator(self) if config.validate else None
        _check_fits(jobs, catalog)

    # -- SimulationView -------------------------------------------------------------------
    def fleet(self, *, stats: bool) -> Fleet:
        """The leased VMs now (see :meth:`broker.pool.Pool.fleet`)."""
        return self.pool.fleet(self.now, stats=stats, arrival=self.jobs.arrival, departure=self.job_end)

    def vm_idle(self, slot: int) -> bool:
        """Whether the VM in ``slot`` hosts no job."""
        return int(self.pool.n_jobs[slot]) == 0

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> RunRecord:
        """Run to the end: every job departed and every VM released."""
        began = self._grid(self._next_visible_time())
        self._schedule_tick(began)
        if self.reservations is not None and began < math.inf:
            for k in self.reservations.heavy():
                self._start_vm(k, began, heavy=True)
        heap, pop = self._heap, heapq.heappop
        while heap:
            t, kind, _, payload = pop(heap)
            self.now = t
            self.events += 1
            if kind == DEPARTURE:
                self._depart(payload)  # type: ignore[arg-type]
            elif kind == TICK:
                if payload == self._tick_gen:
                    self._tick(t)
            else:
                self._deadline(payload)  # type: ignore[arg-type]
        if self._validator is not None:
            self._validator.at_end()
        began = began if began < math.inf else 0.0
        ended = max([began, *(v.released_at for v in self.pool.ledger)])
        upfront = self.reservations.upfront_share(ended - began) if self.reservations is not None else 0.0
        return RunRecord(self.jobs, self.job_vm, self.job_start, self.job_end, self.pool.ledger,
                         self.ticks, self.events, self.policy.stats(), began=began, ended=ended, upfront=upfront)

    def _push(self, t: float, kind: int, payload: object) -> None:
        heapq.heappush(self._heap, (t, kind, next(self._seq), payload))

    def _grid(self, t: float) -> float:
        tick = self.config.tick
        return max(math.ceil(t / tick) * tick, self._last_tick + tick)

    def _schedule_tick(self, t: float) -> None:
        if t < self._tick_at:
            self._tick_gen += 1
            self._tick_at = t
            self._push(t, TICK, self._tick_gen)

    def _next_visible_time(self) -> float:
        if self._next_new >= len(self._arrival):
            return math.inf
        return self._arrival[self._next_new] - self.policy.lookahead

    def _tick(self, now: float) -> None:
        self.ticks += 1
        self._last_tick, self._tick_at = now, math.inf
        end = bisect_right(self._arrival, now + self.policy.lookahead, lo=self._next_new)
        fresh = np.arange(self._next_new, end, dtype=np.int64)
        index = np.concatenate((np.array(self._waiting, dtype=np.int64), fresh)) if self._waiting else fresh
        self._next_new = end
        placed: set[int] = set()
        if len(index):
            j = self.jobs
            batch = batch_of(index, j.arrival, j.runtime, j.r, j.user)
            plan = self.policy.decide(now, batch, self)
            if plan is not None:
                placed = self._apply(plan, index, now)
        self._waiting = [i for i in index.tolist() if i not in placed] if len(placed) < len(index) else []
        if self._validator is not None:
            self._validator.at_tick(now)
        wake = min(self._next_visible_time(), self.policy.wakeup(now, self))
        if wake < math.inf:
            self._schedule_tick(self._grid(wake))

    def _apply(self, plan: Plan, index: np.ndarray, now: float) -> set[int]:
        if plan.n_slots != self.pool.n_slots:
            raise RuntimeError(f"policy {self.policy.name}: plan built on {plan.n_slots} slots, the pool has "
                               f"{self.pool.n_slots} (plans must come from this tick's fleet)")
        slots = [self._start_vm(int(k), now) for k in plan.new_types]
        n, pool = plan.n_slots, self.pool
        placed: set[int] = set()
        for p, t in zip(plan.jobs.tolist(), plan.targets.tolist(), strict=True):
            i = int(index[p])
            slot = t if t < n else slots[t - n]
            if self.job_slot[i] >= 0 or pool.vm_id[slot] < 0:
                raise RuntimeError(f"policy {self.policy.name}: job {self.jobs.job_id[i]} placed twice "
                                   f"or on a released VM (slot {slot}) at t={now}")
            start = max(self._arrival[i], now, float(pool.ready_at[slot]))
            end = start + self._runtime[i]
            pool.add(slot, i, self._r[i], self._arrival[i], end, self._runtime[i])
            if pool.free[slot] < -1e-9:
                raise RuntimeError(f"policy {self.policy.name}: VM {pool.vm_id[slot]} over capacity at t={now}")
            self.job_slot[i], self.job_vm[i] = slot, pool.vm_id[slot]
            self.job_start[i], self.job_end[i] = start, end
            self._push(end, DEPARTURE, i)
            placed.add(i)
        return placed

    def _start_vm(self, vm_type: int, now: float, *, heavy: bool = False) -> int:
        if self.reservations is None:
            slot = self.pool.start(vm_type, now)
        else:
            option, rate = self.reservations.acquire(vm_type, heavy=heavy)
            slot = self.pool.start(vm_type, now, option=option, rate=rate, booted=heavy)
        deadline = self.billing.deadline(float(self.pool.anchor[slot]), now)
        self._push(deadline, DEADLINE, (slot, int(self.pool.vm_id[slot])))
        return slot

    def _depart(self, job: int) -> None:
        self.pool.remove(int(self.job_slot[job]), job, self._r[job])
        self.departed += 1
        if self.departed % self.recorder.every == 0 or self.departed == len(self._arrival):
            self.recorder.progress(self.departed, len(self._arrival))
        if self._waiting:
            self._schedule_tick(self._grid(self.now))

    def _deadline(self, payload: tuple[int, int]) -> None:
        slot, vm_id = payload
        pool = self.pool
        if pool.vm_id[slot] != vm_id:
            return
        if pool.n_jobs[slot] == 0 and (self._draining() or self._may_release(slot)):
            vm_type, option = int(pool.vm_type[slot]), int(pool.option[slot])
            record = pool.release(slot, self.now)
            if self.reservations is not None:
                self.reservations.release(vm_type, option)
            if self._validator is not None:
                self._validator.at_release(record)
            if self._waiting:
                self._schedule_tick(self._grid(self.now))
            return
        self._push(self.now + self.billing.btu, DEADLINE, payload)

    def _may_release(self, slot: int) -> bool:
        """Heavy reservations stay until the run drains; any other idle VM goes if the policy agrees."""
        return int(self.pool.option[slot]) != HEAVY_CODE and self.policy.release_idle(self.now, slot, self)

    def _draining(self) -> bool:
        """No job left to run: every VM goes at its next deadline, whatever the policy says."""
        return self.departed == len(self._arrival)


def _check_fits(jobs: JobTable, catalog: Catalog) -> None:
    if len(jobs) and jobs.r.max() > catalog.capacity.max():
        i = int(jobs.r.argmax())
        raise ValueError(f"job {jobs.job_id[i]} ({jobs.source}) requires r={jobs.r[i]}, more than the largest "
                         f"instance type's capacity {catalog.capacity.max()}")
