"""A local cluster that leases cloud nodes (``SPEC.md`` §5, the Q-learning leasing paper §2).

The local site runs EASY (or conservative) backfilling on M nodes (:class:`heuristics.backfill.Cluster`).
After each scheduling pass a *transfer* step moves waiting jobs, in queue order, to the cloud when
they can start there now: a job of ``p`` nodes moves if ``p <= V - cloud nodes in use``. No job spans
both sites; cloud nodes are as fast as local ones and a job starts there without delay. The cost is
the CPU-seconds used in the cloud; the wait is summed over all jobs.

Choices where the paper is silent (documented in ``docs/design.md`` and tested):

- Events at the same instant are batched: every completion, then every submission, then one
  scheduling pass.
- A pass is EASY, then transfers, repeated while a transfer removed the queue head: the new head
  may start locally at once, or get its own reservation that other jobs can backfill around.
- A new ``V`` takes effect at the step boundary, with a scheduling pass at that instant, so a raised
  cap can take waiting jobs at once; a lowered cap never stops jobs already in the cloud.
- A job's width is its allocated processors (requested when unknown), :mod:`workloads.rigid`.

Both measures are integrals over time, so they split exactly over evaluation steps: the wait is
the number of waiting jobs integrated over time, the cost the cloud nodes in use integrated over
time. A :class:`HybridSite` is a small state that copies cheaply (the Q-learning policy clones it
once per candidate ``V`` each step).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from heuristics.backfill import Cluster, Discipline
from workloads.rigid import RigidJobs

LOCAL, CLOUD = 0, 1


@dataclass(slots=True)
class HybridSite:
    """The state of a hybrid site at time ``now`` (see the module docstring)."""

    cluster: Cluster
    now: float = 0.0
    next_job: int = 0
    cloud_used: int = 0
    wait_s: float = 0.0
    cloud_cpu_s: float = 0.0
    done: list[tuple[float, int, int]] = field(default_factory=list)  # (end, job, site)
    log: list[tuple[int, float, int]] = field(default_factory=list)  # (job, start, site) since the last drain
    peak_cloud: int = 0
    need: float = math.inf  # the smallest cap that would have let a blocked transfer go (since reset)

    @classmethod
    def empty(cls, jobs: RigidJobs, m: int, discipline: Discipline = "easy") -> HybridSite:
        """A site with M idle local nodes at the first submission, no job submitted yet."""
        start = float(jobs.submit[0]) if len(jobs) else 0.0
        return cls(Cluster(m, jobs, discipline), now=start)

    @property
    def jobs(self) -> RigidJobs:
        """The job list the site replays."""
        return self.cluster.jobs

    def copy(self) -> HybridSite:
        """An independent copy (the job list is shared, never changed)."""
        return HybridSite(self.cluster.copy(), self.now, self.next_job, self.cloud_used, self.wait_s, self.cloud_cpu_s,
                          list(self.done), list(self.log), self.peak_cloud, self.need)

    def finished(self) -> bool:
        """Every job submitted and ended."""
        return self.next_job >= len(self.jobs) and not self.done and not self.cluster.queue

    def run(self, until: float, cap: float, batches: list[tuple[float, int]] | None = None) -> None:
        """Advance to ``until`` with cloud cap ``cap`` (``math.inf``: unbounded), a pass at ``until`` included.

        ``batches`` receives ``(time, cloud nodes in use)`` after the first pass and after each
        batch of events up to ``until`` (the pass at ``until`` itself is not listed).
        """
        self._pass(cap)
        if batches is not None:
            batches.append((self.now, self.cloud_used))
        submit = self.jobs.submit
        n = len(submit)
        while True:
            t_next = min(float(submit[self.next_job]) if self.next_job < n else math.inf,
                         self.done[0][0] if self.done else math.inf)
            if t_next > until or t_next == math.inf:
                break
            self._advance(t_next)
            self._events(t_next)
            self._pass(cap)
            if batches is not None:
                batches.append((t_next, self.cloud_used))
        if until < math.inf:
            self._advance(until)
            self._pass(cap)

    def _advance(self, t: float) -> None:
        dt = t - self.now
        if dt > 0:
            self.wait_s += len(self.cluster.queue) * dt
            self.cloud_cpu_s += self.cloud_used * dt
            self.now = t

    def _events(self, now: float) -> None:
        nodes = self.jobs.nodes
        while self.done and self.done[0][0] == now:
            _, job, site = heapq.heappop(self.done)
            if site == LOCAL:
                self.cluster.finish(job)
            else:
                self.cloud_used -= int(nodes[job])
        submit = self.jobs.submit
        while self.next_job < len(submit) and submit[self.next_job] == now:
            self.cluster.submit(self.next_job, now)
            self.next_job += 1

    def _pass(self, cap: float) -> None:
        """EASY, then transfers, again while a transfer took the queue head."""
        now, runtime, nodes = self.now, self.jobs.runtime, self.jobs.nodes
        while True:
            for job in self.cluster.schedule(now):
                self._started(job, now + float(runtime[job]), LOCAL)
            took_head = False
            for k, job in enumerate(list(self.cluster.queue)):
                p = int(nodes[job])
                if p <= cap - self.cloud_used:
                    self.cluster.take(job)
                    self.cloud_used += p
                    self.peak_cloud = max(self.peak_cloud, self.cloud_used)
                    self._started(job, now + float(runtime[job]), CLOUD)
                    took_head |= k == 0
                elif self.cloud_used + p < self.need:
                    self.need = self.cloud_used + p
            if not (took_head and self.cluster.queue):
                return

    def _started(self, job: int, end: float, site: int) -> None:
        heapq.heappush(self.done, (end, job, site))
        self.log.append((job, self.now, site))

    def drain_log(self) -> list[tuple[int, float, int]]:
        """The (job, start, site) of the jobs started since the last call."""
        out, self.log = self.log, []
        return out


@dataclass(frozen=True, slots=True)
class HybridResult:
    """A whole run: total wait (s), cloud CPU-seconds, per-job start and site, the caps used per step."""

    twt: float
    cost: float
    start: np.ndarray
    site: np.ndarray
    caps: list[float]


def run_constant(jobs: RigidJobs, m: int, cap: float, *, discipline: Discipline = "easy") -> HybridResult:
    """The whole trace with one cap ``V`` (0: local only; ``math.inf``: unbounded)."""
    site = HybridSite.empty(jobs, m, discipline)
    site.run(math.inf, cap)
    start, where = record(len(jobs), site.drain_log())
    return HybridResult(site.wait_s, site.cloud_cpu_s, start, where, [cap])


def record(n: int, log: list[tuple[int, float, int]], start: np.ndarray | None = None,
           where: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Write a start log into per-job arrays (new arrays when none are given)."""
    start = np.full(n, np.nan) if start is None else start
    where = np.full(n, -1, dtype=np.int64) if where is None else where
    for job, t, s in log:
        start[job], where[job] = t, s
    return start, where


@dataclass(frozen=True, slots=True)
class Balance:
    """The paper's normalized figures of a run against the two references (percent)."""

    twt_pct: float
    c_pct: float

    @property
    def twt_imp_pct(self) -> float:
        """Improvement of the total wait over local-only scheduling."""
        return 100.0 - self.twt_pct

    @property
    def balance(self) -> float:
        """``twt_imp% - c%``."""
        return self.twt_imp_pct - self.c_pct


def balance(twt: float, cost: float, twt_ref: float, c_ref: float) -> Balance:
    """Normalize ``(twt, c)`` by the V = 0 wait and the unbounded-V cost (0 % when a reference is 0)."""
    return Balance(100.0 * twt / twt_ref if twt_ref > 0 else 0.0, 100.0 * cost / c_ref if c_ref > 0 else 0.0)
