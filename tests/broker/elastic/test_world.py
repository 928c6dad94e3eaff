"""The elastic world and its rewards, by hand: a three-job example on a rigid and on an elastic pool."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.elastic.episode import Action, Episode, run_episode
from broker.elastic.rewards import RewardBook, fairness, responsiveness, target_shares
from broker.elastic.world import ElasticWorld, PoolConfig
from broker.sim.validate import InvariantError
from workloads.cores import CoreJobs
from workloads.errors import ConfigError


def core_jobs(submit, runtime, group, wait=None, groups=None) -> CoreJobs:
    submit = np.asarray(submit, float)
    n = len(submit)
    group = np.asarray(group, np.int64)
    return CoreJobs(submit=submit, runtime=np.asarray(runtime, float), group=group,
                    native_wait=np.full(n, np.nan) if wait is None else np.asarray(wait, float),
                    groups=tuple(range(groups or int(group.max()) + 1)))


# j0: 100 s of group 0 at 0; j1: 50 s of group 1 (interactive) at 10; j2: 1000 s of group 0 (batch) at 20
THREE = core_jobs([0, 10, 20], [100, 50, 1000], [0, 1, 0])


def test_the_utilities_by_hand() -> None:
    assert responsiveness(50.0, 90.0) == pytest.approx(50 / 140)
    assert responsiveness(np.array([0.0, 0.0, 10.0]), np.array([0.0, 5.0, 0.0])).tolist() == [1.0, 0.0, 1.0]
    shares = target_shares(THREE.runtime, THREE.group, 2)
    np.testing.assert_allclose(shares, [1100 / 1150, 50 / 1150])
    # no service yet: electing a 100 s job of group 0 gives it everything; group 1 lacks its whole share
    assert fairness(np.zeros(2), shares, 0, 100.0) == pytest.approx(1 - (50 / 1150) / (1100 / 1150))
    # exactly the target shares: no deficit
    assert fairness(np.array([100.0, 50.0]), shares, 0, 1000.0) == pytest.approx(1.0)
    # nothing served and a job believed to run 0 s: every share is 0, the deficit is the largest share
    assert fairness(np.zeros(2), shares, 1, 0.0) == 0.0
    assert target_shares(np.zeros(3), np.array([0, 1, 1]), 2).tolist() == [0.5, 0.5]


def test_a_rigid_pool_of_one_core_fcfs_by_hand() -> None:
    world = ElasticWorld(THREE, PoolConfig(1), validate=True)
    episode = Episode(world, lam=0.5)
    first = episode.start()
    assert first is not None and (first.now, first.queued.tolist(), first.idle, first.resizable) == (0.0, [0], 1, False)
    assert (first.low, first.high) == (1, 1)
    second, rewards = episode.step(Action(0))
    # j1 and j2 arrive while j0 runs: no decision until j0 terminates at 100, which completes decision 0's reward
    shares = np.array([1100, 50]) / 1150
    f0 = 1 - (50 / 1150) / shares[0]  # elected with nothing served: group 1 lacks its whole share
    assert second is not None and (second.now, second.queued.tolist(), second.idle_for) == (100.0, [1, 2], 0.0)
    assert [n for n, _ in rewards] == [0] and rewards[0][1] == pytest.approx(0.5 * 1.0 + 0.5 * f0)  # W = 1
    third, rewards = episode.step(Action(1))
    # j1 ended at 150: W = 50 / (50 + 90); elected at 100 after j0's 100 s of group 0: shares (2/3, 1/3)
    f1 = 1 - (shares[0] - 2 / 3) / shares[0]
    assert third is not None and third.now == 150.0 and [n for n, _ in rewards] == [1]
    assert rewards[0][1] == pytest.approx(0.5 * 50 / 140 + 0.5 * f1)
    end, rewards = episode.step(Action(2))
    # j2: waited 130, ran 1000; elected with (100 + 1000, 50) served: exactly the targets
    assert end is None and [n for n, _ in rewards] == [2]
    assert rewards[0][1] == pytest.approx(0.5 * 1000 / 1130 + 0.5 * 1.0)
    assert world.start.tolist() == [0, 100, 150] and world.end.tolist() == [100, 150, 1150]
    assert world.utilization() == pytest.approx(1150 / 1150) and world.decisions == 3


def test_an_elastic_pool_by_hand() -> None:
    # one core to start, 1..3 allowed, a 60 s hold
    world = ElasticWorld(THREE, PoolConfig(1, elastic=True, min_cores=1, max_cores=3, hold_s=60), validate=True)
    episode = Episode(world, lam=0.5)
    d = episode.start()
    assert d is not None and d.resizable and (d.low, d.high) == (1, 3)
    d, _ = episode.step(Action(0, 2))  # grow to 2 at 0, held until 60
    assert d is not None and (d.now, d.queued.tolist(), d.idle, d.resizable) == (10.0, [1], 1, False)
    assert (d.low, d.high) == (2, 2)
    d, rewards = episode.step(Action(1))
    # j2 arrives at 20 to a full pool that may not grow before 60; at 60 j1 ends (before the hold's end)
    assert d is not None and (d.now, d.queued.tolist(), d.idle, d.resizable) == (60.0, [2], 1, True)
    assert (d.low, d.high) == (2, 3)
    # decision 1: j1 never waited and ended at 60; U at t = 60 = 50 s done over 2 x 60 core-seconds
    assert [n for n, _ in rewards] == [1] and rewards[0][1] == pytest.approx(0.5 * 1.0 + 0.5 * 50 / 120)
    d, rewards = episode.step(Action(2))  # keep 2 cores
    assert d is None
    # decision 0: j0 ends at 100 (W = 1); its U was measured at the next decision, t = 10: nothing done yet
    # decision 2: j2 waited 40 s; U at the end (1060) = 1150 s over 2 x 1060 core-seconds
    got = dict(rewards)
    assert [n for n, _ in rewards] == [0, 2] and got[0] == 0.5 * 1.0 + 0.5 * 0.0
    assert got[2] == pytest.approx(0.5 * 1000 / 1040 + 0.5 * 1150 / 2120)
    assert world.sizes == [(0.0, 1), (0.0, 2)] and world.core_seconds() == pytest.approx(2120.0)


def test_a_full_pool_may_grow_once_its_hold_is_over() -> None:
    jobs = core_jobs([0, 0, 0], [500, 500, 500], [0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(1, elastic=True, min_cores=1, max_cores=2, hold_s=100), validate=True)
    episode = Episode(world, lam=1.0)
    d = episode.start()
    assert d is not None and d.resizable and d.now == 0.0
    d, _ = episode.step(Action(0, 1))  # keep 1 core: no hold starts
    # still at 0: no idle core, but the pool may grow (it has held its size since it began)
    assert d is not None and (d.now, d.idle, d.resizable, d.low, d.high) == (0.0, 0, True, 2, 2)
    d, _ = episode.step(Action(1, 2))
    # the third job waits: no core idle, and the pool is at its ceiling
    assert d is not None and (d.now, d.queued.tolist()) == (500.0, [2])
    assert world.sizes == [(0.0, 1), (0.0, 2)]


def test_the_constraints_are_refused_before_they_are_broken() -> None:
    pool = PoolConfig(2, elastic=True, min_cores=2, max_cores=4, hold_s=900)
    world = ElasticWorld(core_jobs([0, 0, 0], [50, 50, 50], [0, 0, 0]), pool, validate=True)
    d = world.advance()
    assert d is not None and (d.low, d.high) == (2, 4)
    with pytest.raises(ConfigError, match=r"^t=0.0: the pool's size must lie in \[2, 4\], got 1$"):
        world.act(Action(0, 1))  # below min_cores
    with pytest.raises(ConfigError, match=r"got 5$"):
        world.act(Action(0, 5))
    with pytest.raises(ConfigError, match=r"^t=0.0: job 7 is not waiting$"):
        world.act(Action(7))
    world.act(Action(0, 3))
    d = world.advance()
    assert d is not None and not d.resizable and (d.low, d.high) == (3, 3)
    with pytest.raises(ConfigError, match=r"^t=0.0: the pool must stay at 3 cores$"):
        world.act(Action(1, 4))  # within the hold
    with pytest.raises(ConfigError, match=r"^t=0.0: job 0 is not waiting$"):
        world.act(Action(0))
    with pytest.raises(RuntimeError, match="not acted on"):
        world.advance()


def test_a_shrink_never_goes_below_the_running_jobs() -> None:
    pool = PoolConfig(4, elastic=True, min_cores=1, max_cores=4, hold_s=0)
    world = ElasticWorld(core_jobs([0, 0, 0, 10], [100, 100, 100, 5], [0, 0, 0, 0]), pool, validate=True)
    for job in range(3):
        d = world.advance()
        assert d is not None
        world.act(Action(job))
    d = world.advance()  # job 3 at 10: three running, one idle core
    assert d is not None and (d.now, d.low) == (10.0, 4)
    with pytest.raises(ConfigError, match=r"lie in \[4, 4\], got 3"):
        world.act(Action(3, 3))


def test_the_validator_catches_a_world_that_breaks_the_hold() -> None:
    from dataclasses import replace

    pool = PoolConfig(2, elastic=True, min_cores=1, max_cores=4, hold_s=900)
    world = ElasticWorld(core_jobs([0, 0, 0], [50, 50, 50], [0, 0, 0]), pool, validate=True)
    world.advance()
    world.act(Action(0, 3))
    d = world.advance()
    assert d is not None and not d.resizable
    world._pending = replace(d, resizable=True, low=1, high=4)  # a broken world: no hold
    with pytest.raises(InvariantError, match=r"changed to 4 cores 0.0 s after its last change, before the 900 s hold"):
        world.act(Action(1, 4))


def test_a_rigid_pool_keeps_its_size_and_validate_sees_it_change() -> None:
    world = ElasticWorld(core_jobs([0, 0], [50, 50], [0, 0]), PoolConfig(1), validate=True)
    d = world.advance()
    assert d is not None and (d.low, d.high, d.resizable) == (1, 1, False)
    world.act(Action(0, 1))  # the same size is no change
    assert world.advance() is not None and world.now == 50.0
    world.size = 0  # a broken world
    with pytest.raises(InvariantError, match="a rigid pool of 1 cores has 0"):
        world._validator.at_event(50.0)


def test_every_job_of_a_busy_stretch_runs_once_and_the_core_seconds_add_up() -> None:
    rng = np.random.default_rng(3)
    jobs = core_jobs(np.sort(rng.integers(0, 2000, 300)), rng.integers(0, 400, 300), rng.integers(0, 3, 300))
    for pool in (PoolConfig(5), PoolConfig(5, elastic=True, min_cores=2, max_cores=9, hold_s=120)):
        world = ElasticWorld(jobs, pool, validate=True)

        def decide(d, w):
            job = int(d.queued[-1])  # the newest: a far cry from FCFS
            if not d.resizable:
                return Action(job)
            return Action(job, int(rng.integers(d.low, d.high + 1)))

        episode = run_episode(world, 0.5, decide)
        assert world.finished() and np.isfinite(world.start).all() and (world.start >= jobs.submit).all()
        assert episode.book.count == 300 == world.decisions
        assert all(not math.isnan(episode.book.reward(n)) for n in range(300))


def test_the_reward_book_refuses_a_lambda_outside_0_1() -> None:
    for lam in (-0.1, 1.5, math.nan):
        with pytest.raises(ConfigError, match="lambda must lie in"):
            RewardBook(3, lam, elastic=False, shares=np.array([1.0]))


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"cores": 0}, "cores >= 1"),
    ({"cores": 20, "elastic": True}, "min_cores <= cores <= max_cores, got 30, 20, 40"),
    ({"cores": 81, "elastic": True, "max_cores": 80}, "got 30, 81, 80"),
    ({"hold_s": -1.0}, "hold time"),
    ({"hold_s": math.inf}, "hold time"),
    ({"interactive_s": 0.0}, "interactive threshold"),
    ({"estimate": "mean"}, "estimate must be one of oracle, median"),
])
def test_a_bad_pool_is_refused(kwargs, words) -> None:
    with pytest.raises(ConfigError, match=words):
        PoolConfig(**kwargs)


def test_the_default_pool_is_the_papers() -> None:
    pool = PoolConfig(elastic=True)
    assert (pool.cores, pool.min_cores, pool.max_cores, pool.hold_s, pool.interactive_s) == (81, 30, 162, 900.0, 900.0)
    assert PoolConfig().ceiling == 81 and pool.ceiling == 162


def test_a_job_that_no_decision_dispatched_cannot_end_in_the_book() -> None:
    book = RewardBook(3, 0.5, elastic=False, shares=np.array([1.0]))
    book.chose(0, 0, 10.0, np.zeros(1))
    with pytest.raises(ValueError, match="job 2 ended without a decision that dispatched it"):
        book.terminated(2, 10.0, 0.0)
