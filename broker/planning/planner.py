"""The reservation planner: how many reserved instances to buy (CoH paper §4.2, formula 6; ``SPEC.md`` §4).

Costs are per reservation term (``T`` hours): the upfront prices, heavy reservations' hourly price
for every hour of the term, and what the demand costs per hour under the plan, ``T * E[B(D)]``.
The expectation is over the demand distribution ``Pr(D = i)``: the empirical one of a demand
series (then ``T * E[B(D)]`` is ``sum_t B(D_t)`` scaled from the series' span to the term: the
time-series form) or a given one (the distribution form).

Two ways to cover demand:

``per-type`` (what CoH-R does in a replay: a VM of type ``k`` takes a reservation of type ``k``)
    ``B`` fills heavy, then medium, then light reservations, then on-demand, type by type. The
    ``i``-th VM of a type is needed with probability ``u_i = Pr(D >= i)``; buying option ``o`` for it
    costs ``UF_o + c_o * u_i * T`` (heavy: ``UF + c * T``, on-demand: ``c * u_i * T``). Every VM takes
    its cheapest option independently, and because the hourly prices fall from on-demand to light,
    medium and heavy, the choices come out in CoH-R's fill order: the optimum in closed form
    (:func:`plan_per_type`), O(max demand) per type.
``capacity`` (the paper's formula 6 for several configurations)
    ``D`` is capacity units and ``B(D)`` the cheapest mix of reserved and on-demand VMs of any type
    whose capacity covers it. The counts ``N[j,k]`` come from one integer program over the
    distinct demand levels (:func:`plan_capacity`), solved exactly by CBC or CP-SAT.

Break-even utilization of a reservation is the share of the term its VM must run for the
reservation to cost what on-demand would: ``UF / ((c_od - c) T)``, heavy ``(UF + c T) / (c_od T)``.

With a spot market (:meth:`Prices.with_market`, :mod:`broker.planning.market`) a VM no reservation
covers costs the market's expected price ``m`` instead of ``c_od`` (:attr:`TypePrices.unreserved`):
both covers and the break-even use it, so the plan is the reserved / spot / on-demand mix.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from broker.planning.demand import Demand, distribution
from broker.pricing.book import HEAVY, HOURS_PER_YEAR, LIGHT, MEDIUM, ON_DEMAND, RESERVED_OPTIONS, Offer, PriceBook
from broker.pricing.reservations import MAX_RESERVATIONS, ReservationPlan
from solvers.base import Limit, SolveResult, get_solver
from solvers.model import MipModel
from workloads.errors import ConfigError

log = logging.getLogger(__name__)

Mode = Literal["per-type", "capacity"]
#: Options from least to most committed: ties go to the first.
COMMITMENT = (ON_DEMAND, LIGHT, MEDIUM, HEAVY)


@dataclass(frozen=True, slots=True)
class TypePrices:
    """One instance type's capacity, on-demand price ($/h) and reserved offers of the term."""

    name: str
    capacity: float
    on_demand: float
    offers: tuple[Offer, ...]
    market: float | None = None

    @property
    def unreserved(self) -> float:
        """$/h of a VM no reservation covers: on-demand, or the spot market's expected price when there is one."""
        return self.on_demand if self.market is None else self.market

    def offer(self, option: str) -> Offer | None:
        """The reserved offer of ``option``, if the plan may use it."""
        return next((o for o in self.offers if o.option == option), None)


