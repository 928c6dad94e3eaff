"""The wait reward (:mod:`broker.elastic.wait`) by hand: three jobs on one core, idle cores on an elastic pool."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.episode import Episode, run_episode
from broker.elastic.metrics import summarize
from broker.elastic.rules import RulePolicy
from broker.elastic.wait import WaitBook, w_lost
from broker.elastic.world import Action, ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import THREE, core_jobs
from workloads.errors import ConfigError


def _run(picks: list[int], jobs=THREE, pool: PoolConfig | None = None, lam: float = 0.5,
         cores: list[int | None] | None = None) -> tuple[list[tuple[int, float]], list[float]]:
    """Drive an episode with the given jobs (and sizes); the rewards of each step and the decision times."""
    episode = Episode(ElasticWorld(jobs, pool or PoolConfig(1)), lam, "wait")
    decision, rewards, times = episode.start(), [], []
    for k, job in enumerate(picks):
        assert decision is not None
        times.append(decision.now)
        decision, got = episode.step(Action(job, None if cores is None else cores[k]))
        rewards += got
    assert decision is None
    return rewards, times


def test_three_jobs_on_one_core_by_hand() -> None:
    # A (submitted 0, runs 100), B (10, 50), C (20, 1000). FCFS: A at 0, B at 100, C at 150.
    rewards, times = _run([0, 1, 2])
    assert times == [0.0, 100.0, 150.0]
    # step 0 -> 100: B waits 0 -> 90 s (W 1 -> 50/140), C 0 -> 80 s (W 1 -> 1000/1080)
    # step 100 -> 150: C waits 80 -> 130 s; step 150 -> the end: nobody waits
    expected = [-(1 - 50 / 140 + 1 - 1000 / 1080), -(1000 / 1080 - 1000 / 1130), 0.0]
    assert [n for n, _ in rewards] == [0, 1, 2]
    assert [r for _, r in rewards] == pytest.approx(expected, abs=1e-15)
    # the losses telescope: the return is sum(W) - N
    assert sum(r for _, r in rewards) == pytest.approx((1 + 50 / 140 + 1000 / 1130) - 3, abs=1e-15)


def test_passing_a_short_job_over_costs_at_the_decision_that_passed_it() -> None:
    # at 100 C (1000 s) instead of B (50 s): B waits 90 -> 1090 s, charged to decision 1, not to B's dispatch
    rewards, times = _run([0, 2, 1])
    assert times == [0.0, 100.0, 1100.0]
    assert rewards[1][1] == pytest.approx(-(50 / 140 - 50 / 1140), abs=1e-15)
    assert rewards[2][1] == 0.0  # B's own dispatch is not charged for its wait
    fcfs, _ = _run([0, 1, 2])
    assert rewards[1][1] < fcfs[1][1] - 0.27  # 0.313 lost against 0.041


def test_a_rigid_pools_reward_ignores_lambda() -> None:
    assert _run([0, 1, 2], lam=0.0)[0] == _run([0, 1, 2], lam=1.0)[0]


def test_idle_cores_of_an_elastic_pool_cost_by_lambda() -> None:
    # one job of 100 s on a pool of 2 cores (hold 0): 100 idle core-seconds, one job of 100 s of work: price 1/100
    jobs = core_jobs([0], [100], [0])
    pool = PoolConfig(2, elastic=True, min_cores=1, max_cores=2, hold_s=0)
    assert _run([0], jobs, pool, lam=0.5)[0] == [(0, -0.5)]
    assert _run([0], jobs, pool, lam=0.25)[0] == [(0, -0.75)]
    assert _run([0], jobs, pool, lam=1.0)[0] == [(0, 0.0)]
    assert _run([0], jobs, pool, lam=0.5, cores=[1])[0] == [(0, 0.0)]  # shrunk to the one job: nothing idle


def test_a_jobs_losses_over_steps_add_up_to_its_loss() -> None:
    runtime, submit = np.array([0.0, 10.0, 600.0]), np.array([5.0, 5.0, 5.0])
    whole = w_lost(runtime, submit, 0.0, 105.0)
    parts = w_lost(runtime, submit, 0.0, 50.0) + w_lost(runtime, submit, 50.0, 105.0)
    np.testing.assert_allclose(parts, whole, atol=1e-15)
    # a 0-second job loses all of its W in its first instant of wait, nothing after
    assert whole.tolist() == pytest.approx([1.0, 1 - 10 / 110, 1 - 600 / 700])
    assert w_lost(runtime, submit, 50.0, 105.0)[0] == 0.0


def test_a_step_with_no_time_costs_nothing() -> None:
    book = WaitBook(np.array([10.0]), np.array([0.0]), 0.5, elastic=False)
    assert book.charge(5.0, 5.0, np.array([0]), 0.0) == (0, 0.0)


@pytest.mark.parametrize(("args", "match"), [
    ((3.0, 2.0, np.array([0]), 0.0), "a step runs forward"),
    ((0.0, 2.0, np.array([0]), -1.0), "a step runs forward"),
])
def test_a_step_backwards_is_refused(args, match) -> None:
    book = WaitBook(np.array([10.0]), np.array([0.0]), 0.5, elastic=True)
    with pytest.raises(ValueError, match=match):
        book.charge(*args)


@pytest.mark.parametrize("lam", [-0.1, 1.1, float("nan")])
def test_lambda_outside_zero_one_is_refused(lam: float) -> None:
    with pytest.raises(ConfigError, match="lambda must lie in"):
        WaitBook(np.array([10.0]), np.array([0.0]), lam, elastic=True)


def test_an_unknown_reward_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^reward must be one of paper, wait, got 'late'$"):
        Episode(ElasticWorld(THREE, PoolConfig(1)), 0.5, "late")  # type: ignore[arg-type]


def test_a_rule_runs_the_same_schedule_under_either_reward() -> None:
    paper = run_episode(ElasticWorld(THREE, PoolConfig(1)), 0.5, RulePolicy("sjf").decide).world
    wait = run_episode(ElasticWorld(THREE, PoolConfig(1)), 0.5, RulePolicy("sjf").decide, reward="wait").world
    assert paper.start.tolist() == wait.start.tolist()


def test_the_share_of_interactive_picks_when_both_classes_wait_by_hand() -> None:
    # at 100 B (interactive) and C (batch) wait: the only decision with both classes waiting
    for picks, share in (([0, 1, 2], 1.0), ([0, 2, 1], 0.0)):
        episode = Episode(ElasticWorld(THREE, PoolConfig(1)), 0.5, "wait")
        decision = episode.start()
        for job in picks:
            assert decision is not None
            decision, _ = episode.step(Action(job))
        summary = summarize(episode.world, policy="hand", lam=0.5, trim=0).summary
        assert (episode.world.mixed, summary.share_interactive_when_both) == (1, share)
    one = summarize(run_episode(ElasticWorld(core_jobs([0], [10], [0]), PoolConfig(1)), 0.5,
                                RulePolicy("fcfs").decide).world, policy="fcfs", lam=0.5, trim=0).summary
    assert one.share_interactive_when_both is None
    assert one.undefined["share_interactive_when_both"] == "no decision had both classes waiting"
