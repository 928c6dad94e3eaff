"""The reservation planner: hand-worked single-type cases, the closed form and the IP against exhaustive search."""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import broker.planning.planner as planner
from broker.cli.files import DemandFormatError, read_demand
from broker.planning.demand import Demand, demand_from_run, distribution
from broker.planning.planner import (
    Prices,
    TypePrices,
    break_even,
    capacity_model,
    cost_capacity,
    cost_per_type,
    cover_cost,
    cover_patterns,
    exhaustive,
    expected_cost,
    integer_weights,
    lookback,
    plan_capacity,
    plan_distribution,
    plan_per_type,
    plan_reservations,
    report,
    usage,
)
from broker.pricing.book import HEAVY, LIGHT, MEDIUM, Offer, load_price_book
from solvers.base import Limit, SolveResult, Status
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


# The reservation planner, hand-worked (issue 19): refusals, price scaling, report payloads, ties and edges.
#
# Every expected number is worked out in the comments from the default price book ``ec2-2013`` (CoH paper
# Table 5), typed in here rather than read from the code under test. 1-year term, T = 8760 h:
#
#     type   capacity  on-demand   light           medium          heavy
#     small  100       0.065 $/h   69 $ + 0.039    160 $ + 0.024   195 $ + 0.016
#     large  410       0.26 $/h    276 $ + 0.156   640 $ + 0.096   780 $ + 0.064
#
# Per term, the i-th VM of a type, needed with probability u = Pr(D >= i), costs (large):
# on-demand 0.26 T u = 2277.6 u, light 276 + 1366.56 u, medium 640 + 840.96 u, heavy 780 + 560.64 = 1340.64;
# (small: 569.4 u, 69 + 341.64 u, 160 + 210.24 u, 195 + 140.16 = 335.16).


T = 8760.0
LINE_KEYS = {"instance_type", "option", "count", "upfront", "hourly", "upfront_per_hour", "effective_hourly_full_use",
             "on_demand_hourly", "break_even_utilization"}
SOLVE_KEYS = {"solver", "status", "objective", "bound", "gap", "wall_s", "limit_hit"}


def heavy_with_small_capacity(capacity: float = 300.0) -> Prices:
    """Heavy reservations only, small VMs of ``capacity`` units: two smalls (600) cover one large (410)."""
    heavy = Prices.from_book(BOOK, 1, options=[HEAVY])
    return replace(heavy, types=(replace(heavy.types[0], capacity=capacity), heavy.types[1]))


def plan_and_cost(counts: dict[tuple[str, str], int], cost: float) -> Any:
    """What ``plan_distribution`` / ``exhaustive`` return, the cost compared approximately."""
    return counts, pytest.approx(cost)


