"""The SARSA learner by hand where the first tests leave room: its settings, its network, its re-training clock."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.simulate import run_elastic
from broker.elastic.world import ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import core_jobs
from workloads.errors import ConfigError


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
        agent._remember(n, np.full(agent._phi.shape[1], float(n)))
    agent.observe([(1, 0.5)])
    agent.decisions = 3
    assert np.isnan(agent._rewards[:3]).tolist() == [True, False, True]
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
    assert agent._phi[0, 8] == 3.0


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
