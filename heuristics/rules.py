"""The job-selection and VM-selection rules of CoH (paper §3.3, Tables 2-3; ``SPEC.md`` §3).

A *job order* maps a :class:`~heuristics.fleet.Batch` to the order in which its jobs are placed.
A *VM rule* ranks the VMs that have room for the next job; the packing loop
(:mod:`heuristics.packing`) puts the job on the first one. VM keys change as jobs are placed, so a
rule keeps a small per-call state that the loop updates after each placement (O(1) per update,
O(VMs) per choice).

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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from heuristics.fleet import Batch, Fleet

JobOrder = Callable[[Batch], np.ndarray]

#: Key of a VM that hosts no job for the arrival/departure rules: after every VM that does.
EMPTY_KEY = 1e300
#: A statistic's aggregate and whether it is of departures (else of arrivals), by the fleet field's name.
_STAT_PARTS = {f"{field}_{agg}": (agg, field == "dep") for field in ("arr", "dep") for agg in ("min", "max", "mean")}


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


class RuleState:
    """Per-call state of a VM rule over ``n + m`` slots (existing VMs, then room for new ones)."""

    def __init__(self, key: np.ndarray) -> None:
        self.key = key

    def choose(self, free: np.ndarray, r: float, rng: np.random.Generator) -> int:
        """The first VM (lowest key, then lowest slot) with ``free >= r``; -1 if none."""
        masked = np.where(free >= r, self.key, np.inf)
        j = int(masked.argmin())
        return j if masked[j] != np.inf else -1

    def opened(self, j: int, free: np.ndarray) -> None:
        """A new VM was started in slot ``j``."""

    def placed(self, j: int, arrival: float, departure: float, free: np.ndarray) -> None:
        """A job (arrival, departure in seconds) was put on slot ``j``."""


class _FreeState(RuleState):
    def __init__(self, free: np.ndarray, sign: float) -> None:
        super().__init__(sign * free)
        self.sign = sign

    def choose(self, free: np.ndarray, r: float, rng: np.random.Generator) -> int:
        masked = np.where(free >= r, free if self.sign > 0 else -free, np.inf)
        j = int(masked.argmin())
        return j if masked[j] != np.inf else -1


class _StatState(RuleState):
    """Rank by an aggregate (min / max / mean) of the arrivals or departures of hosted jobs."""

    def __init__(self, value: np.ndarray, count: np.ndarray, agg: str, use_departure: bool, sign: float) -> None:
        super().__init__(np.where(np.isnan(value), EMPTY_KEY, sign * value))
        self.value, self.count = value, count
        self.agg, self.use_departure, self.sign = agg, use_departure, sign

    def placed(self, j: int, arrival: float, departure: float, free: np.ndarray) -> None:
        n = int(self.count[j])
        new = with_one_more(self.agg, float(self.value[j]), n, departure if self.use_departure else arrival)
        self.value[j], self.count[j] = new, n + 1
        self.key[j] = self.sign * new


class _RandomState(RuleState):
    def choose(self, free: np.ndarray, r: float, rng: np.random.Generator) -> int:
        fits = np.flatnonzero(free >= r)
        return int(fits[rng.integers(len(fits))]) if len(fits) else -1


class ScalarState:
    """A VM rule's per-call state over Python lists, for small fleets: the choices :class:`RuleState` makes.

    Slots are the fleet's, then the VMs the call starts (:meth:`opened`, in order). :meth:`choose`
    takes the VMs with room for the job, in slot order, with their room. What a rule ranks by is read
    from the fleet only when a choice needs it (most calls of a sparse trace place one job, often on
    a new VM), and a VM's key is worked out only for the VMs with room.
    """

    __slots__ = ("agg", "count", "fleet", "key", "kind", "new", "sign", "stat", "use_departure", "value")

    def __init__(self, rule: VmRule, fleet: Fleet) -> None:
        self.kind, self.sign, self.stat, self.fleet = rule.kind, rule.sign, rule.stat, fleet
        self.new = 0  # VMs started so far in the call
        self.key: list[float] | None = None  # the rollover rules' keys
        self.value: list[float] | None = None  # the statistic rules' statistic (nan: no job)
        self.count: list[int] | None = None  # and each slot's number of jobs, once a job was placed

    def _keys(self) -> list[float]:
        """Every slot's key under a rollover rule (the fleet's VMs, then those started)."""
        if self.key is None:
            fleet, sign = self.fleet, self.sign
            self.key = (sign * fleet.rollover).tolist()
            self.key.extend([sign * fleet.new_rollover] * self.new)
        return self.key

    def _values(self) -> list[float]:
        """Every slot's statistic under a statistic rule (nan: no job)."""
        if self.value is None:
            self.value = getattr(self.fleet, self.stat).tolist()
            if self.new:
                self.value.extend([math.nan] * self.new)
        return self.value

    def opened(self) -> None:
        """A new VM was started (the next slot)."""
        self.new += 1
        if self.key is not None:
            self.key.append(self.sign * self.fleet.new_rollover)
        if self.value is not None:
            self.value.append(math.nan)
        if self.count is not None:
            self.count.append(0)

    def choose(self, fits: list[tuple[int, float]], rng: np.random.Generator) -> int:
        """Of ``(slot, room)`` pairs with room for the job, the slot the rule picks; -1 if none."""
        if not fits:
            return -1
        kind = self.kind
        if kind == "random":
            return fits[int(rng.integers(len(fits)))][0]
        if kind == "free":  # the least room (SM), or the most (LM), the lowest slot among equals (fits are by slot)
            best, best_room = fits[0]
            if self.sign > 0:
                for j, room in fits:
                    if room < best_room:
                        best, best_room = j, room
            else:
                for j, room in fits:
                    if room > best_room:
                        best, best_room = j, room
            return best
        if len(fits) == 1:
            return fits[0][0]
        best, best_key, sign = -1, math.inf, self.sign
        if kind == "rollover":
            key = self._keys()
            for j, _ in fits:  # fits come by slot: the lowest slot among equal keys
                if key[j] < best_key:
                    best, best_key = j, key[j]
            return best
        value = self._values()
        for j, _ in fits:  # a VM without jobs (nan) ranks after the others
            v = value[j]
            k = EMPTY_KEY if v != v else sign * v
            if k < best_key:
                best, best_key = j, k
        return best

    def placed(self, j: int, arrival: float, departure: float) -> None:
        """A job (arrival, departure in seconds) was put on slot ``j``."""
        if self.kind != "stat":
            return
        value, count = self._values(), self.count
        if count is None:
            self.agg, self.use_departure = _STAT_PARTS[self.stat]
            self.count = count = self.fleet.n_jobs.tolist()
            count.extend([0] * self.new)
        n = count[j]
        value[j] = with_one_more(self.agg, value[j], n, departure if self.use_departure else arrival)
        count[j] = n + 1