@dataclass(frozen=True, slots=True)
class Prices:
    """What the planner may buy: per type, the reserved offers of one term."""

    term_years: int
    types: tuple[TypePrices, ...]
    book: str

    @property
    def term_hours(self) -> float:
        """Hours in the term."""
        return float(self.term_years * HOURS_PER_YEAR)

    @classmethod
    def from_book(cls, book: PriceBook, term_years: int = 1, *, options: Sequence[str] = RESERVED_OPTIONS,
                  types: Sequence[str] | None = None) -> Prices:
        """The offers of ``book`` for ``term_years``, limited to ``options`` and ``types``."""
        if term_years not in book.terms():
            raise ConfigError(f"price book {book.name!r} offers terms {book.terms()} years, not {term_years}")
        bad = set(options) - set(RESERVED_OPTIONS)
        if bad:
            raise ConfigError(f"unknown reservation option(s) {sorted(bad)}; use {RESERVED_OPTIONS}")
        names = [t.name for t in book.types] if types is None else list(types)
        out = []
        for t in book.types:
            if t.name not in names:
                continue
            od = book.offer(t.name, ON_DEMAND)
            assert od is not None  # PriceBook.from_dict checks it
            offers = tuple(o for o in book.reserved(term_years) if o.instance_type == t.name and o.option in options)
            out.append(TypePrices(t.name, t.capacity, od.hourly, offers))
        unknown = set(names) - {t.name for t in out}
        if unknown:
            raise ConfigError(f"price book {book.name!r} has no instance type(s) {sorted(unknown)}")
        return cls(term_years, tuple(out), book.name)

    def with_market(self, factor: float | None) -> Prices:
        """Unreserved VMs at ``factor`` x on-demand (a spot market, :mod:`broker.planning.market`); None: on-demand."""
        if factor is not None and not (math.isfinite(factor) and factor > 0):
            raise ConfigError(f"a market price factor must be > 0, got {factor!r}")
        return replace(self, types=tuple(replace(t, market=None if factor is None else factor * t.on_demand)
                                         for t in self.types))

    def scaled(self, factor: float) -> Prices:
        """Reserved prices (upfront and hourly) times ``factor`` (price-ratio sensitivity)."""
        return replace(self, types=tuple(
            replace(t, offers=tuple(replace(o, hourly=o.hourly * factor, upfront=o.upfront * factor)
                                    for o in t.offers)) for t in self.types))


