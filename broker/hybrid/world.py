"""A local cluster that leases cloud nodes, as a world on the kernel (``SPEC.md`` §5, Q-learning paper §2).

The local site runs EASY (or conservative) backfilling on M nodes (:class:`heuristics.backfill.Cluster`).
After each scheduling pass a *transfer* step moves waiting jobs, in queue order, to the cloud when
they can start there now: a job of ``p`` nodes moves if ``p <= V - cloud nodes in use``. No job spans
both sites; cloud nodes are as fast as local ones and a job starts there without delay. The cost is
the CPU-seconds used in the cloud; the wait is summed over all jobs. With ``V = 0`` this is the plain
backfilling replay of a cluster alone (:func:`replay`).

Choices where the paper is silent (documented in ``docs/design.md`` and tested):

- Events at one instant go as completions < submissions (the kernel keeps that order), then one
  scheduling pass, run once the instant's last event is handled: the pass sees every node freed and
  every job submitted at that instant. (A job that ends at the instant it starts makes a second
  batch at that instant, with its own pass.)
- A pass is EASY, then transfers, repeated while a transfer removed the queue head: the new head
  may start locally at once, or get its own reservation that other jobs can backfill around.
- A state machine driven step by step, paused at the end of each step (the driver's ``until``):
  :meth:`HybridWorld.run` sets the cap ``V`` for the step with a pass at its first instant (a raised
  cap can take waiting jobs at once; a lowered cap never stops jobs already in the cloud) and
  advances to the step's end, a pass there included; :meth:`HybridWorld.copy` clones it there. As a
  :class:`~broker.sim.world.World`, the decision at a step's end is a :class:`Decision` and the
  action a :class:`Lease` (``act`` is ``run``).
- A job's width is its allocated processors (requested when unknown), :mod:`workloads.rigid`.

Both measures are integrals over time, so they split exactly over evaluation steps: the wait is
the number of waiting jobs integrated over time, the cost the cloud nodes in use integrated over
time. The world copies cheaply (:meth:`HybridWorld.copy`): Q-learning clones it once per candidate
``V`` each step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from broker.hybrid.validate import HybridValidator
from broker.sim.kernel import Kernel
from broker.sim.recorder import Recorder
from broker.sim.world import World
from heuristics.backfill import Cluster, Discipline
from workloads.rigid import RigidJobs

LOCAL, CLOUD = 0, 1
DONE, SUBMIT = 0, 1
_SILENT = Recorder()  # keeps nothing: the recorder of clones
#: A job's start: (job, start time, site).
Start = tuple[int, float, int]


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision point: the end of a step at ``now``; ``queued`` jobs wait, ``cloud_used`` cloud nodes run."""

    now: float
    queued: int
    cloud_used: int


@dataclass(frozen=True, slots=True)
class Lease:
    """An action: run the next step, to ``until`` (s), with at most ``cap`` cloud nodes (``math.inf``: unbounded)."""

    until: float
    cap: float


@dataclass(frozen=True, slots=True)
class Drained:
    """The starts handed to a driver so far, one batch per :meth:`HybridWorld.drain_log`, the latest first.

    Immutable, so a copy shares them: a copy costs the starts since the last drain, not the run's.
    """

    starts: tuple[Start, ...]
    before: Drained | None


@dataclass(frozen=True, slots=True)
class Schedule:
    """Start and end (s) of every job, the site it ran on, and its ``promised`` start (conservative, else nan).

    ``wait_s`` and ``cloud_cpu_s`` are the site's integrals over the whole run (s, node-seconds).
    """

    start: np.ndarray
    end: np.ndarray
    site: np.ndarray
    promised: np.ndarray
    wait_s: float
    cloud_cpu_s: float