def error_text(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    return str(excinfo.value)


# -- Prices.from_book / Prices.scaled ---------------------------------------------------------------------------------

def test_from_book_defaults_to_one_year_and_keeps_the_book_name_types_and_offers() -> None:
    prices = Prices.from_book(BOOK)  # no term given: 1 year
    assert prices.term_years == 1 and prices.term_hours == 8760.0 and prices.book == "ec2-2013"
    assert [(t.name, t.capacity, t.on_demand) for t in prices.types] == [("small", 100.0, 0.065),
                                                                         ("large", 410.0, 0.26)]
    assert prices.types[1].offers == (Offer("large", LIGHT, 0.156, 276.0, 1), Offer("large", MEDIUM, 0.096, 640.0, 1),
                                      Offer("large", HEAVY, 0.064, 780.0, 1))
    only = Prices.from_book(BOOK, 3, options=[HEAVY], types=["large"])
    assert [t.name for t in only.types] == ["large"]
    assert only.types[0].offers == (Offer("large", HEAVY, 0.052, 1200.0, 3),)
    assert only.term_hours == 3 * 8760.0


def test_from_book_refusals_name_what_was_asked_and_what_exists() -> None:
    with pytest.raises(ConfigError) as term:
        Prices.from_book(BOOK, 2)
    assert error_text(term) == "price book 'ec2-2013' offers terms (1, 3) years, not 2"
    with pytest.raises(ConfigError) as option:
        Prices.from_book(BOOK, 1, options=[LIGHT, "spot"])
    assert error_text(option) == ("unknown reservation option(s) ['spot']; "
                                  "use ('reserved-light', 'reserved-medium', 'reserved-heavy')")
    with pytest.raises(ConfigError) as kind:
        Prices.from_book(BOOK, 1, types=["large", "xlarge"])
    assert error_text(kind) == "price book 'ec2-2013' has no instance type(s) ['xlarge']"


def test_scaled_multiplies_reserved_hourly_and_upfront_but_not_on_demand() -> None:
    double = LARGE_ONLY.scaled(2.0)
    tp = double.types[0]
    assert (double.term_years, double.book, tp.name, tp.capacity, tp.on_demand) == (1, "ec2-2013", "large", 410.0, 0.26)
    assert tp.offers == (Offer("large", LIGHT, 0.312, 552.0, 1), Offer("large", MEDIUM, 0.192, 1280.0, 1),
                         Offer("large", HEAVY, 0.128, 1560.0, 1))
    assert LARGE_ONLY.scaled(0.5).types[0].offer(LIGHT) == Offer("large", LIGHT, 0.078, 138.0, 1)
    # busy every hour: at book prices a heavy reservation (1340.64) beats on-demand (2277.6); at twice the
    # reserved prices nothing does: heavy 1560 + 0.128 T = 2681.28, medium 1280 + 0.192 T = 2961.92,
    # light 552 + 0.312 T = 3285.12 (scaling only one of upfront / hourly would leave heavy below 2277.6)
    assert plan_reservations(large([1] * 4), LARGE_ONLY).plan.counts == {("large", HEAVY): 1}
    doubled = plan_reservations(large([1] * 4), double)
    assert doubled.plan.counts == {} and doubled.expected_cost == pytest.approx(2277.6)


# -- the report and its payload ---------------------------------------------------------------------------------------

def expected_line(option: str, count: int, upfront: float, hourly: float, even: float) -> dict[str, Any]:
    return {"instance_type": "large", "option": option, "count": count, "upfront": upfront, "hourly": hourly,
            "upfront_per_hour": upfront / T, "effective_hourly_full_use": hourly + upfront / T,
            "on_demand_hourly": 0.26, "break_even_utilization": even}


def test_to_dict_of_a_hand_worked_plan() -> None:
    # 3 of 4 hours busy: u = .75 -> on-demand 1708.2, light 1300.92, medium 640 + 630.72 = 1270.72, heavy 1340.64
    rep = plan_reservations(large([1, 1, 1, 0]), LARGE_ONLY)
    payload = rep.to_dict()
    assert set(payload) == {"plan", "expected_cost", "on_demand_cost", "savings", "savings_fraction", "mode",
                            "term_years", "lines", "horizon", "solve"}
    assert payload["plan"] == {"term_years": 1, "price_book": "ec2-2013",
                               "reservations": [{"instance_type": "large", "option": MEDIUM, "count": 1}]}
    assert payload["expected_cost"] == pytest.approx(1270.72)
    assert payload["on_demand_cost"] == pytest.approx(1708.2)
    assert payload["savings"] == pytest.approx(437.48)
    assert payload["savings_fraction"] == pytest.approx(437.48 / 1708.2)  # 0.2561
    assert (payload["mode"], payload["term_years"], payload["solve"]) == ("per-type", 1, {})
    # over the 4 hours: medium's upfront share 640 * 4 / 8760 plus 3 busy hours at 0.096; on-demand 3 * 0.26
    assert set(payload["horizon"]) == {"hours", "planned_cost", "on_demand_cost"}
    assert payload["horizon"]["hours"] == 4.0
    assert payload["horizon"]["planned_cost"] == pytest.approx(640 * 4 / T + 3 * 0.096)
    assert payload["horizon"]["on_demand_cost"] == pytest.approx(0.78)
    # break-even: light 276 / (0.104 T) = .30295, medium 640 / (0.164 T) = .44548, heavy 1340.64 / 2277.6 = .58862
    expected = [expected_line(LIGHT, 0, 276.0, 0.156, 276 / (0.104 * T)),
                expected_line(MEDIUM, 1, 640.0, 0.096, 640 / (0.164 * T)),
                expected_line(HEAVY, 0, 780.0, 0.064, 1340.64 / 2277.6)]
    assert [set(line) for line in payload["lines"]] == [LINE_KEYS] * 3
    for line, want in zip(payload["lines"], expected, strict=True):
        assert line == pytest.approx(want)


def test_zero_demand_costs_nothing_and_saves_nothing() -> None:
    payload = plan_reservations(large([0, 0, 0]), LARGE_ONLY).to_dict()
    assert payload["plan"]["reservations"] == []
    assert (payload["expected_cost"], payload["on_demand_cost"], payload["savings"]) == (0.0, 0.0, 0.0)
    assert payload["savings_fraction"] == 0.0  # not 0 / 0
    assert payload["horizon"] == {"hours": 3.0, "planned_cost": 0.0, "on_demand_cost": 0.0}


def test_report_defaults_to_per_type_and_names_the_prices_book() -> None:
    mine = replace(LARGE_ONLY, book="my-book")
    rep = report(large([1, 1, 1, 0]), mine, {("large", MEDIUM): 1})  # u = .75: 640 + 630.72
    assert rep.mode == "per-type" and rep.plan.price_book == "my-book" and rep.plan.term_years == 1
    assert rep.expected_cost == pytest.approx(1270.72) and rep.on_demand_cost == pytest.approx(1708.2)


def test_a_reserved_price_not_below_on_demand_never_breaks_even() -> None:
    tp = LARGE_ONLY.types[0]
    assert break_even(tp, Offer("large", LIGHT, 0.26, 276.0, 1), T) == math.inf  # hourly saving exactly 0
    assert break_even(tp, Offer("large", LIGHT, 0.3, 276.0, 1), T) == math.inf  # a loss every hour
    odd = replace(tp, offers=(Offer("large", LIGHT, 0.26, 276.0, 1), Offer("large", MEDIUM, 0.3, 640.0, 1),
                              Offer("large", HEAVY, 0.064, 780.0, 1)))
    lines = plan_reservations(large([1, 0]), replace(LARGE_ONLY, types=(odd,))).lines
    never = {"break_even_utilization": "never: the reserved hourly price is not below on-demand"}
    for line in lines[:2]:
        assert set(line) == LINE_KEYS | {"undefined"}
        assert line["break_even_utilization"] is None and line["undefined"] == never
    assert set(lines[2]) == LINE_KEYS and lines[2]["break_even_utilization"] == pytest.approx(1340.64 / 2277.6)


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigError) as mode:
        plan_reservations(large([1]), LARGE_ONLY, mode="oracle")  # type: ignore[arg-type]
    assert error_text(mode) == "mode must be 'per-type' or 'capacity', got 'oracle'"