@dataclass(frozen=True, slots=True)
class PlanReport:
    """A plan with its costs per term ($) and, per bought option, the prices and break-even.

    ``horizon_hours`` is the span of the demand planned on; ``planned_horizon_cost`` what the plan
    costs over it (upfront spread over the term), the figure a replay of the same period checks.
    ``market_cost`` is, with a spot market, what no reservation at all costs per term (every VM at the
    market's expected price); ``on_demand_cost`` stays all on-demand.
    """

    plan: ReservationPlan
    mode: str
    expected_cost: float
    on_demand_cost: float
    horizon_hours: float
    lines: list[dict[str, Any]]
    solve: dict[str, Any] = field(default_factory=dict)
    market_cost: float | None = None

    @property
    def savings(self) -> float:
        """On-demand cost minus the plan's, per term ($)."""
        return self.on_demand_cost - self.expected_cost

    @property
    def planned_horizon_cost(self) -> float:
        """The plan's cost over the demand's span ($)."""
        return self.expected_cost * self.horizon_hours / (self.plan.term_years * HOURS_PER_YEAR)

    @property
    def on_demand_horizon_cost(self) -> float:
        """All on-demand over the demand's span ($)."""
        return self.on_demand_cost * self.horizon_hours / (self.plan.term_years * HOURS_PER_YEAR)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``plan`` is what ``simulate --reservations`` reads."""
        return {"plan": self.plan.to_dict(), "expected_cost": self.expected_cost,
                "on_demand_cost": self.on_demand_cost, "savings": self.savings,
                "savings_fraction": self.savings / self.on_demand_cost if self.on_demand_cost else 0.0,
                "mode": self.mode, "term_years": self.plan.term_years, "lines": self.lines,
                "horizon": {"hours": self.horizon_hours, "planned_cost": self.planned_horizon_cost,
                            "on_demand_cost": self.on_demand_horizon_cost},
                "solve": self.solve, **({} if self.market_cost is None else {"market_cost": self.market_cost})}


# -- per-type: closed form ----------------------------------------------------------------------

def usage(levels: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """``u[i-1] = Pr(D >= i)`` for ``i = 1..n``."""
    order = np.argsort(levels)
    lv, w = np.asarray(levels)[order], np.asarray(weights, dtype=float)[order]
    tail = np.concatenate((np.cumsum(w[::-1])[::-1], [0.0]))
    return tail[np.searchsorted(lv, np.arange(1, n + 1), side="left")]


def _slot_costs(tp: TypePrices, u: np.ndarray, term_h: float) -> tuple[list[str], np.ndarray]:
    """Cost per term of covering each VM slot with each allowed option (columns in COMMITMENT order)."""
    names, cols = [ON_DEMAND], [tp.unreserved * u * term_h]
    for option in COMMITMENT[1:]:
        o = tp.offer(option)
        if o is not None:
            names.append(option)
            cols.append(o.upfront + o.hourly * term_h * (np.ones_like(u) if o.always_billed else u))
    return names, np.column_stack(cols) if len(u) else np.zeros((0, len(cols)))


def plan_per_type(levels: np.ndarray, weights: np.ndarray, tp: TypePrices, term_h: float) -> dict[str, int]:
    """The optimal counts per option for one type (module docstring); raises on inconsistent prices."""
    top = int(np.max(levels)) if len(levels) else 0
    names, costs = _slot_costs(tp, usage(levels, weights, top), term_h)
    if not len(costs):
        return {}
    pick = np.argmin(costs + 1e-9 * np.arange(costs.shape[1]), axis=1)
    if np.any(np.diff(pick) > 0):
        raise ConfigError(f"{tp.name}: reserved hourly prices do not fall with commitment (on-demand > light > "
                         f"medium > heavy), so CoH-R's fill order is not optimal; check the price book")
    counts = np.bincount(pick, minlength=len(names))
    return {names[j]: int(counts[j]) for j in range(1, len(names)) if counts[j]}


def cost_per_type(levels: np.ndarray, weights: np.ndarray, tp: TypePrices, term_h: float,
                  counts: dict[str, int]) -> float:
    """Expected cost per term of one type under ``counts``, filled heavy, medium, light, on-demand."""
    order = [HEAVY, MEDIUM, LIGHT]
    fill = [o for o in order for _ in range(counts.get(o, 0))]
    top = max(int(np.max(levels)) if len(levels) else 0, len(fill))
    u = usage(levels, weights, top)
    names, costs = _slot_costs(tp, u, term_h)
    if any(o not in names for o in fill):
        raise ConfigError(f"{tp.name}: the plan uses an option the prices do not offer")
    column = [names.index(o) for o in fill] + [0] * (top - len(fill))
    return float(costs[np.arange(top), column].sum()) if top else 0.0


def plan_distribution(distributions: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      prices: Prices) -> tuple[dict[tuple[str, str], int], float]:
    """The distribution form, per type: ``{type: (levels, Pr(D = level))}`` -> counts, expected cost per term."""
    counts: dict[tuple[str, str], int] = {}
    total = 0.0
    for tp in prices.types:
        levels, probs = distributions.get(tp.name, (np.zeros(1, np.int64), np.ones(1)))
        if np.any(np.asarray(probs) < 0) or not np.isclose(np.sum(probs), 1.0):
            raise ConfigError(f"{tp.name}: Pr(D = i) must be non-negative and sum to 1")
        mine = plan_per_type(np.asarray(levels), np.asarray(probs), tp, prices.term_hours)
        counts.update({(tp.name, o): n for o, n in mine.items()})
        total += cost_per_type(np.asarray(levels), np.asarray(probs), tp, prices.term_hours, mine)
    return counts, total


# -- capacity: formula 6 as an integer program ----------------------------------------------------

def cover_patterns(level: float, capacities: Sequence[float]) -> list[tuple[int, ...]]:
    """The minimal VM counts per type whose capacity covers ``level`` (none dominates another)."""
    return list(_patterns(float(level), tuple(float(c) for c in capacities)))


def _patterns(level: float, capacities: tuple[float, ...]) -> tuple[tuple[int, ...], ...]:
    def walk(j: int, need: float) -> list[tuple[int, ...]]:
        top = max(0, math.ceil(need / capacities[j] - 1e-9))
        if j == len(capacities) - 1:
            return [(top,)]
        return [(n, *rest) for n in range(top + 1) for rest in walk(j + 1, need - n * capacities[j])]

    found = set(walk(0, level))
    return tuple(sorted(p for p in found
                        if not any(q != p and all(a <= b for a, b in zip(q, p, strict=True)) for q in found)))


def cover_cost(level: float, prices: Prices, counts: dict[tuple[str, str], int],
               patterns: Sequence[tuple[int, ...]] | None = None) -> float:
    """``B(D)``, $/h: the cheapest VMs (reserved first, then on-demand) whose capacity covers ``level``.

    Exact: a cheapest cover is one of the minimal ones (:func:`cover_patterns`; pass them as
    ``patterns`` when they are known), and within a type heavy reservations (already paid), then
    medium, light and on-demand ones are used in that order.
    """
    def hourly(tp: TypePrices, n: int) -> float:
        cost, left = 0.0, n
        for option in (HEAVY, MEDIUM, LIGHT):
            o, have = tp.offer(option), counts.get((tp.name, option), 0)
            take = min(left, have) if o is not None else 0
            cost += 0.0 if option == HEAVY else take * (o.hourly if o is not None else 0.0)
            left -= take
        return cost + left * tp.unreserved

    if patterns is None:
        patterns = cover_patterns(level, [tp.capacity for tp in prices.types])
    return min(sum(hourly(tp, n) for tp, n in zip(prices.types, p, strict=True)) for p in patterns)


def cost_capacity(levels: np.ndarray, weights: np.ndarray, prices: Prices, counts: dict[tuple[str, str], int], *,
                  covers: Sequence[Sequence[tuple[int, ...]]] | None = None) -> float:
    """Expected cost per term of a plan under capacity cover (exact, by :func:`cover_cost`).

    ``covers`` are the levels' minimal covers when they are known (:func:`exhaustive` computes them once).
    """
    term_h = prices.term_hours
    covers = covers if covers is not None else [cover_patterns(float(v), [t.capacity for t in prices.types])
                                                for v in levels]
    fixed = sum(n * _fixed(prices, name, option) for (name, option), n in counts.items())
    hourly = sum(float(w) * cover_cost(float(v), prices, counts, ps)
                 for v, w, ps in zip(levels, weights, covers, strict=True))
    return fixed + hourly * term_h


def _fixed(prices: Prices, name: str, option: str) -> float:
    """What one reservation costs per term whatever it runs: upfront, plus every hour if heavy."""
    tp = next(t for t in prices.types if t.name == name)
    o = tp.offer(option)
    if o is None:
        raise ConfigError(f"{name}: the plan uses {option}, which the prices do not offer")
    return o.upfront + (o.hourly * prices.term_hours if o.always_billed else 0.0)


def capacity_model(levels: np.ndarray, counts: np.ndarray,
                   prices: Prices) -> tuple[MipModel, dict[tuple[str, str], int]]:
    """Formula 6 as a MILP over integer weights ``counts`` (intervals per level); objective x sum(counts).

    Variables ``N[j,k]`` (reservations bought) and, per level ``v``, a choice ``z[v,p]`` among the
    minimal covers ``p`` of ``v`` (:func:`cover_patterns`), ``n[v,j,k]`` (light / medium ones running,
    at most ``N[j,k]``) and ``o[v,j]`` (on-demand ones): per type, heavy + running + on-demand VMs
    >= the chosen cover's count. Choosing among integer covers, rather than one capacity row, keeps
    the relaxation from running fractions of VMs; it made the year instances of BENCHMARKS.md 10-30x
    faster to prove with CBC.
    """
    total, term_h = int(counts.sum()), prices.term_hours
    caps = [tp.capacity for tp in prices.types]
    patterns = [cover_patterns(v, caps) for v in levels.tolist()]
    most = [max((p[j] for ps in patterns for p in ps), default=0) for j in range(len(caps))]
    m = MipModel(name="reservations")
    n_var: dict[tuple[str, str], int] = {}
    for j, tp in enumerate(prices.types):
        for o in tp.offers:
            n_var[(tp.name, o.option)] = m.add_var(f"N[{tp.name},{o.option}]", 0, most[j],
                                                   cost=total * _fixed(prices, tp.name, o.option))
    for v, (ps, weight) in enumerate(zip(patterns, counts.tolist(), strict=True)):
        z = [m.add_var(f"z[{v},{q}]") for q in range(len(ps))] if len(ps) > 1 else []
        if z:
            m.add_row(z, [1.0] * len(z), "==", 1.0, f"choose[{v}]")
        for j, tp in enumerate(prices.types):
            need = max(p[j] for p in ps)
            if need:
                _cover_type(m, v, tp, need, term_h * weight, n_var, [(zq, p[j]) for zq, p in zip(z, ps, strict=True)]
                            if z else [], ps[0][j])
    return m, n_var


def _cover_type(m: MipModel, v: int, tp: TypePrices, need: int, hours: float, n_var: dict[tuple[str, str], int],
                chosen: list[tuple[int, int]], fixed_need: int) -> None:
    """Row ``heavy + running light/medium + on-demand >= the chosen cover's count`` of one type at level v."""
    idx = [m.add_var(f"o[{v},{tp.name}]", 0, need, cost=hours * tp.unreserved)]
    for o in tp.offers:
        big = n_var[(tp.name, o.option)]
        if o.always_billed:
            idx.append(big)
            continue
        used = m.add_var(f"n[{v},{tp.name},{o.option}]", 0, need, cost=hours * o.hourly)
        m.add_row([used, big], [1.0, -1.0], "<=", 0.0, f"avail[{v},{tp.name},{o.option}]")
        idx.append(used)
    coef = [1.0] * len(idx)
    if chosen:
        idx += [zq for zq, a in chosen if a]
        coef += [-float(a) for _, a in chosen if a]
        m.add_row(idx, coef, ">=", 0.0, f"cover[{v},{tp.name}]")
    else:
        m.add_row(idx, coef, ">=", float(fixed_need), f"cover[{v},{tp.name}]")


