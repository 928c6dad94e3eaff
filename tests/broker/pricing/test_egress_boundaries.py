"""Egress tiers on their boundaries, with the exact refusals a price book's author reads (hand-worked values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.pricing.egress import GB, EgressPrices, EgressTier, month_index, monthly_bill, tiers_from_rows
from workloads.errors import InputError

TIERS = EgressPrices((EgressTier(1.0, 0.0), EgressTier(10.0, 0.12), EgressTier(50.0, 0.09)))


def test_equal_or_falling_bounds_are_refused_with_the_bounds() -> None:
    with pytest.raises(InputError, match=r"^egress tier bounds must increase, got \[1\.0, 1\.0\]$"):
        EgressPrices((EgressTier(1.0, 0.0), EgressTier(1.0, 0.1)))


@pytest.mark.parametrize("tier", [EgressTier(0.0, 0.1), EgressTier(5.0, -0.01)])
def test_a_zero_bound_or_a_negative_price_is_refused(tier: EgressTier) -> None:
    with pytest.raises(InputError, match=r"^egress tiers need up_to_gb > 0 and per_gb >= 0$"):
        EgressPrices((tier,))
    EgressPrices((EgressTier(1e-9, 0.0),))  # the smallest bound and a zero price are fine


def test_free_egress_costs_nothing_at_any_volume() -> None:
    free = EgressPrices.free()
    assert free.tiers == (EgressTier(math.inf, 0.0),)
    assert free.month_cost(1e12) == 0.0


def test_a_month_on_a_tier_bound_pays_that_tier_and_one_past_the_last_bound_is_refused() -> None:
    assert TIERS.month_cost(1.0) == 0.0  # exactly the free GB
    assert TIERS.month_cost(10.0) == pytest.approx(9 * 0.12)  # exactly the second bound
    assert TIERS.month_cost(50.0) == pytest.approx(9 * 0.12 + 40 * 0.09)  # exactly the last bound
    with pytest.raises(InputError, match=r"^50\.5 GB in a month is past the last egress tier \(50\.0 GB\)$"):
        TIERS.month_cost(50.5)


def test_months_are_utc_calendar_months_of_the_trace_clock() -> None:
    # 2004-01-31T23:59:59Z and 2004-02-01T00:00:00Z; months since 1970-01: 34 * 12 + 0 and + 1
    origin = 1_075_593_599.0
    months = month_index(np.array([0, 1]), origin)
    assert months.tolist() == [408, 409] and months.dtype == np.int64
    assert month_index([0.5], origin).tolist() == [408]  # a fraction of a second: still January


def test_a_month_with_one_byte_shares_its_charge_and_a_month_of_none_is_billed_zero() -> None:
    prices = EgressPrices((EgressTier(math.inf, 0.5),))
    bill, share = monthly_bill([0.0, 10.0, 40 * 86400.0], [1, 0, 0], prices, origin=0.0)
    assert bill == {0: 0.5 / GB, 1: 0.0}
    assert share.tolist() == [0.5 / GB, 0.0, 0.0]
    _, share = monthly_bill(np.array([0.0, 1.0]), [GB, 3 * GB], prices, origin=0.0)  # ints become floats
    assert share.tolist() == [0.5, 1.5] and share.dtype == np.float64


@pytest.mark.parametrize(("rows", "message"), [
    ([{"up_to_gb": 1, "per_gb": -0.1}], "book.toml: egress[0]: field 'per_gb' must be a finite number >= 0, got -0.1"),
    ([{"up_to_gb": 1, "per_gb": math.inf}],
     "book.toml: egress[0]: field 'per_gb' must be a finite number >= 0, got inf"),
    ([{"up_to_gb": 1, "per_gb": True}], "book.toml: egress[0]: field 'per_gb' must be a finite number >= 0, got True"),
    ([{"up_to_gb": 1, "per_gb": "0.1"}],
     "book.toml: egress[0]: field 'per_gb' must be a finite number >= 0, got '0.1'"),
    ([{"per_gb": 0.1}, {"per_gb": 0.05}], "book.toml: egress[0]: field 'up_to_gb' must be a number > 0 (only the last "
                                           "row may omit it), got None"),
    ([{"up_to_gb": 0, "per_gb": 0.1}], "book.toml: egress[0]: field 'up_to_gb' must be a number > 0 (only the last "
                                        "row may omit it), got 0"),
    ([{"up_to_gb": True, "per_gb": 0.1}], "book.toml: egress[0]: field 'up_to_gb' must be a number > 0 (only the last "
                                           "row may omit it), got True"),
    ([{"up_to_gb": math.inf, "per_gb": 0.1}, {"per_gb": 0.0}],
     "book.toml: egress[0]: field 'up_to_gb' must be a number > 0 (only the last row may omit it), got inf"),
    ([{"up_to_gb": 5, "per_gb": 0.1}, {"up_to_gb": 5, "per_gb": 0.0}],
     "book.toml: egress: egress tier bounds must increase, got [5.0, 5.0]"),
])
def test_a_bad_row_is_refused_naming_the_file_the_row_and_the_field(rows: list[dict[str, object]],
                                                                    message: str) -> None:
    with pytest.raises(InputError) as refused:
        tiers_from_rows(rows, source="book.toml")
    assert str(refused.value) == message


def test_rows_give_their_tiers_and_the_last_may_omit_its_bound() -> None:
    prices = tiers_from_rows([{"up_to_gb": 1, "per_gb": 0}, {"per_gb": 0.12}], source="b")
    assert prices.tiers == (EgressTier(1.0, 0.0), EgressTier(math.inf, 0.12))
    assert tiers_from_rows([{"up_to_gb": 2.5, "per_gb": 0.0}], source="b").tiers == (EgressTier(2.5, 0.0),)
