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