def integer_weights(weights: np.ndarray, resolution: int = 1_000_000) -> np.ndarray:
    """Probabilities as integer weights (exact for empirical ones given as counts)."""
    w = np.asarray(weights, dtype=float)
    if np.allclose(w, np.round(w)) and w.sum() >= 1:
        return np.round(w).astype(np.int64)
    return np.round(w / w.sum() * resolution).astype(np.int64)


def plan_capacity(levels: np.ndarray, weights: np.ndarray, prices: Prices, *, solver: str = "cbc",
                  limit: Limit | None = None) -> tuple[dict[tuple[str, str], int], SolveResult]:
    """The counts minimizing formula 6 (capacity cover), by the integer program."""
    counts = integer_weights(weights)
    keep = counts > 0
    model, n_var = capacity_model(np.asarray(levels)[keep], counts[keep], prices)
    result = get_solver(solver).solve(model, limit=limit or Limit.wall(60.0, threads=2))
    if not result.status.has_solution or result.values is None:
        raise RuntimeError(f"reservation IP: {result.status.value} from {result.backend} ({result.message})")
    if result.limit_hit:
        log.warning("reservation IP stopped at its limit (%s): gap %s", result.limit, result.gap)
    plan = {key: round(result.values[i]) for key, i in n_var.items() if round(result.values[i])}
    return plan, result


