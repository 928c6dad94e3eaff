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

A pausable state machine (a :class:`~broker.sim.world.World`): with a keep-alive rule,
:meth:`ClusterWorld.advance` stops at every end of a paid period of an instance that was busy during
it and returns a :class:`KeepAliveDecision`; :meth:`ClusterWorld.act` keeps the instance for one
more period (``True``) or releases it; :meth:`ClusterWorld.result` bills the finished run.
:func:`run` drives it with the policy's rule. Billing (:class:`broker.pricing.billing.Billing`, no
release margin) counts periods from the hire instant (exact) or from the start of that wall-clock
hour; every release is closed in the instance ledger. The world's state is kept in groups
(:mod:`broker.cloudcluster.state`): the jobs' timelines, the waiting jobs, the instances, the counts.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from broker.cloudcluster.bill import ClusterResult, summarize
from broker.cloudcluster.policies import ClusterPolicy
from broker.cloudcluster.state import Instances, Timelines, Usage, Waiting
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.validate import ClusterValidator
from broker.pricing.billing import Billing
from broker.sim.kernel import Kernel
from broker.sim.ledger import Ledger
from broker.sim.recorder import Recorder
from broker.sim.world import World
from workloads.htc import HtcJobs

DONE, READY, ARRIVAL, TIMER, PERIOD_END, IDLE_TIMEOUT = range(6)


@dataclass(frozen=True, slots=True)
class KeepAliveDecision:
    """A decision point: ``instance`` reached the end of a paid period at ``now`` idle, after being busy in it."""

    now: float
    instance: int


