"""The CoH fleet world on the kernel: VMs leased per billing unit, jobs placed at decision ticks.

A pausable state machine (``SPEC.md`` §2-§4): :meth:`CohWorld.advance` runs the kernel to the next
decision tick that has jobs to place and returns them as a :class:`Decision`; :meth:`CohWorld.act`
applies the policy's plan (possibly for only some of the jobs: the rest wait for a later tick).
:func:`run` is that loop with a :class:`~broker.coh.policy.Policy`.

Events at one instant go as job departure < decision tick < billing deadline (:mod:`broker.sim.kernel`
keeps the order): a tick sees capacity freed at the same instant, and a VM idle at its deadline can
take new work before it would be released. Deadlines are handled at their exact instant (``m``
seconds before a unit rolls over), not on the tick grid, so a release is never late when ``m`` is
below the tick. Decision ticks lie on the grid ``k * tick`` (:class:`~broker.sim.kernel.Ticker`) and
are scheduled only when something can change: the next job entering the policy's look-ahead and,
while jobs wait unplaced, the tick after a departure or a release.

A job placed at time ``t`` on a VM that is ready at ``ready_at`` starts at ``max(arrival, t,
ready_at)`` and departs ``runtime`` later; its requirement is held on the VM over that interval
(the interval capacity rule, the default) or from ``t`` to its departure (the tick rule of
``EngineConfig(capacity="tick")``, :mod:`heuristics.occupancy`). The reservations
(:mod:`broker.pricing.reservations`) decide which billing option a new VM takes; heavy
reservations are leased, already booted, at the first tick and kept until the run drains. Plain
CoH runs get the on-demand-only null object, so nothing here depends on the plan.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from dataclasses import dataclass, replace

import numpy as np

from broker.coh.config import EngineConfig
from broker.coh.policy import Policy, batch_of
from broker.coh.pool import Pool
from broker.coh.validate import Validator
from broker.pricing.book import Catalog
from broker.pricing.reservations import OnDemandOnly, ReservedCapacity
from broker.sim.kernel import Handler, Kernel, Ticker
from broker.sim.ledger import InstanceRecord
from broker.sim.recorder import Recorder
from broker.sim.world import World
from heuristics.fleet import Batch, Fleet, Plan
from workloads.errors import ConfigError
from workloads.jobs import JobTable

DEPARTURE, TICK, DEADLINE = 0, 1, 2


@dataclass(slots=True)
class Decision:
    """A decision point: the jobs to place at ``now`` (arrived or within the look-ahead, not yet placed)."""

    now: float
    batch: Batch


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What a run produced: per-job placement and times, the instance ledger, counters."""

    jobs: JobTable
    job_vm: np.ndarray
    job_start: np.ndarray
    job_end: np.ndarray
    ledger: list[InstanceRecord]
    ticks: int
    events: int
    policy_stats: dict
    began: float = 0.0
    ended: float = 0.0
    upfront: float = 0.0
    spot: SpotRecord | None = None


@dataclass(frozen=True, slots=True)
class SpotRecord:
    """What spot added to a run (:mod:`broker.coh.spot`): per job restarts and lost seconds, run counters."""

    restarts: np.ndarray
    lost_s: np.ndarray
    preemptions: int
    timeline_repeats: int
    started: tuple[tuple[str, int], ...] = ()
    #: The runs a preemption cut short, one row each: (VM id, job, seconds it ran there).
    cut: tuple[tuple[int, int, float], ...] = ()


