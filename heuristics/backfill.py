"""Backfilling on a cluster of M homogeneous nodes: EASY and conservative (``SPEC.md`` §5).

Rigid jobs ask for ``nodes`` nodes and give a requested time (``estimate``) that the scheduler
uses as their run time; the actual ``runtime`` stays hidden until a job ends (a job running past
its estimate is treated as ending any moment now). Jobs are queued in submission order.

*EASY* starts queued jobs in order while they fit; the first that does not gets a reservation at
the *shadow time*, when enough running jobs will (by their estimates) have ended, and a later job
may start now only if it fits and either ends (by its estimate) before the shadow time or uses no
more than the nodes the head will leave spare then. *Conservative* gives every job, when it
arrives, the earliest reservation that fits the profile of free nodes left by the running jobs and
the earlier reservations: its *promised start*. When a job ends early the reservations are
compressed in queue order, each moved to its earliest fit but never later than it was, so (with
estimates that are not below the run times) no job starts after its promise. The scheduler only
works at submissions and completions: nothing else can change a decision.

Conservative details:

- Compression happens at every scheduling pass, and also when a job is submitted after nodes
  were freed (a job ended, or a waiting job was taken elsewhere) since the last compression: the
  promise is made on the compressed reservations. A job arriving at the instant another ends
  therefore never takes the room an earlier queued job moves into.
- A job running past its estimate is not scheduled around: from its estimated end its nodes count
  as free from now while it really holds them, so a reservation that counts on them cannot start.
  Such a late reservation is shifted to now (a job submitted meanwhile is promised around it) and
  fitted again from scratch at each pass, in its turn in queue order (later if need be); until
  its turn it holds no nodes against the jobs before it, which could otherwise be fitted around a
  hold that then moves away and wait for a start that no event reaches. A promise stays what the
  scheduler promised at submission: an upper bound on the start only when no estimate is below
  its run time. On KTH-SP2 (100 nodes, 475 of 28,475 jobs overrun) 114 jobs start after their
  promise: for 97 a job past its estimate still held nodes at the promised start; the other 17
  waited while some job ran past its estimate and were pushed on by what it delayed.
- The free-node profile is kept from event to event (not rebuilt for each pass), and compression
  looks only at the jobs freed nodes could move: a job was put at its earliest fit and the profile
  has since only lost free nodes, except where nodes were freed (an end, a take, another job
  moving, a late hold lifted), so it can only move into a window that overlaps those. The
  schedules are, to the last bit, those of rebuilding the profile and refitting every job at every
  pass (tested against a plain reference).

:class:`Cluster` is the state (running jobs, the queue) and one scheduling pass; the hybrid site
world (:mod:`broker.hybrid.world`) drives it event by event and may take waiting jobs elsewhere
(:meth:`Cluster.take`); with a cloud cap of 0 that world is the plain replay of the cluster alone.
"""

from __future__ import annotations

import copy
import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Literal

import numpy as np

from workloads.errors import ConfigError, InputError
from workloads.rigid import RigidJobs

Discipline = Literal["easy", "conservative"]
Span = tuple[float, float]  # the first start and the last end of some intervals
NOTHING: Span = (math.inf, -math.inf)  # the span of no interval


