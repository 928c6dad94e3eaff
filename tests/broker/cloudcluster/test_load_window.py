"""The load the P3 Load keep-alive reads: active over hired instance-time in a window, worked by hand."""

from __future__ import annotations

import pytest

from broker.cloudcluster.policies import ClusterPolicy, LoadKeepAlive
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.world import ClusterWorld
from tests.broker.cloudcluster.test_world import jobs


def at_first_decision(submit: list[float], runtime: list[float]) -> ClusterWorld:
    world = ClusterWorld(jobs(submit, runtime), ClusterPolicy(keepalive=LoadKeepAlive(0.5)), CloudTerms())
    decision = world.advance()
    assert decision is not None
    return world


def test_one_job_one_instance_at_its_first_period_end() -> None:
    # hired at 100 (no boot), busy until 3,100, its first paid hour ends at 3,700: the decision
    world = at_first_decision([100.0], [3000.0])
    assert world.now == 3700.0
    assert world.load(3700.0, 3600.0) == 3000 / 3600  # [100, 3700]: busy 3,000 of 3,600 hired seconds
    assert world.load(3700.0, 5000.0) == 3000 / 3600  # the window reaches back before time 0: nothing more
    assert world.load(3700.0, 1000.0) == 400 / 1000  # [2700, 3700]: busy until 3,100
    assert world.load(3700.0, 600.0) == 0.0  # [3100, 3700]: hired, idle
    assert world.load(2100.0, 1000.0) == 1.0  # [1100, 2100]: busy throughout (between two records)
    assert world.load(3100.0, 3000.0) == 1.0  # [100, 3100]: both ends exactly on records
    assert world.load(1600.0, 1000.0) == 1.0  # [600, 1600]: hired at 100, busy since


def test_before_any_instance_the_load_is_zero_not_a_division_by_zero() -> None:
    world = at_first_decision([100.0], [3000.0])
    assert world.load(90.0, 50.0) == 0.0  # [40, 90]: nothing hired yet
    assert world.load(100.0, 100.0) == 0.0  # [0, 100]: hired exactly at its end


def test_two_instances_overlapping_count_their_time_together() -> None:
    # job 0 on instance 0 over [0, 1000); job 1 arrives at 500 and hires instance 1 over [500, 2500).
    # Instance 0 reaches the end of its hour at 3,600 first (instance 1's ends at 4,100).
    world = at_first_decision([0.0, 500.0], [1000.0, 2000.0])
    assert world.now == 3600.0
    # [0, 3600]: busy 1,000 + 2,000; hired 3,600 + 3,100
    assert world.load(3600.0, 3600.0) == pytest.approx(3000 / 6700, rel=1e-15)
    # [1000, 3600]: busy 0 + 1,500 (instance 1 until 2,500); hired 2,600 + 2,600
    assert world.load(3600.0, 2600.0) == pytest.approx(1500 / 5200, rel=1e-15)
    # [250, 750]: instance 0 busy 500 of 500; instance 1 busy 250 of 250 (from 500)
    assert world.load(750.0, 500.0) == 1.0
