"""The elastic world and its rewards, by hand: a three-job example on a rigid and on an elastic pool."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.elastic.episode import Action, Episode, run_episode
from broker.elastic.rewards import RewardBook, fairness, responsiveness, target_shares
from broker.elastic.world import ElasticWorld, PoolConfig, Queue
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


# --- by hand: copies, the hold, the idle clock, the books ---------------------------------------------------------


# five jobs of two groups: 0 (100 s) and 1 (50 s) at 0, 2 (40 s) at 10, 3 (30 s) at 20, 4 (20 s) at 30
FIVE = core_jobs([0, 0, 10, 20, 30], [100, 50, 40, 30, 20], [0, 1, 0, 1, 0])
# two jobs of 100 s at 0
TWO_AT_0 = core_jobs([0, 0], [100, 100], [0, 0])


def _finish(world: ElasticWorld, shortest: bool) -> None:
    while (d := world.advance()) is not None:
        queued = d.queued
        world.act(Action(int(queued[np.argmin(world.jobs.runtime[queued])] if shortest else queued[0])))


def test_a_copy_runs_on_alone_and_leaves_the_original_as_it_was() -> None:
    world = ElasticWorld(FIVE, PoolConfig(1), validate=True)
    d = world.advance()
    assert d is not None and d.queued.tolist() == [0, 1]
    world.act(Action(0))  # job 0 runs from 0 to 100 on the one core; job 1 waits
    twin = world.copy()
    assert twin._validator is not None and twin._validator.world is twin and world._validator.world is world
    _finish(twin, shortest=False)  # FCFS: 1 at 100, 2 at 150, 3 at 190, 4 at 220
    assert twin.start.tolist() == [0.0, 100.0, 150.0, 190.0, 220.0] and twin.end.tolist()[-1] == 240.0
    assert twin.finished() and twin.drain_completed() == [0, 1, 2, 3, 4]
    assert twin.served.tolist() == [160.0, 80.0]  # group 0: 100 + 40 + 20; group 1: 50 + 30
    # the original is still at 0 with job 0 running and job 1 waiting
    assert (world.now, world.done, world.running, world.queue.jobs().tolist()) == (0.0, 0, {0: 0.0}, [1])
    assert world.start[0] == 0.0 and np.isnan(world.start[1:]).all() and np.isnan(world.end).all()
    assert world.served.tolist() == [0.0, 0.0] and world.run_count.tolist() == [1.0, 0.0]
    assert world.run_start_sum.tolist() == [0.0, 0.0] and world.completed == [] and world.sizes == [(0.0, 1)]
    _finish(world, shortest=True)  # SJF from 100: 4 (20 s), 3 (30 s), 2 (40 s), 1 (50 s)
    assert world.start.tolist() == [0.0, 190.0, 150.0, 120.0, 100.0]
    # the same work on the same core-seconds either way
    assert world.utilization() == twin.utilization() == 1.0
    assert twin.start.tolist() == [0.0, 100.0, 150.0, 190.0, 220.0]


def test_a_copy_of_an_elastic_world_keeps_its_pool_and_hold() -> None:
    pool = PoolConfig(1, elastic=True, min_cores=1, max_cores=3, hold_s=60)
    world = ElasticWorld(FIVE, pool, validate=True)
    world.advance()
    world.act(Action(0, 2))  # two cores from 0, held until 60
    twin = world.copy()
    d = twin.advance()
    assert d is not None and (d.now, d.queued.tolist(), d.resizable) == (0.0, [1], False)
    twin.act(Action(1))
    assert twin.sizes == world.sizes == [(0.0, 1), (0.0, 2)] and twin.hold_until == 60.0
    assert len(world.running) == 1 and len(twin.running) == 2
    assert math.isclose(twin.core_seconds(60.0), 120.0)
    with pytest.raises(ValueError, match=r"kept from the pool's last change at 0\.0, not at -1\.0"):
        twin.core_seconds(-1.0)


def test_utilization_before_any_core_second_and_below_one() -> None:
    assert ElasticWorld(FIVE, PoolConfig(1)).utilization() == 0.0  # nothing yet
    world = ElasticWorld(core_jobs([0], [0.5], [0]), PoolConfig(1))
    world.advance()
    world.act(Action(0))
    assert world.advance() is None and world.utilization() == 1.0  # half a core-second of work on as many


def test_service_counts_the_running_jobs_so_far() -> None:
    # five cores: every job starts on arrival; at 30 none has ended
    world = ElasticWorld(FIVE, PoolConfig(5))
    for _ in range(5):
        d = world.advance()
        assert d is not None
        world.act(Action(int(d.queued[0])))
    assert world.now == 30.0 and world.running == {0: 0.0, 1: 0.0, 2: 10.0, 3: 20.0, 4: 30.0}
    # group 0 (jobs 0, 2, 4): 30 + 20 + 0 core-seconds now; group 1 (1, 3): 30 + 10
    assert world.service().tolist() == [50.0, 40.0]


def test_a_full_pool_that_grows_has_no_idle_core_until_then() -> None:
    # one core (1..3, no hold): A (100 s) at 0 fills it; B at 50 finds it full and grows it to 3 (one idle);
    # C at 60 sees a core idle since 50, not since 0
    jobs = core_jobs([0, 50, 60], [100, 100, 100], [0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(1, elastic=True, min_cores=1, max_cores=3, hold_s=0.0))
    world.advance()
    world.act(Action(0))
    d = world.advance()
    assert d is not None and (d.now, d.idle, d.idle_for) == (50.0, 0, 0.0)  # no core idle: idle for 0 s
    world.act(Action(1, 3))
    d = world.advance()
    assert d is not None and (d.now, d.idle, d.idle_for) == (60.0, 1, 10.0)


def test_a_hold_under_a_second_still_ends() -> None:
    # one core (1..3, a 0.5 s hold): A grows the pool to 2 at 0; B fills it; C waits for the hold to end at 0.5
    jobs = core_jobs([0, 0, 0], [100, 100, 100], [0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(1, elastic=True, min_cores=1, max_cores=3, hold_s=0.5))
    world.advance()
    world.act(Action(0, 2))
    d = world.advance()
    assert d is not None and (d.now, d.resizable) == (0.0, False)
    world.act(Action(1))
    d = world.advance()
    assert d is not None and (d.now, d.resizable, d.queued.tolist()) == (0.5, True, [2])


def test_a_core_idle_since_the_start_of_a_pool_that_never_filled() -> None:
    # three cores, never full: A at 0, B at 50, C at 60; some core has been idle since 0
    world = ElasticWorld(core_jobs([0, 50, 60], [100, 100, 100], [0, 0, 0]), PoolConfig(3))
    for _ in range(2):
        d = world.advance()
        assert d is not None
        world.act(Action(int(d.queued[0])))
    d = world.advance()
    assert d is not None and (d.now, d.idle, d.idle_for) == (60.0, 1, 60.0)


def test_the_world_refuses_out_of_turn_calls_and_full_pools() -> None:
    world = ElasticWorld(TWO_AT_0, PoolConfig(1, elastic=True, min_cores=1, max_cores=2, hold_s=100.0))
    with pytest.raises(RuntimeError, match=r"^no decision is pending \(call advance first\)$"):
        world.act(Action(0))
    d = world.advance()
    assert d is not None
    with pytest.raises(RuntimeError, match=r"^the previous decision was not acted on \(call act first\)$"):
        world.advance()
    with pytest.raises(ConfigError, match=r"^t=0.0: job 2 is not waiting$"):
        world.act(Action(2))  # there are two jobs: 0 and 1
    world.act(Action(0))
    d = world.advance()  # the pool is full but may grow
    assert d is not None and (d.now, d.idle, d.resizable) == (0.0, 0, True)
    with pytest.raises(ConfigError, match=r"^t=0.0: no core is free for job 1 on a pool of 1 \(grow it\)$"):
        world.act(Action(1))


def test_the_validator_reports_the_instant() -> None:
    world = ElasticWorld(TWO_AT_0, PoolConfig(1), validate=True)
    world.advance()
    world.size = 2  # broken before the dispatch
    with pytest.raises(InvariantError, match=r"^t=0.0: a rigid pool of 1 cores has 2$"):
        world.act(Action(0))
    later = ElasticWorld(core_jobs([0, 10], [100, 100], [0, 0]), PoolConfig(1), validate=True)
    later.advance()
    later.act(Action(0))
    later.size = 3  # broken after it: seen once job 1 arrives at 10
    with pytest.raises(InvariantError, match=r"^t=10.0: a rigid pool of 1 cores has 3$"):
        later.advance()


def test_the_interactive_threshold_and_the_prior_come_from_the_pool() -> None:
    # exactly 900 s is batch; a pool of 600 s makes the 500 s job interactive and the median's prior 600 s
    assert ElasticWorld(core_jobs([0, 0], [900, 500], [0, 0]), PoolConfig(1)).interactive.tolist() == [False, True]
    world = ElasticWorld(core_jobs([0], [500], [0]), PoolConfig(1, interactive_s=600.0, estimate="median"))
    assert world.interactive.tolist() == [True] and world.est.one(0) == 600.0
    assert PoolConfig(interactive_s=0.5).interactive_s == 0.5  # any positive threshold
    # the median's window too: of 100 and 300 s, a window of one keeps the last
    short = ElasticWorld(core_jobs([0, 0, 0], [100, 300, 50], [0, 0, 0]), PoolConfig(1, estimate="median", window=1))
    short.est.completed(0)
    short.est.completed(1)
    assert short.est.one(2) == 300.0


def test_validation_is_asked_for() -> None:
    assert ElasticWorld(FIVE, PoolConfig(1))._validator is None
    assert ElasticWorld(FIVE, PoolConfig(1), validate=True)._validator is not None


def test_an_empty_queue_has_no_job() -> None:
    queue = Queue(3)
    assert (len(queue), queue.jobs().tolist()) == (0, [])


# --- hand-worked edges: indices, the hold, the last full pool -----------------------------------------------------


def test_an_empty_queue_gives_integer_indices() -> None:
    jobs = Queue(3).jobs()
    assert jobs.dtype == np.int64 and np.arange(3)[jobs].tolist() == []


def test_a_pool_without_a_hold_schedules_no_hold_end() -> None:
    # one job on 1..2 cores, hold 0: grown to 2 at its dispatch; the run handles its submission and termination
    world = ElasticWorld(core_jobs([0], [10], [0]), PoolConfig(1, elastic=True, min_cores=1, max_cores=2, hold_s=0.0))
    assert world.advance() is not None
    world.act(Action(0, 2))
    assert len(world.kernel) == 1  # the termination at 10 only
    assert world.advance() is None and world.kernel.popped == 2


def test_the_last_time_the_pool_was_full_is_the_dispatch_that_filled_it() -> None:
    # two cores: j0 at 0 leaves one idle, j1 at 3 fills the pool
    world = ElasticWorld(core_jobs([0, 3], [10, 10], [0, 0]), PoolConfig(2))
    for _ in range(2):
        d = world.advance()
        assert d is not None
        world.act(Action(int(d.queued[0])))
    assert world.last_full == 3.0
