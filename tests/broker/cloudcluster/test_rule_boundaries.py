"""The P3-P6 rules on their boundaries: exact refusals, and a keep-alive draw exactly at p."""

from __future__ import annotations

import pytest

from broker.cloudcluster.policies import Delay, FixedKeepAlive, NextHour
from workloads.errors import ConfigError


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Delay(-1.0), "delay must be >= 0 s, got -1.0"),
    (lambda: Delay(1.0, burst_ratio=-0.5), "burst_ratio must be >= 0, got -0.5"),
    (lambda: NextHour(3600.0), "wait_next_hour must be in [0, 3600.0) s, got 3600.0"),
    (lambda: NextHour(-1.0, hour=60.0), "wait_next_hour must be in [0, 60.0) s, got -1.0"),
])
def test_a_rule_out_of_its_range_is_refused_with_the_value(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as refused:
        make()
    assert str(refused.value) == message


def test_zero_and_the_top_of_each_range_are_accepted() -> None:
    assert Delay(0.0, burst_ratio=0.0).not_before(10.0, waiting=1, cap=5) == 10.0  # 1 > 0 x 5: a burst
    assert NextHour(0.0).not_before(3599.0, waiting=0, cap=1) == 3599.0
    assert NextHour(3599.0).not_before(1.0, waiting=0, cap=1) == 3600.0  # 3,599 s before the hour ends


class _Draw:
    """A generator whose draws are the given numbers in [0, 1)."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


def test_keeping_with_probability_p_keeps_on_draws_below_p_only() -> None:
    rule = FixedKeepAlive(0.25)
    draws = _Draw(0.0, 0.2499999, 0.25, 0.9)
    assert [rule.keep(0.0, None, draws) for _ in range(4)] == [True, True, False, False]  # type: ignore[arg-type]
    never = FixedKeepAlive(0.0)
    assert not never.keep(0.0, None, _Draw(0.0))  # type: ignore[arg-type]  # p = 0 never keeps, even on a draw of 0
