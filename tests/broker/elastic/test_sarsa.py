"""The SARSA learner: its pre-training on EDF, its targets by hand, greedy and exploring choices, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.episode import run_episode
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.simulate import run_elastic
from broker.elastic.world import Action, ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import core_jobs
from workloads.errors import ConfigError


def busy(n: int = 400, seed: int = 4):
    rng = np.random.default_rng(seed)
    runtime = np.where(rng.random(n) < 0.7, rng.integers(1, 900, n), rng.integers(900, 20000, n))
    return core_jobs(np.sort(rng.integers(0, 40_000, n)), runtime, rng.integers(0, 3, n))


def test_the_first_decisions_are_the_teachers() -> None:
    jobs = busy()
    config = SarsaConfig(pretrain=150)
    learner = run_elastic(jobs, PoolConfig(4), "sarsa", seed=1, sarsa=config, trim=0)
    teacher = run_elastic(jobs, PoolConfig(4), "edf", trim=0)
    first = learner.jobs.sort_values("start").head(150)
    assert first.index.tolist() == teacher.jobs.sort_values("start").head(150).index.tolist()
    assert learner.jobs["start"].ne(teacher.jobs["start"]).any()  # then the network decides, differently
    assert learner.summary.trainings == config.sweeps + (400 - 150) // config.retrain_every


def test_the_teacher_of_an_elastic_pool_sizes_it_with_the_autoscaler() -> None:
    agent = SarsaAgent(3, True, SarsaConfig(pretrain=10_000, epsilon=0.0))
    jobs = busy(200)
    pool = PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    world = run_episode(ElasticWorld(jobs, pool), 0.5, agent.decide, agent.observe).world
    reference = run_elastic(jobs, pool, "edf", trim=0)
    assert world.start.tolist() == reference.jobs["start"].tolist()


def test_the_targets_are_sarsas_by_hand(monkeypatch) -> None:
    agent = SarsaAgent(1, False, SarsaConfig(eta=0.2, gamma=0.8))
    width = agent._phi.shape[1]
    phi = np.zeros((4, width))
    phi[:, 0] = [1.0, 2.0, 3.0, 4.0]
    for n in range(4):
        agent._remember(n, phi[n])
    agent.decisions = 4
    agent.observe([(0, 1.0), (2, 0.5), (3, 0.25)])  # decision 1's reward is not complete yet
    agent.esn.coef = np.zeros(width)
    agent.esn.coef[0], agent.esn.intercept = 2.0, 1.0  # Q = 2 x + 1: 3, 5, 7, 9
    seen = []
    solve = agent._gram.solve

    def spy(features, targets, alpha):
        seen.append((features.copy(), targets.copy()))
        return solve(features, targets, alpha)

    monkeypatch.setattr(agent._gram, "solve", spy)
    assert agent.train(1) == 2  # decisions 0 and 2; 3 has no next decision yet
    features, targets = seen[0]
    assert features[:, 0].tolist() == [1.0, 3.0]
    # Q_n + 0.2 (r_n + 0.8 Q_n+1 - Q_n): 3 + 0.2 (1 + 4 - 3) = 3.4; 7 + 0.2 (0.5 + 7.2 - 7) = 7.14
    np.testing.assert_allclose(targets, [3.4, 7.14], rtol=1e-12)
    # decision 1's reward arrives: the next training adds it (after 0 and 2) and keeps the others
    agent.observe([(1, 0.0)])
    assert agent.train(1) == 3 and agent._learnt.tolist() == [0, 2, 1] and agent._gram.rows == 3
    assert seen[1][0][:, 0].tolist() == [1.0, 3.0, 2.0]


def test_greedy_takes_the_best_q_and_exploration_draws_among_the_candidates(monkeypatch) -> None:
    # one core busy until 100, jobs 1..3 of three groups wait; after pre-training the network decides
    jobs = core_jobs([0, 1, 2, 3], [100, 10, 20, 30], [0, 1, 2, 0])
    world = ElasticWorld(jobs, PoolConfig(1))
    greedy = SarsaAgent(3, False, SarsaConfig(pretrain=1, epsilon=0.0))
    d = world.advance()
    world.act(greedy.decide(d, world))
    d = world.advance()
    assert d is not None and d.queued.tolist() == [1, 2, 3]
    candidates, sizes = greedy.candidates(d, world)
    assert candidates.tolist() == [1, 2, 3] and sizes is None
    monkeypatch.setattr(greedy.esn, "q", lambda u: np.array([0.1, 0.7, 0.3]))
    assert greedy.decide(d, world).job == 2
    explorer = SarsaAgent(3, False, SarsaConfig(pretrain=1, epsilon=1.0), seed=5)
    explorer.decisions = 1
    picks = {explorer.decide(d, world).job for _ in range(60)}
    assert picks == {1, 2, 3}


def test_elastic_candidates_are_every_slot_job_at_every_allowed_size() -> None:
    jobs = core_jobs([0, 1, 2], [100, 10, 5], [0, 1, 1])
    pool = PoolConfig(1, elastic=True, min_cores=1, max_cores=5, hold_s=60)
    world = ElasticWorld(jobs, pool)
    agent = SarsaAgent(2, True, SarsaConfig(levels=3))
    d = world.advance()
    world.act(Action(0, 1))
    world.kernel.run(world._handlers, until=2.0)
    d = world._decision(2.0)
    assert d is not None and d.resizable and (d.low, d.high) == (2, 5)
    got_jobs, got_sizes = agent.candidates(d, world)
    # levels 1, 3, 5 clipped to [2, 5]: 2, 3, 5; job 1 is the oldest, job 2 the shortest of interactive group 1
    assert got_jobs.tolist() == [1, 1, 1, 2, 2, 2] and got_sizes is not None
    assert got_sizes.tolist() == [2, 3, 5] * 2


def test_same_seed_same_run_and_another_seed_another() -> None:
    jobs = busy(300)
    config = SarsaConfig(pretrain=50, retrain_every=40)
    pool = PoolConfig(3, elastic=True, min_cores=2, max_cores=8, hold_s=600)
    a = run_elastic(jobs, pool, "sarsa", seed=7, sarsa=config, trim=0, validate=True)
    b = run_elastic(jobs, pool, "sarsa", seed=7, sarsa=config, trim=0)
    c = run_elastic(jobs, pool, "sarsa", seed=8, sarsa=config, trim=0)
    assert a.summary == b.summary and a.jobs.equals(b.jobs) and a.instances.equals(b.instances)
    assert not a.jobs["start"].equals(c.jobs["start"])


@pytest.mark.parametrize("kwargs", [{"epsilon": 1.5}, {"gamma": 1.0}, {"eta": 0.0}, {"pretrain": 0},
                                    {"sweeps": 0}, {"retrain_every": 0}, {"levels": 0}])
def test_bad_settings_are_refused(kwargs) -> None:
    with pytest.raises(ConfigError):
        SarsaConfig(**kwargs)


def test_the_papers_settings_are_the_defaults() -> None:
    config = SarsaConfig()
    assert (config.epsilon, config.gamma, config.eta, config.units, config.density, config.readout_density) == (
        0.05, 0.8, 0.2, 100, 0.1, 0.15)
    assert RulePolicy("edf").name == "edf"