# -- reports ------------------------------------------------------------------------------------------

def plan_reservations(demand: Demand, prices: Prices, *, mode: Mode = "per-type", solver: str = "cbc",
                      limit: Limit | None = None) -> PlanReport:
    """Plan on a demand series: its empirical distribution, costs per term (time-series form).

    A demand whose peaks, summed over the types, pass :data:`~broker.pricing.reservations.MAX_RESERVATIONS`
    VMs is refused before anything is made for them (the per-type cover takes one slot per VM of the peak).
    """
    bounded_peak(demand, prices)
    if mode == "per-type":
        counts, _ = plan_distribution({tp.name: distribution(demand.column(tp.name)) for tp in prices.types}, prices)
        return report(demand, prices, counts, mode=mode)
    if mode != "capacity":
        raise ConfigError(f"mode must be 'per-type' or 'capacity', got {mode!r}")
    levels, n = np.unique(_capacity_series(demand, prices), return_counts=True)
    counts, result = plan_capacity(levels, n, prices, solver=solver, limit=limit)
    solve = {"solver": result.backend, "status": result.status.value, "objective": result.objective,
             "bound": result.bound, "gap": result.gap, "wall_s": result.wall_s, "limit_hit": result.limit_hit}
    return report(demand, prices, counts, mode=mode, solve=solve)


def bounded_peak(demand: Demand, prices: Prices) -> None:
    """Refuse a demand whose peaks, summed over the priced types, pass what a plan covers (MAX_RESERVATIONS)."""
    peak = sum(int(demand.column(t.name).max()) for t in prices.types if t.name in demand.types) if len(demand) else 0
    if peak > MAX_RESERVATIONS:
        raise ConfigError(f"{demand.source or 'the demand'}: a peak of {peak:,} VMs (summed over the types); a plan "
                          f"covers at most {MAX_RESERVATIONS:,}")


def _capacity_series(demand: Demand, prices: Prices) -> np.ndarray:
    return demand.capacity({t.name: t.capacity for t in prices.types})


def expected_cost(demand: Demand, prices: Prices, counts: dict[tuple[str, str], int], *,
                  mode: Mode = "per-type") -> float:
    """Expected cost per term of ``counts`` on the demand's empirical distribution ($)."""
    if mode == "capacity":
        levels, n = np.unique(_capacity_series(demand, prices), return_counts=True)
        return cost_capacity(levels, n / n.sum(), prices, counts)
    total = 0.0
    for tp in prices.types:
        levels, weights = distribution(demand.column(tp.name))
        mine = {o: n for (name, o), n in counts.items() if name == tp.name}
        total += cost_per_type(levels, weights, tp, prices.term_hours, mine)
    return total