# -- per-type: ties, break-even boundaries, edges ---------------------------------------------------------------------

def test_ties_at_the_break_even_go_to_the_less_committed_option() -> None:
    # Pr(D >= 1) = u exactly at light's break-even 276 / (0.104 T): on-demand = light = 0.26 T u = 690 -> on-demand
    u = 276 / ((0.26 - 0.156) * T)
    assert plan_distribution({"large": (np.array([0, 1]), np.array([1 - u, u]))}, LARGE_ONLY) == plan_and_cost(
        {}, 690.0)
    # light = medium where 276 + 1366.56 u = 640 + 840.96 u, u = 364 / 525.6: both 1222.4 -> light
    u = (640 - 276) / ((0.156 - 0.096) * T)
    assert plan_distribution({"large": (np.array([0, 1]), np.array([1 - u, u]))}, LARGE_ONLY) == plan_and_cost(
        {("large", LIGHT): 1}, 1222.4)
    # heavy only, u = 1340.64 / 2277.6: on-demand = heavy = 1340.64 -> on-demand
    heavy = Prices.from_book(BOOK, 1, options=[HEAVY], types=["large"])
    u = (780 + 0.064 * T) / (0.26 * T)
    assert plan_distribution({"large": (np.array([0, 1]), np.array([1 - u, u]))}, heavy) == plan_and_cost(
        {}, 1340.64)


