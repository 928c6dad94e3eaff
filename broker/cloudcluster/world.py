"""A cluster run wholly on the cloud, as a world on the kernel: one job per instance, paid periods, transfers.

The cloud-cluster paper's model (``SPEC.md`` §7):

- An instance is *hired* (billing starts; it boots for ``boot`` seconds), then *active* while it
  serves one job, *idle* between jobs, and *released* at the end of a paid period when idle — unless
  the keep-alive rule keeps it one more period — or, under the idle-timeout baseline, after a fixed
  idle time (:mod:`broker.cloudcluster.policies`).
- A job's timeline: wait, upload its input (``upload_bps``), execute, download its output
  (``download_bps``). Overhead = time in system - execution time.
- A job arriving takes an idle instance of its pool at once: the one with the most paid time left.
  Otherwise it queues FCFS in its pool, and the pool's waiting jobs not covered by instances already
  booting may start new ones — in arrival order across pools, while fewer than ``cap`` instances are
  hired and the start rules allow. A freed or booted instance takes the head of its pool's queue.
- Events at one instant go as: job completions, boots done, arrivals, timers, end-of-period and
  idle-timeout decisions — an instance freed at the end of its period can take a job arriving then,
  and an instance busy at a period end simply starts the next paid period.

A pausable state machine: with a keep-alive rule, :meth:`ClusterWorld.advance` stops at every end of
a paid period of an instance that was busy during it and returns a :class:`KeepAliveDecision`;
:meth:`ClusterWorld.act` keeps the instance for one more period (``True``) or releases it.
:func:`run` drives it with the policy's rule. Billing (:class:`broker.pricing.billing.Billing`, no
release margin) counts periods from the hire instant (exact) or from the start of that wall-clock
hour; every release is closed in the instance ledger.
"""

from __future__ import annotations

import copy
import heapq
import math
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from broker.cloudcluster.policies import ClusterPolicy
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.validate import ClusterValidator
from broker.pricing.billing import Billing
from broker.sim.kernel import Kernel
from broker.sim.ledger import Ledger
from broker.sim.recorder import Recorder
from workloads.htc import HtcJobs

DONE, READY, ARRIVAL, TIMER, PERIOD_END, IDLE_TIMEOUT = range(6)


@dataclass(frozen=True, slots=True)
class KeepAliveDecision:
    """A decision point: ``instance`` reached the end of a paid period at ``now`` idle, after being busy in it."""

    now: float
    instance: int