@dataclass(slots=True)
class Cluster:
    """M nodes, the jobs running on them and the queue (see the module docstring)."""

    m: int
    jobs: RigidJobs
    discipline: Discipline = "easy"
    free: int = 0
    queue: list[int] = field(default_factory=list)
    running: dict[int, float] = field(default_factory=dict)  # job -> estimated end
    promised: dict[int, float] = field(default_factory=dict)
    head_reservation: dict[int, float] = field(default_factory=dict)
    reserved: dict[int, float] = field(default_factory=dict)  # conservative: waiting job -> reserved start
    _width: list[int] = field(default_factory=list, init=False, repr=False)
    _est: list[float] = field(default_factory=list, init=False, repr=False)
    # conservative only: the free nodes from the last event on, and what compression needs to know
    _profile: _Profile = field(init=False, repr=False)
    _freed: bool = field(default=False, init=False, repr=False)  # a job ended or was taken since the last compression
    _freed_span: Span = field(default=NOTHING, init=False, repr=False)  # the intervals freed since then
    _carry: dict[int, Span] = field(default_factory=dict, init=False, repr=False)  # freed after a job's last refit
    _late: set[int] = field(default_factory=set, init=False, repr=False)  # shifted to now since the last compression
    _momentary: int = field(default=0, init=False, repr=False)  # waiting jobs asking for 0 s (holding no nodes)

    def __post_init__(self) -> None:
        if self.m < 1:
            raise ConfigError(f"a cluster needs m >= 1 nodes, got {self.m}")
        if self.discipline not in ("easy", "conservative"):
            raise ConfigError(f"discipline must be 'easy' or 'conservative', got {self.discipline!r}")
        self.free = self.m
        self._width, self._est = self.jobs.nodes.tolist(), self.jobs.estimate.tolist()  # plain lists: hot loops
        self._profile = _Profile(-math.inf, self.m)
        too_wide = np.flatnonzero(self.jobs.nodes > self.m)
        if len(too_wide):
            i = int(too_wide[0])
            raise InputError(f"job {i} asks for {self.jobs.nodes[i]} nodes, the cluster has {self.m}")

    def copy(self) -> Cluster:
        """An independent copy of the state (the job list is shared, never changed)."""
        twin = copy.copy(self)
        twin.queue, twin.running, twin.promised = list(self.queue), dict(self.running), dict(self.promised)
        twin.head_reservation, twin.reserved = dict(self.head_reservation), dict(self.reserved)
        twin._profile, twin._carry, twin._late = self._profile.copy(), dict(self._carry), set(self._late)
        return twin

    def submit(self, job: int, now: float) -> None:
        """Queue ``job`` (at its submission); conservative: reserve its earliest fit, its promised start."""
        if self.discipline == "conservative":
            if self._freed:  # the promise is made on compressed reservations
                self._compress(now)
            else:
                self._advance(now)
            start = self._profile.earliest(self._width[job], self._est[job])
            self._reserve(job, start)
            self.promised[job] = start
            self._momentary += self._est[job] <= 0
        self.queue.append(job)

    def finish(self, job: int) -> None:
        """``job`` ended: free its nodes."""
        estimated_end = self.running.pop(job)
        self.free += self._width[job]
        if self.discipline == "conservative":  # freed from the last event on (the past is dropped at the next)
            self._free_nodes(self._profile.times[0], estimated_end, self._width[job])
            self._freed = True

    def take(self, job: int) -> None:
        """Remove a waiting job from the queue (it runs elsewhere)."""
        self.queue.remove(job)
        if job in self.reserved:
            start = self.reserved.pop(job)
            self._free_nodes(start, start + self._est[job], self._width[job])
            self._momentary -= self._est[job] <= 0
            self._freed = True

    def schedule(self, now: float) -> list[int]:
        """Start what the discipline allows now; returns the started jobs in start order."""
        if self.discipline == "easy":
            return self._easy(now)
        self._compress(now)
        width, reserved = self._width, self.reserved
        # a job running past its estimate still holds its nodes: the profile counts them free from now
        return [self._start(j, now) for j in list(self.queue) if reserved[j] <= now and width[j] <= self.free]

    def _start(self, job: int, now: float) -> int:
        self.queue.remove(job)
        return self._launch(job, now)

    def _launch(self, job: int, now: float) -> int:
        start = self.reserved.pop(job, None)
        if start is not None:  # conservative: the reservation becomes the running job's hold
            self._momentary -= self._est[job] <= 0
            if start != now:  # only when a caller starts a job off its reservation
                self._move(job, start, now)
        self.free -= self._width[job]
        self.running[job] = now + self._est[job]
        return job

    def _easy(self, now: float) -> list[int]:
        width, est, queue = self._width, self._est, self.queue
        started = []
        while queue and width[queue[0]] <= self.free:
            started.append(self._start(queue[0], now))
        if not queue or (self.free == 0 and queue[0] in self.head_reservation):
            return started  # nothing fits on no free node; the head's reservation is already known
        head = queue[0]
        shadow, extra = self._shadow(width[head], now)
        self.head_reservation.setdefault(head, shadow)
        if self.free == 0:
            return started  # no job can backfill on no free node
        keep = [head]
        for job in queue[1:]:
            p = width[job]
            if p <= self.free:
                in_time = now + est[job] <= shadow
                if in_time or p <= extra:
                    started.append(self._launch(job, now))
                    if not in_time:
                        extra -= p
                    continue
            keep.append(job)
        self.queue[:] = keep
        return started

    def _shadow(self, need: int, now: float) -> tuple[float, int]:
        """When the running jobs (by their estimates) leave ``need`` nodes free, and how many spare then."""
        avail, shadow, width = self.free, None, self._width
        for job, estimated in sorted(self.running.items(), key=itemgetter(1)):
            end = estimated if estimated >= now else now  # max(estimated, now); clamping keeps the order
            if shadow is not None and end > shadow:
                break
            avail += width[job]
            if shadow is None and avail >= need:
                shadow = end  # jobs ending at the same instant still add spare nodes
        if shadow is not None:
            return shadow, avail - need
        raise RuntimeError(f"no time at which {need} nodes are free on a {self.m}-node cluster")

    # -- conservative ---------------------------------------------------------------------------------------
    def _reserve(self, job: int, start: float) -> None:
        """Reserve ``job``'s nodes from ``start`` for its estimate."""
        self._profile.add(start, start + self._est[job], -self._width[job])
        self.reserved[job] = start

    def _move(self, job: int, old: float, new: float) -> None:
        """Move ``job``'s hold in the profile from ``old`` to ``new``."""
        d, p = self._est[job], self._width[job]
        self._free_nodes(old, old + d, p)
        self._profile.add(new, new + d, -p)

    def _free_nodes(self, start: float, end: float, nodes: int) -> None:
        """``nodes`` more free from ``start`` to ``end``: noted, since a reservation may now fit earlier."""
        if end > start:
            self._profile.add(start, end, nodes)
            self._freed_span = _union(self._freed_span, (start, end))

    def _advance(self, now: float) -> None:
        """Bring the profile to ``now``: forget the past, and shift the late reservations to start now.

        A reservation is late when its start passed without the job starting (nodes held by a job
        running past its estimate); it then holds its nodes from now for its estimate (a job submitted
        before the next compression is fitted around it), which may overfill the profile until that
        compression lifts the hold and fits the job again.
        """
        self._profile.advance(now)
        reserved = self.reserved
        if reserved and min(reserved.values()) < now:
            for job in self.queue:
                start = reserved[job]
                if start < now:
                    p, d = self._width[job], self._est[job]
                    self._profile.add(start, start + d, p)
                    self._profile.add(now, now + d, -p)
                    reserved[job] = now
                    self._late.add(job)

    def _compress(self, now: float) -> None:
        """Move each reservation, in queue order, to its earliest fit (never later, unless it is late).

        A late reservation (shifted to now by :meth:`_advance`) holds no nodes against the jobs before
        it: its hold is lifted first, like freed nodes, and the job is fitted from scratch in its turn
        (later if need be). Were it counted, a job before it could be fitted around a hold that then
        moves away, and wait for a start that no event reaches. With those holds lifted the profile
        is not overfilled, so every other job's start still fits (it was put at its earliest fit when
        it was last fitted): it can only move earlier, and only into a window that uses nodes freed
        since: by an end, a take or a lifted late hold since the last compression, by a job moved
        after it in the last one (``_carry``), or by a job moved before it in this one. Such a window
        starts, at a step with enough free nodes, before the last freed interval ends; and it needs
        freed nodes before the job's own start (from there on the job's own nodes are free for it),
        so the first freed interval starts before the job does. Any other job is left alone. A job
        asking for 0 s holds no nodes, so nothing keeps its start free: it is always refitted.
        """
        self._advance(now)
        late, self._late = self._late, set()
        for job in late:
            start = self.reserved.get(job)
            if start is not None:  # still waiting (neither started nor taken): its hold from now is lifted
                self._free_nodes(start, start + self._est[job], self._width[job])
        (first, last), self._freed_span = self._freed_span, NOTHING  # what was freed, from first to last
        carry, self._carry = self._carry, {}
        self._freed = False
        if not (late or self._momentary or carry or last > now):
            return
        profile, reserved, width, est = self._profile, self.reserved, self._width, self._est
        room = profile.most_free(before=last)  # no window can start on a step with fewer free nodes
        moves: list[tuple[int, float, float]] = []  # queue position, old start and end of each job moved
        for pos, job in enumerate(self.queue):
            p, d, old = width[job], est[job], reserved[job]
            if d <= 0 or job in late:  # holds no nodes now (asks for 0 s, or late and lifted): fitted from scratch
                new = profile.earliest(p, d)
                profile.add(new, new + d, -p)
            else:
                since, until, space = first, last, room
                if job in carry:  # also freed by the jobs moved after it in the last compression
                    since, end = carry[job]
                    since = min(since, first)
                    if end > last:
                        until, space = end, profile.most_free(before=end)
                if since >= old or space < p:
                    continue  # no window before its start can use what was freed
                new = profile.earliest(p, d, before=old, until=until)
                if new != old:
                    profile.add(old, old + d, p)
                    profile.add(new, new + d, -p)
            if new != old:
                reserved[job] = new
                moves.append((pos, old, old + d))
                first, last = min(first, old), max(last, old + d)
                room = profile.most_free(before=last)
        self._carry = _carried(self.queue, moves)


