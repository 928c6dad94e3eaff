"""The utilities (:mod:`broker.elastic.rewards`) by hand below one second and one core-second, with integer
service, and lambda 0; their precision, and a job no decision dispatched."""

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


# --- hand-worked edges: precisions and undispatched jobs ----------------------------------------------------------


def test_responsiveness_is_computed_in_double_precision() -> None:
    # 100 s of run after 200 s of wait: W = 1/3, the double (not an extended-precision third)
    for runtime, wait in ((np.longdouble(100.0), 200.0), (100.0, np.longdouble(200.0))):
        got = responsiveness(runtime, wait)
        assert got.dtype == np.float64 and got == 1 / 3


def test_the_book_reads_the_target_shares_as_doubles() -> None:
    # shares 1/3 and 2/3 given in extended precision; group 0 has had 1 s, a job of group 1 believed to run 2 s is
    # elected: the service (1, 2) is exactly the target, F = 1; with lambda 0 the reward is F
    book = RewardBook(2, 0.0, elastic=False, shares=np.array([1, 2], dtype=np.longdouble) / 3)
    book.chose(0, 1, 2.0, np.array([1.0, 0.0]))
    book.terminated(0, 2.0, 0.0)
    assert book.take() == [(0, 1.0)]


def test_a_job_no_decision_dispatched_is_marked_minus_one() -> None:
    book = RewardBook(2, 0.5, elastic=False, shares=np.array([1.0]))
    book.chose(1, 0, 10.0, np.zeros(1))
    assert book.decision_of.tolist() == [-1, 0]