def test_exact_tie_in_a_series_keeps_on_demand_in_the_planner_and_the_exhaustive_search() -> None:
    # a light offer of 569.4 $ + 0.13 $/h, busy half the hours: 569.4 + 0.13 * T / 2 = 1138.8 = 0.26 * T / 2
    tp = TypePrices("large", 410.0, 0.26, (Offer("large", LIGHT, 0.13, 569.4, 1),))
    half = Prices(1, (tp,), "half")
    assert plan_reservations(large([1, 0]), half).plan.counts == {}
    assert exhaustive(large([1, 0]), half) == plan_and_cost({}, 1138.8)


def test_just_past_the_break_even_a_light_reservation_saves_seven_cents() -> None:
    # busy 10 of 33 hours: u = .30303 > .30295; light 276 + 1366.56 * 10 / 33 = 690.109 < on-demand 690.182
    demand = large([1] * 10 + [0] * 23)
    assert plan_reservations(demand, LARGE_ONLY).plan.counts == {("large", LIGHT): 1}
    counts, cost = exhaustive(demand, LARGE_ONLY)  # default box: the peak demand, 1
    assert counts == {("large", LIGHT): 1} and cost == pytest.approx(276 + 1366.56 * 10 / 33)
    assert expected_cost(demand, LARGE_ONLY, {}) == pytest.approx(2277.6 * 10 / 33)


def test_exhaustive_search_stays_inside_its_box_and_handles_no_demand() -> None:
    # busy all hours: the best plan is a heavy one (1340.64), but box 0 allows no reservation at all
    assert exhaustive(large([1] * 4), LARGE_ONLY, box=0) == plan_and_cost({}, 2277.6)
    assert exhaustive(large([1] * 4), LARGE_ONLY, box=1) == plan_and_cost({("large", HEAVY): 1}, 1340.64)
    empty = Demand(np.zeros((0, 1), dtype=np.int64), ("large",))
    assert exhaustive(empty, LARGE_ONLY) == ({}, 0.0)


def test_usage_is_the_tail_probability_and_zero_beyond_the_peak() -> None:
    assert usage(np.array([0, 1]), np.array([0.5, 0.5]), 3).tolist() == [0.5, 0.0, 0.0]
    assert usage(np.array([2, 0, 1]), np.array([0.25, 0.5, 0.25]), 2).tolist() == [0.5, 0.25]
    # single-precision probabilities are summed in double precision: 1 + 2**-25 + 2**-25 = 1 + 2**-24 exactly
    tails = usage(np.array([1, 2, 3]), np.array([1, 2**-25, 2**-25], dtype=np.float32), 3)
    assert tails.tolist() == [1 + 2**-24, 2**-24, 2**-25]


def test_reservations_beyond_the_peak_still_pay_their_upfront() -> None:
    # two lights, demand 1 half the time: first light 276 + 1366.56 * .5 = 959.28, the second never runs: 276
    assert expected_cost(large([1, 0]), LARGE_ONLY, {("large", LIGHT): 2}) == pytest.approx(1235.28)
    tp = LARGE_ONLY.types[0]
    none = np.array([], dtype=np.int64)
    assert plan_per_type(none, np.array([]), tp, T) == {}
    assert cost_per_type(none, np.array([]), tp, T, {}) == 0.0
    assert cost_per_type(none, np.array([]), tp, T, {LIGHT: 1}) == pytest.approx(276.0)


