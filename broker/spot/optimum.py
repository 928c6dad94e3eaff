"""The omniscient optimum of one job on a known trace: a dynamic program over ticks.

The lower bound every policy is measured against (as LB is for CoH). Time, work and overhead are
counted in whole units of ``u = gcd`` of the tick, the work, the deadline and the overhead (15 s
for the paper's 195 s ticks, 48 h, 52 h and 0.2 h), so progress takes finitely many values and
the program is exact. The state during tick ``k`` is what the job runs (idle, on-demand or spot
in a zone) and its *age* (ticks since its launch, capped at ``A = max(1, ceil(d / g))``, after which the
overhead is over), and ``V_k[state][p]`` is the least cost of reaching progress ``p`` at the end
of tick ``k`` in that state. A launch comes from a state of another kind (relaunching what runs is
never cheaper), keeping an instance ages it, spot needs the zone's count >= 1 at the tick (its
preemption, in the world, is the first tick where the count is 0). A transition that reaches the
work ends the job within the tick and pays only the time used. Without checkpointing a launch or
an idle tick restarts progress from zero.

The semantics are the world's (:mod:`broker.spot.world`), per-second billing; :func:`plan` gives
the choices that reach the optimum, and the world replaying them pays exactly :func:`optimum`
(tested, and checked against brute force over every choice sequence on small traces).
O(K x S x W/u) time for K ticks, S = 1 + (zones + 1)(A + 1) states; :func:`plan` recomputes the
values block by block (every ``sqrt(K)`` ticks kept), so its memory is O(sqrt(K) x S x W/u).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from broker.pricing.spot import SpotMarket, Window
from broker.spot.world import IDLE, ON_DEMAND, SpotJob
from workloads.errors import ConfigError

INF = math.inf


@dataclass(frozen=True, slots=True)
class Problem:
    """One job on one market window, in whole units of ``unit_s`` seconds."""

    unit_s: int
    work: int
    deadline: int
    overhead: int
    gap: int
    lengths: tuple[int, ...]
    ages: int
    avail: np.ndarray  # (modes, K) bool: mode 0 on-demand, mode z + 1 spot in zone z
    rate: np.ndarray  # (modes, K) $ per unit of time
    checkpoint: bool

    @property
    def modes(self) -> int:
        """On-demand and one mode per zone."""
        return int(self.avail.shape[0])

    @property
    def states(self) -> int:
        """How many states: 0 is idle, ``1 + mode * (ages + 1) + age`` the others."""
        return 1 + self.modes * (self.ages + 1)

    def choice(self, s: int) -> int:
        """The world's choice for state ``s``."""
        if s == 0:
            return IDLE
        mode = (s - 1) // (self.ages + 1)
        return ON_DEMAND if mode == 0 else mode - 1

    def age(self, s: int) -> int:
        """The age of state ``s`` (0 for idle)."""
        return 0 if s == 0 else (s - 1) % (self.ages + 1)


def _whole_seconds(name: str, value: float) -> int:
    if value != round(value):
        raise ConfigError(f"the omniscient optimum needs whole seconds: the {name} is {value} s")
    return round(value)


