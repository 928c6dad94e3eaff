"""The job-selection and VM-selection rules of CoH (paper §3.3, Tables 2-3; ``SPEC.md`` §3).

A *job order* maps a :class:`~heuristics.fleet.Batch` to the order in which its jobs are placed.
A *VM rule* ranks the VMs that have room for the next job; the packing loop
(:mod:`heuristics.packing`) puts the job on the first one. VM keys change as jobs are placed, so a
rule starts a small per-call :class:`Ranking` that the loop tells of each VM it opens and each job
it places (O(1) per update, O(VMs) per choice). One class per kind of rule: by room (SM, LM), by a
statistic of the hosted jobs (LA ... EAA), by the billing unit's rollover (CFH, FFH), at random
(Rnd); each ranking chooses among ``(slot, room)`` pairs (:meth:`Ranking.choose`) or over an array of
every slot's room (:meth:`Ranking.choose_among`), the same choice either way.

Readings of the paper where it is terse (documented in ``docs/design.md``):

* SM / LM rank by *free* capacity (smallest / largest room left, over the job's interval under the
  interval capacity rule): the heuristics only start Cost-Efficient VMs, so ranking by total
  capacity would make SM and LM identical to first fit.
* LA / EA / LD / ED / LAA / EAA use the arrivals / departures of the jobs a VM currently hosts
  (including those placed earlier in the same call); ED ranks by the earliest departure, EA by the
  earliest arrival, as the paper defines EA. VMs hosting no job rank after all others (latest
  departure is defined by a VM's final running job; an idle VM has none), ties to the lowest slot.
* CFH / FFH rank by the time left until the VM's current billing unit rolls over.
* Ties go to the lower slot; new VMs come after the existing ones, in the order they were started.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from heuristics.fleet import CURRENT_STATS, Batch, Fleet

JobOrder = Callable[[Batch], np.ndarray]

#: Key of a VM that hosts no job for the arrival/departure rules: after every VM that does.
EMPTY_KEY = 1e300


def fcfs(batch: Batch) -> np.ndarray:
    """First come, first served: by arrival, ties by position."""
    return np.argsort(batch.arrival, kind="stable")


def round_robin(batch: Batch) -> np.ndarray:
    """Round robin over users: each user's first job (by arrival), then each user's second, ..."""
    fcfs_order = fcfs(batch)
    users = batch.user[fcfs_order]
    rank = np.zeros(len(batch), dtype=np.int64)
    seen: dict[int, int] = {}
    for p, u in enumerate(users.tolist()):
        rank[p] = seen.get(u, 0)
        seen[u] = rank[p] + 1
    return fcfs_order[np.argsort(rank, kind="stable")]


def _by(values: Callable[[Batch], np.ndarray], descending: bool) -> JobOrder:
    def order(batch: Batch) -> np.ndarray:
        key = values(batch)
        return np.lexsort((batch.arrival, -key if descending else key))

    return order


JOB_ORDERS: dict[str, JobOrder] = {
    "FCFS": fcfs,
    "RR": round_robin,
    "LJF": _by(lambda b: b.r, descending=True),
    "SJF": _by(lambda b: b.r, descending=False),
    "LTJF": _by(lambda b: b.runtime, descending=True),
    "STJF": _by(lambda b: b.runtime, descending=False),
}


def with_one_more(agg: str, old: float, n: int, x: float) -> float:
    """A VM's statistic (``min``, ``max`` or ``mean`` of ``n`` hosted jobs: ``old``) once a job with value ``x`` joins.

    ``old`` is NaN for a VM that hosts none.
    """
    if n == 0 or old != old:
        return x
    if agg == "min":
        return min(old, x)
    if agg == "max":
        return max(old, x)
    return (old * n + x) / (n + 1)


#: A choice among the slots with room for a job: ``(slot, room)`` pairs, by slot.
Fits = list[tuple[int, float]]


class Ranking(ABC):
    """A VM rule's state during one packing call over ``n`` fleet slots and the VMs the call opens.

    Slots ``[0, n)`` are the fleet's; the VMs the call starts take the next ones, in order
    (:meth:`opened`). Ties go to the lowest slot.
    """

    def __init__(self, fleet: Fleet, m: int) -> None:
        self.fleet, self.n, self.m = fleet, len(fleet), m
        self.new = 0  # VMs opened so far in the call

    @abstractmethod
    def choose(self, fits: Fits, rng: np.random.Generator) -> int:
        """Of the slots with room for the job (``(slot, room)``, by slot), the one the rule picks; -1 if none."""

    @abstractmethod
    def choose_among(self, room: np.ndarray, need: float, rng: np.random.Generator) -> int:
        """The slot :meth:`choose` picks, given every slot's room (``n + m`` of them, ``-inf`` for no VM)."""

    def opened(self) -> None:
        """The call started a VM, in the next slot."""
        self.new += 1

    def placed(self, j: int, arrival: float, departure: float) -> None:  # noqa: B027 (most rankings keep nothing)
        """A job (arrival, departure in seconds) was put on slot ``j``."""