@dataclass(frozen=True, slots=True)
class VmRule:
    """A VM-selection rule: ``start(fleet, m)`` builds the state for a call placing ``m`` jobs."""

    name: str
    kind: str
    sign: float = 1.0
    stat: str = ""

    def start(self, fleet: Fleet, m: int) -> RuleState:
        """State over the fleet's slots plus ``m`` slots for VMs the call may start."""
        n = len(fleet)
        if self.kind == "random":
            return _RandomState(np.zeros(n + m))
        if self.kind == "free":
            return _FreeState(np.zeros(n + m), self.sign)
        if self.kind == "rollover":
            key = np.full(n + m, self.sign * fleet.new_rollover)
            key[:n] = self.sign * fleet.rollover
            return RuleState(key)
        field, agg = self.stat.split("_")
        value = np.full(n + m, np.nan)
        value[:n] = getattr(fleet, self.stat)
        count = np.zeros(n + m, dtype=np.int64)
        count[:n] = fleet.n_jobs
        return _StatState(value, count, agg, field == "dep", self.sign)


VM_RULES: dict[str, VmRule] = {
    rule.name: rule
    for rule in (
        VmRule("Rnd", "random"),
        VmRule("LM", "free", sign=-1.0),
        VmRule("SM", "free", sign=1.0),
        VmRule("LA", "stat", sign=-1.0, stat="arr_max"),
        VmRule("EA", "stat", sign=1.0, stat="arr_min"),
        VmRule("LD", "stat", sign=-1.0, stat="dep_max"),
        VmRule("ED", "stat", sign=1.0, stat="dep_min"),
        VmRule("LAA", "stat", sign=-1.0, stat="arr_mean"),
        VmRule("EAA", "stat", sign=1.0, stat="arr_mean"),
        VmRule("CFH", "rollover", sign=1.0),
        VmRule("FFH", "rollover", sign=-1.0),
    )
}
