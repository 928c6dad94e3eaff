"""SARSA on the wait reward (:mod:`broker.elastic.waitsarsa`): its teacher, its size decisions and their rewards,
candidate sizes by hand, a pool without a ceiling, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from broker.elastic.episode import run_episode
from broker.elastic.sarsa import SarsaConfig
from broker.elastic.simulate import run_elastic
from broker.elastic.waitsarsa import SizeConfig, WaitSarsaAgent
from broker.elastic.world import Decision, ElasticWorld, PoolConfig
from tests.broker.elastic.test_sarsa import busy
from workloads.errors import ConfigError

SMALL = SarsaConfig(pretrain=100, retrain_every=100, units=20)


def test_the_first_decisions_are_edfs_and_then_the_network_decides() -> None:
    jobs = busy(300)
    learner = run_elastic(jobs, PoolConfig(4), "sarsa", seed=1, sarsa=SMALL, trim=0, reward="wait")
    teacher = run_elastic(jobs, PoolConfig(4), "edf", trim=0)
    first = learner.jobs.sort_values("start", kind="stable").head(100)
    assert first.index.tolist() == teacher.jobs.sort_values("start", kind="stable").head(100).index.tolist()
    assert learner.jobs["start"].ne(teacher.jobs["start"]).any()
    assert learner.summary.reward == "wait" and learner.summary.trainings == SMALL.sweeps + (300 - 100) // 100


def test_same_seed_same_run_and_another_seed_another() -> None:
    jobs, pool = busy(300), PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    runs = [run_elastic(jobs, pool, "sarsa", seed=s, sarsa=SMALL, trim=0, reward="wait",
                        sizing=SizeConfig(size_pretrain=5, size_retrain_every=5)) for s in (3, 3, 4)]
    assert runs[0].jobs.equals(runs[1].jobs) and runs[0].instances.equals(runs[1].instances)
    assert not runs[0].jobs.equals(runs[2].jobs)


def _decision(running: int, queued: int, size: int, low: int, high: int, now: float = 0.0) -> Decision:
    return Decision(now, np.arange(queued), running, size, low, high, True, 0.0)


def test_candidate_sizes_follow_the_demand_by_hand() -> None:
    agent = WaitSarsaAgent(2, True, SMALL)
    # demand 10 running + 5 waiting = 15: ceil(15 x (1, 1.1, 1.25, 1.5, 2)) = 15, 17, 19, 23, 30; and 12 (keep)
    assert agent.size_candidates(_decision(10, 5, 12, 11, 100)).tolist() == [12, 15, 17, 19, 23, 30]
    # clipped to what the decision allows, duplicates merged
    assert agent.size_candidates(_decision(10, 5, 12, 11, 18)).tolist() == [12, 15, 17, 18]
    assert agent.size_candidates(_decision(1, 1, 40, 30, 100)).tolist() == [30, 40]


def test_a_size_decision_is_taken_when_the_hold_is_over_or_the_demand_exceeds_the_pool() -> None:
    jobs = busy(200)
    pool = PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    agent = WaitSarsaAgent(3, True, SMALL, SizeConfig(size_pretrain=10_000, size_explore=0.0), hold_s=300)
    times: list[tuple[float, int, int]] = []
    original = agent.size_candidates

    def spy(decision: Decision) -> np.ndarray:
        times.append((decision.now, decision.running + len(decision.queued), decision.size))
        return original(decision)

    agent.size_candidates = spy  # type: ignore[method-assign]
    run_episode(ElasticWorld(jobs, pool), 0.5, agent.decide, agent.observe, "wait")
    assert agent.size_decisions == len(times) > 5
    for (before, _, _), (now, demand, size) in itertools.pairwise(times):
        assert now >= before + 300 or demand > size


def test_a_size_decisions_reward_is_the_sum_of_its_steps() -> None:
    jobs = busy(200)
    pool = PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    agent = WaitSarsaAgent(3, True, SMALL, SizeConfig(size_pretrain=10_000), hold_s=300, seed=2)
    episode = run_episode(ElasticWorld(jobs, pool), 0.5, agent.decide, agent.observe, "wait")
    book = episode.waits
    assert book is not None
    steps = np.array([book.reward(n) for n in range(book.count)])
    sized = agent.size_memory.rewards[:agent.size_decisions]
    # every step's reward went to the size decision open at it; before the first, none
    assert sized.sum() == pytest.approx(steps[agent.first_size_step:].sum())
    assert np.all(sized <= 0)


def test_a_pool_without_a_ceiling_is_sized_by_the_demand() -> None:
    jobs = busy(300)
    pool = PoolConfig(4, elastic=True, min_cores=2, hold_s=300, no_ceiling=True)
    result = run_elastic(jobs, pool, "sarsa", seed=1, sarsa=SMALL, trim=0, reward="wait", validate=True,
                         sizing=SizeConfig(size_pretrain=5, size_retrain_every=5))
    assert result.summary.max_cores is None and result.summary.peak_cores > 4
    assert result.summary.size_demand_corr is not None


def test_the_papers_learner_needs_a_ceiling() -> None:
    pool = PoolConfig(4, elastic=True, min_cores=2, no_ceiling=True)
    with pytest.raises(ConfigError, match=r"the paper's learner spreads its pool sizes over \[min_cores, max_cores\]"):
        run_elastic(busy(50), pool, "sarsa", reward="paper")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"headroom": ()}, "headroom needs at least one"),
    ({"headroom": (-0.1,)}, "headroom needs at least one finite value >= 0"),
    ({"size_gamma": 1.0}, r"size_gamma in \[0, 1\)"),
    ({"size_explore": 1.5}, r"size_explore in \[0, 1\]"),
    ({"size_pretrain": 0}, "must be >= 1"),
])
def test_bad_size_settings_are_refused(kwargs, match) -> None:
    with pytest.raises(ConfigError, match=match):
        SizeConfig(**kwargs)


def test_an_unknown_reward_is_refused_before_any_run() -> None:
    with pytest.raises(ConfigError, match=r"^reward must be one of paper, wait, got 'late'$"):
        run_elastic(busy(10), PoolConfig(4), "fcfs", reward="late")  # type: ignore[arg-type]