class ClusterWorld(World[KeepAliveDecision, bool, ClusterResult]):
    """The jobs, the instances and the clock of one cloud-cluster run (see the module docstring).

    Attributes
    ----------
    begin, done : np.ndarray
        Per job, the instant it got its instance (the end of its wait) and its download ended (s; nan until then).
    on : np.ndarray
        Per job, the instance it ran on (-1 until it got one).
    finished : int
        Jobs done so far.
    waiting : Waiting
        The jobs waiting for an instance.
    instances : Instances
        The instances hired so far.
    usage : Usage
        Instances active and hired now, and the load integrals.
    timers : set of float
        The instants a start rule holds a job until (a timer event pending at each).
    """

    def __init__(self, jobs: HtcJobs, policy: ClusterPolicy, terms: CloudTerms, *,
                 recorder: Recorder | None = None, validate: bool = False) -> None:
        self.jobs, self.policy, self.terms = jobs, policy, terms
        self.recorder = recorder if recorder is not None else Recorder()
        self.billing = Billing(terms.charging, btu=terms.btu, release_margin=0.0, clock_offset=jobs.origin % terms.btu)
        self.ledger = Ledger(self.billing)
        self.cap = math.inf if policy.cap is None else policy.cap
        self.timeout = policy.release.idle_timeout()
        n = self._n = len(jobs)
        self.lines = Timelines.of(jobs, terms, policy.pools.pool_of(jobs.user))
        self.begin = np.full(n, np.nan)
        self.done = np.full(n, np.nan)
        self.on = np.full(n, -1, dtype=np.int64)
        self.finished = 0
        self.waiting = Waiting()
        self.instances = Instances()
        # the integrals are kept only for a rule that reads the load
        self.usage = Usage(track=policy.keepalive is not None and policy.keepalive.window is not None)
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
        return self.instances.n_idle

    @property
    def hired(self) -> int:
        """Instances hired now."""
        return self.usage.alive

    @property
    def now(self) -> float:
        """The current time (s)."""
        return self.kernel.now

    def load(self, t: float, window: float) -> float:
        """Active over hired instance-time in ``[t - window, t]`` (a rule with a ``window`` only)."""
        return self.usage.load(t, window)

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
            self.instances.version[inst] += 1
            self.kernel.schedule(t + self.terms.btu, PERIOD_END, (inst, self.instances.version[inst]))
            self.instances.push_idle(inst, t + self.terms.btu)
        else:
            self._release(t, inst)
        self._settle(t)

    def result(self) -> ClusterResult:
        """The bill of the finished run (:func:`broker.cloudcluster.bill.summarize`)."""
        return summarize(self)

    def _settle(self, t: float) -> None:
        """After every event: start instances for uncovered waiting jobs."""
        if self.waiting.pools:
            self._provision(t)
        if self._validator is not None:
            self._validator.at_event(t)

    # -- events ----------------------------------------------------------------------------------------
    def _on_arrival(self, t: float, j: int) -> None:
        if j + 1 < self._n:
            self.kernel.schedule(self.lines.submit[j + 1], ARRIVAL, j + 1)
        if self._validator is not None:
            self._validator.at_arrival()
        k = self.lines.pool[j]
        inst = self.instances.take_idle(k)
        if inst is not None:
            self._assign(t, j, inst)
        else:
            self.waiting.add(k, j)
        self._settle(t)

    def _on_done(self, t: float, payload: tuple[int, int]) -> None:
        inst, j = payload
        self.done[j] = t
        self.instances.free(inst)
        self.usage.count(t, -1, 0)
        self.finished += 1
        if self.finished % self.recorder.every == 0 or self.finished == self._n:
            self.recorder.progress(self.finished, self._n)
        self._serve_or_idle(t, inst)
        self._settle(t)

    def _on_ready(self, t: float, inst: int) -> None:
        self.instances.booted(inst, t)
        self._serve_or_idle(t, inst)
        self._settle(t)

    def _on_timer(self, t: float, _: object) -> None:
        self.timers.discard(t)
        self._settle(t)

    def _on_period_end(self, t: float, payload: tuple[int, int]) -> bool:
        inst, version = payload
        if version != self.instances.version[inst]:
            self._settle(t)
            return False
        if self.policy.keepalive is not None and self.instances.idle_since[inst] > t - self.terms.btu:
            self._pending = KeepAliveDecision(t, inst)
            return True
        self._release(t, inst)
        self._settle(t)
        return False

    def _on_timeout(self, t: float, payload: tuple[int, int]) -> None:
        inst, version = payload
        if version == self.instances.version[inst]:
            self._release(t, inst)
        self._settle(t)

    # -- instances -------------------------------------------------------------------------------------
    def _hire(self, t: float, k: int, user: int) -> None:
        inst = self.instances.hire(t, k, user, self.billing.anchor(t))
        self.usage.count(t, 0, 1)
        self.kernel.schedule(t + self.terms.boot, READY, inst)

    def _serve_or_idle(self, t: float, inst: int) -> None:
        instances = self.instances
        j = self.waiting.pop(instances.pool[inst])
        if j is not None:
            self._assign(t, j, inst)
            return
        end = self.billing.deadline(instances.anchor[inst], t)  # the end of the paid period running at t
        instances.idle(inst, t, end)
        if self.timeout is not None:
            self.kernel.schedule(t + self.timeout, IDLE_TIMEOUT, (inst, instances.version[inst]))
        else:
            self.kernel.schedule(end, PERIOD_END, (inst, instances.version[inst]))

    def _assign(self, t: float, j: int, inst: int) -> None:
        lines = self.lines
        runtime = lines.runtime[j]
        self.instances.serve(inst, j, runtime)
        self.on[j] = inst
        self.begin[j] = t
        self.usage.count(t, 1, 0)
        self.kernel.schedule(t + lines.upload[j] + runtime + lines.download[j], DONE, (inst, j))

    def _release(self, t: float, inst: int) -> None:
        if self._validator is not None:
            self._validator.at_release(t, inst)
        i = self.instances
        self.ledger.close(inst, self.terms.instance_type, hired_at=i.hired_at[inst], ready_at=i.ready[inst],
                          released_at=t, anchor=i.anchor[inst], hourly=self.terms.hourly,
                          jobs_hosted=i.hosted[inst], busy_capacity_s=i.exec_s[inst], capacity=1.0)
        i.release(inst)
        self.usage.count(t, 0, -1)

    def _provision(self, t: float) -> None:
        """Start instances for uncovered waiting jobs, in arrival order across pools (module docstring)."""
        submit, queue = self.lines.submit, self.waiting.queue
        candidates = [(submit[j], j, k, first) for k, first, j in self.waiting.uncovered(self.instances.booting)]
        heapq.heapify(candidates)
        policy, off = self.policy, self.billing.clock_offset
        while candidates and self.usage.alive < self.cap:
            arrival, j, k, idx = heapq.heappop(candidates)
            when = policy.not_before(arrival + off, waiting=self.waiting.count, cap=self.cap) - off
            if when > t:
                if when not in self.timers:
                    self.timers.add(when)
                    self.kernel.schedule(when, TIMER)
                return
            self._hire(t, k, self.lines.user[j])
            if idx + 1 < len(queue[k]):
                nxt = queue[k][idx + 1]
                heapq.heappush(candidates, (submit[nxt], nxt, k, idx + 1))


def run(world: ClusterWorld, rng: np.random.Generator) -> ClusterWorld:
    """Drive ``world`` to its end; its keep-alive rule decides with draws of ``rng``."""
    rule = world.policy.keepalive
    while (decision := world.advance()) is not None:
        assert rule is not None  # only a keep-alive rule makes decision points
        world.act(rule.keep(decision.now, world, rng))
    return world
