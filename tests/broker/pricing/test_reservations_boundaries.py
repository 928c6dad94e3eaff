"""Reservation plans and the reserved capacity of a run on their boundaries, with the exact refusals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from broker.pricing.book import HOURS_PER_YEAR, load_price_book
from broker.pricing.reservations import (
    HEAVY_CODE,
    LIGHT_CODE,
    MAX_RESERVATIONS,
    OD_CODE,
    OnDemandOnly,
    PlanError,
    ReservationPlan,
    ReservedCapacity,
)

BOOK = load_price_book()
CATALOG = BOOK.catalog()
LIGHT, HEAVY = ("small", "reserved-light"), ("small", "reserved-heavy")


@pytest.mark.parametrize(("term", "counts", "message"), [
    (0, {}, "term_years must be >= 1, got 0"),
    (1, {LIGHT: 1.5}, "small reserved-light: count must be a non-negative integer, got 1.5"),
    (1, {LIGHT: -1}, "small reserved-light: count must be a non-negative integer, got -1"),
])
def test_a_bad_plan_is_refused_with_its_reason(term: int, counts: dict, message: str) -> None:
    with pytest.raises(PlanError) as refused:
        ReservationPlan(term, counts)
    assert str(refused.value) == message


def test_only_keeps_the_options_named_and_the_term_and_book() -> None:
    plan = ReservationPlan(3, {LIGHT: 2, HEAVY: 1}, "custom")
    assert plan.only(["reserved-heavy"]) == ReservationPlan(3, {HEAVY: 1}, "custom")
    assert plan.only([]).counts == {}


def row(option: str = "reserved-light", count: object = 1, name: object = "small") -> dict:
    return {"instance_type": name, "option": option, "count": count}


@pytest.mark.parametrize(("data", "message"), [
    ([], "plan: a plan must be a JSON object"),
    ({"term_years": 1, "reservations": {}}, "plan: field 'reservations' must be a list"),
    ({"term_years": 1, "reservations": [row(count=True)]},
     "plan: reservations[0]: field 'count' must be a non-negative integer, got True"),
    ({"term_years": 1, "reservations": [row(count=-1)]},
     "plan: reservations[0]: field 'count' must be a non-negative integer, got -1"),
    ({"term_years": 1, "reservations": [row(name=5)]},
     "plan: reservations[0]: field 'instance_type' must be a string (a name), got 5"),
    ({"term_years": 1, "reservations": [row(), row(count=2)]},
     "plan: reservations[1]: ('small', 'reserved-light') listed twice"),
    ({"term_years": 1, "reservations": [], "price_book": 5},
     "plan: field 'price_book' must be a string (a name), got 5"),
])
def test_a_bad_plan_file_is_refused_naming_the_source_and_the_field(data: object, message: str) -> None:
    with pytest.raises(PlanError) as refused:
        ReservationPlan.from_dict(data)  # type: ignore[arg-type]
    assert str(refused.value) == message


@pytest.mark.parametrize("counts", [[10**12], [MAX_RESERVATIONS, 1], [10**20]], ids=["1e12", "bound+1", "1e20"])
def test_a_plan_file_of_more_reservations_than_the_bound_is_refused_naming_the_count(counts: list[int]) -> None:
    rows = [row(option, count) for option, count in zip(("reserved-heavy", "reserved-light"), counts, strict=False)]
    with pytest.raises(PlanError) as refused:
        ReservationPlan.from_dict({"term_years": 1, "reservations": rows}, source="p.json")
    assert str(refused.value) == (f"p.json: {sum(counts):,} reservations; a plan holds at most 1,000,000 (every "
                                  "heavy one is a VM of the run from its start)")


def test_a_plan_at_the_bound_is_read() -> None:
    plan = ReservationPlan.from_dict({"term_years": 1, "reservations": [row(count=MAX_RESERVATIONS)]})
    assert plan.total == MAX_RESERVATIONS


def test_the_reserved_capacity_of_a_plan_over_the_bound_is_refused_before_its_vms_are_listed() -> None:
    with pytest.raises(PlanError, match=r"^the plan: 1,000,000,000,000 reservations; a plan holds at most 1,000,000"):
        ReservedCapacity(ReservationPlan(1, {HEAVY: 10**12}), BOOK, CATALOG)


def test_a_plan_file_keeps_its_book_defaults_to_ec2_2013_and_takes_a_count_of_zero() -> None:
    named = ReservationPlan.from_dict({"term_years": 3, "reservations": [row(count=0), row("reserved-heavy", 2)],
                                       "price_book": "custom"}, source="p.json")
    assert named == ReservationPlan(3, {HEAVY: 2}, "custom")
    assert ReservationPlan.from_dict({"term_years": 1, "reservations": []}).price_book == "ec2-2013"


def test_a_three_year_plan_takes_the_three_year_rates() -> None:
    three, one = BOOK.offer("small", "reserved-light", 3), BOOK.offer("small", "reserved-light", 1)
    assert three is not None and one is not None and three.hourly != one.hourly
    capacity = ReservedCapacity(ReservationPlan(3, {LIGHT: 1}), BOOK, CATALOG)
    assert capacity.rate[0, LIGHT_CODE] == three.hourly and capacity.term_hours == 3 * HOURS_PER_YEAR


def test_an_option_the_book_does_not_offer_has_no_rate_and_its_vms_go_on_demand() -> None:
    book = dataclasses.replace(BOOK, offers=tuple(o for o in BOOK.offers
                                                  if (o.instance_type, o.option) != ("small", "reserved-heavy")))
    capacity = ReservedCapacity(ReservationPlan(1, {LIGHT: 1}), book, CATALOG)
    light = BOOK.offer("small", "reserved-light", 1)
    assert light is not None and capacity.rate[0, LIGHT_CODE] == light.hourly
    assert np.isnan(capacity.rate[0, HEAVY_CODE]) and capacity.limit[0, HEAVY_CODE] == 0
    assert capacity.acquire(0) == (LIGHT_CODE, light.hourly)
    assert capacity.acquire(0) == (OD_CODE, float(CATALOG.hourly[0]))


def test_a_vm_takes_a_heavy_reservation_only_when_asked_and_on_demand_otherwise() -> None:
    capacity = ReservedCapacity(ReservationPlan(1, {HEAVY: 1}), BOOK, CATALOG)
    assert capacity.acquire(0) == (OD_CODE, float(CATALOG.hourly[0]))  # no light or medium left: on demand
    heavy = BOOK.offer("small", "reserved-heavy", 1)
    assert heavy is not None and capacity.acquire(0, heavy=True) == (HEAVY_CODE, heavy.hourly)
    with pytest.raises(RuntimeError, match=r"^no heavy reservation of type small left$"):
        capacity.acquire(0, heavy=True)


def test_releasing_a_reservation_not_in_use_is_refused() -> None:
    capacity = ReservedCapacity(ReservationPlan(1, {LIGHT: 1}), BOOK, CATALOG)
    with pytest.raises(RuntimeError, match=r"^released a reserved-light small VM that was not in use$"):
        capacity.release(0, LIGHT_CODE)
    assert capacity.acquire(0) == (LIGHT_CODE, capacity.rate[0, LIGHT_CODE])
    capacity.release(0, LIGHT_CODE)
    assert capacity.in_use[0, LIGHT_CODE] == 0


def test_the_upfront_share_is_in_proportion_to_the_horizon_down_to_half_a_second() -> None:
    capacity = ReservedCapacity(ReservationPlan(1, {LIGHT: 2}), BOOK, CATALOG)
    light = BOOK.offer("small", "reserved-light", 1)
    assert light is not None and capacity.upfront_total == 2 * light.upfront
    assert capacity.upfront_share(0.5) == pytest.approx(2 * light.upfront * 0.5 / 3600.0 / HOURS_PER_YEAR)
    assert capacity.upfront_share(-5.0) == 0.0


def test_a_copy_has_its_own_reservations_in_use() -> None:
    capacity = ReservedCapacity(ReservationPlan(1, {LIGHT: 1}), BOOK, CATALOG)
    twin = capacity.copy()
    assert isinstance(twin, ReservedCapacity) and twin.plan is capacity.plan
    twin.acquire(0)
    assert (twin.in_use[0, LIGHT_CODE], capacity.in_use[0, LIGHT_CODE]) == (1, 0)
    assert np.array_equal(twin.limit, capacity.limit)


def test_the_on_demand_null_object_has_an_empty_one_year_plan() -> None:
    none = OnDemandOnly(CATALOG)
    assert none.plan == ReservationPlan(1) and none.upfront_share(3600.0) == 0.0
    assert none.acquire(1) == (OD_CODE, float(CATALOG.hourly[1]))