class _ByRoom(Ranking):
    def __init__(self, fleet: Fleet, m: int, sign: float) -> None:
        super().__init__(fleet, m)
        self.sign = sign

    def choose(self, fits: Fits, rng: np.random.Generator) -> int:
        if not fits:
            return -1
        best, best_key = -1, math.inf
        for j, room in fits:
            if self.sign * room < best_key:
                best, best_key = j, self.sign * room
        return best

    def choose_among(self, room: np.ndarray, need: float, rng: np.random.Generator) -> int:
        masked = np.where(room >= need, self.sign * room, np.inf)
        j = int(masked.argmin())
        return j if masked[j] != np.inf else -1


class _AtRandom(Ranking):
    def choose(self, fits: Fits, rng: np.random.Generator) -> int:
        return fits[int(rng.integers(len(fits)))][0] if fits else -1

    def choose_among(self, room: np.ndarray, need: float, rng: np.random.Generator) -> int:
        fits = np.flatnonzero(room >= need)
        return int(fits[rng.integers(len(fits))]) if len(fits) else -1


class _ByRollover(Ranking):
    """By the time left until a VM's billing unit rolls over (signed), lowest first; read when a choice needs it."""

    def __init__(self, fleet: Fleet, m: int, sign: float) -> None:
        super().__init__(fleet, m)
        self.sign = sign
        self._keys: list[float] | None = None
        self._array: np.ndarray | None = None

    def keys(self) -> list[float]:
        """Every slot's key (the fleet's, then those opened: a full unit to go)."""
        if self._keys is None:
            self._keys = (self.sign * self.fleet.rollover).tolist()
            self._keys.extend([self.sign * self.fleet.new_rollover] * self.new)
        return self._keys

    def key_array(self) -> np.ndarray:
        """:meth:`keys` over the ``n + m`` slots of the call (the unopened ones' as if opened)."""
        if self._array is None:  # a VM the call opens keeps the key it opened with
            self._array = np.full(self.n + self.m, self.sign * self.fleet.new_rollover)
            self._array[:self.n] = self.sign * self.fleet.rollover
        return self._array

    def opened(self) -> None:
        super().opened()
        if self._keys is not None:
            self._keys.append(self.sign * self.fleet.new_rollover)

    def choose(self, fits: Fits, rng: np.random.Generator) -> int:
        if len(fits) < 2:
            return fits[0][0] if fits else -1
        keys, best, best_key = self.keys(), -1, math.inf
        for j, _ in fits:
            if keys[j] < best_key:
                best, best_key = j, keys[j]
        return best

    def choose_among(self, room: np.ndarray, need: float, rng: np.random.Generator) -> int:
        masked = np.where(room >= need, self.key_array(), np.inf)
        j = int(masked.argmin())
        return j if masked[j] != np.inf else -1