def test_plan_distribution_sums_types_and_defaults_a_missing_type_to_no_demand() -> None:
    # always one small and one large: heavy each, 335.16 + 1340.64
    always = (np.array([1]), np.array([1.0]))
    counts, cost = plan_distribution({"small": always, "large": always}, PRICES)
    assert counts == {("small", HEAVY): 1, ("large", HEAVY): 1} and cost == pytest.approx(1675.8)
    assert plan_distribution({"large": always}, PRICES) == plan_and_cost({("large", HEAVY): 1}, 1340.64)
    # a level of probability 0 is allowed
    assert plan_distribution({"large": (np.array([0, 1]), np.array([0.0, 1.0]))}, LARGE_ONLY) == plan_and_cost(
        {("large", HEAVY): 1}, 1340.64)
    both = Demand(np.array([[1, 1], [1, 1]]), ("small", "large"))
    assert expected_cost(both, PRICES, {("small", HEAVY): 1, ("large", HEAVY): 1}) == pytest.approx(1675.8)


@pytest.mark.parametrize("probs", [[-0.5, 1.5], [0.5, 0.4]])
def test_plan_distribution_refuses_a_bad_distribution(probs: list[float]) -> None:
    with pytest.raises(ConfigError) as bad:
        plan_distribution({"large": (np.array([0, 1]), np.array(probs))}, LARGE_ONLY)
    assert error_text(bad) == "large: Pr(D = i) must be non-negative and sum to 1"


# -- capacity cover ---------------------------------------------------------------------------------------------------

def test_cover_cost_adds_each_running_reservation_and_ignores_options_not_offered() -> None:
    # 820 units = two larges: one medium (0.096) and one light (0.156) run
    assert cover_cost(820, LARGE_ONLY, {("large", MEDIUM): 1, ("large", LIGHT): 1}) == pytest.approx(0.252)
    light_only = Prices.from_book(BOOK, 1, options=[LIGHT], types=["large"])
    assert cover_cost(410, light_only, {("large", HEAVY): 1}) == pytest.approx(0.26)  # no heavy offer: on-demand
    with pytest.raises(ValueError, match="zip"):
        cover_cost(400, PRICES, {}, patterns=[(1,)])  # a cover must give a count for each of the two types


def test_cost_capacity_fixed_part_and_refusals() -> None:
    idle = (np.array([0.0]), np.array([1.0]))
    assert cost_capacity(*idle, LARGE_ONLY, {("large", LIGHT): 1}) == pytest.approx(276.0)  # upfront only
    assert cost_capacity(*idle, LARGE_ONLY, {("large", MEDIUM): 1}) == pytest.approx(640.0)
    assert cost_capacity(*idle, LARGE_ONLY, {("large", HEAVY): 1}) == pytest.approx(1340.64)  # billed every hour
    light_only = Prices.from_book(BOOK, 1, options=[LIGHT], types=["large"])
    with pytest.raises(ConfigError) as missing:
        cost_capacity(*idle, light_only, {("large", HEAVY): 1})
    assert error_text(missing) == "large: the plan uses reserved-heavy, which the prices do not offer"
    with pytest.raises(ValueError, match="zip"):
        cost_capacity(np.array([0.0, 410.0]), np.array([1.0]), LARGE_ONLY, {})  # a weight per level


