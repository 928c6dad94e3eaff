"""The elastic world by hand where the first tests leave room: copies, the hold, the idle clock, the books."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.elastic.world import Action, ElasticWorld, PoolConfig, Queue
from broker.sim.validate import InvariantError
from tests.broker.elastic.test_world import core_jobs
from workloads.errors import ConfigError

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
