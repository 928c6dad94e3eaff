"""The CoH world with spot VMs and its spot rules (issue 36; ``docs/worlds/coh-spot.md``).

:class:`SpotCohWorld` is :class:`~broker.coh.world.CohWorld` with a :class:`~broker.pricing.spot_offer.SpotOffer`:

- **Acquisition.** A VM no reservation covers is spot while the market is open and below its cap
  (else on-demand), billed the book's units at its type's on-demand price times the market's ratio
  at the tick it started.
- **Market events.** While a spot VM runs without notice, the world schedules an event at each
  tick boundary where the market's cap changes (never one per tick; with none running, none).
  When the cap falls below the spot VMs running (0: the market closed), the youngest ones get the
  notice; each is preempted ``notice_s`` later unless it went idle and was released first. A spot
  VM started during a notice is another VM, under the cap of then.
- **Preemption.** The VM's jobs leave it at that instant and join the waiting jobs, placed again by
  the policy at the next decision tick; the VM is released and billed to that instant. A job's work
  so far is lost (it restarts from scratch), or with ``checkpoint_s = C`` its progress is kept to its
  last multiple of C seconds of work and the rest of its run, plus ``restart_overhead_s``, is what it
  runs next. ``lost_s`` counts the seconds it ran on the preempted VM that did not become kept
  progress (restart overhead included); ``restarts`` its preemptions.
- **Departures** are scheduled by the base world with the job as payload and cannot be cancelled
  cheaply; a preempted job's stale departure is skipped by a per-job count of stale departures (a
  job's runs end no earlier one after the other, so its stale departures come first).

The rules (issue 36; each can be turned off):

- **Back to spot** (``spot_return``): while the market admits another spot VM, an on-demand VM
  started as a *fallback* (no reservation covered it and the market had no room then) is shown to
  the policy as no VM at all (:meth:`SpotCohWorld.fleet`): it keeps its jobs, takes no new ones and
  goes at its billing deadline once idle, so new work goes to spot VMs.
- **The expected cost** (``expected_cost``): spot is worth it for work ``W`` (hours a preemption
  would lose) when ``ratio + hazard * W < 1``: the spot price per hour plus the hazard (the market's
  closes per hour seen so far, :meth:`~broker.pricing.spot_offer.SpotOffer.hazard`) times ``W`` hours
  at the VM's price, below the on-demand price. A job's ``W`` is its run to go (with checkpoints, at
  most the checkpoint interval, plus the restart overhead); a job whose ``W`` fails while the market
  is open is an *on-demand job*. A new VM in the other jobs' pass hosts only jobs that pass, so the
  same test on its jobs' mean ``W`` passes too: it is spot whenever the market has room.
- **On-demand jobs** (a job preempted ``max_preemptions`` times or more, or failing the expected
  cost while the market is open) are placed first, alone, on a fleet without spot VMs (every
  on-demand VM shown), and the VMs started for them are on demand; the other jobs are placed next,
  as a second decision at the same instant, on the fleet the first left.

Nothing of this touches the base world's per-job hot path (:meth:`CohWorld._apply`, ``_tick``):
plain CoH runs do not build this class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from broker.coh.config import EngineConfig
from broker.coh.policy import batch_of
from broker.coh.world import DEADLINE, CohWorld, RunRecord, SpotRecord
from broker.pricing.book import Catalog
from broker.pricing.reservations import OD_CODE, SPOT_CODE
from broker.pricing.spot_offer import SpotOffer
from heuristics.fleet import Batch, Fleet, Plan
from workloads.errors import ConfigError
from workloads.jobs import JobTable

PREEMPT, MARKET = DEADLINE + 1, DEADLINE + 2


@dataclass(frozen=True, slots=True)
class SpotConfig:
    """Spot in a CoH run: the market's offer and how a preempted job restarts (:class:`SpotCohWorld`)."""

    offer: SpotOffer
    checkpoint_s: float | None = None
    restart_overhead_s: float = 0.0
    spot_return: bool = False
    max_preemptions: int | None = None
    expected_cost: bool = False

    def __post_init__(self) -> None:
        _check_restart(self.checkpoint_s, self.restart_overhead_s)
        _check_max(self.max_preemptions)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form (the market by name, its notice and how often it is open; the rules)."""
        return {"market": self.offer.name, "notice_s": self.offer.notice_s, "available": self.offer.available,
                "checkpoint_s": self.checkpoint_s, "restart_overhead_s": self.restart_overhead_s,
                "spot_return": self.spot_return, "max_preemptions": self.max_preemptions,
                "expected_cost": self.expected_cost}

    def rules(self) -> dict[str, object]:
        """The keywords of :class:`SpotCohWorld` this configuration sets."""
        return {"offer": self.offer, "checkpoint_s": self.checkpoint_s, "restart_overhead_s": self.restart_overhead_s,
                "spot_return": self.spot_return, "max_preemptions": self.max_preemptions,
                "expected_cost": self.expected_cost}


class SpotCohWorld(CohWorld):
    """A CoH world whose unreserved VMs are spot while the market allows (see the module docstring).

    Parameters
    ----------
    jobs, catalog, config
        As :class:`~broker.coh.world.CohWorld`.
    offer : SpotOffer
        The market: cap and price ratio per tick, the notice (s).
    checkpoint_s : float, optional
        Keep a preempted job's progress to its last multiple of this many seconds of work.
    restart_overhead_s : float
        Seconds added to the run of a job resumed from a checkpoint.
    spot_return : bool
        Hide fallback on-demand VMs from the policy while the market admits spot (module docstring).
    max_preemptions : int, optional
        Place a job preempted this many times only on VMs that are not spot (default: no limit).
    expected_cost : bool
        Place a job on spot only when spot's expected cost per hour, its lost work included, is below
        the on-demand price (module docstring).
    **world
        The other keywords of :class:`~broker.coh.world.CohWorld` (``lookahead``, ``recorder``, ...).
    """

    def __init__(self, jobs: JobTable, catalog: Catalog, config: EngineConfig, *, offer: SpotOffer,
                 checkpoint_s: float | None = None, restart_overhead_s: float = 0.0, spot_return: bool = False,
                 max_preemptions: int | None = None, expected_cost: bool = False, **world: object) -> None:
        _check_restart(checkpoint_s, restart_overhead_s)
        _check_max(max_preemptions)
        self.offer, self.checkpoint_s, self.restart_overhead_s = offer, checkpoint_s, restart_overhead_s
        self.spot_return, self.max_preemptions, self.expected_cost = spot_return, max_preemptions, expected_cost
        self._fallback: dict[int, int] = {}  # vm id -> slot of the on-demand VMs started for want of spot
        self._on_demand_pass = False  # this decision places the on-demand jobs of its tick
        self._later: np.ndarray | None = None  # the other jobs of this tick, placed after them
        self._carry: list[int] = []  # the on-demand pass's jobs left waiting
        self._why = ""  # why the VM being started is spot or on demand (a key of started)
        #: VMs started no reservation covering them: spot, on demand for want of spot (a fallback), on
        #: demand for on-demand jobs (their pass).
        self.started = {"spot": 0, "fallback": 0, "on_demand_jobs": 0}
        self.original_jobs = jobs
        n = len(jobs)
        self.restarts = np.zeros(n, dtype=np.int64)
        self.lost_s = np.zeros(n)
        self.completions = np.zeros(n, dtype=np.int64)
        self._stale, self._progress, self._overhead = [0] * n, [0.0] * n, [0.0] * n
        self._spot_live: dict[int, int] = {}  # vm id -> slot of the spot VMs running and not given notice
        #: Spot VMs given notice (vm id -> the instant they are preempted) and those preempted (vm id -> when).
        self.doomed: dict[int, float] = {}
        self.preempted: dict[int, float] = {}
        #: The runs preemptions cut short: (VM id, job, seconds it ran there), in the order they were cut.
        self.cut: list[tuple[int, int, float]] = []
        #: When the market's next change is scheduled (``inf``: none is; the changes matter only while a
        #: spot VM runs without notice, so none is scheduled while none does).
        self._market_at = math.inf
        super().__init__(replace(jobs, runtime=jobs.runtime.copy()), catalog, config, **world)  # type: ignore[arg-type]
        self._handlers = (*self._handlers, self._preempt, self._market)

    def copy(self) -> SpotCohWorld:
        """An independent copy of the paused world: the base world shares its run times, a spot world's change."""
        twin = super().copy()
        twin._runtime = list(self._runtime)
        twin.jobs = replace(self.jobs, runtime=self.jobs.runtime.copy())
        return twin

    @property
    def preemptions(self) -> int:
        """Spot VMs preempted so far."""
        return len(self.preempted)

    @property
    def restarts_total(self) -> int:
        """Job restarts so far (a job placed again after a preemption counts once per preemption)."""
        return int(self.restarts.sum())

    @property
    def waiting(self) -> int:
        """Jobs handed to the policy and not placed yet (with those of a tick's second decision still due)."""
        later = 0 if self._later is None else len(self._later)
        return len(self._waiting) + len(self._carry) + later

    @property
    def spot_running(self) -> int:
        """Spot VMs running and not given notice (what the cap counts)."""
        return len(self._spot_live)

    def result(self) -> RunRecord:
        """The finished run, with the original jobs (full run times) and the spot record."""
        record = super().result()
        spot = SpotRecord(self.restarts.copy(), self.lost_s.copy(), self.preemptions,
                          self.offer.repeats(record.began, record.ended), tuple(self.started.items()), tuple(self.cut))
        return replace(record, jobs=self.original_jobs, spot=spot)

    # -- acquisition and release ------------------------------------------------------------------
    def _acquire(self, vm_type: int, now: float, heavy: bool) -> tuple[int, float]:
        option, rate = self.reservations.acquire(vm_type, heavy=heavy)
        self._why = ""
        if option != OD_CODE:
            return option, rate
        if self._on_demand_pass:
            self._why = "on_demand_jobs"
        elif len(self._spot_live) >= self.offer.cap(now):
            self._why = "fallback"
        else:
            self._why = "spot"
            return SPOT_CODE, rate * self.offer.ratio_at(now)
        return option, rate

    def spot_pays(self, now: float, load_h: float) -> bool:
        """Whether a spot VM started at ``now`` costs less per hour than on demand, expected (module docstring).

        ``ratio + hazard * load_h < 1``: the spot price and the work a preemption would lose
        (``load_h`` hours of the VM's work) at the market's closes per hour seen so far, both per
        hour of the on-demand price.
        """
        return self.offer.ratio_at(now) + self.offer.hazard(now) * load_h < 1.0

    def _start_vm(self, vm_type: int, now: float, *, heavy: bool = False) -> int:
        slot = super()._start_vm(vm_type, now, heavy=heavy)
        col, why = self.pool.col, self._why
        if why:
            self.started[why] += 1
        if why == "spot":
            self._spot_live[col.vm_id[slot]] = slot
            if self._market_at == math.inf:
                self._schedule_market(now)
        elif why == "fallback":
            self._fallback[col.vm_id[slot]] = slot
        return slot

    def _deadline(self, now: float, payload: tuple[int, int]) -> None:
        super()._deadline(now, payload)
        slot, vm_id = payload
        if self.pool.col.vm_id[slot] != vm_id:
            self._spot_live.pop(vm_id, None)
            self._fallback.pop(vm_id, None)

    # -- the rules: what the policy sees, in which pass ----------------------------------------------
    def fleet(self, *, stats: bool) -> Fleet:
        """The leased VMs now, without those this decision may not use (the rules, module docstring)."""
        fleet = super().fleet(stats=stats)
        if self._on_demand_pass:
            n, pool = len(fleet), self.pool
            hidden = np.flatnonzero((pool.option[:n] == SPOT_CODE) & (pool.vm_id[:n] >= 0)).tolist()
        elif self.spot_return and self._fallback and len(self._spot_live) < self.offer.cap(self.kernel.now):
            hidden = list(self._fallback.values())
        else:
            return fleet
        return _without(fleet, hidden) if hidden else fleet

    def next_batch(self) -> Batch | None:
        """The next decision: the other jobs of a tick whose on-demand jobs were just placed, if any."""
        later = self._later
        if later is None or self._pending is not None:
            return super().next_batch()
        self._pending, self._later = later, None
        j = self.jobs
        return batch_of(later, j.arrival, j.runtime, j.r, j.user)

    def act(self, plan: Plan | None, *, by: str = "policy") -> None:
        """Apply ``plan``; the jobs the on-demand pass left wait with those the second leaves."""
        super().act(plan, by=by)
        self._on_demand_pass = False
        if self._later is not None:
            self._carry, self._waiting = self._waiting, []
        elif self._carry:
            self._waiting, self._carry = sorted(self._carry + self._waiting), []

    def _tick(self, now: float, payload: object) -> bool:
        if not super()._tick(now, payload):
            return False
        index = self._pending
        assert index is not None
        bound = self._on_demand_jobs(index, now)
        if bound is not None and bound.any():
            self._on_demand_pass = True
            if not bound.all():
                self._pending, self._later, self._contiguous = index[bound], index[~bound], None
        return True

    def _on_demand_jobs(self, index: np.ndarray, now: float) -> np.ndarray | None:
        """Which jobs of ``index`` go on demand: preempted the most times allowed, or too dear to lose on spot."""
        bound = None
        if self.max_preemptions is not None:
            bound = self.restarts[index] >= self.max_preemptions
        if self.expected_cost and self.offer.cap(now) > 0:
            dear = np.array([not self.spot_pays(now, self._at_stake(job)) for job in index.tolist()], dtype=bool)
            bound = dear if bound is None else bound | dear
        return bound

    def _at_stake(self, job: int) -> float:
        """Hours of ``job``'s work a preemption would lose: its run to go, or at most a checkpoint's worth."""
        run = self._runtime[job]
        c = self.checkpoint_s
        if c is not None:
            run = min(run, c) + self.restart_overhead_s
        return run / 3600.0

    def _depart(self, now: float, job: int) -> None:
        stale = self._stale
        if stale[job]:  # the departure of a run a preemption cut short
            stale[job] -= 1
            return
        self.completions[job] += 1
        super()._depart(now, job)

    # -- the market -------------------------------------------------------------------------------
    def _schedule_market(self, now: float) -> None:
        at = self._market_at = self.offer.next_change(now)
        if at < math.inf:
            self.kernel.schedule(at, MARKET)

    def _market(self, now: float, _: object) -> None:
        """The cap changed at ``now``: notice to the youngest spot VMs above it; the next change scheduled.

        The next change is scheduled only while a spot VM runs without notice: with none, a change has
        nothing to act on (a VM started later reads the cap of its instant), and a run whose jobs
        cannot be placed ends as the base world's does instead of following the market for ever. The
        first spot VM started after that schedules the next change again.
        """
        self._market_at = math.inf
        excess = len(self._spot_live) - self.offer.cap(now)
        if excess > 0:
            due = now + self.offer.notice_s
            for vm_id in sorted(self._spot_live, reverse=True)[: int(excess)]:
                slot = self._spot_live.pop(vm_id)
                self.doomed[vm_id] = due
                self.kernel.schedule(due, PREEMPT, (slot, vm_id))
        if self._spot_live:
            self._schedule_market(now)

    def _preempt(self, now: float, payload: tuple[int, int]) -> None:
        """The notice ran out: the VM's jobs go back to the waiting jobs and the VM is released now."""
        slot, vm_id = payload
        pool = self.pool
        if pool.col.vm_id[slot] != vm_id:  # it went idle and was released during the notice
            return
        jobs = sorted(pool.members[slot])
        for job in jobs:
            self._evict(slot, job, now)
        record = pool.release(slot, now)
        self.preempted[vm_id] = now
        if self._validator is not None:
            self._validator.at_release(record)
        if jobs:
            self._waiting = sorted(self._waiting + jobs)
            self.ticker.request(now)

    def _evict(self, slot: int, job: int, now: float) -> None:
        """Take ``job`` off ``slot`` at ``now``: count what it lost, set what it runs next, forget its placement."""
        job_slot, job_vm, job_start, job_end = self._cols
        start, run = job_start[job], job_end[job] - job_start[job]
        done = min(max(0.0, now - start), run)
        kept, remaining = self._restart_point(job, done)
        self.lost_s[job] += done - (kept - self._progress[job])
        self.restarts[job] += 1
        self._stale[job] += 1
        self._progress[job] = kept
        self._runtime[job] = remaining
        self.jobs.runtime[job] = remaining
        self.cut.append((job_vm[job], job, done))
        self.pool.evict(slot, job, self._r[job], run, done)
        job_slot[job] = job_vm[job] = -1
        job_start[job] = job_end[job] = math.nan

    def _restart_point(self, job: int, done: float) -> tuple[float, float]:
        """(work kept, s; the next run's length, s) of ``job`` preempted ``done`` s into its current run."""
        full = float(self.original_jobs.runtime[job])
        c = self.checkpoint_s
        if c is None:
            return 0.0, full
        work = self._progress[job] + max(0.0, done - self._overhead[job])
        kept = math.floor(work / c) * c
        overhead = self._overhead[job] = self.restart_overhead_s
        return kept, full - kept + overhead


def _without(fleet: Fleet, hidden: list[int]) -> Fleet:
    """``fleet`` with the VMs of slots ``hidden`` shown as no VM (as a released slot)."""
    vm_type, free = fleet.vm_type.copy(), fleet.free.copy()
    vm_type[hidden], free[hidden] = -1, -1.0
    return replace(fleet, vm_type=vm_type, free=free)


def _check_max(max_preemptions: int | None) -> None:
    if max_preemptions is not None and max_preemptions < 1:
        raise ConfigError(f"max_preemptions must be >= 1, got {max_preemptions}")


def _check_restart(checkpoint_s: float | None, overhead_s: float) -> None:
    if checkpoint_s is not None and not (math.isfinite(checkpoint_s) and checkpoint_s > 0):
        raise ConfigError(f"checkpoint_s must be > 0 s, got {checkpoint_s}")
    if not (math.isfinite(overhead_s) and overhead_s >= 0):
        raise ConfigError(f"restart_overhead_s must be >= 0 s, got {overhead_s}")
