"""Jobs with deadlines on a spot market: the world of "Can't Be Late" (Wu et al., NSDI 2024) on the kernel.

Each job needs ``work_s`` seconds of compute by ``deadline_s`` (from the run's start). At every tick
of the market (``k * gap_s``) a policy chooses, per unfinished job, to stay idle, to run on-demand
(always there) or on spot in a zone with free capacity; a new choice releases the job's instance
and launches another, whose first ``overhead_s`` seconds make no progress (the changeover ``d``).
A spot instance runs until its zone's count drops below its rank (the oldest instance of a zone
is rank 1): it is preempted at that tick boundary, after a notice ``notice_s`` earlier. With
checkpointing the progress made is kept across instances, without it every instance starts from
zero. A job whose work is done is released at once (it can end between ticks); one still running
at its deadline is stopped and counted as missed.

Events at one instant, in order: job done < notice < preemption < deadline < decision tick, so a
job that finishes exactly at its deadline has met it and a decision sees the instances the
preemptions of its instant removed. Costs are billed at release (:class:`SpotBilling`): spot at
the zone's price per tick (integrated per second, or the price at launch per hour), on-demand at
its price. Validate mode checks that a job never holds two instances, that progress never exceeds
the work, and that every job ends done by its deadline or counted as missed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from broker.pricing.spot import SpotMarket, Window
from broker.sim.kernel import Kernel
from broker.sim.recorder import Recorder
from broker.sim.world import World
from workloads.errors import ConfigError

#: A job's choice for the next tick: idle, on-demand, or a zone's index (0, 1, ...) for spot there.
IDLE, ON_DEMAND = -2, -1
DONE, NOTICE, PREEMPT, DEADLINE, TICK = range(5)
#: Progress may exceed the work by this much (s) in validate mode (floating-point sums of ticks).
PROGRESS_SLACK_S = 1e-6


@dataclass(frozen=True, slots=True)
class SpotJob:
    """A job: ``work_s`` of compute by ``deadline_s`` (s after the run's start), ``overhead_s`` a (re)launch."""

    work_s: float
    deadline_s: float
    overhead_s: float = 0.0
    checkpoint: bool = True

    def __post_init__(self) -> None:
        for name, value, least in (("work", self.work_s, 0.0), ("deadline", self.deadline_s, 0.0)):
            if not (math.isfinite(value) and value > least):
                raise ConfigError(f"a job's {name} must be > 0 s, got {value}")
        if not (math.isfinite(self.overhead_s) and self.overhead_s >= 0):
            raise ConfigError(f"a job's changeover overhead must be >= 0 s, got {self.overhead_s}")


@dataclass(frozen=True, slots=True)
class JobState:
    """What a policy sees of one unfinished job at a tick (times in s, from the run's start)."""

    job: int
    work_s: float
    deadline_s: float
    overhead_s: float
    checkpoint: bool
    progress_s: float
    using: int
    ready_in_s: float
    noticed: bool

    @property
    def left_s(self) -> float:
        """Work left (s)."""
        return self.work_s - self.progress_s


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision tick: the time, the market at this tick and every unfinished job."""

    now: float
    tick: int
    gap_s: float
    free: tuple[int, ...]
    prices: tuple[float, ...]
    on_demand: float
    jobs: tuple[JobState, ...]


def progress_after(job: JobState, choice: int, span_s: float) -> float:
    """The job's progress after ``span_s`` seconds on ``choice`` (no preemption within them)."""
    if choice == IDLE:
        return job.progress_s if job.checkpoint else 0.0
    kept = choice == job.using
    base = job.progress_s if (kept or job.checkpoint) else 0.0
    overhead = job.ready_in_s if kept else job.overhead_s
    return min(job.work_s, base + max(0.0, span_s - overhead))


@dataclass(frozen=True, slots=True)
class SpotRun:
    """A finished run: totals and one row per job (``cost`` in $, times in hours)."""

    cost: float
    deadline_misses: int
    preemptions: int
    launches: int
    timeline_repeats: int
    decisions: int
    jobs: pd.DataFrame


class SpotWorld(World[Decision, Sequence[int], SpotRun]):
    """Jobs with deadlines on a spot market (see the module docstring).

    Parameters
    ----------
    market : SpotMarket
        Zones, prices, notice and billing.
    jobs : sequence of SpotJob
        The jobs, all released at the run's start.
    start : int
        The market tick at which the run starts (time 0).
    """

    _shared = ("jobs",)

    def __init__(self, market: SpotMarket, jobs: Sequence[SpotJob], *, start: int = 0,
                 recorder: Recorder | None = None, validate: bool = False) -> None:
        if not jobs:
            raise ConfigError("a spot run needs at least one job")
        self.market, self.jobs, self.gap = market, tuple(jobs), float(market.gap_s)
        self.recorder, self.validate = recorder or Recorder(), validate
        horizon = max(j.deadline_s for j in self.jobs)
        self.window: Window = market.window(start, math.ceil(horizon / self.gap) + 1)
        n = len(self.jobs)
        self.using, self.launched, self.ready = [IDLE] * n, [0.0] * n, [0.0] * n
        self.base, self.done_at, self.missed = [0.0] * n, [math.nan] * n, [False] * n
        self.noticed, self.preempt_at = [False] * n, [math.inf] * n
        self.events: list[list[int]] = [[-1, -1, -1, -1] for _ in range(n)]  # done, notice, preempt, deadline
        self.spot_cost, self.od_cost, self.spot_s, self.od_s = [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
        self.preemptions, self.launches, self.notices = [0] * n, [0] * n, [0] * n
        self.running: list[list[int]] = [[] for _ in market.zones]
        self.open, self.decisions, self.pending = n, 0, False
        self.kernel = Kernel()
        self.handlers = (self._on_done, self._on_notice, self._on_preempt, self._on_deadline, self._on_tick)
        for j, job in enumerate(self.jobs):
            self.events[j][3] = self.kernel.schedule(job.deadline_s, DEADLINE, j)
        self.kernel.schedule(0.0, TICK, 0)

    # -- the protocol ---------------------------------------------------------------------------------------

    def advance(self) -> Decision | None:
        """Run to the next tick with an unfinished job; ``None`` once every job is done or missed."""
        if self.pending:
            raise RuntimeError("the pending decision was not acted on")
        if self.open and self.kernel.run(self.handlers):
            self.pending = True
            return self._decision()
        if self.validate:
            self._check_end()
        return None

    def act(self, action: Sequence[int], /) -> None:
        """One choice per job of the pending decision, in its order (see :data:`IDLE`, :data:`ON_DEMAND`)."""
        if not self.pending:
            raise RuntimeError("no decision is pending")
        k, now = self._tick, self.kernel.now
        active = self._active()
        if len(action) != len(active):
            raise ValueError(f"{len(action)} choices for {len(active)} unfinished jobs")
        changed: set[int] = set()
        for j, choice in zip(active, action, strict=True):
            self._choose(j, int(choice), now, k, changed)
        for z in sorted(changed):
            self._schedule_preemptions(z, k)
        self.pending, self.decisions = False, self.decisions + 1
        if self.open and now + self.gap < max(self.jobs[j].deadline_s for j in self._active()):
            self.kernel.schedule((k + 1) * self.gap, TICK, k + 1)

    def result(self) -> SpotRun:
        """Costs, misses, preemptions and the per-job rows of the run so far."""
        n = len(self.jobs)
        rows = pd.DataFrame({
            "job": range(n), "cost": [a + b for a, b in zip(self.spot_cost, self.od_cost, strict=True)],
            "spot_cost": self.spot_cost, "od_cost": self.od_cost,
            "spot_h": [s / 3600 for s in self.spot_s], "od_h": [s / 3600 for s in self.od_s],
            "preemptions": self.preemptions, "launches": self.launches, "notices": self.notices,
            "progress_h": [self._progress(j, self.kernel.now) / 3600 for j in range(n)],
            "done_h": [t / 3600 for t in self.done_at], "missed": self.missed})
        return SpotRun(float(rows["cost"].sum()), int(sum(self.missed)), int(sum(self.preemptions)),
                       int(sum(self.launches)), self.window.repeats, self.decisions, rows)

    # -- decisions --------------------------------------------------------------------------------------------

    @property
    def _tick(self) -> int:
        return round(self.kernel.now / self.gap)

    def _active(self) -> list[int]:
        return [j for j in range(len(self.jobs)) if math.isnan(self.done_at[j]) and not self.missed[j]]

    def _decision(self) -> Decision:
        k, now = self._tick, self.kernel.now
        counts, prices = self.window.counts[:, k], self.window.prices[:, k]
        free = tuple(max(0, int(c) - len(r)) for c, r in zip(counts.tolist(), self.running, strict=True))
        states = tuple(JobState(j, job.work_s, job.deadline_s, job.overhead_s, job.checkpoint,
                                self._progress(j, now), self.using[j], max(0.0, self.ready[j] - now)
                                if self.using[j] != IDLE else 0.0, self.noticed[j])
                       for j in self._active() for job in (self.jobs[j],))
        return Decision(now, k, self.gap, free, tuple(prices.tolist()), self.market.on_demand, states)

    def _progress(self, j: int, now: float) -> float:
        if self.using[j] == IDLE:
            return self.base[j]
        return self.base[j] + max(0.0, now - self.ready[j])

    def _choose(self, j: int, choice: int, now: float, k: int, changed: set[int]) -> None:
        if choice == self.using[j]:
            return
        if not IDLE <= choice < len(self.market.zones):
            raise ValueError(f"job {j}: choice {choice} is not idle (-2), on-demand (-1) or a zone 0-"
                             f"{len(self.market.zones) - 1}")
        if self.using[j] >= 0:
            changed.add(self.using[j])
        self._release(j, now, interrupted=False)
        if choice != IDLE:
            self._launch(j, choice, now, k, changed)

    def _launch(self, j: int, choice: int, now: float, k: int, changed: set[int]) -> None:
        if self.validate and self.using[j] != IDLE:
            raise RuntimeError(f"job {j} would hold two instances at {now} s")
        if choice >= 0:
            if len(self.running[choice]) >= int(self.window.counts[choice, k]):
                raise ValueError(f"job {j}: zone {self.market.names[choice]} has no spot instance free at tick {k}")
            self.running[choice].append(j)
            changed.add(choice)
        job = self.jobs[j]
        self.using[j], self.launched[j], self.ready[j] = choice, now, now + job.overhead_s
        self.launches[j] += 1
        self.noticed[j] = False
        self.events[j][0] = self.kernel.schedule(self.ready[j] + (job.work_s - self.base[j]), DONE, j)
        self.recorder.record("launch", {"t": now, "job": j, "using": choice})

    def _release(self, j: int, now: float, *, interrupted: bool) -> None:
        using = self.using[j]
        if using == IDLE:
            return
        job, held = self.jobs[j], now - self.launched[j]
        progress = self._progress(j, now)
        if self.validate and progress > job.work_s + PROGRESS_SLACK_S:
            raise RuntimeError(f"job {j} progressed {progress} s of {job.work_s} s of work")
        self.base[j] = progress if job.checkpoint or progress >= job.work_s else 0.0
        hours = self.market.billing.hours(held, interrupted=interrupted)
        if using == ON_DEMAND:
            self.od_cost[j] += hours * self.market.on_demand
            self.od_s[j] += held
        else:
            self.spot_cost[j] += self._spot_charge(using, self.launched[j], now, hours)
            self.spot_s[j] += held
            self.running[using].remove(j)
        for e in range(3):
            if self.events[j][e] >= 0:
                self.kernel.cancel(self.events[j][e])
                self.events[j][e] = -1
        self.using[j], self.preempt_at[j], self.noticed[j] = IDLE, math.inf, False

    def _spot_charge(self, z: int, start: float, end: float, hours: float) -> float:
        """Spot cost of ``[start, end]`` in zone ``z``: the price integrated per tick, or per hour at launch."""
        prices, g = self.window.prices[z], self.gap
        if self.market.billing.unit == "hour":
            return hours * float(prices[round(start / g)])
        first, last = round(start / g), min(math.ceil(end / g), len(prices))
        edges = np.clip(np.arange(first, last + 1) * g, start, end)
        return float(np.dot(np.diff(edges), prices[first:last])) / 3600.0

    # -- preemptions ------------------------------------------------------------------------------------------

    def _schedule_preemptions(self, z: int, k: int) -> None:
        """(Re)schedule the preemption and notice of every instance in zone ``z`` by its rank, from tick ``k``."""
        counts = self.window.counts[z, k + 1:]
        for rank, j in enumerate(self.running[z], start=1):
            below = np.flatnonzero(counts < rank)
            at = (k + 1 + int(below[0])) * self.gap if len(below) else math.inf
            if at == self.preempt_at[j]:
                continue
            for e in (1, 2):
                if self.events[j][e] >= 0:
                    self.kernel.cancel(self.events[j][e])
                    self.events[j][e] = -1
            self.preempt_at[j] = at
            if at < math.inf:
                self.events[j][2] = self.kernel.schedule(at, PREEMPT, j)
                notice = max(self.kernel.now, at - self.market.notice_s)
                self.events[j][1] = self.kernel.schedule(notice, NOTICE, j)

    # -- handlers ---------------------------------------------------------------------------------------------

    def _on_tick(self, t: float, k: int) -> bool:
        return bool(self.open)

    def _on_done(self, t: float, j: int) -> None:
        self.events[j][0] = -1
        self._release(j, t, interrupted=False)
        self.base[j] = self.jobs[j].work_s
        self._finish(j, t, missed=False)

    def _on_notice(self, t: float, j: int) -> None:
        self.events[j][1] = -1
        self.noticed[j] = True
        self.notices[j] += 1

    def _on_preempt(self, t: float, j: int) -> None:
        self.events[j][2] = -1
        z = self.using[j]
        self._release(j, t, interrupted=True)
        self.preemptions[j] += 1
        self.recorder.record("preemption", {"t": t, "job": j, "zone": z})
        self._schedule_preemptions(z, round(t / self.gap) - 1)

    def _on_deadline(self, t: float, j: int) -> None:
        self.events[j][3] = -1
        self._release(j, t, interrupted=False)
        self._finish(j, t, missed=True)

    def _finish(self, j: int, t: float, *, missed: bool) -> None:
        if missed:
            self.missed[j] = True
        else:
            self.done_at[j] = t
            if self.events[j][3] >= 0:
                self.kernel.cancel(self.events[j][3])
                self.events[j][3] = -1
        self.open -= 1

    def _check_end(self) -> None:
        for j, job in enumerate(self.jobs):
            done = not math.isnan(self.done_at[j])
            if done == self.missed[j] or (done and self.done_at[j] > job.deadline_s):
                raise RuntimeError(f"job {j} ended neither done by its deadline nor counted as missed")
            if self.using[j] != IDLE:
                raise RuntimeError(f"job {j} still holds an instance after the run")
