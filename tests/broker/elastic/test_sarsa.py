"""The SARSA learner: its pre-training on EDF, its targets by hand, greedy and exploring choices, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.episode import Action, run_episode
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.simulate import run_elastic
from broker.elastic.world import Decision, ElasticWorld, PoolConfig
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
    width = agent.memory.phi.shape[1]
    phi = np.zeros((4, width))
    phi[:, 0] = [1.0, 2.0, 3.0, 4.0]
    for n in range(4):
        agent.memory.remember(n, phi[n])
    agent.decisions = 4
    agent.observe([(0, 1.0), (2, 0.5), (3, 0.25)])  # decision 1's reward is not complete yet
    agent.esn.coef = np.zeros(width)
    agent.esn.coef[0], agent.esn.intercept = 2.0, 1.0  # Q = 2 x + 1: 3, 5, 7, 9
    seen = []
    solve = agent.memory.gram.solve

    def spy(features, targets, alpha):
        seen.append((features.copy(), targets.copy()))
        return solve(features, targets, alpha)

    monkeypatch.setattr(agent.memory.gram, "solve", spy)
    assert agent.train(1) == 2  # decisions 0 and 2; 3 has no next decision yet
    features, targets = seen[0]
    assert features[:, 0].tolist() == [1.0, 3.0]
    # Q_n + 0.2 (r_n + 0.8 Q_n+1 - Q_n): 3 + 0.2 (1 + 4 - 3) = 3.4; 7 + 0.2 (0.5 + 7.2 - 7) = 7.14
    np.testing.assert_allclose(targets, [3.4, 7.14], rtol=1e-12)
    # decision 1's reward arrives: the next training adds it (after 0 and 2) and keeps the others
    agent.observe([(1, 0.0)])
    assert agent.train(1) == 3 and agent.memory.learnt.tolist() == [0, 2, 1] and agent.memory.gram.rows == 3
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


# --- by hand: the settings, the network, the re-training clock ----------------------------------------------------


def test_the_settings_edges_are_allowed_and_the_refusal_says_why() -> None:
    edge = SarsaConfig(epsilon=1.0, gamma=0.0, eta=1.0, pretrain=1, sweeps=1, retrain_every=1, levels=1)
    assert edge.to_dict() == {"epsilon": 1.0, "gamma": 0.0, "eta": 1.0, "units": 100, "density": 0.1,
                              "readout_density": 0.15, "spectral_radius": 0.9, "ridge": 0.01, "pretrain": 1,
                              "sweeps": 1, "retrain_every": 1, "levels": 1}
    with pytest.raises(ConfigError, match=r"eta in \(0, 1\], got 0.05, 0.8, 1.5$"):
        SarsaConfig(eta=1.5)
    with pytest.raises(ConfigError, match=r"^SARSA needs pretrain, sweeps, retrain_every and levels >= 1$"):
        SarsaConfig(levels=0)


def test_the_network_and_the_teacher_follow_the_settings_and_the_seed() -> None:
    config = SarsaConfig(epsilon=0.3, units=20, density=1.0, readout_density=0.5, spectral_radius=0.5, ridge=0.1)
    agent = SarsaAgent(2, False, config, seed=3)
    esn = agent.esn
    assert (esn.units, np.count_nonzero(esn.w), len(esn.read), esn.ridge) == (20, 400, 10, 0.1)
    assert max(abs(np.linalg.eigvals(esn.w))) == pytest.approx(0.5, rel=1e-9)
    assert agent.teacher.explore == 0.3 and agent.teacher.order == "edf" and not agent.teacher.sizing
    # the same seed (an int or its SeedSequence) gives the same network and the same draws
    twins = [SarsaAgent(2, False, config, seed=3), SarsaAgent(2, False, config, seed=np.random.SeedSequence(3))]
    for twin in twins:
        assert np.array_equal(twin.esn.w, esn.w) and np.array_equal(twin.esn.w_in, esn.w_in)
    assert twins[0].teacher.rng.random() == twins[1].teacher.rng.random() == agent.teacher.rng.random()
    # and another seed other draws: the teacher explores sizes by the run's seed
    other = SarsaAgent(2, False, config, seed=4)
    assert other.teacher.rng.random() != SarsaAgent(2, False, config, seed=3).teacher.rng.random()
    assert np.array_equal(SarsaAgent(2, False, config).esn.w, SarsaAgent(2, False, config, seed=0).esn.w)


def test_a_reward_is_unknown_until_observed_and_one_transition_trains_once() -> None:
    agent = SarsaAgent(1, False, SarsaConfig(units=10))
    for n in range(3):
        agent.memory.remember(n, np.full(agent.memory.phi.shape[1], float(n)))
    agent.observe([(1, 0.5)])
    agent.decisions = 3
    assert np.isnan(agent.memory.rewards[:3]).tolist() == [True, False, True]
    assert agent.train(1) == 1 and agent.trainings == 1  # only decision 1 is complete
    fresh = SarsaAgent(1, False, SarsaConfig(units=10))
    assert fresh.train(3) == 0 and fresh.trainings == 0  # nothing to learn from: no re-training


def test_the_teachers_pool_size_is_what_the_network_sees() -> None:
    # three jobs at 0 on one core of 1..4: the autoscaler grows the pool to the demand, 3 cores
    world = ElasticWorld(core_jobs([0, 0, 0], [10, 10, 10], [0, 0, 0]),
                         PoolConfig(1, elastic=True, min_cores=1, max_cores=4, hold_s=0.0))
    agent = SarsaAgent(1, True, SarsaConfig(epsilon=0.0, units=10))
    d = world.advance()
    assert d is not None and agent.decide(d, world).cores == 3
    # the inputs: 4 state values, 1 share, interactive, 1 group, estimate, then cores / nominal (3 / 1) ninth
    assert agent.memory.phi[0, 8] == 3.0


def test_the_readout_is_retrained_every_retrain_every_decisions_after_pretraining() -> None:
    # 20 jobs of 10 s, 100 s apart, on one core: each job's reward is complete before the next decision;
    # 5 sweeps at decision 5, then one re-training at decisions 8, 11, 14, 17 and 20
    jobs = core_jobs(100.0 * np.arange(20), np.full(20, 10.0), np.zeros(20))
    config = SarsaConfig(pretrain=5, retrain_every=3, units=10)
    assert run_elastic(jobs, PoolConfig(1), "sarsa", sarsa=config, trim=0).summary.trainings == 10


def test_job_0_is_a_candidate() -> None:
    world = ElasticWorld(core_jobs([0, 0], [10, 5], [0, 0]), PoolConfig(1))
    d = world.advance()
    assert d is not None
    jobs, sizes = SarsaAgent(1, False, SarsaConfig(units=10)).candidates(d, world)
    assert jobs.tolist() == [0, 1] and sizes is None  # the oldest and the shortest


# --- hand-worked edges: exploration on the draw, resizes, transitions ---------------------------------------------
# Where a test places an input exactly on a random draw, the draw is read from an independent
# ``numpy.random.default_rng`` of the same seed (the definition: a connection, an exploration, when the draw is
# *below* the probability).


def _past_pretraining(elastic: bool, **config) -> SarsaAgent:
    agent = SarsaAgent(1, elastic, SarsaConfig(units=10, pretrain=1, retrain_every=1000, **config))
    agent.decisions = 1  # the teacher's decision is over: the network decides
    return agent


def test_the_learner_explores_only_below_epsilon() -> None:
    # j0 (10 s) and j1 (5 s) wait on one core: the candidates are [0, 1]; Q = -(scaled estimate) prefers j1.
    # Epsilon is exactly the first draw of seed 2 (0.2616121342493164): not below it, so greedy (a random pick
    # would draw index 0, j0)
    world = ElasticWorld(core_jobs([0, 0], [10, 5], [0, 0]), PoolConfig(1))
    d = world.advance()
    assert d is not None
    draw = np.random.default_rng(2).random()
    agent = _past_pretraining(False, epsilon=draw)
    agent.rng = np.random.default_rng(2)
    agent.esn.coef = np.zeros(len(agent.esn.coef))
    agent.esn.coef[7] = -1.0  # the inputs: 4 state values, 1 share, interactive, 1 group, then the estimate
    assert agent.decide(d, world) == Action(1, None)


def _elastic_start() -> tuple[ElasticWorld, Decision]:
    # j0 (10 s) and j1 (5 s) at 0 on an elastic pool of 1 core, 1..4: the pool may take 1, 2, 3 or 4 cores
    world = ElasticWorld(core_jobs([0, 0], [10, 5], [0, 0]),
                         PoolConfig(1, elastic=True, min_cores=1, max_cores=4, hold_s=0.0))
    d = world.advance()
    assert d is not None and (d.size, d.low, d.high, d.resizable) == (1, 1, 4, True)
    return world, d


@pytest.mark.parametrize(("slope", "expected"), [(1.0, Action(0, 4)), (-1.0, Action(0, None))])
def test_the_learner_resizes_only_to_another_size(slope, expected) -> None:
    # Q = slope x cores / nominal (the ninth input), the same for both jobs (ties: the first, j0): growing
    # takes 4 cores; shrinking takes the least, 1, the size the pool has: no resize, cores None
    world, d = _elastic_start()
    agent = _past_pretraining(True, epsilon=0.0, levels=4)
    agent.esn.coef = np.zeros(len(agent.esn.coef))
    agent.esn.coef[8] = slope
    assert agent.decide(d, world) == expected


def test_candidate_sizes_follow_the_decision() -> None:
    world, _ = _elastic_start()
    agent = SarsaAgent(1, True, SarsaConfig(units=10, levels=4))  # levels 1, 2, 3, 4 over [1, 4]
    # a decision that says the pool must stay at 2 offers 2 only, whatever range it carries
    stay = Decision(0.0, np.array([0, 1]), 0, 2, 1, 4, False, 0.0)
    jobs, sizes = agent.candidates(stay, world)
    assert jobs.tolist() == [0, 1] and sizes is not None and sizes.tolist() == [2, 2]
    # a decision allowing [1, 2] (below the pool's ceiling of 4) offers 1 and 2
    capped = Decision(0.0, np.array([0, 1]), 0, 2, 1, 2, True, 0.0)
    jobs, sizes = agent.candidates(capped, world)
    assert jobs.tolist() == [0, 0, 1, 1] and sizes is not None and sizes.tolist() == [1, 2, 1, 2]


def test_two_decisions_make_one_transition() -> None:
    # decision 0's reward known and decision 1 taken: transition 0 is complete, one re-training
    agent = SarsaAgent(1, False, SarsaConfig(units=10))
    for n in range(2):
        agent.memory.remember(n, np.full(agent.memory.phi.shape[1], float(n)))
    agent.decisions = 2
    agent.observe([(0, 0.5)])
    assert agent.train(1) == 1 and agent.trainings == 1