def report(demand: Demand, prices: Prices, counts: dict[tuple[str, str], int], *, mode: Mode = "per-type",
           solve: dict[str, Any] | None = None) -> PlanReport:
    """Costs and per-option lines of ``counts`` on ``demand``."""
    plan = ReservationPlan(prices.term_years, counts, prices.book)
    market = any(t.market is not None for t in prices.types)
    return PlanReport(plan=plan, mode=mode, expected_cost=expected_cost(demand, prices, counts, mode=mode),
                      on_demand_cost=expected_cost(demand, prices.with_market(None), {}, mode=mode),
                      horizon_hours=demand.hours, lines=_lines(prices, counts), solve=solve or {},
                      market_cost=expected_cost(demand, prices, {}, mode=mode) if market else None)


def break_even(tp: TypePrices, offer: Offer, term_h: float) -> float:
    """Share of the term a reservation's VM must run to match on-demand, or the market's price (module docstring)."""
    if offer.always_billed:
        return (offer.upfront + offer.hourly * term_h) / (tp.unreserved * term_h)
    saving = tp.unreserved - offer.hourly
    return offer.upfront / (saving * term_h) if saving > 0 else math.inf


def _lines(prices: Prices, counts: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    """One line per reserved offer; a break-even that never comes (hourly not below on-demand) is None, with why."""
    lines = []
    for tp in prices.types:
        for o in tp.offers:
            even = break_even(tp, o, prices.term_hours)
            line = {"instance_type": tp.name, "option": o.option, "count": counts.get((tp.name, o.option), 0),
                    "upfront": o.upfront, "hourly": o.hourly, "upfront_per_hour": o.upfront_per_hour,
                    "effective_hourly_full_use": o.hourly + o.upfront_per_hour, "on_demand_hourly": tp.on_demand,
                    "break_even_utilization": even if math.isfinite(even) else None}
            if tp.market is not None:
                line["market_hourly"] = tp.market
            if not math.isfinite(even):
                against = "on-demand" if tp.market is None else "the market's expected price"
                line["undefined"] = {"break_even_utilization": f"never: the reserved hourly price is not below "
                                                               f"{against}"}
            lines.append(line)
    return lines


# -- references and baselines ----------------------------------------------------------------------

def exhaustive(demand: Demand, prices: Prices, *, mode: Mode = "per-type",
               box: int | None = None) -> tuple[dict[tuple[str, str], int], float]:
    """The best counts by trying every combination of 0..``box`` of each offer (small cases only)."""
    keys = [(tp.name, o.option) for tp in prices.types for o in tp.offers]
    top = int(demand.counts.max()) if len(demand) else 0
    if box is None:
        box = top if mode == "per-type" else math.ceil(_capacity_series(demand, prices).max() /
                                                           min(t.capacity for t in prices.types))
    best: tuple[float, dict[tuple[str, str], int]] = (math.inf, {})
    levels, hits = np.unique(_capacity_series(demand, prices), return_counts=True)
    weights = hits / hits.sum()
    covers = [cover_patterns(float(v), [t.capacity for t in prices.types]) for v in levels] if mode == "capacity" \
        else None
    for combo in itertools.product(range(box + 1), repeat=len(keys)):
        counts = {k: n for k, n in zip(keys, combo, strict=True) if n}
        cost = (cost_capacity(levels, weights, prices, counts, covers=covers) if covers is not None
                else expected_cost(demand, prices, counts, mode=mode))
        if cost < best[0] - 1e-9:
            best = (cost, counts)
    return best[1], best[0]


def lookback(demand: Demand, prices: Prices, *, days: Sequence[float] = (7, 30, 60), before: int | None = None,
             mode: Mode = "per-type", solver: str = "cbc") -> dict[str, Any]:
    """The cloud providers' recommender: plan on the last 7 / 30 / 60 days, keep the cheapest.

    Each window's plan is what that window's demand alone recommends; the recommendation is the one
    of them that costs least on the longest window (the history the recommender can see).
    """
    longest = demand.last_days(max(days), before=before)
    plans = {}
    for d in days:
        window = demand.last_days(d, before=before)
        plans[d] = plan_reservations(window, prices, mode=mode, solver=solver).plan
    scored = {d: expected_cost(longest, prices, dict(p.counts), mode=mode) for d, p in plans.items()}
    chosen = min(scored, key=lambda d: (scored[d], d))
    return {"plans": plans, "scores": scored, "days": chosen, "plan": plans[chosen]}