def test_capacity_model_of_one_level_with_two_covers() -> None:
    # 200 units, 3 intervals: covers (0 small, 1 large) and (2 small, 0 large); light and heavy offers
    prices = Prices.from_book(BOOK, 1, options=[LIGHT, HEAVY])
    m, n_var = capacity_model(np.array([200.0]), np.array([3]), prices)
    assert m.name == "reservations"
    assert n_var == {("small", LIGHT): 0, ("small", HEAVY): 1, ("large", LIGHT): 2, ("large", HEAVY): 3}
    assert list(zip(m.names, m.lb, m.ub, strict=True)) == [
        ("N[small,reserved-light]", 0, 2), ("N[small,reserved-heavy]", 0, 2),
        ("N[large,reserved-light]", 0, 1), ("N[large,reserved-heavy]", 0, 1),
        ("z[0,0]", 0, 1), ("z[0,1]", 0, 1),
        ("o[0,small]", 0, 2), ("n[0,small,reserved-light]", 0, 2),
        ("o[0,large]", 0, 1), ("n[0,large,reserved-light]", 0, 1)]
    # N: 3 x upfront (heavy: + hourly x T); o / n: 3 T x hourly
    assert m.obj == pytest.approx({0: 3 * 69, 1: 3 * 335.16, 2: 3 * 276, 3: 3 * 1340.64,
                                   6: 3 * T * 0.065, 7: 3 * T * 0.039, 8: 3 * T * 0.26, 9: 3 * T * 0.156})
    assert [(r.name, r.idx, r.coef, r.sense, r.rhs) for r in m.rows] == [
        ("choose[0]", (4, 5), (1.0, 1.0), "==", 1.0),
        ("avail[0,small,reserved-light]", (7, 0), (1.0, -1.0), "<=", 0.0),
        ("cover[0,small]", (6, 7, 1, 5), (1.0, 1.0, 1.0, -2.0), ">=", 0.0),
        ("avail[0,large,reserved-light]", (9, 2), (1.0, -1.0), "<=", 0.0),
        ("cover[0,large]", (8, 9, 3, 4), (1.0, 1.0, 1.0, -1.0), ">=", 0.0)]


def test_capacity_model_of_one_level_with_one_cover_and_of_no_level() -> None:
    # one type: 820 units are two larges, no choice to make
    m, _ = capacity_model(np.array([820.0]), np.array([2]), LARGE_ONLY)
    assert list(zip(m.names, m.lb, m.ub, strict=True)) == [
        ("N[large,reserved-light]", 0, 2), ("N[large,reserved-medium]", 0, 2), ("N[large,reserved-heavy]", 0, 2),
        ("o[0,large]", 0, 2), ("n[0,large,reserved-light]", 0, 2), ("n[0,large,reserved-medium]", 0, 2)]
    assert [(r.name, r.idx, r.coef, r.sense, r.rhs) for r in m.rows] == [
        ("avail[0,large,reserved-light]", (4, 0), (1.0, -1.0), "<=", 0.0),
        ("avail[0,large,reserved-medium]", (5, 1), (1.0, -1.0), "<=", 0.0),
        ("cover[0,large]", (3, 4, 5, 2), (1.0, 1.0, 1.0, 1.0), ">=", 2.0)]
    none, _ = capacity_model(np.array([], dtype=float), np.array([], dtype=np.int64), LARGE_ONLY)
    assert list(zip(none.names, none.ub, strict=True)) == [
        ("N[large,reserved-light]", 0), ("N[large,reserved-medium]", 0), ("N[large,reserved-heavy]", 0)]
    assert none.rows == []
    with pytest.raises(ValueError, match="zip"):
        capacity_model(np.array([0.0, 410.0]), np.array([1]), LARGE_ONLY)  # a count per level


def test_capacity_mode_with_one_type_equals_the_per_type_plan() -> None:
    # u = .75, .5: medium (1270.72) for the first VM, light (276 + 683.28 = 959.28) for the second
    demand = large([2, 2, 1, 0])
    rep = plan_reservations(demand, LARGE_ONLY, mode="capacity")  # default solver
    assert rep.plan.counts == {("large", LIGHT): 1, ("large", MEDIUM): 1}
    assert rep.expected_cost == pytest.approx(2230.0)
    assert rep.on_demand_cost == pytest.approx(2277.6 * 5 / 4)  # 5 VM-hours in 4 hours
    assert rep.mode == "capacity" and rep.to_dict()["mode"] == "capacity"
    assert set(rep.solve) == SOLVE_KEYS
    assert (rep.solve["solver"], rep.solve["status"], rep.solve["limit_hit"]) == ("cbc", "optimal", False)
    assert rep.solve["objective"] == pytest.approx(4 * 2230.0)  # the model weighs each of the 4 intervals
    # the offers listed heavy first (a price book may list them in any order) give the same plan
    tp = LARGE_ONLY.types[0]
    backwards = replace(LARGE_ONLY, types=(replace(tp, offers=tp.offers[::-1]),))
    assert plan_reservations(demand, backwards, mode="capacity").plan.counts == rep.plan.counts


