"""The utilities by hand below one second and one core-second, with integer service, and lambda 0."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.rewards import RewardBook, fairness, responsiveness, target_shares


def test_responsiveness_below_one_second() -> None:
    assert responsiveness(0.5, 0.5) == 0.5 and responsiveness(0.25, 0.0) == 1.0


def test_target_shares_below_one_second_of_work() -> None:
    assert target_shares(np.array([0.25, 0.5]), np.array([0, 1]), 2).tolist() == [1 / 3, 2 / 3]


def test_fairness_below_one_core_second() -> None:
    # half a second for group 0 is all the service there is: group 1 lacks its share 1/4 of a largest 3/4
    assert fairness(np.zeros(2), np.array([0.75, 0.25]), 0, 0.5) == pytest.approx(2 / 3)


def test_fairness_of_integer_service_counts_the_estimates_fraction() -> None:
    # (10 + 0.5, 5): shares received 21/31 and 10/31 against 1/2 each: F = 1 - (1/2 - 10/31) / (1/2) = 20/31
    assert fairness(np.array([10, 5]), np.array([0.5, 0.5]), 0, 0.5) == pytest.approx(20 / 31)


def test_a_reward_of_fairness_alone() -> None:
    book = RewardBook(1, 0.0, elastic=False, shares=np.array([1.0]))
    book.chose(0, 0, 10.0, np.zeros(1))
    book.terminated(0, 10.0, 30.0)  # W = 1/4, weighed 0
    assert book.take() == [(0, 1.0)]