def problem(market: SpotMarket, window: Window, job: SpotJob) -> Problem:
    """The job on the window, in whole units (refuses hourly billing and fractional seconds)."""
    if market.billing.unit != "second":
        raise ConfigError("the omniscient optimum is for per-second billing (use --billing second)")
    g, w = market.gap_s, _whole_seconds("work", job.work_s)
    t, d = _whole_seconds("deadline", job.deadline_s), _whole_seconds("overhead", job.overhead_s)
    u = math.gcd(math.gcd(g, w), math.gcd(t, d))
    ticks = math.ceil(t / g)
    lengths = tuple((min(t, (k + 1) * g) - k * g) // u for k in range(ticks))
    avail = np.vstack([np.ones(ticks, dtype=bool), window.counts[:, :ticks] >= 1])
    rate = np.vstack([np.full(ticks, market.on_demand), window.prices[:, :ticks]]) * (u / 3600.0)
    return Problem(u, w // u, t // u, d // u, g // u, lengths, max(1, math.ceil(d / g)), avail, rate, job.checkpoint)


@dataclass(frozen=True, slots=True)
class Move:
    """A transition into a state at a tick: its sources, progress gained, overhead left at the tick's start."""

    sources: tuple[int, ...]
    gain: int
    overhead: int
    rate: float
    restarts: bool


def moves(pb: Problem, k: int, s: int) -> Move | None:
    """How state ``s`` is entered at tick ``k`` (``None`` when it cannot be)."""
    length = pb.lengths[k]
    if s == 0:
        return Move(tuple(range(pb.states)), 0, 0, 0.0, not pb.checkpoint)
    mode, age = (s - 1) // (pb.ages + 1), pb.age(s)
    if not pb.avail[mode, k] or age > k:
        return None
    rate = float(pb.rate[mode, k])
    if age == 0:
        others = (0, *(x for x in range(1, pb.states) if (x - 1) // (pb.ages + 1) != mode))
        return Move(others, max(0, length - pb.overhead), pb.overhead, rate, not pb.checkpoint)
    left = max(0, pb.overhead - age * pb.gap)
    sources = (s - 1, s) if age == pb.ages else (s - 1,)
    return Move(sources, max(0, length - left), left, rate, False)


#: Values at the end of a tick: the lowest progress held (units) and the values per state over the band from it.
Values = tuple[int, np.ndarray]


def band(pb: Problem, k: int) -> tuple[int, int]:
    """The progress (units) a state can hold at the end of tick ``k`` and still finish: [lo, hi]."""
    end = min(pb.deadline, (k + 1) * pb.gap)
    return max(0, pb.work - (pb.deadline - end)), min(pb.work - 1, end)


def _mins(pb: Problem, prev: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per mode the least value over its ages, and the least over every state."""
    per_mode = [prev[1 + m * (pb.ages + 1): 1 + (m + 1) * (pb.ages + 1)].min(axis=0) for m in range(pb.modes)]
    return np.minimum.reduce([prev[0], *per_mode]), per_mode


def _src(pb: Problem, prev: np.ndarray, mins: tuple[np.ndarray, list[np.ndarray]], s: int) -> np.ndarray:
    """The least value over the sources of state ``s`` per progress."""
    every, per_mode = mins
    if s == 0:
        return every
    mode, age = (s - 1) // (pb.ages + 1), pb.age(s)
    if age == 0:
        return np.minimum.reduce([prev[0], *(v for m, v in enumerate(per_mode) if m != mode)])
    return np.minimum(prev[s - 1], prev[s]) if age == pb.ages else prev[s - 1]


def step(pb: Problem, values: Values, k: int) -> tuple[Values, float, tuple[int, int, int]]:
    """``V_k`` from ``V_{k-1}``, the least cost of finishing within tick ``k`` and where (state, progress, tick)."""
    lo_p, prev = values
    hi_p = lo_p + prev.shape[1] - 1
    lo, hi = band(pb, k)
    out = np.full((pb.states, max(0, hi - lo + 1)), INF)
    best, where = INF, (-1, -1, -1)
    if prev.shape[1] == 0:
        return (lo, out), best, where
    mins, length, w = _mins(pb, prev), pb.lengths[k], pb.work
    for s in range(pb.states):
        move = moves(pb, k, s)
        if move is None:
            continue
        src, g, c = _src(pb, prev, mins, s), move.gain, move.rate * length
        if move.restarts:  # from progress 0, the least value of every source
            i = int(np.argmin(src))
            if g >= w and src[i] + move.rate * (move.overhead + w) < best:
                best, where = float(src[i] + move.rate * (move.overhead + w)), (s, 0, k)
            elif g < w and lo <= g <= hi:
                out[s, g - lo] = src[i] + c
            continue
        a, b = max(lo_p, lo - g), min(hi_p, hi - g, w - 1 - g)
        if a <= b:
            out[s, a + g - lo: b + g - lo + 1] = src[a - lo_p: b - lo_p + 1] + c
        a = max(lo_p, w - g)
        if g > 0 and a <= hi_p:
            tail = np.arange(a, hi_p + 1)
            done = src[a - lo_p:] + move.rate * (move.overhead + w - tail)
            i = int(np.argmin(done))
            if done[i] < best:
                best, where = float(done[i]), (s, int(tail[i]), k)
    return (lo, out), best, where


def _start(pb: Problem) -> Values:
    values = np.full((pb.states, 1), INF)
    values[0, 0] = 0.0
    return 0, values


def optimum(pb: Problem) -> float:
    """The least cost of finishing the job by its deadline ($); ``inf`` when it cannot be done."""
    values, best = _start(pb), INF
    for k in range(len(pb.lengths)):
        values, done, _ = step(pb, values, k)
        best = min(best, done)
    return best


def plan(pb: Problem) -> tuple[float, list[int]]:
    """The optimum and the world's choice at every tick until the job is done (empty when infeasible)."""
    every = max(1, math.isqrt(len(pb.lengths)))
    kept: dict[int, Values] = {}
    values, best, end = _start(pb), INF, (-1, -1, -1)
    for k in range(len(pb.lengths)):
        if k % every == 0:
            kept[k] = values
        values, done, where = step(pb, values, k)
        if done < best:
            best, end = done, where
    if best == INF:
        return best, []
    s, p, k = end  # p: the progress at the start of tick k
    choices = [pb.choice(s)]
    block: dict[int, Values] = {}
    while k > 0:
        if k - 1 not in block:
            block = _recompute(pb, kept, (k - 1) // every * every, k - 1)
        s, p_end = _back(pb, block[k - 1], k, s, p)
        k -= 1
        choices.append(pb.choice(s))
        move = moves(pb, k, s)
        assert move is not None
        p = p_end - move.gain if not move.restarts else 0
    return best, choices[::-1]


def _recompute(pb: Problem, kept: dict[int, Values], first: int, last: int) -> dict[int, Values]:
    """``V_j`` for ``j`` in ``[first, last]`` from the values kept before tick ``first``."""
    values, out = kept[first], {}
    for j in range(first, last + 1):
        values, _, _ = step(pb, values, j)
        out[j] = values
    return out


def _back(pb: Problem, values: Values, k: int, s: int, p: int) -> tuple[int, int]:
    """The state and progress at the end of tick ``k - 1`` on an optimal path into ``s`` from progress ``p``."""
    lo_p, prev = values
    move = moves(pb, k, s)
    assert move is not None
    sources = list(move.sources)
    if move.restarts:
        flat = int(np.argmin(prev[sources]))
        return sources[flat // prev.shape[1]], lo_p + flat % prev.shape[1]
    return sources[int(np.argmin(prev[sources, p - lo_p]))], p


def omniscient_plan(market: SpotMarket, window: Window, job: SpotJob) -> tuple[float, list[int]]:
    """The optimum ($) and the choices per tick of ``job`` on ``window`` (see :func:`plan`)."""
    return plan(problem(market, window, job))
