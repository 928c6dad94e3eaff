"""The spot offer (:mod:`broker.pricing.spot_offer`): refusals, its zone's name, read-only arrays, timeline repeats.

Markets of :mod:`tests.broker.spot.helpers` (100 s ticks, spot 0.36 over on-demand 3.6 $/h).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.pricing.spot_offer import SpotOffer
from tests.broker.spot.helpers import market
from workloads.errors import ConfigError


def test_ratios_and_caps_of_different_lengths_are_refused_in_a_whole_message() -> None:
    with pytest.raises(ConfigError) as error:
        SpotOffer("z", 100, np.array([1.0, 0.0]), np.array([0.1]), 120.0)
    assert str(error.value) == "a spot offer needs as many ratios as caps (> 0), got 1, 2"
    with pytest.raises(ConfigError) as error:
        SpotOffer("z", 100, np.array([]), np.array([]), 120.0)
    assert str(error.value) == "a spot offer needs as many ratios as caps (> 0), got 0, 0"


@pytest.mark.parametrize("notice", [-1.0, math.inf, math.nan])
def test_a_notice_negative_or_not_finite_is_refused_in_a_whole_message(notice: float) -> None:
    with pytest.raises(ConfigError) as error:
        SpotOffer("z", 100, np.array([1.0]), np.array([0.1]), notice)
    assert str(error.value) == f"the notice period must be >= 0 s, got {notice}"


def test_a_market_of_two_zones_is_refused_in_a_whole_message() -> None:
    with pytest.raises(ConfigError) as error:
        SpotOffer.from_market(market([1, 0], [1, 1]))
    assert str(error.value) == "the CoH world takes a market of one zone, got 2"


def test_the_offer_is_named_for_its_zone_and_keeps_the_markets_notice_unless_given() -> None:
    o = SpotOffer.from_market(market([1, 0, 3], notice_s=30.0))
    assert (o.name, o.gap_s, o.notice_s) == ("z0", 100, 30.0)
    assert o.caps.tolist() == [math.inf, 0.0, 3.0]
    assert SpotOffer.from_market(market([1, 0, 3], notice_s=30.0), notice_s=0.0).notice_s == 0.0


def test_the_offers_arrays_are_read_only() -> None:
    o = SpotOffer.from_market(market([1, 0, 3]))
    assert not o.caps.flags.writeable and not o.ratios.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        o.caps[1] = 1.0


def test_repeats_count_the_reads_from_the_start_and_none_backwards() -> None:
    o = SpotOffer.from_market(market([1, 0, 3]))  # 300 s timeline
    assert [o.repeats(0, 299), o.repeats(0, 300), o.repeats(299, 600), o.repeats(-1, 0)] == [0, 1, 2, 1]
    assert o.repeats(300, 300) == 0  # no time, no repeat
    assert o.repeats(600, 0) == 0 and o.repeats(0, math.nan) == 0  # an end before the start, or unknown
