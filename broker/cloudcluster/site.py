"""A cluster run wholly on the cloud: one job per instance, paid periods, transfers (``SPEC.md`` §7).

The cloud-cluster paper's model as a small event simulation:

- An instance is *hired* (billing starts; it boots for ``boot`` seconds), then *active* while it
  serves one job, *idle* between jobs, and *released* at the end of a paid period when idle
  (:mod:`broker.cloudcluster.policies` decides whether it stays one more period, or — the idle-timeout
  baseline — releases it after a fixed idle time instead).
- A job's timeline: wait, upload its input (``upload_bps``), execute, download its output
  (``download_bps``). Overhead = time in system - execution time.
- A job arriving takes an idle instance of its pool (all users when merged, else its user's) at
  once: the one with the most paid time left. Otherwise it queues FCFS in its pool, and the pool's
  waiting jobs not covered by instances already booting may start new ones — in arrival order
  across pools, while fewer than ``cap`` instances are hired and the start rules allow. A freed or
  booted instance takes the head of its pool's queue.
- Events at one instant resolve in a fixed order: job completions, boots done, arrivals, timers,
  end-of-period and idle-timeout decisions — an instance freed at the end of its period can take a
  job arriving then, and an instance busy at a period end simply starts the next paid period.

Billing (:class:`broker.billing.Billing`) counts periods from the hire instant (exact charging) or
from the start of that wall-clock hour (wall-clock); a release at the end of period ``k`` pays
exactly ``k`` periods. The bill is instance periods x the hourly rate plus per-month tiered egress
(:mod:`broker.pricing.egress`); each user's share follows the paper's equation 6 (instance cost split by
execution time on the instance; an instance that ran no job is charged to the user who started
it) plus their bytes' share of each month's egress charge.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from broker.cloudcluster.policies import ClusterPolicy
from broker.pricing.billing import Billing, Charging
from broker.pricing.egress import EgressPrices, monthly_bill
from workloads.htc import HtcJobs

DONE, READY, ARRIVAL, TIMER, PERIOD_END, IDLE_TIMEOUT = range(6)
#: Bandwidths measured by the paper between Newcastle and EC2 US-East (§5), bytes per second.
UPLOAD_BPS, DOWNLOAD_BPS = 11_811_000.0, 22_925_000.0


@dataclass(frozen=True, slots=True)
class CloudSite:
    """What the cloud charges and how fast it is: price per instance-hour, egress, boot, bandwidths."""

    hourly: float = 0.145
    egress: EgressPrices = field(default_factory=EgressPrices.free)
    charging: Charging = "exact"
    boot: float = 0.0
    btu: float = 3600.0
    upload_bps: float = UPLOAD_BPS
    download_bps: float = DOWNLOAD_BPS

    def __post_init__(self) -> None:
        if self.hourly < 0 or not 0 <= self.boot <= 3600 or self.btu <= 0:
            raise ValueError("CloudSite needs hourly >= 0, boot in [0, 3600] s and btu > 0")
        if self.upload_bps <= 0 or self.download_bps <= 0:
            raise ValueError("bandwidths must be > 0 bytes/s")


@dataclass(frozen=True, slots=True)
class ClusterResult:
    """A run: per-job times, the instance ledger, the bill and its per-user split."""

    jobs: pd.DataFrame
    ledger: pd.DataFrame
    users: pd.DataFrame
    instance_cost: float
    egress_cost: float
    egress_by_month: dict[int, float]

    @property
    def cost(self) -> float:
        """Instance plus egress charges ($)."""
        return self.instance_cost + self.egress_cost

    def summary(self) -> dict[str, float | int]:
        """The headline figures (JSON-ready)."""
        overhead = self.jobs["overhead"].to_numpy()
        wait = self.jobs["wait"].to_numpy()
        return {"cost": self.cost, "instance_cost": self.instance_cost, "egress_cost": self.egress_cost,
                "instance_hours": int(self.ledger["units"].sum()),
                "mean_overhead_s": float(overhead.mean()) if len(overhead) else 0.0,
                "p95_overhead_s": float(np.percentile(overhead, 95)) if len(overhead) else 0.0,
                "mean_wait_s": float(wait.mean()) if len(wait) else 0.0,
                "jobs": len(self.jobs), "instances": len(self.ledger),
                "peak_instances": peak(self.ledger["hired"].to_numpy(), self.ledger["released"].to_numpy())}


def peak(starts: np.ndarray, ends: np.ndarray) -> int:
    """The most intervals ``[start, end)`` open at once (0 for none)."""
    if not len(starts):
        return 0
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(len(starts)), -np.ones(len(ends))])
    order = np.lexsort((steps, times))  # an end at t before a start at t
    return int(np.cumsum(steps[order]).max())


def simulate_cluster(jobs: HtcJobs, policy: ClusterPolicy | None = None, site: CloudSite | None = None, *,
                     seed: int | np.random.SeedSequence | None = 0) -> ClusterResult:
    """Replay ``jobs`` on a cloud cluster run by ``policy`` on ``site`` (see the module docstring).

    Defaults: no cap, merged, no keep-alive, no delays; c1.medium's price, no egress charge, exact
    charging, no boot time. ``seed`` drives the keep-alive draws (the only randomness). Every job completes.
    """
    sim = _Cluster(jobs, policy or ClusterPolicy(), site or CloudSite(), np.random.default_rng(seed))
    sim.run()
    return sim.result()


class _Cluster:
    """The simulation state; :func:`simulate_cluster` is its interface."""

    def __init__(self, jobs: HtcJobs, policy: ClusterPolicy, site: CloudSite, rng: np.random.Generator) -> None:
        self.jobs, self.policy, self.site, self.rng = jobs, policy, site, rng
        self.billing = Billing(site.charging, btu=site.btu, release_margin=0.0, clock_offset=jobs.origin % site.btu)
        self.cap = math.inf if policy.cap is None else policy.cap
        n = len(jobs)
        self.pool_of = np.zeros(n, dtype=np.int64) if policy.merge else jobs.user.astype(np.int64)
        self.begin = np.full(n, np.nan)  # the instant the job got its instance (end of its wait)
        self.done = np.full(n, np.nan)
        self.on = np.full(n, -1, dtype=np.int64)
        self.queue: dict[int, list[int]] = {}
        self.head: dict[int, int] = {}
        self.booting: dict[int, int] = {}
        self.waiting_pools: set[int] = set()
        self.waiting = 0
        self.idle: dict[int, list[tuple[float, int, int]]] = {}  # pool -> heap of (-period end, instance, version)
        self.n_idle = 0
        # per instance
        self.pool: list[int] = []
        self.starter: list[int] = []  # the user whose waiting job made the instance start
        self.hired: list[float] = []
        self.anchor: list[float] = []
        self.ready: list[float] = []
        self.released: list[float] = []
        self.units: list[int] = []
        self.busy: list[int] = []  # job, or -1 when idle / booting
        self.idle_since: list[float] = []
        self.version: list[int] = []
        self.alive = 0
        self.active = 0
        # cumulative active / hired instance-time at each change, kept only for the Load keep-alive rule
        self.track_load = policy.keepalive is not None and policy.keepalive.kind == "load"
        self.load_t, self.load_a, self.load_h = [0.0], [0.0], [0.0]
        self.events: list[tuple[float, int, int, int, int]] = []
        self.timers: set[float] = set()
        self.seq = 0

    # -- the loop --------------------------------------------------------------------------------

    def push(self, t: float, kind: int, who: int, extra: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, kind, self.seq, who, extra))

    def run(self) -> None:
        for j, t in enumerate(self.jobs.submit):
            self.push(float(t), ARRIVAL, j)
        handlers = (self.on_done, self.on_ready, self.on_arrival, self.on_timer, self.on_period_end, self.on_timeout)
        while self.events:
            t, kind, _, who, extra = heapq.heappop(self.events)
            handlers[kind](t, who, extra)
            if self.waiting_pools:
                self.provision(t)

    def count(self, t: float, d_active: int, d_alive: int) -> None:
        """Advance the load integrals to ``t`` (Load rule only), then change the active / hired counts."""
        last = self.load_t[-1]
        if self.track_load and t > last:
            self.load_a.append(self.load_a[-1] + self.active * (t - last))
            self.load_h.append(self.load_h[-1] + self.alive * (t - last))
            self.load_t.append(t)
        self.active += d_active
        self.alive += d_alive

    def load(self, t: float) -> float:
        """Active over hired instance-time in ``[t - window, t]`` (the Load keep-alive rule)."""
        assert self.policy.keepalive is not None
        a1, h1 = self.integrals(t)
        a0, h0 = self.integrals(t - self.policy.keepalive.window)
        return (a1 - a0) / (h1 - h0) if h1 > h0 else 0.0

    def integrals(self, t: float) -> tuple[float, float]:
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

    # -- events ----------------------------------------------------------------------------------

    def on_arrival(self, t: float, j: int, _: int) -> None:
        k = int(self.pool_of[j])
        inst = self.take_idle(k)
        if inst is not None:
            self.assign(t, j, inst)
            return
        self.queue.setdefault(k, []).append(j)
        self.head.setdefault(k, 0)
        self.waiting += 1
        self.waiting_pools.add(k)

    def on_done(self, t: float, inst: int, j: int) -> None:
        self.done[j] = t
        self.busy[inst] = -1
        self.version[inst] += 1
        self.count(t, -1, 0)
        self.serve_or_idle(t, inst)

    def on_ready(self, t: float, inst: int, _: int) -> None:
        self.booting[self.pool[inst]] -= 1
        self.ready[inst] = t
        self.serve_or_idle(t, inst)

    def on_timer(self, t: float, _: int, __: int) -> None:
        self.timers.discard(t)

    def on_period_end(self, t: float, inst: int, version: int) -> None:
        if version != self.version[inst]:
            return
        period_start = t - self.site.btu
        rule = self.policy.keepalive
        if rule is not None and self.idle_since[inst] > period_start:
            f = rule.probability(idle=self.n_idle, hired=self.alive,
                                 load=self.load(t) if rule.kind == "load" else 0.0)
            if self.rng.random() < f:
                self.version[inst] += 1
                self.push(t + self.site.btu, PERIOD_END, inst, self.version[inst])
                self.push_idle(inst, t + self.site.btu)
                return
        self.release(t, inst)

    def on_timeout(self, t: float, inst: int, version: int) -> None:
        if version == self.version[inst]:
            self.release(t, inst)

    # -- instances -------------------------------------------------------------------------------

    def hire(self, t: float, k: int, user: int) -> None:
        inst = len(self.pool)
        self.pool.append(k)
        self.starter.append(user)
        self.hired.append(t)
        self.anchor.append(self.billing.anchor(t))
        self.ready.append(math.nan)
        self.released.append(math.nan)
        self.units.append(0)
        self.busy.append(-1)
        self.idle_since.append(math.nan)
        self.version.append(0)
        self.booting[k] = self.booting.get(k, 0) + 1
        self.count(t, 0, 1)
        self.push(t + self.site.boot, READY, inst)

    def serve_or_idle(self, t: float, inst: int) -> None:
        k = self.pool[inst]
        q = self.queue.get(k)
        if q is not None and self.head[k] < len(q):
            j = q[self.head[k]]
            self.head[k] += 1
            self.waiting -= 1
            if self.head[k] == len(q):
                self.waiting_pools.discard(k)
                self.queue[k], self.head[k] = [], 0
            self.assign(t, j, inst)
            return
        self.idle_since[inst] = t
        self.n_idle += 1
        self.version[inst] += 1
        if self.policy.idle_timeout is not None:
            self.push(t + self.policy.idle_timeout, IDLE_TIMEOUT, inst, self.version[inst])
            self.push_idle(inst, self.period_end(inst, t))
        else:
            end = self.period_end(inst, t)
            self.push(end, PERIOD_END, inst, self.version[inst])
            self.push_idle(inst, end)

    def period_end(self, inst: int, t: float) -> float:
        """The end of the paid period running at ``t`` (the first period ends one unit after the anchor)."""
        a, btu = self.anchor[inst], self.site.btu
        return a + max(1, math.ceil((t - a) / btu)) * btu

    def push_idle(self, inst: int, end: float) -> None:
        heapq.heappush(self.idle.setdefault(self.pool[inst], []), (-end, inst, self.version[inst]))

    def take_idle(self, k: int) -> int | None:
        heap = self.idle.get(k)
        while heap:
            _, inst, version = heapq.heappop(heap)
            if version == self.version[inst] and self.busy[inst] < 0 and math.isnan(self.released[inst]):
                return inst
        return None

    def assign(self, t: float, j: int, inst: int) -> None:
        was_idle = not math.isnan(self.idle_since[inst])
        if was_idle:
            self.n_idle -= 1
            self.idle_since[inst] = math.nan
        self.busy[inst] = j
        self.version[inst] += 1
        self.on[j] = inst
        self.begin[j] = t
        self.count(t, 1, 0)
        jobs, site = self.jobs, self.site
        end = t + jobs.input_bytes[j] / site.upload_bps + jobs.runtime[j] + jobs.output_bytes[j] / site.download_bps
        self.push(float(end), DONE, inst, j)

    def release(self, t: float, inst: int) -> None:
        self.released[inst] = t
        self.units[inst] = self.billing.units(self.anchor[inst], t) if self.policy.idle_timeout is not None \
            else round((t - self.anchor[inst]) / self.site.btu)
        self.n_idle -= 1
        self.version[inst] += 1
        self.count(t, 0, -1)

    def provision(self, t: float) -> None:
        """Start instances for uncovered waiting jobs, in arrival order across pools (module docstring)."""
        candidates = []
        for k in self.waiting_pools:
            first = self.head[k] + self.booting.get(k, 0)
            if first < len(self.queue[k]):
                j = self.queue[k][first]
                candidates.append((self.jobs.submit[j], j, k, first))
        heapq.heapify(candidates)
        rule, off = self.policy.start, self.billing.clock_offset
        while candidates and self.alive < self.cap:
            arrival, j, k, idx = heapq.heappop(candidates)
            when = rule.not_before(float(arrival) + off, waiting=self.waiting, cap=self.cap) - off
            if when > t:
                if when not in self.timers:
                    self.timers.add(when)
                    self.push(when, TIMER, -1)
                return
            self.hire(t, k, int(self.jobs.user[j]))
            if idx + 1 < len(self.queue[k]):
                nxt = self.queue[k][idx + 1]
                heapq.heappush(candidates, (self.jobs.submit[nxt], nxt, k, idx + 1))

    # -- the bill --------------------------------------------------------------------------------

    def result(self) -> ClusterResult:
        jobs, site = self.jobs, self.site
        inst = self.on
        units = np.asarray(self.units, dtype=np.int64)
        ledger = pd.DataFrame({"pool": self.pool, "hired": self.hired, "anchor": self.anchor, "ready": self.ready,
                               "released": self.released, "units": units, "cost": units * site.hourly})
        download_end = self.done
        overhead = download_end - jobs.submit - jobs.runtime
        frame = pd.DataFrame({"submit": jobs.submit, "begin": self.begin, "done": download_end, "instance": inst,
                              "user": jobs.user, "runtime": jobs.runtime, "wait": self.begin - jobs.submit,
                              "overhead": overhead})
        egress_by_month, egress_share = monthly_bill(download_end, jobs.output_bytes, site.egress,
                                                     origin=jobs.origin) if len(jobs) else ({}, np.zeros(0))
        users = self.user_bill(ledger, egress_share)
        return ClusterResult(jobs=frame, ledger=ledger, users=users, instance_cost=float(ledger["cost"].sum()),
                             egress_cost=float(sum(egress_by_month.values())), egress_by_month=egress_by_month)

    def user_bill(self, ledger: pd.DataFrame, egress_share: np.ndarray) -> pd.DataFrame:
        """Each user's instance charge by the paper's equation 6, plus their egress share."""
        jobs = self.jobs
        n_users = max(int(jobs.user.max()) + 1 if len(jobs) else 0, len(jobs.users))
        cost = ledger["cost"].to_numpy()
        exec_on = np.bincount(self.on, weights=jobs.runtime, minlength=len(cost)) if len(jobs) else np.zeros(len(cost))
        share = np.divide(jobs.runtime, exec_on[self.on], out=np.zeros(len(jobs)), where=exec_on[self.on] > 0)
        instance = np.bincount(jobs.user, weights=cost[self.on] * share, minlength=n_users)
        unused = exec_on == 0
        starter = np.asarray(self.starter, dtype=np.int64)
        instance += np.bincount(starter[unused], weights=cost[unused], minlength=n_users)
        egress = np.bincount(jobs.user, weights=egress_share, minlength=n_users)
        ids = list(jobs.users) if len(jobs.users) == n_users else list(range(n_users))
        return pd.DataFrame({"user": ids, "instance_cost": instance, "egress_cost": egress,
                             "cost": instance + egress, "exec_s": np.bincount(jobs.user, weights=jobs.runtime,
                                                                             minlength=n_users)})