class ClusterWorld:
    """The jobs, the instances and the clock of one cloud-cluster run (see the module docstring)."""

    def __init__(self, jobs: HtcJobs, policy: ClusterPolicy, terms: CloudTerms, *,
                 recorder: Recorder | None = None, validate: bool = False) -> None:
        self.jobs, self.policy, self.terms = jobs, policy, terms
        self.recorder = recorder if recorder is not None else Recorder()
        self.billing = Billing(terms.charging, btu=terms.btu, release_margin=0.0, clock_offset=jobs.origin % terms.btu)
        self.ledger = Ledger(self.billing)
        self.cap = math.inf if policy.cap is None else policy.cap
        self.timeout = policy.release.idle_timeout()
        n = self._n = len(jobs)
        self._submit, self._runtime = jobs.submit.tolist(), jobs.runtime.tolist()
        self._upload = (jobs.input_bytes / terms.upload_bps).tolist()
        self._download = (jobs.output_bytes / terms.download_bps).tolist()
        self.pool_of = policy.pools.pool_of(jobs.user).tolist()
        self.begin = np.full(n, np.nan)  # the instant the job got its instance (the end of its wait)
        self.done = np.full(n, np.nan)
        self.on = np.full(n, -1, dtype=np.int64)
        self.finished = 0
        self.queue: dict[int, list[int]] = {}
        self.head: dict[int, int] = {}
        self.booting: dict[int, int] = {}
        self.waiting_pools: set[int] = set()
        self.waiting = 0
        # pool -> heap of (-period end, instance, version): the idle instance with the most paid time left first
        self.idle_heaps: dict[int, list[tuple[float, int, int]]] = {}
        self.n_idle = 0
        # per instance, by id (hire order)
        self.pool: list[int] = []
        self.starter: list[int] = []  # the user whose waiting job made the instance start
        self.hired_at: list[float] = []
        self.anchor: list[float] = []
        self.ready: list[float] = []
        self.released: list[bool] = []
        self.busy: list[int] = []  # job, or -1 when idle / booting
        self.hosted: list[int] = []
        self.exec_s: list[float] = []
        self.idle_since: list[float] = []
        self.version: list[int] = []
        self.alive = 0
        self.active = 0
        # cumulative active / hired instance-time at each change, kept only for a rule that reads the load
        self.track_load = policy.keepalive is not None and policy.keepalive.window is not None
        self.load_t, self.load_a, self.load_h = [0.0], [0.0], [0.0]
        self.timers: set[float] = set()
        self.kernel = Kernel(start=-math.inf)
        self._pending: KeepAliveDecision | None = None
        self._handlers = (self._on_done, self._on_ready, self._on_arrival, self._on_timer, self._on_period_end,
                          self._on_timeout)
        self._validator = ClusterValidator(self) if validate else None
        if n:
            self.kernel.schedule(float(jobs.submit[0]), ARRIVAL, 0)

    # -- ClusterView -----------------------------------------------------------------------------------
    @property
    def idle(self) -> int:
        """Instances idle now."""
        return self.n_idle

    @property
    def hired(self) -> int:
        """Instances hired now."""
        return self.alive

    @property
    def now(self) -> float:
        """The current time (s)."""
        return self.kernel.now

    def load(self, t: float, window: float) -> float:
        """Active over hired instance-time in ``[t - window, t]`` (a rule with a ``window`` only)."""
        a1, h1 = self._integrals(t)
        a0, h0 = self._integrals(t - window)
        return (a1 - a0) / (h1 - h0) if h1 > h0 else 0.0

    # -- the state machine -----------------------------------------------------------------------------
    def advance(self) -> KeepAliveDecision | None:
        """Run to the next keep-alive decision; ``None`` once every job is done and every instance released."""
        if self._pending is not None:
            raise RuntimeError("the previous decision was not acted on (call act first)")
        if self.kernel.run(self._handlers):
            return self._pending
        if self._validator is not None:
            self._validator.at_end()
        return None

    def act(self, keep: bool) -> None:
        """Keep the pending decision's instance for one more paid period, or release it now."""
        decision, self._pending = self._pending, None
        if decision is None:
            raise RuntimeError("no decision is pending (call advance first)")
        t, inst = decision.now, decision.instance
        if keep:
            self.version[inst] += 1
            self.kernel.schedule(t + self.terms.btu, PERIOD_END, (inst, self.version[inst]))
            self._push_idle(inst, t + self.terms.btu)
        else:
            self._release(t, inst)
        self._settle(t)

    def copy(self) -> ClusterWorld:
        """An independent copy of the run's state (jobs, policy, terms and recorder shared)."""
        twin = copy.copy(self)
        twin.kernel, twin.ledger = self.kernel.copy(), self.ledger.copy()
        for name in ("begin", "done", "on"):
            setattr(twin, name, getattr(self, name).copy())
        twin.queue = {k: list(v) for k, v in self.queue.items()}
        twin.idle_heaps = {k: list(v) for k, v in self.idle_heaps.items()}
        twin.head, twin.booting, twin.waiting_pools, twin.timers = (dict(self.head), dict(self.booting),
                                                                   set(self.waiting_pools), set(self.timers))
        for name in ("pool", "starter", "hired_at", "anchor", "ready", "released", "busy", "hosted", "exec_s",
                     "idle_since", "version", "load_t", "load_a", "load_h"):
            setattr(twin, name, list(getattr(self, name)))
        twin._handlers = (twin._on_done, twin._on_ready, twin._on_arrival, twin._on_timer, twin._on_period_end,
                          twin._on_timeout)
        if self._validator is not None:
            twin._validator = ClusterValidator(twin)
            twin._validator.arrived = self._validator.arrived
        return twin

    def _settle(self, t: float) -> None:
        """After every event: start instances for uncovered waiting jobs."""
        if self.waiting_pools:
            self._provision(t)
        if self._validator is not None:
            self._validator.at_event(t)

    # -- the load integrals (Load keep-alive rule) -------------------------------------------------------
    def _count(self, t: float, d_active: int, d_alive: int) -> None:
        """Advance the load integrals to ``t`` (when tracked), then change the active / hired counts."""
        last = self.load_t[-1]
        if self.track_load and t > last:
            self.load_a.append(self.load_a[-1] + self.active * (t - last))
            self.load_h.append(self.load_h[-1] + self.alive * (t - last))
            self.load_t.append(t)
        self.active += d_active
        self.alive += d_alive

    def _integrals(self, t: float) -> tuple[float, float]:
        """Active and hired instance-seconds from time 0 to ``t`` (``t`` not after the current time)."""
        ts, i = self.load_t, bisect_left(self.load_t, t)
        if i == 0:
            return 0.0, 0.0
        if i == len(ts):
            rates = (float(self.active), float(self.alive))
        else:
            span = ts[i] - ts[i - 1]
            rates = ((self.load_a[i] - self.load_a[i - 1]) / span, (self.load_h[i] - self.load_h[i - 1]) / span)
        dt = t - ts[i - 1]
        return self.load_a[i - 1] + rates[0] * dt, self.load_h[i - 1] + rates[1] * dt

    # -- events ----------------------------------------------------------------------------------------
    def _on_arrival(self, t: float, j: int) -> None:
        if j + 1 < self._n:
            self.kernel.schedule(self._submit[j + 1], ARRIVAL, j + 1)
        if self._validator is not None:
            self._validator.at_arrival()
        k = self.pool_of[j]
        inst = self._take_idle(k)
        if inst is not None:
            self._assign(t, j, inst)
        else:
            self.queue.setdefault(k, []).append(j)
            self.head.setdefault(k, 0)
            self.waiting += 1
            self.waiting_pools.add(k)
        self._settle(t)

    def _on_done(self, t: float, payload: tuple[int, int]) -> None:
        inst, j = payload
        self.done[j] = t
        self.busy[inst] = -1
        self.version[inst] += 1
        self._count(t, -1, 0)
        self.finished += 1
        if self.finished % self.recorder.every == 0 or self.finished == self._n:
            self.recorder.progress(self.finished, self._n)
        self._serve_or_idle(t, inst)
        self._settle(t)

    def _on_ready(self, t: float, inst: int) -> None:
        self.booting[self.pool[inst]] -= 1
        self.ready[inst] = t
        self._serve_or_idle(t, inst)
        self._settle(t)

    def _on_timer(self, t: float, _: object) -> None:
        self.timers.discard(t)
        self._settle(t)

    def _on_period_end(self, t: float, payload: tuple[int, int]) -> bool:
        inst, version = payload
        if version != self.version[inst]:
            self._settle(t)
            return False
        if self.policy.keepalive is not None and self.idle_since[inst] > t - self.terms.btu:
            self._pending = KeepAliveDecision(t, inst)
            return True
        self._release(t, inst)
        self._settle(t)
        return False

    def _on_timeout(self, t: float, payload: tuple[int, int]) -> None:
        inst, version = payload
        if version == self.version[inst]:
            self._release(t, inst)
        self._settle(t)

    # -- instances -------------------------------------------------------------------------------------
    def _hire(self, t: float, k: int, user: int) -> None:
        inst = len(self.pool)
        self.pool.append(k)
        self.starter.append(user)
        self.hired_at.append(t)
        self.anchor.append(self.billing.anchor(t))
        self.ready.append(math.nan)
        self.released.append(False)
        self.busy.append(-1)
        self.hosted.append(0)
        self.exec_s.append(0.0)
        self.idle_since.append(math.nan)
        self.version.append(0)
        self.booting[k] = self.booting.get(k, 0) + 1
        self._count(t, 0, 1)
        self.kernel.schedule(t + self.terms.boot, READY, inst)

    def _serve_or_idle(self, t: float, inst: int) -> None:
        k = self.pool[inst]
        q = self.queue.get(k)
        if q is not None and self.head[k] < len(q):
            j = q[self.head[k]]
            self.head[k] += 1
            self.waiting -= 1
            if self.head[k] == len(q):
                self.waiting_pools.discard(k)
                self.queue[k], self.head[k] = [], 0
            self._assign(t, j, inst)
            return
        self.idle_since[inst] = t
        self.n_idle += 1
        self.version[inst] += 1
        end = self.billing.deadline(self.anchor[inst], t)  # the end of the paid period running at t
        if self.timeout is not None:
            self.kernel.schedule(t + self.timeout, IDLE_TIMEOUT, (inst, self.version[inst]))
        else:
            self.kernel.schedule(end, PERIOD_END, (inst, self.version[inst]))
        self._push_idle(inst, end)

    def _push_idle(self, inst: int, end: float) -> None:
        heapq.heappush(self.idle_heaps.setdefault(self.pool[inst], []), (-end, inst, self.version[inst]))

    def _take_idle(self, k: int) -> int | None:
        heap = self.idle_heaps.get(k)
        while heap:
            _, inst, version = heapq.heappop(heap)
            if version == self.version[inst] and self.busy[inst] < 0 and not self.released[inst]:
                return inst
        return None

    def _assign(self, t: float, j: int, inst: int) -> None:
        if not math.isnan(self.idle_since[inst]):
            self.n_idle -= 1
            self.idle_since[inst] = math.nan
        self.busy[inst] = j
        self.version[inst] += 1
        self.hosted[inst] += 1
        self.on[j] = inst
        self.begin[j] = t
        self._count(t, 1, 0)
        runtime = self._runtime[j]
        self.exec_s[inst] += runtime
        self.kernel.schedule(t + self._upload[j] + runtime + self._download[j], DONE, (inst, j))

    def _release(self, t: float, inst: int) -> None:
        if self._validator is not None:
            self._validator.at_release(t, inst)
        self.released[inst] = True
        self.ledger.close(inst, self.terms.instance_type, hired_at=self.hired_at[inst], ready_at=self.ready[inst],
                          released_at=t, anchor=self.anchor[inst], hourly=self.terms.hourly,
                          jobs_hosted=self.hosted[inst], busy_capacity_s=self.exec_s[inst], capacity=1.0)
        self.n_idle -= 1
        self.version[inst] += 1
        self._count(t, 0, -1)

    def _provision(self, t: float) -> None:
        """Start instances for uncovered waiting jobs, in arrival order across pools (module docstring)."""
        candidates = []
        for k in self.waiting_pools:
            first = self.head[k] + self.booting.get(k, 0)
            if first < len(self.queue[k]):
                j = self.queue[k][first]
                candidates.append((self._submit[j], j, k, first))
        heapq.heapify(candidates)
        policy, off = self.policy, self.billing.clock_offset
        while candidates and self.alive < self.cap:
            arrival, j, k, idx = heapq.heappop(candidates)
            when = policy.not_before(float(arrival) + off, waiting=self.waiting, cap=self.cap) - off
            if when > t:
                if when not in self.timers:
                    self.timers.add(when)
                    self.kernel.schedule(when, TIMER)
                return
            self._hire(t, k, int(self.jobs.user[j]))
            if idx + 1 < len(self.queue[k]):
                nxt = self.queue[k][idx + 1]
                heapq.heappush(candidates, (self._submit[nxt], nxt, k, idx + 1))


def run(world: ClusterWorld, rng: np.random.Generator) -> ClusterWorld:
    """Drive ``world`` to its end; its keep-alive rule decides with draws of ``rng``."""
    rule = world.policy.keepalive
    while (decision := world.advance()) is not None:
        assert rule is not None  # only a keep-alive rule makes decision points
        world.act(rule.keep(decision.now, world, rng))
    return world
