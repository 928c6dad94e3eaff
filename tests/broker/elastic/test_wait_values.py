"""The wait reward's (:mod:`broker.elastic.wait`) edge values by hand: dtypes, the idle price, idle tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.wait import WaitBook, w_lost


def test_w_lost_reckons_waits_in_float64_whatever_the_submit_dtype() -> None:
    # a float32 submit of 2**24 s; decided at 2**24 + 1.5, the step ends at 2**24 + 11.5
    submit = np.array([16777216.0], dtype=np.float32)
    got = w_lost(np.array([10.0]), submit, 16777217.5, 16777227.5)
    # in float64 the job had waited 1.5 s and waits 11.5 s: W 10/11.5 -> 10/21.5
    # (in float32 2**24 + 1.5 rounds to 2**24 + 2, the waits to 2 s and 12 s)
    assert got.dtype == np.float64
    assert got.tolist() == [10 / 11.5 - 10 / 21.5]


def test_the_idle_price_sums_the_work_in_float64_whatever_the_runtime_dtype() -> None:
    # float32 run times 2**24 s and 1 s: in float32 their sum rounds to 2**24, in float64 it is 2**24 + 1
    book = WaitBook(np.array([16777216.0, 1.0], dtype=np.float32), np.zeros(2), 0.5, elastic=True)
    assert book.idle_price == 2 / 16777217


def test_an_elastic_pool_with_under_one_core_second_of_work_prices_idle_cores_at_n_over_e() -> None:
    # two jobs of 0.5 s and 0.25 s: E = 0.75 core-s, the idle price N / E = 8/3
    book = WaitBook(np.array([0.5, 0.25]), np.zeros(2), 0.5, elastic=True)
    assert book.idle_price == 2 / 0.75
    # nobody waits, 3 idle core-seconds: -(0.5 * 0 + 0.5 * 3 * 8/3) = -4
    assert book.charge(0.0, 3.0, np.array([], dtype=np.int64), 3.0) == (0, pytest.approx(-4.0, abs=1e-15))


def test_an_elastic_pool_without_work_charges_nothing_for_idle_cores() -> None:
    # two jobs of 0 s: no work, so the idle price is 0 (not N / 0, nor 1)
    book = WaitBook(np.zeros(2), np.zeros(2), 0.5, elastic=True)
    assert book.idle_price == 0.0
    # job 0 (submitted 0) waits 0 -> 10 s: W 1 -> 0/10 = 0, a loss of 1; 5 idle core-s cost nothing
    # reward -(0.5 * 1 + 0.5 * 5 * 0) = -0.5
    assert book.charge(0.0, 10.0, np.array([0]), 5.0) == (0, -0.5)


@pytest.mark.parametrize("runtime", [[0.0, 0.0], [100.0, 50.0], []])
def test_a_rigid_pool_has_no_idle_price_with_or_without_work(runtime: list[float]) -> None:
    book = WaitBook(np.array(runtime), np.zeros(len(runtime)), 0.5, elastic=False)
    assert book.idle_price == 0.0
    # idle cores do not enter a rigid pool's reward: a step with nobody waiting costs nothing
    assert book.charge(0.0, 10.0, np.array([], dtype=np.int64), 20.0) == (0, 0.0)


@pytest.mark.parametrize(("t0", "t1", "idle"), [
    (0.0, 0.0, -1e-6),  # a step of no time: the tolerance is 1e-6 core-s, the boundary is accepted
    (5.0, 5.0, -1e-6),
    (0.0, 1000.0, -1e-6 * 1000.0),  # 1e-6 per second of the step: 1e-3 over 1000 s
    (0.0, 1000.0, -1e-4),
])
def test_idle_cores_a_rounding_below_zero_are_booked_as_none(t0: float, t1: float, idle: float) -> None:
    book = WaitBook(np.array([10.0]), np.array([0.0]), 0.5, elastic=True)
    # nobody waits, the idle cores count as 0: the reward is 0 (-0.0)
    assert book.charge(t0, t1, np.array([], dtype=np.int64), idle) == (0, 0.0)
    assert book.idle == [0.0]


@pytest.mark.parametrize(("t0", "t1", "idle"), [
    (0.0, 0.0, -1.5e-6),  # over the 1e-6 of a step of no time (not 2e-6)
    (1000.0, 1000.0, -1.5e-6),  # the tolerance grows with the step's length, not with the clock (t1 + t0)
    (1000.0, 1001.0, -1.5e-6),
    (0.0, 1000.0, -1.1e-3),  # over the 1e-3 of a step of 1000 s
])
def test_idle_cores_below_the_tolerance_are_refused(t0: float, t1: float, idle: float) -> None:
    book = WaitBook(np.array([10.0]), np.array([0.0]), 0.5, elastic=True)
    with pytest.raises(ValueError, match="a step runs forward with idle cores >= 0"):
        book.charge(t0, t1, np.array([], dtype=np.int64), idle)
