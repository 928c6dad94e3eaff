"""The planner's three-way mix (issue 36): the market's expected price and the closed form with a market option."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.planning.demand import Demand
from broker.planning.market import closes_per_open_hour, expected_loss, market_price
from broker.planning.mix import Replayed, cheaper
from broker.planning.planner import Prices, plan_reservations
from broker.pricing.book import HEAVY, MEDIUM, load_price_book
from broker.pricing.spot_offer import SpotOffer
from workloads.errors import ConfigError

BOOK = load_price_book()
T = 8760.0
LARGE_ONLY = Prices.from_book(BOOK, 1, types=["large"])
HEAVY_FULL = 780 + 0.064 * T  # 1340.64 $: a heavy large reservation per term, whatever it runs


def large(series: list[int]) -> Demand:
    return Demand(np.array(series, dtype=np.int64)[:, None], ("large",))


def offer(caps: list[float], ratios: list[float], gap_s: int = 3600) -> SpotOffer:
    return SpotOffer("zone", gap_s, np.array(caps, dtype=float), np.array(ratios, dtype=float), 120.0)


# -- the market's expected price ---------------------------------------------------------------------------------------

def test_open_half_the_time_at_half_price_with_one_two_hour_job() -> None:
    # open, closed, read as a loop: one close per open hour. The closed tick's ratio (9) is never paid.
    market = market_price(offer([math.inf, 0], [0.5, 9.0]), np.array([7200.0]))
    assert (market.open_share, market.ratio, market.closes_per_open_hour) == (0.5, 0.5, 1.0)
    # lam = 1, x = 2 h: preempted with probability 1 - e^-2, losing on average (1 - e^-2) - 2 e^-2 h of 2
    assert market.loss == pytest.approx((1 - 3 * math.exp(-2)) / 2)
    assert market.factor == pytest.approx(0.5 * 0.5 * (1 + (1 - 3 * math.exp(-2)) / 2) + 0.5)
    assert market.to_dict()["factor"] == market.factor


def test_closes_are_counted_around_the_loop_and_per_open_hour() -> None:
    # 30-minute ticks, open 6 of 8: closes at ticks 1 -> 2 and 7 -> 0 (the loop), 2 closes in 3 open hours
    assert closes_per_open_hour(offer([1, 1, 0, 1, 1, 1, 1, 0], [0.3] * 8, gap_s=1800)) == pytest.approx(2 / 3)
    assert closes_per_open_hour(offer([1, 1], [0.3, 0.3])) == 0.0  # never closes
    assert closes_per_open_hour(offer([0, 0], [0.3, 0.3])) == 0.0  # never opens


def test_a_market_that_never_opens_is_on_demand_and_one_that_never_closes_loses_nothing() -> None:
    shut = market_price(offer([0, 0], [0.3, 0.3]), np.array([3600.0]))
    assert (shut.open_share, shut.ratio, shut.loss, shut.factor) == (0.0, 1.0, 0.0, 1.0)
    always = market_price(offer([math.inf], [0.3]), np.array([3600.0, 90000.0]))
    assert (always.loss, always.factor) == (0.0, pytest.approx(0.3))


def test_loss_from_scratch_weighs_jobs_by_their_runs() -> None:
    # lam = 0.5: a 2-h job loses 2 - 4/e h on average, a 4-h job 2 (1 - e^-2) - 4 e^-2 = 2 - 6 e^-2 h
    lost = (2 - 4 / math.e) + (2 - 6 * math.exp(-2))
    assert expected_loss(np.array([2.0, 4.0]), 0.5) == pytest.approx(lost / 6)
    # a short job loses about lam x / 2 of its run
    assert expected_loss(np.array([0.01]), 0.5) == pytest.approx(0.5 * 0.01 / 2, rel=1e-2)


def test_loss_with_checkpoints_is_the_run_since_the_last_one_plus_the_overhead() -> None:
    # lam = 0.5, C = 1 h, x = 2 h: periods [0, 1) and [1, 2) each lose T mod 1, the second e^-0.5 as likely;
    # g(1) = (1 - e^-0.5) / 0.5 - e^-0.5 = 2 - 3 e^-0.5; the overhead 0.1 h on each preemption (prob. 1 - e^-1)
    g1 = 2 - 3 * math.exp(-0.5)
    lost = g1 * (1 + math.exp(-0.5)) + 0.1 * (1 - math.exp(-1))
    assert expected_loss(np.array([2.0]), 0.5, checkpoint_h=1.0, overhead_h=0.1) == pytest.approx(lost / 2)
    # the same integral by quadrature: (t mod 1) lam e^(-lam t) over [0, 2)
    t = np.linspace(0, 2, 2_000_001)
    f = (t % 1.0) * 0.5 * np.exp(-0.5 * t)
    assert expected_loss(np.array([2.0]), 0.5, checkpoint_h=1.0) == pytest.approx(np.trapezoid(f, t) / 2, rel=1e-5)
    # a checkpoint longer than the run is no checkpoint
    assert expected_loss(np.array([2.0]), 0.5, checkpoint_h=5.0) == pytest.approx(expected_loss(np.array([2.0]), 0.5))


def test_the_market_reads_checkpoints_and_overhead_in_seconds() -> None:
    # the open, closed offer closes once per open hour; a 2-h job, checkpoints every hour, 6 minutes of overhead
    market = market_price(offer([math.inf, 0], [0.5, 0.5]), np.array([7200.0]), checkpoint_s=3600.0,
                          restart_overhead_s=360.0)
    assert market.loss == pytest.approx(expected_loss(np.array([2.0]), 1.0, checkpoint_h=1.0, overhead_h=0.1))
    assert market.loss < market_price(offer([math.inf, 0], [0.5, 0.5]), np.array([7200.0])).loss
    # no overhead given: none counted
    bare = market_price(offer([math.inf, 0], [0.5, 0.5]), np.array([7200.0]), checkpoint_s=3600.0)
    assert bare.loss == pytest.approx(expected_loss(np.array([2.0]), 1.0, checkpoint_h=1.0))


def test_a_market_with_room_for_one_vm_is_open_and_its_json_names_every_figure() -> None:
    # caps 1, 0: open half the time (a cap of 1 is open), at 0.4 of on-demand, one close per open hour;
    # a 1-h job loses (1 - e^-1) - e^-1 = 1 - 2/e h of 1
    market = market_price(offer([1, 0], [0.4, 9.0]), np.array([3600.0]))
    loss = 1 - 2 / math.e
    assert market.to_dict() == {"market": "zone", "open_share": 0.5, "ratio": 0.4, "closes_per_open_hour": 1.0,
                                "loss": pytest.approx(loss), "factor": pytest.approx(0.5 * 0.4 * (1 + loss) + 0.5)}


def test_loss_refuses_bad_runs_and_rates() -> None:
    for runs, rate in ((np.array([-1.0]), 0.5), (np.array([np.inf]), 0.5), (np.array([1.0]), -0.1),
                       (np.array([1.0]), math.nan)):
        with pytest.raises(ConfigError, match=r"^expected_loss needs finite runtimes >= 0 and a close rate >= 0$"):
            expected_loss(runs, rate)
    assert expected_loss(np.array([0.0, 0.0]), 0.5) == 0.0


def test_a_missing_runtime_is_refused_as_not_finite() -> None:
    # None reads as nan, not as an object the comparisons would trip on
    with pytest.raises(ConfigError, match="finite runtimes"):
        expected_loss([2.0, None], 0.5)  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="finite runtimes"):
        market_price(offer([math.inf, 0], [0.5, 0.5]), [7200.0, None])  # type: ignore[arg-type]


def test_loss_with_a_two_hour_checkpoint_and_a_last_partial_period() -> None:
    # lam = 0.5, C = 2 h, x = 5 h: periods [0, 2), [2, 4) each lose T mod 2 if the close falls in them
    # (the second e^-1 as likely), [4, 5) loses T - 4, e^-2 as likely; g(2) = 2 (1 - e^-1) - 2 e^-1 = 2 - 4/e,
    # g(1) = 2 - 3 e^-0.5; the overhead 0.2 h on a preemption anywhere in the 5 h (prob. 1 - e^-2.5)
    g2, g1 = 2 - 4 / math.e, 2 - 3 * math.exp(-0.5)
    lost = g2 * (1 + math.exp(-1)) + math.exp(-2) * g1 + 0.2 * (1 - math.exp(-2.5))
    assert expected_loss(np.array([5.0]), 0.5, checkpoint_h=2.0, overhead_h=0.2) == pytest.approx(lost / 5)


# -- the closed form with the market as the unreserved option ---------------------------------------------------------

def test_three_way_mix_hand_worked() -> None:
    # D over 10 hours: u_i = Pr(D >= i) = 1, .8, .5, .2. A market open half the time at half price (no loss):
    # factor .75, 0.195 $/h, 1708.2 u per term. Heavy 1340.64 beats it for u > .785, medium 640 + 840.96 u for
    # u > .738 (and heavy beats medium for u > .833); light 276 + 1366.56 u only for u > .808, where heavy is cheaper.
    demand = large([1, 1, 2, 2, 2, 3, 3, 3, 4, 4])
    mix = plan_reservations(demand, LARGE_ONLY.with_market(0.75))
    assert mix.plan.counts == {("large", HEAVY): 1, ("large", MEDIUM): 1}  # VMs 3 and 4 go to the market
    market = 0.75 * 0.26 * T
    assert mix.expected_cost == pytest.approx(HEAVY_FULL + 640 + 840.96 * 0.8 + market * (0.5 + 0.2))
    assert mix.market_cost == pytest.approx(market * 2.5)  # no reservation: 2.5 VMs on average, all at the market
    assert mix.on_demand_cost == pytest.approx(0.26 * T * 2.5)  # still all on-demand
    # without the market the same demand reserves the third VM too (light: u = .5 > .303)
    alone = plan_reservations(demand, LARGE_ONLY)
    assert alone.plan.counts == {("large", HEAVY): 1, ("large", MEDIUM): 1, ("large", "reserved-light"): 1}
    assert alone.market_cost is None and "market_cost" not in alone.to_dict()
    heavy = next(line for line in mix.to_dict()["lines"] if line["option"] == HEAVY)
    assert heavy["market_hourly"] == pytest.approx(0.195)
    assert heavy["break_even_utilization"] == pytest.approx(HEAVY_FULL / market)  # .785, on-demand's .589


def test_the_market_ties_with_a_heavy_reservation_and_keeps_the_vm() -> None:
    # a VM busy every hour: the market at exactly heavy's 1340.64 $ per term ties it; ties go to the less committed
    tie = HEAVY_FULL / (0.26 * T)
    busy = large([1, 1, 1, 1])
    assert plan_reservations(busy, LARGE_ONLY.with_market(tie)).plan.counts == {}
    assert plan_reservations(busy, LARGE_ONLY.with_market(tie)).expected_cost == pytest.approx(HEAVY_FULL)
    assert plan_reservations(busy, LARGE_ONLY.with_market(tie * (1 + 1e-6))).plan.counts == {("large", HEAVY): 1}


def test_a_market_cheaper_than_every_reservation_reserves_nothing() -> None:
    # factor .5: 0.13 $/h per hour used is below heavy's 0.153 $/h at full use and every option's hourly + upfront
    rep = plan_reservations(large([3, 3, 2, 1]), LARGE_ONLY.with_market(0.5))
    assert rep.plan.counts == {} and rep.expected_cost == pytest.approx(rep.market_cost)


@pytest.mark.parametrize("factor", [0.0, -1.0, math.nan, math.inf])
def test_a_bad_market_factor_is_refused(factor: float) -> None:
    with pytest.raises(ConfigError, match="market price factor"):
        LARGE_ONLY.with_market(factor)


def test_capacity_mode_with_one_type_and_the_market_equals_the_per_type_mix() -> None:
    demand = large([1, 1, 2, 2, 2, 3, 3, 3, 4, 4])
    prices = LARGE_ONLY.with_market(0.75)
    per_type, capacity = plan_reservations(demand, prices), plan_reservations(demand, prices, mode="capacity")
    assert capacity.plan.counts == per_type.plan.counts
    assert capacity.expected_cost == pytest.approx(per_type.expected_cost)


def _replayed(cost: float) -> Replayed:
    return Replayed(cost=cost, upfront_amortized=0.0, cost_by_option={}, reservations=0, wait_mean_s=0.0)


@pytest.mark.parametrize(("priced", "base", "chosen"), [(10.0, 12.0, "market_priced"), (12.0, 10.0, "reserved_base"),
                                                        (10.0, 10.0, "market_priced")])
def test_the_mix_is_the_candidate_whose_replay_costs_less_a_tie_going_to_the_market_priced_plan(
        priced: float, base: float, chosen: str) -> None:
    runs = {"on_demand": _replayed(5.0), "reserved_only": _replayed(1.0), "market_priced": _replayed(priced),
            "reserved_base": _replayed(base)}
    assert cheaper(runs) == chosen  # the on-demand and reserved-only replays are no candidates, however cheap