def test_capacity_mode_prices_on_demand_by_the_cheapest_cover() -> None:
    # small VMs of 300 units: one large's 410 units fit in two smalls, 2 x 0.065 = 0.13 $/h < 0.26 $/h;
    # two heavy smalls 2 x 335.16 = 670.32 beat one heavy large (1340.64) and all on-demand (0.13 T = 1138.8)
    prices = heavy_with_small_capacity()
    demand = Demand(np.array([[0, 1]] * 4), ("small", "large"))
    rep = plan_reservations(demand, prices, mode="capacity")
    assert rep.plan.counts == {("small", HEAVY): 2}
    assert rep.expected_cost == pytest.approx(670.32) and rep.on_demand_cost == pytest.approx(1138.8)
    assert plan_reservations(demand, prices).plan.counts == {("large", HEAVY): 1}  # per type: a large for a large
    # the default box of the exhaustive search is in smallest VMs (ceil(410 / 300) = 2), not in peak counts (1)
    assert exhaustive(demand, prices, mode="capacity") == plan_and_cost({("small", HEAVY): 2}, 670.32)


def test_no_demand_in_capacity_mode() -> None:
    empty = Demand(np.zeros((0, 2), dtype=np.int64), ("small", "large"))
    rep = plan_reservations(empty, PRICES, mode="capacity")
    assert rep.plan.counts == {} and (rep.expected_cost, rep.on_demand_cost, rep.horizon_hours) == (0.0, 0.0, 0.0)


# -- the integer program's inputs, solver and limit -------------------------------------------------------------------

def test_integer_weights() -> None:
    counts = integer_weights(np.array([3.0, 1.0]))  # counts stay counts
    assert counts.tolist() == [3, 1] and counts.dtype == np.int64
    assert integer_weights(np.array([1.0])).tolist() == [1]  # one count sums to 1: still a count
    shares = integer_weights(np.array([0.25, 0.75]))  # probabilities: parts of a million
    assert shares.tolist() == [250_000, 750_000] and shares.dtype == np.int64
    assert integer_weights(np.array([0.5, 0.25])).tolist() == [666_667, 333_333]  # normalized first
    assert integer_weights(np.array([0.5, 1.5])).tolist() == [250_000, 750_000]  # sum >= 1 but not whole
    # single precision in, double precision arithmetic: each share rounded exactly as the rational value
    single = np.array([0.5776879191398621, 0.602239191532135, 0.9624230861663818], dtype=np.float32)
    total = sum(Fraction(float(x)) for x in single)
    exact = [round(Fraction(float(x)) / total * 1_000_000) for x in single]
    assert exact == [269_651, 281_111, 449_237] and integer_weights(single).tolist() == exact


