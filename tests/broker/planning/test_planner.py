"""The reservation planner: hand-worked single-type cases, the closed form and the IP against exhaustive search."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.cli.files import DemandFormatError, read_demand
from broker.planning.demand import Demand, demand_from_run, distribution
from broker.planning.planner import (
    Prices,
    break_even,
    cover_cost,
    cover_patterns,
    exhaustive,
    expected_cost,
    lookback,
    plan_distribution,
    plan_reservations,
)
from broker.pricing.book import HEAVY, LIGHT, MEDIUM, load_price_book
from workloads.errors import ConfigError

BOOK = load_price_book()
CATALOG = BOOK.catalog()
YEAR = 8760.0
PRICES = Prices.from_book(BOOK, 1)
LARGE_ONLY = Prices.from_book(BOOK, 1, types=["large"])


def large(series: list[int]) -> Demand:
    return Demand(np.array(series, dtype=np.int64)[:, None], ("large",))


def hourly_bill(d: int, n_heavy: int, n_medium: int, n_light: int) -> float:
    """CoH paper §4.2: fill heavy, then medium, then light, then on-demand (large, 1-year prices)."""
    medium = min(max(d - n_heavy, 0), n_medium)
    light = min(max(d - n_heavy - n_medium, 0), n_light)
    od = max(d - n_heavy - n_medium - n_light, 0)
    return n_heavy * 0.064 + medium * 0.096 + light * 0.156 + od * 0.26


def test_heavy_only_breaks_even_at_59_percent() -> None:
    heavy = Prices.from_book(BOOK, 1, options=[HEAVY], types=["large"])
    tp = heavy.types[0]
    assert break_even(tp, tp.offers[0], YEAR) == pytest.approx((780 + 0.064 * YEAR) / (0.26 * YEAR))  # 0.5887
    # busy 60 % of the hours: one heavy reservation (780 + 560.64 < 0.26 * 0.6 * 8760 = 1366.56)
    assert plan_reservations(large([1] * 6 + [0] * 4), heavy).plan.counts == {("large", HEAVY): 1}
    # busy 50 %: on-demand (1138.80) is cheaper
    report = plan_reservations(large([1] * 5 + [0] * 5), heavy)
    assert report.plan.counts == {} and report.expected_cost == pytest.approx(0.26 * 0.5 * YEAR)


def test_three_options_hand_worked() -> None:
    # Pr(D >= i) = 1, .75, .5, .35, .1 for i = 1..5. Per-term cost of the i-th VM (large, 1 year):
    # on-demand 2277.6 u, light 276 + 1366.56 u, medium 640 + 840.96 u, heavy 1340.64
    # -> heavy (u=1), medium (.75: 1270.72), light (.5: 959.28; .35: 754.296), on-demand (.1: 227.76)
    series = [5] * 2 + [4] * 5 + [3] * 3 + [2] * 5 + [1] * 5
    report = plan_reservations(large(series), LARGE_ONLY)
    assert report.plan.counts == {("large", HEAVY): 1, ("large", MEDIUM): 1, ("large", LIGHT): 2}
    assert report.expected_cost == pytest.approx(1340.64 + 1270.72 + 959.28 + 754.296 + 227.76)
    assert report.on_demand_cost == pytest.approx(0.26 * YEAR * sum(series) / len(series))
    # the time-series form: sum over the hours of B(D_t) plus the upfront share of those hours
    hours = len(series)
    direct = sum(hourly_bill(d, 1, 1, 2) for d in series) + (780 + 640 + 2 * 276) * hours / YEAR
    assert report.planned_horizon_cost == pytest.approx(direct)
    # and the distribution form: T * sum_i Pr(D = i) B(i) + upfront
    levels, probs = distribution(series)
    formula6 = YEAR * sum(p * hourly_bill(int(i), 1, 1, 2) for i, p in zip(levels, probs, strict=True))
    assert report.expected_cost == pytest.approx(formula6 + 780 + 640 + 2 * 276)
    counts, cost = plan_distribution({"large": (levels, probs)}, LARGE_ONLY)
    assert counts == report.plan.counts and cost == pytest.approx(report.expected_cost)
    # a distribution given directly: Pr(D=0) = Pr(D=1) = .5 -> one light (959.28 < on-demand 1138.80)
    assert plan_distribution({"large": (np.array([0, 1]), np.array([0.5, 0.5]))}, LARGE_ONLY) == (
        {("large", LIGHT): 1}, pytest.approx(276 + 0.156 * 0.5 * YEAR))


def test_report_lines_and_savings() -> None:
    report = plan_reservations(large([3, 3, 2, 1]), LARGE_ONLY)
    payload = report.to_dict()
    assert set(payload) >= {"plan", "expected_cost", "on_demand_cost", "savings"}
    assert payload["savings"] == pytest.approx(report.on_demand_cost - report.expected_cost) and report.savings > 0
    line = next(x for x in payload["lines"] if x["option"] == LIGHT)
    assert line["upfront_per_hour"] == pytest.approx(276 / YEAR)
    assert line["break_even_utilization"] == pytest.approx(276 / ((0.26 - 0.156) * YEAR))


def test_capacity_cover_prefers_the_cheaper_configuration() -> None:
    # 100 capacity units all year: a heavy small (195 + 0.016 * 8760 = 335.16) beats a heavy large
    demand = Demand(np.array([[1, 0]] * 24), ("small", "large"))
    report = plan_reservations(demand, PRICES, mode="capacity", solver="cbc")
    assert report.plan.counts == {("small", HEAVY): 1}
    assert report.expected_cost == pytest.approx(195 + 0.016 * YEAR)
    assert report.solve["status"] == "optimal"
    # 400 units: one large covers it; four smalls cost more per hour than one large
    assert cover_cost(400, PRICES, {}) == pytest.approx(0.26)
    assert cover_cost(400, PRICES, {("small", HEAVY): 4}) == 0.0


def test_time_series_and_distribution_forms_agree() -> None:
    demand = large([0, 4, 4, 1, 2, 2, 7, 0, 3])
    report = plan_reservations(demand, LARGE_ONLY)
    shuffled = large([7, 4, 3, 2, 2, 1, 4, 0, 0])
    assert plan_reservations(shuffled, LARGE_ONLY).plan == report.plan
    assert expected_cost(demand, LARGE_ONLY, dict(report.plan.counts)) == pytest.approx(report.expected_cost)


def small_demand(seed: int, types: tuple[str, ...]) -> Demand:
    rng = np.random.default_rng(seed)
    hours = 40
    base = rng.integers(0, 3, size=(hours, len(types)))
    burst = rng.random((hours, len(types))) < 0.2
    return Demand(base + burst * rng.integers(0, 2, size=(hours, len(types))), types)


@pytest.mark.parametrize("seed", range(4))
def test_closed_form_equals_exhaustive_search(seed: int) -> None:
    demand = small_demand(seed, ("small", "large"))
    report = plan_reservations(demand, PRICES)
    counts, cost = exhaustive(demand, PRICES, box=int(demand.counts.max()))
    assert report.expected_cost == pytest.approx(cost, rel=1e-9)
    assert expected_cost(demand, PRICES, counts) == pytest.approx(report.expected_cost, rel=1e-9)


@pytest.mark.parametrize(("seed", "solver"), [(0, "cbc"), (1, "cpsat"), (2, "cbc"), (3, "cpsat")])
def test_capacity_program_equals_exhaustive_search(seed: int, solver: str) -> None:
    demand = small_demand(seed, ("small", "large"))
    prices = Prices.from_book(BOOK, 1 + 2 * (seed % 2), options=[LIGHT, HEAVY])
    report = plan_reservations(demand, prices, mode="capacity", solver=solver)
    assert report.solve["status"] == "optimal"
    _, cost = exhaustive(demand, prices, mode="capacity", box=3)
    assert report.expected_cost == pytest.approx(cost, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=30), st.floats(0.5, 1.5))
def test_closed_form_is_optimal_for_any_demand_and_price_ratio(series: list[int], ratio: float) -> None:
    prices = LARGE_ONLY.scaled(ratio)
    demand = large(series)
    report = plan_reservations(demand, prices)
    _, cost = exhaustive(demand, prices, box=max(series))
    assert report.expected_cost == pytest.approx(cost, rel=1e-9, abs=1e-9)
    assert report.expected_cost <= report.on_demand_cost + 1e-9


def test_prices_must_fall_with_commitment() -> None:
    tp = LARGE_ONLY.types[0]
    # a medium reservation dearer per hour than a light one but cheap upfront: the best VM-by-VM choice
    # (light for the VM busy 75 % of the time, medium for the one busy 50 %) contradicts CoH-R's fill order
    odd = replace(tp, offers=tuple(replace(o, hourly=0.2, upfront=10.0) if o.option == MEDIUM else o
                                   for o in tp.offers))
    with pytest.raises(ValueError, match="do not fall with commitment"):
        plan_reservations(large([2, 2, 1, 0]), replace(LARGE_ONLY, types=(odd,)))
    # a dominated option is simply never bought
    dear = replace(tp, offers=tuple(replace(o, hourly=0.2) if o.option == MEDIUM else o for o in tp.offers))
    report = plan_reservations(large([3] * 5 + [2] * 5), replace(LARGE_ONLY, types=(dear,)))
    assert ("large", MEDIUM) not in report.plan.counts


def test_lookback_follows_recent_demand() -> None:
    # 60 days at 1 VM, then 7 days at 4: the 7-day window wants more reservations than the 60-day one
    demand = large([1] * 24 * 53 + [4] * 24 * 7)
    out = lookback(demand, LARGE_ONLY)
    assert set(out["plans"]) == {7, 30, 60}
    assert out["plans"][7].total > out["plans"][60].total
    assert out["plan"] == out["plans"][out["days"]]
    assert out["scores"][out["days"]] == min(out["scores"].values())


def test_demand_from_a_replay_prices_the_replay_exactly() -> None:
    from broker.planning.demand import replay_demand
    from tests.conftest import trace_path
    from workloads.cache import load_trace
    from workloads.jobs import job_view

    swf = load_trace(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    table, _ = job_view(swf.frame, reqs="heterogeneous", seed=3, origin=swf.header.unix_start_time or 0)
    demand, result = replay_demand(table.head(3000), CATALOG)
    od = sum(float(demand.column(n).sum()) * float(CATALOG.hourly[i]) for i, n in enumerate(CATALOG.names))
    assert od == pytest.approx(result.summary.cost)
    assert demand.counts.sum() == int(result.instances.units.sum())


def test_demand_from_run_counts_billing_units_per_hour() -> None:
    class Vm:
        def __init__(self, instance_type: str, anchor: float, units: int) -> None:
            self.instance_type, self.anchor, self.units = instance_type, anchor, units

    ledger = [Vm("large", 100.0, 3), Vm("large", 3000.0, 1), Vm("small", 7300.0, 1)]
    demand = demand_from_run(ledger, CATALOG, began=0.0, ended=4 * 3600.0)  # type: ignore[arg-type]
    # units start at 100, 3700, 7300 (large) and 3000 (large), 7300 (small)
    assert demand.frame()[["small", "large"]].to_numpy().tolist() == [[0, 2], [0, 1], [1, 1], [0, 0]]


def test_read_demand_and_its_errors(tmp_path: Path) -> None:
    good = tmp_path / "d.csv"
    good.write_text("start_s,large,small\n0,1,0\n1800,2,1\n3600,0,0\n")
    demand = read_demand(good, CATALOG.names)
    assert demand.interval_s == 1800 and demand.types == ("large", "small")
    assert demand.counts.tolist() == [[1, 0], [2, 1], [0, 0]]
    cases = {
        "large\n1\nx\n": r"d\.csv:3: field 'large': 'x' is not an integer",
        "large,medium\n1,2\n": r"d\.csv:1: unknown column\(s\) \['medium'\]",
        "large\n-1\n": r"d\.csv:2: field 'large': -1 is negative",
        "start_s,large\n0,1\n10,1\n30,1\n": r"d\.csv:4: field 'start_s': intervals must be evenly spaced",
        "large,small\n1\n": r"d\.csv:2: 1 fields, the header has 2",
    }
    for content, match in cases.items():
        good.write_text(content)
        with pytest.raises(DemandFormatError, match=match):
            read_demand(good, CATALOG.names)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 1500), st.lists(st.sampled_from([100.0, 410.0, 250.0, 75.5]), min_size=1, max_size=3,
                                      unique=True))
def test_cover_patterns_are_the_minimal_covers(level: int, caps: list[float]) -> None:
    import itertools

    patterns = cover_patterns(level, caps)
    boxes = [range(int(np.ceil(level / c)) + 1) for c in caps]
    covers = [n for n in itertools.product(*boxes) if np.dot(n, caps) >= level - 1e-9]
    minimal = {n for n in covers if not any(m != n and all(a <= b for a, b in zip(m, n, strict=True))
                                            for m in covers)}
    assert set(patterns) == minimal


def test_capacity_mode_keeps_fractional_capacity_levels() -> None:
    prices = Prices.from_book(BOOK, 1)
    odd = replace(prices, types=tuple(replace(t, capacity=c) for t, c in zip(prices.types, (0.5, 2.05), strict=True)))
    demand = Demand(np.array([[1, 0]] * 10), ("small", "large"))  # 0.5 capacity units every hour
    report = plan_reservations(demand, odd, mode="capacity", solver="cbc")
    assert report.on_demand_cost == pytest.approx(0.065 * YEAR)
    assert report.expected_cost <= report.on_demand_cost


@pytest.mark.parametrize("mode", ["per-type", "capacity"])
def test_a_demand_peaking_above_what_a_plan_covers_is_refused_before_its_slots_are_made(mode: str) -> None:
    from broker.pricing.reservations import MAX_RESERVATIONS

    over = Demand(np.array([[3, 1], [10**12, 2]]), ("small", "large"), source="d.csv")
    with pytest.raises(ConfigError, match=r"^d.csv: a peak of 1,000,000,000,002 VMs \(summed over the types\); a plan "
                                          r"covers at most 1,000,000$"):
        plan_reservations(over, PRICES, mode=mode)  # type: ignore[arg-type]
    at = Demand(np.array([[MAX_RESERVATIONS - 1, 1]]), ("small", "large"))
    assert plan_reservations(at, PRICES).plan.total <= MAX_RESERVATIONS  # the bound itself is planned
