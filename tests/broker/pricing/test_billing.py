"""Billing units, exact and wall-clock charging, release deadlines: hand-worked cases."""

from __future__ import annotations

import pytest

from broker.pricing.billing import Billing


def test_exact_units() -> None:
    b = Billing()
    assert b.anchor(870.0) == 870.0
    assert b.units(870, 870 + 3590) == 1
    assert b.units(870, 870 + 3600) == 1
    assert b.units(870, 870 + 3600.5) == 2
    assert b.units(870, 870) == 1, "a VM started is billed at least one unit"
    assert b.units_until(870, 800) == 0


def test_wall_clock_units_start_at_the_hour() -> None:
    b = Billing(charging="wall-clock")
    assert b.anchor(3000.0) == 0.0
    assert b.units(b.anchor(3000.0), 3900.0) == 2  # 0:50 -> 1:05 spans two wall-clock hours
    offset = Billing(charging="wall-clock", clock_offset=1800.0)
    assert offset.anchor(100.0) == -1800.0 and offset.anchor(1900.0) == 1800.0


def test_deadlines() -> None:
    b = Billing()
    assert b.deadline(0, 0) == 3590
    assert b.deadline(0, 3590) == 3590
    assert b.deadline(0, 3590.5) == 7190
    assert b.deadline(100, 50) == 3690
    assert Billing(release_margin=0).deadline(0, 10) == 3600


def test_time_to_rollover() -> None:
    b = Billing()
    assert b.time_to_rollover(0, 600) == 3000
    assert b.time_to_rollover(0, 3600) == 3600


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="charging"):
        Billing(charging="hourly")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="release_margin"):
        Billing(release_margin=3600)


def test_defaults_are_the_papers_hour_and_ten_second_margin() -> None:
    b = Billing()
    assert (b.charging, b.btu, b.release_margin, b.clock_offset) == ("exact", 3600.0, 10.0, 0.0)
    assert b.anchor(3000.0) == 3000.0  # exact by default: no wall-clock hour, no offset


def test_units_on_and_just_after_a_boundary() -> None:
    b = Billing()
    # anchor + k x btu in floating point pays exactly k (never an extra unit for an ulp)
    anchor = 0.1
    assert b.units(anchor, anchor + 3 * 3600.0) == 3
    assert b.units(0, 3600 + 1e-6) == 1  # within 1e-9 units (3.6e-6 s) after the boundary: on it
    assert b.units(0, 3600 + 1e-3) == 2
    assert b.units(0, 1) == 1 and b.units(0, 3599) == 1 and b.units(0, 7200) == 2 and b.units(0, 7201) == 3
    assert b.units(1000, 1000 + 10 * 3600) == 10
    assert b.units(5000, 4000) == 1, "a VM started is billed at least one unit"
    assert Billing(btu=60.0).units(0, 150) == 3


def test_units_until_covers_the_interval() -> None:
    b = Billing()
    assert b.units_until(0, 0) == 0 and b.units_until(100, 100) == 0 and b.units_until(0, -7200) == 0
    assert b.units_until(0, 1) == 1 and b.units_until(0, 3600) == 1 and b.units_until(0, 3601) == 2
    assert b.units_until(1000, 1000 + 7200) == 2 and b.units_until(1000, 1000 + 7200.5) == 3
    assert Billing(btu=60.0).units_until(0, 150) == 3


def test_wall_clock_anchor_on_and_between_hours() -> None:
    b = Billing(charging="wall-clock")
    assert b.anchor(0.0) == 0.0 and b.anchor(3600.0) == 3600.0 and b.anchor(3599.0) == 0.0
    assert b.anchor(7300.0) == 7200.0
    # the trace starts 600 s past an hour: the hours end at 3000, 6600, ...
    offset = Billing(charging="wall-clock", clock_offset=600.0)
    assert offset.anchor(0.0) == -600.0 and offset.anchor(2999.0) == -600.0 and offset.anchor(3000.0) == 3000.0
    assert offset.units(offset.anchor(2900.0), 3100.0) == 2  # crosses the hour at 3000
    assert Billing(charging="wall-clock", btu=60.0).anchor(150.0) == 120.0


def test_deadlines_around_the_margin() -> None:
    b = Billing()
    assert b.deadline(0, 3589) == 3590 and b.deadline(0, 3591) == 7190
    assert b.deadline(0, 7190) == 7190 and b.deadline(0, 7190.5) == 10790
    assert b.deadline(1000, 1000) == 4590 and b.deadline(1000, 4590) == 4590 and b.deadline(1000, 4600) == 8190
    assert b.deadline(1000, 0) == 4590, "the first deadline is after one whole unit"
    assert Billing(release_margin=0).deadline(0, 3600) == 3600 and Billing(release_margin=0).deadline(0, 0) == 3600
    assert Billing(btu=60.0, release_margin=5.0).deadline(0, 56) == 115


def test_time_to_rollover_from_a_nonzero_anchor() -> None:
    b = Billing()
    assert b.time_to_rollover(100, 100) == 3600
    assert b.time_to_rollover(100, 400) == 3300
    assert b.time_to_rollover(100, 3699) == 1
    assert b.time_to_rollover(100, 3700 + 600) == 3000
    assert Billing(btu=60.0).time_to_rollover(0, 150) == 30


def test_the_margin_may_be_zero_but_not_negative_nor_a_whole_unit() -> None:
    assert Billing(release_margin=0).release_margin == 0
    assert Billing(release_margin=3599.5).release_margin == 3599.5
    assert Billing(charging="wall-clock").charging == "wall-clock"
    for bad in (-1.0, -0.5, 3600.0, 4000.0):
        with pytest.raises(ValueError, match="release_margin"):
            Billing(release_margin=bad)
    with pytest.raises(ValueError, match="release_margin"):
        Billing(btu=60.0, release_margin=60.0)
    assert Billing(btu=60.0, release_margin=59.0).release_margin == 59.0
