"""A pool of cores fed by one FIFO queue of one-core jobs, as a world on the kernel (``SPEC.md`` §6).

The elastic RL paper's simulator (§4.1): submissions, dispatches and terminations; one queue; a
supervisor that decides which waiting job runs next and, in the elastic model, how many cores the
pool has for the next period.

- **Events at one instant** go as terminations < submissions < the end of a hold, and the
  supervisor decides once the instant's last event is handled: it sees every core freed and every
  job submitted at that instant.
- **A decision point** is an instant with a waiting job and a way to run one: an idle core, or (in
  the elastic model) a pool that may grow now. That covers the paper's "every termination" (it
  frees a core) and an arrival that finds an idle core. Each decision dispatches exactly one job;
  while idle cores and waiting jobs remain, the next decision is at the same instant.
- **Rigid pool** (:attr:`PoolConfig.elastic` false): ``cores`` cores throughout; the action is the job.
- **Elastic pool**: the action is the job and the pool's size for the next period, with the paper's
  constraints: a size holds at least ``hold_s`` (15 minutes) before it may change again, and it is
  never below ``min_cores`` (30) nor below the running jobs (plus the one being dispatched); it is
  never above ``max_cores`` (not in the paper, which names no ceiling: a site's quota; default
  twice ``cores``; ``no_ceiling`` runs without one, as the paper does). The pool starts at
  ``cores``. A shrink removes idle cores only; running jobs are never stopped.

A pausable state machine (a :class:`~broker.sim.world.World`): :meth:`ElasticWorld.advance` runs to
the next decision and returns a :class:`Decision`; :meth:`ElasticWorld.act` dispatches the
:class:`Action`'s job (and resizes the pool); :meth:`ElasticWorld.result` is a :class:`PoolRecord`. A
driver — a policy, a learner, the Gymnasium environment — steps it through
:class:`broker.elastic.episode.Episode`. What a job's run time is believed to be comes from
:class:`broker.elastic.estimate.RunTimeEstimates` (oracle or class median), updated at each
termination.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from broker.elastic.estimate import ESTIMATES, Estimate, RunTimeEstimates
from broker.elastic.validate import ElasticValidator
from broker.sim.kernel import Kernel
from broker.sim.recorder import Recorder
from broker.sim.world import World
from workloads.cores import CoreJobs
from workloads.errors import ConfigError

DONE, SUBMIT, HOLD_END = range(3)
#: The ceiling of a pool without one (a billion cores: never reached by a log's demand).
UNBOUNDED = 10**9


@dataclass(frozen=True, slots=True)
class PoolConfig:
    """The pool and what the site knows (see the module docstring).

    ``cores``: the rigid pool's size, or the elastic pool's first; ``interactive_s``: a job is
    interactive when its run time is below it (the paper's 900 s); ``estimate`` and ``window``: the
    run-time estimates (:mod:`broker.elastic.estimate`, prior ``interactive_s``).
    """

    cores: int = 81
    elastic: bool = False
    min_cores: int = 30
    max_cores: int | None = None
    hold_s: float = 900.0
    interactive_s: float = 900.0
    estimate: Estimate = "oracle"
    window: int = 1000
    no_ceiling: bool = False

    def __post_init__(self) -> None:
        if self.no_ceiling and (self.max_cores is not None or not self.elastic):
            raise ConfigError(f"no ceiling is for an elastic pool without max_cores, got max_cores {self.max_cores}"
                              if self.max_cores is not None else "no ceiling is for an elastic pool")
        if self.max_cores is None and not self.no_ceiling:
            object.__setattr__(self, "max_cores", 2 * self.cores)
        if self.cores < 1:
            raise ConfigError(f"a pool needs cores >= 1, got {self.cores}")
        if self.elastic and not 1 <= self.min_cores <= self.cores <= self.ceiling:
            raise ConfigError(f"an elastic pool needs 1 <= min_cores <= cores <= max_cores, got {self.min_cores}, "
                              f"{self.cores}, {self.max_cores}")
        if not (math.isfinite(self.hold_s) and self.hold_s >= 0):
            raise ConfigError(f"the hold time must be a finite number >= 0 s, got {self.hold_s}")
        if not (math.isfinite(self.interactive_s) and self.interactive_s > 0):
            raise ConfigError(f"the interactive threshold must be a finite number > 0 s, got {self.interactive_s}")
        if self.estimate not in ESTIMATES:
            raise ConfigError(f"estimate must be one of {', '.join(ESTIMATES)}, got {self.estimate!r}")

    @property
    def ceiling(self) -> int:
        """The most cores the pool may have (``cores`` for a rigid pool; :data:`UNBOUNDED` without a ceiling)."""
        if self.no_ceiling:
            return UNBOUNDED
        return int(self.max_cores) if self.elastic and self.max_cores is not None else self.cores


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision point: at ``now``, ``queued`` jobs wait (indices, in submission order).

    ``running`` jobs run on a pool of ``size`` cores. The pool's next size must lie in ``[low,
    high]``; ``resizable`` is false when it must stay ``size`` (a rigid pool, or a hold not over).
    ``idle_for`` is how long some core has been idle without a break (0 when none is idle).
    """

    now: float
    queued: np.ndarray
    running: int
    size: int
    low: int
    high: int
    resizable: bool
    idle_for: float

    @property
    def idle(self) -> int:
        """Idle cores now."""
        return self.size - self.running


@dataclass(frozen=True, slots=True)
class Action:
    """A job to dispatch and, for an elastic pool, the pool's size from now on (``None``: keep it)."""

    job: int
    cores: int | None = None


@dataclass(frozen=True, slots=True)
class PoolRecord:
    """What a run produced: each job's dispatch and termination (s), the pool's sizes, the decisions.

    ``sizes`` is the pool's size from each change on (the first at the first submission);
    ``work_done`` the execution time of the jobs terminated (s); ``contested`` the decisions with more
    than one job waiting, ``oldest_first`` those of them that took the oldest.
    """

    start: np.ndarray
    end: np.ndarray
    sizes: tuple[tuple[float, int], ...]
    work_done: float
    decisions: int
    contested: int
    oldest_first: int


class Queue:
    """The waiting jobs in submission order: appends, removals anywhere, and an array of the waiting jobs."""

    __slots__ = ("_items", "_jobs", "alive", "count")

    def __init__(self, n: int) -> None:
        self._items: list[int] = []
        self.alive = np.zeros(n, dtype=bool)
        self.count = 0
        self._jobs: np.ndarray | None = None

    def __len__(self) -> int:
        return self.count

    def add(self, job: int) -> None:
        """A job arrives (jobs arrive in index order)."""
        self._items.append(job)
        self.alive[job] = True
        self.count += 1
        self._jobs = None

    def remove(self, job: int) -> None:
        """A waiting job leaves the queue."""
        self.alive[job] = False
        self.count -= 1
        self._jobs = None
        if len(self._items) > 64 and 2 * self.count < len(self._items):
            self._items = [j for j in self._items if self.alive[j]]

    def jobs(self) -> np.ndarray:
        """The waiting jobs, ascending (= submission order)."""
        if self._jobs is None:
            items = np.array(self._items, dtype=np.int64)
            self._jobs = items[self.alive[items]] if len(items) else items
        return self._jobs

    def copy(self) -> Queue:
        """An independent copy."""
        twin = Queue.__new__(Queue)
        twin._items, twin.alive, twin.count, twin._jobs = list(self._items), self.alive.copy(), self.count, None
        return twin


class ElasticWorld(World[Decision, Action, PoolRecord]):
    """The jobs, the pool and the clock of one run (see the module docstring).

    Attributes
    ----------
    start, end : np.ndarray
        Each job's dispatch and termination times (NaN until they happen).
    size : int
        Cores in the pool now.
    work_done : float
        Execution time of the jobs terminated so far (s).
    sizes : list of (float, int)
        The pool's size from each change on, the first at the first submission.
    """

    #: Read and never changed: a copy shares them.
    _shared = ("interactive", "_submit", "_runtime", "_group")

    def __init__(self, jobs: CoreJobs, pool: PoolConfig, *, recorder: Recorder | None = None,
                 validate: bool = False) -> None:
        n = len(jobs)
        self.jobs, self.pool = jobs, pool
        self.recorder = recorder if recorder is not None else Recorder()
        self.interactive = jobs.runtime < pool.interactive_s
        self.est = RunTimeEstimates(jobs.runtime, self.interactive, pool.estimate, window=pool.window,
                                    prior=pool.interactive_s)
        self.t0 = float(jobs.submit[0]) if n else 0.0
        self.kernel = Kernel(start=self.t0)
        self.size, self.hold_until, self.last_full = pool.cores, -math.inf, self.t0
        self.start, self.end = np.full(n, np.nan), np.full(n, np.nan)
        self.queue = Queue(n)
        self.running: dict[int, float] = {}  # job -> dispatch time
        self.submitted = self.done = self.decisions = 0
        self.contested = self.oldest_first = 0  # decisions with more than one job waiting; those that took the oldest
        self.waiting_interactive = 0  # interactive jobs in the queue
        self.mixed = self.mixed_interactive = 0  # decisions with both classes waiting; those that took an interactive
        self.work_done = 0.0
        self._core_s, self._core_t = 0.0, self.t0
        groups = jobs.n_groups
        self.served = np.zeros(groups)  # execution time of the terminated jobs, per group
        self.run_count = np.zeros(groups)
        self.run_start_sum = np.zeros(groups)
        self.sizes: list[tuple[float, int]] = [(self.t0, self.size)]
        self.completed: list[int] = []  # terminated since the last drain
        self._submit, self._runtime, self._group = jobs.submit.tolist(), jobs.runtime.tolist(), jobs.group.tolist()
        self._pending: Decision | None = None
        self._check = False
        self._handlers = (self._on_done, self._on_submit, self._on_hold)
        self._validator = ElasticValidator(self) if validate else None
        if n:
            self.kernel.schedule(self.t0, SUBMIT, 0)

    # -- what the site knows -------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """The current time (s)."""
        return self.kernel.now

    def core_seconds(self, t: float | None = None) -> float:
        """Cores of the pool integrated from the first submission to ``t`` (default: now).

        ``t`` may not lie before the pool's last change of size (the integral is kept from there on);
        after now it assumes the size stays.
        """
        t = self.kernel.now if t is None else t
        if t < self._core_t:
            raise ValueError(f"core-seconds are kept from the pool's last change at {self._core_t}, not at {t}")
        return self._core_s + self.size * (t - self._core_t)

    def utilization(self) -> float:
        """The paper's ``U`` now: work of the jobs terminated so far over the core-seconds so far (0 before any)."""
        core_s = self.core_seconds()
        return self.work_done / core_s if core_s > 0 else 0.0

    def service(self) -> np.ndarray:
        """Core-seconds each group has received so far: terminated jobs, and running ones up to now."""
        return self.served + self.run_count * self.kernel.now - self.run_start_sum

    def busy_core_seconds(self) -> float:
        """Core-seconds the jobs have run so far (terminated jobs, and running ones up to now)."""
        return float(self.service().sum())

    def drain_completed(self) -> list[int]:
        """The jobs terminated since the last call, in termination order."""
        done, self.completed = self.completed, []
        return done

    def finished(self) -> bool:
        """Every job submitted and terminated."""
        return self.done == len(self.jobs)

    # -- the state machine ---------------------------------------------------------------------------
    def advance(self) -> Decision | None:
        """Run to the next decision point; ``None`` once every job has terminated."""
        if self._pending is not None:
            raise RuntimeError("the previous decision was not acted on (call act first)")
        while True:
            if self._check:
                self._check = False
                decision = self._decision(self.kernel.now)
                if decision is not None:
                    self._pending = decision
                    self.decisions += 1
                    return decision
            t = self.kernel.peek()
            if t == math.inf:
                if self._validator is not None:
                    self._validator.at_end()
                return None
            self.kernel.run(self._handlers, until=t)
            self._check = True
            if self._validator is not None:
                self._validator.at_event(t)

    def act(self, action: Action) -> None:
        """Dispatch ``action.job`` (waiting) now; first set the pool to ``action.cores`` when given (``None``: keep)."""
        decision = self._pending
        if decision is None:
            raise RuntimeError("no decision is pending (call advance first)")
        t, job, cores = decision.now, action.job, action.cores
        if cores is not None and cores != self.size:
            if not decision.resizable or not decision.low <= cores <= decision.high:
                raise ConfigError(f"t={t}: the pool must stay at {self.size} cores" if not decision.resizable else
                                  f"t={t}: the pool's size must lie in [{decision.low}, {decision.high}], got {cores}")
            self._resize(t, int(cores))
        if not 0 <= job < len(self.jobs) or not self.queue.alive[job]:
            raise ConfigError(f"t={t}: job {job} is not waiting")
        if len(self.running) >= self.size:
            raise ConfigError(f"t={t}: no core is free for job {job} on a pool of {self.size} (grow it)")
        self._pending = None
        if len(decision.queued) > 1:
            self.contested += 1
            self.oldest_first += int(job == decision.queued[0])
        if 0 < self.waiting_interactive < len(decision.queued):
            self.mixed += 1
            self.mixed_interactive += int(self.interactive[job])
        self.waiting_interactive -= int(self.interactive[job])
        self.queue.remove(job)
        self._dispatch(t, job)
        self._check = True
        if self._validator is not None:
            self._validator.at_event(t)

    def result(self) -> PoolRecord:
        """The run so far (the whole run once :meth:`advance` returned ``None``): copies, not the live arrays."""
        return PoolRecord(self.start.copy(), self.end.copy(), tuple(self.sizes), self.work_done, self.decisions,
                          self.contested, self.oldest_first)

    def _decision(self, t: float) -> Decision | None:
        if not self.queue.count:
            return None
        pool, running = self.pool, len(self.running)
        resizable = pool.elastic and t >= self.hold_until
        idle = self.size - running
        if idle <= 0 and not (resizable and self.size < pool.ceiling):
            return None
        low, high = (max(pool.min_cores, running + 1), pool.ceiling) if resizable else (self.size, self.size)
        return Decision(t, self.queue.jobs(), running, self.size, low, high, resizable,
                        t - self.last_full if idle > 0 else 0.0)

    # -- events ----------------------------------------------------------------------------------------
    def _on_submit(self, t: float, j: int) -> None:
        if j + 1 < len(self._submit):
            self.kernel.schedule(self._submit[j + 1], SUBMIT, j + 1)
        self.queue.add(j)
        self.waiting_interactive += int(self.interactive[j])
        self.submitted += 1

    def _on_done(self, t: float, j: int) -> None:
        if len(self.running) == self.size:
            self.last_full = t
        start = self.running.pop(j)
        g, runtime = self._group[j], self._runtime[j]
        self.end[j] = t
        self.work_done += runtime
        self.served[g] += runtime
        self.run_count[g] -= 1
        self.run_start_sum[g] -= start
        self.est.completed(j)
        self.completed.append(j)
        self.done += 1
        if self.done % self.recorder.every == 0 or self.done == len(self._submit):
            self.recorder.progress(self.done, len(self._submit))

    def _on_hold(self, t: float, _: object) -> None:
        """The pool may change size again (the decision check after the instant does the rest)."""

    # -- the pool --------------------------------------------------------------------------------------
    def _resize(self, t: float, cores: int) -> None:
        if len(self.running) >= min(self.size, cores):  # full before the change or after it: no core idle till now
            self.last_full = t
        self._core_s, self._core_t = self.core_seconds(t), t
        self.size, self.hold_until = cores, t + self.pool.hold_s
        self.sizes.append((t, cores))
        if self.pool.hold_s > 0:
            self.kernel.schedule(self.hold_until, HOLD_END)

    def _dispatch(self, t: float, j: int) -> None:
        self.start[j] = t
        self.running[j] = t
        g = self._group[j]
        self.run_count[g] += 1
        self.run_start_sum[g] += t
        if len(self.running) == self.size:
            self.last_full = t
        self.kernel.schedule(t + self._runtime[j], DONE, j)