class Recorder:
    """Stands in for ``get_solver``: records the solver name and limit asked for, solves with CBC."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Limit]] = []
        self.real = planner.get_solver

    def __call__(self, name: str, **options: Any) -> Any:
        calls, inner = self.calls, self.real("cbc")

        class Solver:
            def solve(self, model: Any, *, limit: Limit, start: Any = None) -> SolveResult:
                calls.append((name, limit))
                return inner.solve(model, limit=limit)

        return Solver()


def test_solver_and_limit_reach_the_integer_program(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder()
    monkeypatch.setattr(planner, "get_solver", rec)
    plan_capacity(np.array([410.0]), np.array([1.0]), LARGE_ONLY)  # defaults: CBC, 60 s on 2 threads
    assert rec.calls == [("cbc", Limit(seconds=60.0, threads=2))]
    rec.calls.clear()
    plan_reservations(large([1, 0]), LARGE_ONLY, mode="capacity", solver="cpsat", limit=Limit.wall(5.0))
    assert rec.calls == [("cpsat", Limit(seconds=5.0, threads=1))]
    rec.calls.clear()
    lookback(large([1] * 48), LARGE_ONLY, days=(1, 2), mode="capacity", solver="cpsat")
    assert [name for name, _ in rec.calls] == ["cpsat", "cpsat"]
    rec.calls.clear()
    lookback(large([1] * 48), LARGE_ONLY, days=(1,), mode="capacity")
    assert [name for name, _ in rec.calls] == ["cbc"]


class FakeSolver:
    def __init__(self, status: Status, *, limit_hit: bool = False) -> None:
        self.status, self.limit_hit = status, limit_hit

    def solve(self, model: Any, *, limit: Limit, start: Any = None) -> SolveResult:
        values = np.zeros(model.n_vars) if self.status.has_solution else None
        return SolveResult(status=self.status, values=values, objective=None, solver_objective=None, bound=None,
                           bound_source="", gap=0.25 if self.limit_hit else None, wall_s=0.0,
                           limit_hit=self.limit_hit, backend="fake", limit=limit, message="no cover found")


def test_integer_program_failure_and_limit_are_reported(monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(planner, "get_solver", lambda name, **options: FakeSolver(Status.INFEASIBLE))
    with pytest.raises(RuntimeError) as failed:
        plan_capacity(np.array([410.0]), np.array([1.0]), LARGE_ONLY)
    assert error_text(failed) == "reservation IP: infeasible from fake (no cover found)"
    monkeypatch.setattr(planner, "get_solver", lambda name, **options: FakeSolver(Status.FEASIBLE, limit_hit=True))
    with caplog.at_level(logging.WARNING, logger="broker.planning.planner"):
        plan, result = plan_capacity(np.array([410.0]), np.array([1.0]), LARGE_ONLY, limit=Limit.wall(1.0))
    assert plan == {} and result.limit_hit
    assert caplog.messages == ["reservation IP stopped at its limit (1 s on 1 thread(s)): gap 0.25"]


# -- lookback ---------------------------------------------------------------------------------------------------------

def test_lookback_windows_end_at_before() -> None:
    # hours 0-23 idle, 24-47 one large, 48-71 two; looking back from hour 48:
    # 1 day (24-47, u = 1): heavy 1340.64; 2 days (0-47, u = .5): light 959.28 (medium 1060.48, on-demand 1138.8)
    # scored on the 2 days before hour 48: heavy 1340.64 (billed every hour), light 959.28 -> the 2-day plan
    demand = large([0] * 24 + [1] * 24 + [2] * 24)
    out = lookback(demand, LARGE_ONLY, days=(1, 2), before=48)
    assert {d: dict(p.counts) for d, p in out["plans"].items()} == {1: {("large", HEAVY): 1},
                                                                    2: {("large", LIGHT): 1}}
    assert out["scores"] == {1: pytest.approx(1340.64), 2: pytest.approx(959.28)}
    assert out["days"] == 2 and out["plan"] == out["plans"][2]


def test_lookback_in_capacity_mode_plans_and_scores_by_capacity() -> None:
    # one large all the time, small VMs of 300 units: two heavy smalls (670.32) in every window; per type it would
    # be a heavy large, and two unused smalls scored per type would cost 670.32 + 2277.6
    out = lookback(Demand(np.array([[0, 1]] * 48), ("small", "large")), heavy_with_small_capacity(), days=(1, 2),
                   mode="capacity")
    assert {d: dict(p.counts) for d, p in out["plans"].items()} == {1: {("small", HEAVY): 2},
                                                                    2: {("small", HEAVY): 2}}
    assert out["scores"] == {1: pytest.approx(670.32), 2: pytest.approx(670.32)}
    assert out["days"] == 1


def test_a_plan_with_an_option_the_prices_do_not_offer_is_refused_naming_the_type() -> None:
    # the prices offer only light reservations; the plan holds a heavy one (was a bare ValueError from list.index)
    prices = Prices.from_book(load_price_book(), 1, options=["reserved-light"], types=["large"])
    with pytest.raises(ConfigError) as refused:
        expected_cost(Demand(np.array([[1]]), ("large",)), prices, {("large", "reserved-heavy"): 1})
    assert str(refused.value) == "large: the plan uses an option the prices do not offer"