def _union(a: Span, b: Span) -> Span:
    return (a[0] if a[0] < b[0] else b[0], a[1] if a[1] > b[1] else b[1])


def _carried(queue: list[int], moves: list[tuple[int, float, float]]) -> dict[int, Span]:
    """For each job refitted before a later one moved: the span of the intervals those later moves freed."""
    carry: dict[int, Span] = {}
    span = NOTHING
    for k in range(len(moves) - 1, -1, -1):
        position, start, end = moves[k]
        span = _union(span, (start, end))
        for earlier in range(moves[k - 1][0] if k else 0, position):
            carry[queue[earlier]] = span
    return carry


class _Profile:
    """Free nodes over time, a step function from ``times[0]`` on (the last event).

    ``free[k]`` nodes are free from ``times[k]`` to ``times[k + 1]``, the last count for ever.
    Adjacent steps always differ (a change that cancels out leaves no breakpoint), so the breakpoints
    are the times where the number of free nodes changes, and the profile stays as short as that.
    """

    __slots__ = ("free", "times")

    def __init__(self, start: float, free: int) -> None:
        self.times, self.free = [start], [free]

    def copy(self) -> _Profile:
        twin = _Profile.__new__(_Profile)
        twin.times, twin.free = list(self.times), list(self.free)
        return twin

    def advance(self, now: float) -> None:
        """Forget what lies before ``now``: the profile starts at ``now``."""
        times = self.times
        if now > times[0]:
            k = bisect_right(times, now) - 1
            if k:
                del times[:k], self.free[:k]
            times[0] = now

    def add(self, start: float, end: float, nodes: int) -> None:
        """``nodes`` more free nodes (fewer when negative) from ``start`` to ``end``, from ``times[0]`` on."""
        times, free = self.times, self.free
        start = max(start, times[0])
        if end <= start:
            return
        a = self._split(start)
        b = self._split(end)
        for k in range(a, b):
            free[k] += nodes
        if b < len(free) and free[b] == free[b - 1]:
            del times[b], free[b]
        if a and free[a] == free[a - 1]:
            del times[a], free[a]

    def _split(self, t: float) -> int:
        times = self.times
        k = bisect_right(times, t) - 1
        if times[k] != t:
            k += 1
            times.insert(k, t)
            self.free.insert(k, self.free[k - 1])
        return k

    def most_free(self, before: float) -> float:
        """The most free nodes on a step that starts before ``before`` (-inf: none)."""
        k = bisect_left(self.times, before)
        return max(self.free[:k]) if k else -math.inf

    def earliest(self, nodes: int, duration: float, before: float = math.inf, until: float = math.inf) -> float:
        """The earliest start of ``duration`` with ``nodes`` nodes free, if earlier than ``before``; else ``before``.

        ``before`` is the start of the asking job's own reservation, whose nodes count as free (a
        window that starts earlier ends before ``before + duration``, inside that reservation).
        Windows that start at or after ``until`` are not looked at (they are known not to fit).
        One pass: a window can only start where a run of steps with enough free nodes starts, and
        if it does not fit there, it fits nowhere before the step that cut the run short.
        """
        times, free = self.times, self.free
        n, own = len(times), bisect_left(times, before)
        stop = bisect_left(times, until, hi=own)
        k = 0
        while True:
            while k < stop and free[k] < nodes:
                k += 1
            if k >= stop:
                return before
            start = times[k]
            end = start + duration
            k += 1
            while k < n and times[k] < end:
                if (free[k] if k < own else free[k] + nodes) < nodes:
                    break
                k += 1
            else:
                return start
            k += 1
