"""The report's budget (:mod:`broker.report.budget`) on hand-worked cases: a budget under one second, a skipped
part logged with its reason."""

from __future__ import annotations

import logging

import pytest

from broker.report.budget import Budget
from tests.broker.report.hand_made import Clock


def test_a_budget_under_one_second_is_a_budget() -> None:
    budget = Budget(0.5, clock=Clock())
    assert budget.seconds == 0.5 and budget.left == 0.5 and budget.skipped == []
    with pytest.raises(ValueError, match=r"> 0 s, got -1"):
        Budget(-1.0)


def test_a_skipped_part_is_logged_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    budget = Budget(1.0, clock=Clock())
    with caplog.at_level(logging.INFO, logger="broker.report.budget"):
        assert not budget.allow("x", 2.0)
    assert [r.getMessage() for r in caplog.records] == ["skipped x: needs about 2.0 s, 1.0 s of the budget left"]