class _ByStatistic(Ranking):
    """By a min / max / mean of the arrivals or departures of the hosted jobs; VMs hosting none last."""

    def __init__(self, fleet: Fleet, m: int, rule: StatisticRule) -> None:
        super().__init__(fleet, m)
        self.rule = rule
        self._values: list[float] | None = None  # the statistic of each slot (nan: no job), read when needed
        self._counts: list[int] | None = None  # and its jobs, read once a job was placed
        self._array: np.ndarray | None = None  # the keys over the call's n + m slots, made when needed

    def values(self) -> list[float]:
        """Every slot's statistic (the fleet's, then the opened VMs'; nan: no job)."""
        if self._values is None:
            self._values = getattr(self.fleet, self.rule.stat).tolist() + [math.nan] * self.new
        return self._values

    def opened(self) -> None:
        super().opened()
        if self._values is not None:
            self._values.append(math.nan)
        if self._counts is not None:
            self._counts.append(0)

    def placed(self, j: int, arrival: float, departure: float) -> None:
        rule, values = self.rule, self.values()
        if self._counts is None:
            self._counts = self.fleet.n_jobs.tolist() + [0] * self.new
        n = self._counts[j]
        values[j] = with_one_more(rule.agg, values[j], n, departure if rule.of_departures else arrival)
        self._counts[j] = n + 1
        if self._array is not None:
            self._array[j] = rule.sign * values[j]

    def choose(self, fits: Fits, rng: np.random.Generator) -> int:
        if len(fits) < 2:
            return fits[0][0] if fits else -1
        values, sign, best, best_key = self.values(), self.rule.sign, -1, math.inf
        for j, _ in fits:
            v = values[j]
            key = EMPTY_KEY if v != v else sign * v
            if key < best_key:
                best, best_key = j, key
        return best

    def choose_among(self, room: np.ndarray, need: float, rng: np.random.Generator) -> int:
        if self._array is None:
            values = np.full(self.n + self.m, np.nan)
            values[:self.n + self.new] = self.values() if self._values is not None else np.concatenate(
                (getattr(self.fleet, self.rule.stat), np.full(self.new, np.nan)))
            self._array = np.where(np.isnan(values), EMPTY_KEY, self.rule.sign * values)
        masked = np.where(room >= need, self._array, np.inf)
        j = int(masked.argmin())
        return j if masked[j] != np.inf else -1


@dataclass(frozen=True, slots=True)
class VmRule(ABC):
    """A VM-selection rule: :meth:`ranking` starts its state for a call placing ``m`` jobs on a fleet."""

    name: str

    #: Whether the rule ranks VMs by their room (so every VM's room is needed, not only whether a job fits).
    ranks_by_room = False

    @property
    def needs_stats(self) -> bool:
        """Whether it reads statistics of hosted jobs that a fleet shows only when asked for them."""
        return False

    @abstractmethod
    def ranking(self, fleet: Fleet, m: int) -> Ranking:
        """The state over the fleet's slots and the VMs a call placing ``m`` jobs may open."""


@dataclass(frozen=True, slots=True)
class RoomRule(VmRule):
    """By the room left over the job's run: the least first (SM, ``sign`` 1) or the most (LM, -1)."""

    sign: float = 1.0
    ranks_by_room = True

    def ranking(self, fleet: Fleet, m: int) -> Ranking:  # noqa: D102
        return _ByRoom(fleet, m, self.sign)


@dataclass(frozen=True, slots=True)
class RandomRule(VmRule):
    """Any VM with room, drawn uniformly (Rnd)."""

    def ranking(self, fleet: Fleet, m: int) -> Ranking:  # noqa: D102
        return _AtRandom(fleet, m)


@dataclass(frozen=True, slots=True)
class RolloverRule(VmRule):
    """By the time left until the VM's billing unit rolls over: the least first (CFH, 1) or the most (FFH, -1)."""

    sign: float = 1.0

    def ranking(self, fleet: Fleet, m: int) -> Ranking:  # noqa: D102
        return _ByRollover(fleet, m, self.sign)


@dataclass(frozen=True, slots=True)
class StatisticRule(VmRule):
    """By ``stat`` (a fleet field: ``arr_min`` ... ``dep_max``, ``arr_mean``), the lowest first (``sign`` 1)."""

    stat: str = "dep_max"
    sign: float = 1.0

    @property
    def agg(self) -> str:
        """``min``, ``max`` or ``mean``."""
        return self.stat.split("_")[1]

    @property
    def of_departures(self) -> bool:
        """Whether the statistic is of the jobs' departures (else of their arrivals)."""
        return self.stat.startswith("dep")

    @property
    def needs_stats(self) -> bool:  # noqa: D102
        return self.stat not in CURRENT_STATS

    def ranking(self, fleet: Fleet, m: int) -> Ranking:  # noqa: D102
        return _ByStatistic(fleet, m, self)


VM_RULES: dict[str, VmRule] = {
    rule.name: rule
    for rule in (
        RandomRule("Rnd"),
        RoomRule("LM", sign=-1.0),
        RoomRule("SM", sign=1.0),
        StatisticRule("LA", stat="arr_max", sign=-1.0),
        StatisticRule("EA", stat="arr_min", sign=1.0),
        StatisticRule("LD", stat="dep_max", sign=-1.0),
        StatisticRule("ED", stat="dep_min", sign=1.0),
        StatisticRule("LAA", stat="arr_mean", sign=-1.0),
        StatisticRule("EAA", stat="arr_mean", sign=1.0),
        RolloverRule("CFH", sign=1.0),
        RolloverRule("FFH", sign=-1.0),
    )
}