class CohWorld(World[Decision, Plan | None, RunRecord]):
    """Jobs, the leased VMs and the clock of one CoH run (see the module docstring).

    Parameters
    ----------
    jobs : JobTable
        The jobs, by arrival.
    catalog : Catalog
        The instance types and their on-demand prices.
    config : EngineConfig
        Tick, boot time, billing, validation (wall-clock hours follow the jobs' origin).
    lookahead : float
        Seconds ahead of its arrival at which a job is handed to the policy (a perfect predictor).
    recorder : Recorder, optional
        Receives progress (and, through the policy, per-tick records).
    reservations : ReservedCapacity, optional
        The reservations bought (CoH-R); by default every VM is on demand.
    validate : bool, optional
        Check the invariants at every tick (:mod:`broker.coh.validate`); by default ``config.validate``.
    """

    #: Read and never changed: a copy shares them.
    _shared: tuple[str, ...] = ("_arrival", "_runtime", "_r")

    #: Per job (by position in ``jobs``): the slot and the VM it was placed on (-1: not yet), its start and end (s).
    job_slot: np.ndarray
    job_vm: np.ndarray
    job_start: np.ndarray
    job_end: np.ndarray

    def __init__(self, jobs: JobTable, catalog: Catalog, config: EngineConfig, *, lookahead: float,
                 recorder: Recorder | None = None, reservations: ReservedCapacity | None = None,
                 validate: bool | None = None) -> None:
        _check_fits(jobs, catalog)
        self.jobs, self.catalog, self.config, self.lookahead = jobs, catalog, config, lookahead
        self.billing, self.boot_time = config.billing(jobs.origin), config.boot_time
        self._btu = self.billing.btu
        self.recorder = recorder if recorder is not None else Recorder()
        self._every = self.recorder.every
        self.reservations = reservations if reservations is not None else OnDemandOnly(catalog)
        self._interval = config.capacity == "interval"
        self.pool = Pool(catalog, self.billing, config.boot_time, intervals=self._interval)
        self.kernel = Kernel(start=-math.inf)  # the clock starts at the first tick (which may be before 0)
        self.ticker = Ticker(self.kernel, TICK, config.tick)
        n = len(jobs)
        self._arrival, self._runtime, self._r = jobs.arrival.tolist(), jobs.runtime.tolist(), jobs.r.tolist()
        self._job_columns(array("q", [-1]) * n, array("q", [-1]) * n, array("d", [math.nan]) * n,
                          array("d", [math.nan]) * n)
        self._positions = np.arange(n, dtype=np.int64)
        self._positions.flags.writeable = False  # a fresh batch's index is a view of it
        self._next_new = 0
        self._waiting: list[int] = []
        self._pending: np.ndarray | None = None
        self._contiguous: tuple[int, int] | None = None  # the span of a batch of fresh jobs only
        self.ticks = self.departed = 0
        self.began = math.inf
        self._handlers: tuple[Handler, ...] = (self._depart, self._tick, self._deadline)
        validate = config.validate if validate is None else validate
        self._validator = Validator(self, interval=self._interval) if validate else None
        self._start()

    # -- SimulationView ---------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """The current time (s)."""
        return self.kernel.now

    def fleet(self, *, stats: bool) -> Fleet:
        """The leased VMs now (:meth:`broker.coh.pool.Pool.fleet`), their jobs' intervals under the interval rule."""
        return self.pool.fleet(self.kernel.now, stats=stats, arrival=self._arrival, departure=self._cols[3])

    def vm_idle(self, slot: int) -> bool:
        """Whether the VM in ``slot`` hosts no job."""
        return self.pool.col.n_jobs[slot] == 0

    @property
    def handed(self) -> int:
        """Jobs handed to the policy so far (arrived or within the look-ahead)."""
        return self._next_new

    @property
    def waiting(self) -> int:
        """Jobs handed to the policy and not placed yet."""
        return len(self._waiting)

    # -- the state machine --------------------------------------------------------------------------
    def _start(self) -> None:
        self.ticker.request(self._next_visible_time())
        self.began = self.ticker.at
        self.kernel.now = self.began if self.began < math.inf else 0.0
        if self.began < math.inf:
            for k in self.reservations.heavy():
                self._start_vm(k, self.began, heavy=True)

    def advance(self) -> Decision | None:
        """Run to the next decision tick with jobs to place; ``None`` once every job departed and every VM went."""
        batch = self.next_batch()
        return Decision(self.kernel.now, batch) if batch is not None else None

    def next_batch(self) -> Batch | None:
        """:meth:`advance`'s batch alone (the decision's time is :attr:`now`)."""
        if self._pending is not None:
            raise RuntimeError("the previous decision was not acted on (call act first)")
        if self.kernel.run(self._handlers):
            index = self._pending
            assert index is not None
            j = self.jobs
            if self._contiguous is not None:  # the jobs after the last ones handed over: views, not copies
                lo, hi = self._contiguous
                return Batch(index, j.arrival[lo:hi], j.runtime[lo:hi], j.r[lo:hi], j.user[lo:hi])
            return batch_of(index, j.arrival, j.runtime, j.r, j.user)
        if self._validator is not None:
            self._validator.at_end()
        return None

    def act(self, plan: Plan | None, *, by: str = "policy") -> None:
        """Apply ``plan`` (``None``: place nothing now) to the pending decision; ``by`` names the policy in errors."""
        index, self._pending = self._pending, None
        if index is None:
            raise RuntimeError("no decision is pending (call advance first)")
        jobs, now = index.tolist(), self.kernel.now
        if plan is None:
            self._waiting = jobs
        elif self._apply(plan, jobs, now, by) < len(jobs):  # a job is placed at most once: the rest wait
            placed = {jobs[p] for p in plan.jobs.tolist()}
            self._waiting = [i for i in jobs if i not in placed]
        else:
            self._waiting = []
        self._after_tick(now)

    def result(self) -> RunRecord:
        """The finished run (call after :meth:`advance` returned ``None``); :func:`run` adds the policy's statistics."""
        began = self.began if self.began < math.inf else 0.0
        ledger = self.pool.ledger.records
        ended = max([began, *(v.released_at for v in ledger)])
        return RunRecord(self.jobs, self.job_vm, self.job_start, self.job_end, ledger, self.ticks, self.kernel.popped,
                         {}, began=began, ended=ended,
                         upfront=self.reservations.upfront_share(ended - began))

    # -- events -----------------------------------------------------------------------------------------
    def _next_visible_time(self) -> float:
        if self._next_new >= len(self._arrival):
            return math.inf
        return self._arrival[self._next_new] - self.lookahead

    def _tick(self, now: float, _: object) -> bool:
        ticker = self.ticker
        ticker.last, ticker.at = now, math.inf  # ticker.fired(now), inline on the hot path
        self.ticks += 1
        end = bisect_right(self._arrival, now + self.lookahead, lo=self._next_new)
        fresh = self._positions[self._next_new:end]
        index = np.concatenate((np.array(self._waiting, dtype=np.int64), fresh)) if self._waiting else fresh
        self._contiguous = None if self._waiting else (self._next_new, end)
        self._next_new = end
        if len(index):
            self._pending = index
            return True
        self._waiting = []
        self._after_tick(now)
        return False

    def _after_tick(self, now: float) -> None:
        if self._validator is not None:
            self._validator.at_tick(now)
        nxt = self._next_new  # the next job to enter the look-ahead (_next_visible_time)
        self.ticker.request(self._arrival[nxt] - self.lookahead if nxt < len(self._arrival) else math.inf)

    def _apply(self, plan: Plan, index: list[int], now: float, by: str) -> int:
        """Put the plan's jobs on their VMs (starting its new ones); returns how many it placed."""
        if plan.n_slots != self.pool.n_slots:
            raise RuntimeError(f"policy {by}: plan built on {plan.n_slots} slots, the pool has "
                               f"{self.pool.n_slots} (plans must come from this tick's fleet)")
        slots = [self._start_vm(k, now) for k in plan.new_types.tolist()] if len(plan.new_types) else []
        n, pool, col = plan.n_slots, self.pool, self.pool.col
        job_slot, job_vm, job_start, job_end = self._cols
        arrival, runtime, r, schedule = self._arrival, self._runtime, self._r, self.kernel.schedule
        targets = plan.targets.tolist()
        for p, t in zip(plan.jobs.tolist(), targets, strict=True):
            i = index[p]
            slot = t if t < n else slots[t - n]
            vm = col.vm_id[slot]
            if job_slot[i] >= 0 or vm < 0:
                raise RuntimeError(f"policy {by}: job {self.jobs.job_id[i]} placed twice "
                                   f"or on a released VM (slot {slot}) at t={now}")
            a, ready = arrival[i], col.ready_at[slot]
            start = a if a >= now and a >= ready else (now if now >= ready else ready)  # max(a, now, ready)
            end = start + runtime[i]
            job_start[i], job_end[i] = start, end
            pool.add(slot, i, r[i], a, end, runtime[i], start=start)
            if col.free[slot] < -1e-9 and not self._room_over(slot, start, end):
                raise RuntimeError(f"policy {by}: VM {vm} over capacity at t={now}")
            job_slot[i], job_vm[i] = slot, vm
            schedule(end, DEPARTURE, i)
        return len(targets)

    def _job_columns(self, slot: array[int], vm: array[int], start: array[float], end: array[float]) -> None:
        """The columns behind the per-job arrays: each array becomes a NumPy view of its column.

        The engine reads and writes one job at a time through the columns, at the speed of a Python
        list, and the arrays see every write (as :class:`broker.coh.pool.Pool`'s slot arrays).
        """
        self._cols = (slot, vm, start, end)
        self.job_slot, self.job_vm = np.frombuffer(slot, dtype=np.int64), np.frombuffer(vm, dtype=np.int64)
        self.job_start, self.job_end = np.frombuffer(start, dtype=np.float64), np.frombuffer(end, dtype=np.float64)

    def _room_over(self, slot: int, start: float, end: float) -> bool:
        """Under the interval rule, whether the jobs on ``slot`` stay within its capacity over ``[start, end)``."""
        t = self.pool.table
        if t is None:
            return False
        return self.pool.col.capacity[slot] - t.peak(slot, start, end) >= -1e-9

    def _start_vm(self, vm_type: int, now: float, *, heavy: bool = False) -> int:
        option, rate = self._acquire(vm_type, now, heavy)
        slot = self.pool.start(vm_type, now, option=option, rate=rate, booted=heavy)
        col = self.pool.col
        self.kernel.schedule(self.billing.deadline(col.anchor[slot], now), DEADLINE, (slot, col.vm_id[slot]))
        return slot

    def _acquire(self, vm_type: int, now: float, heavy: bool) -> tuple[int, float]:
        """The billing option code and $/unit of a VM of ``vm_type`` starting at ``now`` (the reservations')."""
        return self.reservations.acquire(vm_type, heavy=heavy)

    def _depart(self, now: float, job: int) -> None:
        self.pool.remove(self._cols[0][job], job, self._r[job])
        departed = self.departed = self.departed + 1
        if departed % self._every == 0 or departed == len(self._arrival):
            self.recorder.progress(departed, len(self._arrival))
        if self._waiting:
            self.ticker.request(now)

    def _deadline(self, now: float, payload: tuple[int, int]) -> None:
        slot, vm_id = payload
        pool, col = self.pool, self.pool.col
        if col.vm_id[slot] != vm_id:
            return
        if not col.n_jobs[slot]:  # idle: released unless its reservation keeps it until the run drains
            option = col.option[slot]
            if self._draining() or not self.reservations.always_on(option):
                vm_type = col.vm_type[slot]
                record = pool.release(slot, now)
                self.reservations.release(vm_type, option)
                if self._validator is not None:
                    self._validator.at_release(record)
                if self._waiting:
                    self.ticker.request(now)
                return
        self.kernel.schedule(now + self._btu, DEADLINE, payload)

    def _draining(self) -> bool:
        """No job left to run: every VM goes at its next deadline, whatever its billing option."""
        return self.departed == len(self._arrival)


def run(world: CohWorld, policy: Policy) -> RunRecord:
    """Drive ``world`` to its end with ``policy`` deciding at every decision tick."""
    next_batch, act, decide, name, kernel = world.next_batch, world.act, policy.decide, policy.name, world.kernel
    while (batch := next_batch()) is not None:
        act(decide(kernel.now, batch, world), by=name)
    return replace(world.result(), policy_stats=policy.stats())


def _check_fits(jobs: JobTable, catalog: Catalog) -> None:
    if len(jobs) and jobs.r.max() > catalog.capacity.max():
        i = int(jobs.r.argmax())
        raise ConfigError(f"job {jobs.job_id[i]} ({jobs.source}) requires r={jobs.r[i]}, more than the largest "
                          f"instance type's capacity {catalog.capacity.max()}")