class HybridWorld(World[Decision, Lease, Schedule]):
    """The state of a hybrid site at time :attr:`now` (see the module docstring).

    Attributes
    ----------
    now : float
        The time the integrals run to (s).
    wait_s, cloud_cpu_s : float
        Waiting jobs and cloud nodes in use, integrated over time so far.
    cloud_used, peak_cloud : int
        Cloud nodes in use now, and the most in use since the last :meth:`clone`.
    need : float
        The smallest cap that would have let a blocked transfer go since the last :meth:`clone`.
    """

    #: Read and never changed: a copy shares them.
    _shared = ("_submit", "_runtime", "_nodes")

    def __init__(self, jobs: RigidJobs, m: int, discipline: Discipline = "easy", *,
                 recorder: Recorder | None = None, validate: bool = False) -> None:
        self.cluster = Cluster(m, jobs, discipline)
        self.recorder = recorder if recorder is not None else Recorder()
        self._every = self.recorder.every
        self.now = float(jobs.submit[0]) if len(jobs) else 0.0
        self.kernel = Kernel(start=self.now)
        self.cap = 0.0
        self.next_job = self.started = self.ended = self.cloud_used = self.peak_cloud = 0
        self.wait_s = self.cloud_cpu_s = 0.0
        self.need = math.inf
        self.track_need = False
        self.log: list[Start] = []  # since the last drain
        self._drained: Drained | None = None
        self._pending: Decision | None = None
        self._submit, self._runtime, self._nodes = jobs.submit.tolist(), jobs.runtime.tolist(), jobs.nodes.tolist()
        self._narrowest = int(jobs.nodes.min()) if len(jobs) else 1
        self._batches: list[tuple[float, int]] | None = None
        self._handlers = (self._on_done, self._on_submit)
        self._validator = HybridValidator(self) if validate else None
        if len(jobs):
            self.kernel.schedule(self.now, SUBMIT, 0)

    @property
    def jobs(self) -> RigidJobs:
        """The job list the site replays."""
        return self.cluster.jobs

    def clone(self) -> HybridWorld:
        """A copy for evaluating a cap: an empty start log, the peak and ``need`` measured from now."""
        twin = self.copy()
        if twin.log:  # the starts not drained yet stay in the clone's run, not in its log
            twin._drained, twin.log = Drained(tuple(twin.log), twin._drained), []
        twin.peak_cloud, twin.need, twin.track_need = twin.cloud_used, math.inf, True
        twin.recorder = _SILENT  # a clone's progress is not the run's
        return twin

    def succeed(self, previous: HybridWorld) -> None:
        """Continue the run of ``previous`` (a learner carries on from one of its clones).

        The run's recorder moves here, and the progress marks the clone passed silently are reported.
        """
        self.recorder, self._every = previous.recorder, previous._every
        for ended in range(previous.ended + 1, self.ended + 1):
            if ended % self._every == 0 or ended == len(self._nodes):
                self.recorder.progress(ended, len(self._nodes))

    def finished(self) -> bool:
        """Every job submitted and ended."""
        return not len(self.kernel) and not self.cluster.queue

    # -- the World protocol --------------------------------------------------------------------------------
    def advance(self) -> Decision | None:
        """The decision at the end of the step run last (at the start: before the first); ``None`` once finished."""
        if self._pending is not None:
            raise RuntimeError("the previous decision was not acted on (call act first)")
        if self.finished():
            if self._validator is not None:
                self._validator.at_end()
            return None
        self._pending = Decision(self.now, len(self.cluster.queue), self.cloud_used)
        return self._pending

    def act(self, lease: Lease) -> None:
        """Run the next step as ``lease`` says (:meth:`run`)."""
        if self._pending is None:
            raise RuntimeError("no decision is pending (call advance first)")
        self._pending = None
        self.run(lease.until, lease.cap)

    def result(self) -> Schedule:
        """Every job's start, end and site so far (drained or not), the promised starts and the integrals."""
        n, drained = len(self._nodes), self._drained
        start, where = record(n, self.log)
        while drained is not None:
            record(n, drained.starts, start, where)
            drained = drained.before
        jobs = self.jobs
        promised = np.array([self.cluster.promised.get(i, np.nan) for i in range(n)])
        return Schedule(start, start + jobs.runtime, where, promised, self.wait_s, self.cloud_cpu_s)

    def run(self, until: float, cap: float, batches: list[tuple[float, int]] | None = None) -> None:
        """Advance to ``until`` with cloud cap ``cap`` (``math.inf``: unbounded), a pass at ``until`` included.

        ``batches`` receives ``(time, cloud nodes in use)`` after the first pass and after each
        instant's pass up to ``until`` (the pass at ``until`` itself is not listed).
        """
        self.cap = cap
        self._pass()
        if batches is not None:
            batches.append((self.now, self.cloud_used))
        self._batches = batches
        self.kernel.run(self._handlers, until, self._settle)
        self._batches = None
        if until < math.inf:
            self._advance(until)
            self._pass()

    def drain_log(self) -> list[Start]:
        """The (job, start, site) of the jobs started since the last call (:meth:`result` keeps them all)."""
        out, self.log = self.log, []
        if out:
            self._drained = Drained(tuple(out), self._drained)
        return out

    # -- events ------------------------------------------------------------------------------------------
    def _advance(self, t: float) -> None:
        dt = t - self.now
        if dt > 0:
            self.wait_s += len(self.cluster.queue) * dt
            self.cloud_cpu_s += self.cloud_used * dt
            self.now = t

    def _on_done(self, t: float, payload: tuple[int, int]) -> None:
        dt = t - self.now
        if dt > 0:  # the integrals run to t (inlined: once per instant)
            self.wait_s += len(self.cluster.queue) * dt
            self.cloud_cpu_s += self.cloud_used * dt
            self.now = t
        job, site = payload
        if site == LOCAL:
            self.cluster.finish(job)
        else:
            self.cloud_used -= self._nodes[job]
        ended = self.ended = self.ended + 1
        if ended % self._every == 0 or ended == len(self._nodes):
            self.recorder.progress(ended, len(self._nodes))

    def _on_submit(self, t: float, job: int) -> None:
        dt = t - self.now
        if dt > 0:
            self.wait_s += len(self.cluster.queue) * dt
            self.cloud_cpu_s += self.cloud_used * dt
            self.now = t
        self.cluster.submit(job, t)
        self.next_job = nxt = job + 1
        if nxt < len(self._submit):
            self.kernel.schedule(self._submit[nxt], SUBMIT, nxt)

    def _settle(self, t: float) -> None:
        """The instant's last event is handled: its scheduling pass."""
        self._pass()
        if self._batches is not None:
            self._batches.append((t, self.cloud_used))

    def _pass(self) -> None:
        """EASY, then transfers, again while a transfer took the queue head."""
        now, cap, runtime = self.now, self.cap, self._runtime
        if self._validator is not None:
            self._validator.before_pass()
        while True:
            for job in self.cluster.schedule(now):
                self._started(job, now + runtime[job], LOCAL)
            if cap - self.cloud_used < self._narrowest and not self.track_need:
                break  # no waiting job fits in the cloud: no transfer can happen
            nodes, queue = self._nodes, self.cluster.queue
            took_head = False
            for k, job in enumerate(list(queue)):
                p = nodes[job]
                if p <= cap - self.cloud_used:
                    self.cluster.take(job)
                    self.cloud_used += p
                    self.peak_cloud = max(self.peak_cloud, self.cloud_used)
                    self._started(job, now + runtime[job], CLOUD)
                    took_head |= k == 0
                elif self.cloud_used + p < self.need:
                    self.need = self.cloud_used + p
            if not (took_head and queue):
                break
        if self._validator is not None:
            self._validator.at_pass(now)

    def _started(self, job: int, end: float, site: int) -> None:
        self.started += 1
        self.kernel.schedule(end, DONE, (job, site))
        self.log.append((job, self.now, site))


def record(n: int, log: Sequence[Start], start: np.ndarray | None = None,
           where: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Write a start log into per-job arrays (new arrays when none are given)."""
    start = np.full(n, np.nan) if start is None else start
    where = np.full(n, -1, dtype=np.int64) if where is None else where
    if log:
        jobs, times, sites = zip(*log, strict=True)
        index = np.fromiter(jobs, dtype=np.int64, count=len(log))
        start[index] = np.fromiter(times, dtype=np.float64, count=len(log))
        where[index] = np.fromiter(sites, dtype=np.int64, count=len(log))
    return start, where


def replay(jobs: RigidJobs, m: int, discipline: Discipline = "easy", *, cap: float = 0.0,
           recorder: Recorder | None = None, validate: bool = False) -> tuple[Schedule, HybridWorld]:
    """The whole job list with one cap (0: the cluster alone; ``math.inf``: unbounded), and the finished world."""
    world = HybridWorld(jobs, m, discipline, recorder=recorder, validate=validate)
    world.run(math.inf, cap)
    if world._validator is not None:
        world._validator.at_end()
    world.drain_log()  # the schedule keeps every start
    return world.result(), world
