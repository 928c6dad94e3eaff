"""The policy registry and ``run_elastic``'s defaults (:mod:`broker.elastic.simulate`) by hand."""

from __future__ import annotations

import numpy as np
import pytest

import broker.elastic.world as world_module
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.simulate import ELASTIC_POLICIES, _registry, run_elastic
from broker.elastic.validate import ElasticValidator
from broker.elastic.world import PoolConfig
from broker.sim.recorder import Recorder
from tests.broker.elastic.test_world import THREE, core_jobs
from workloads.errors import ConfigError


def test_a_fresh_registry_names_and_builds_every_policy() -> None:
    reg = _registry()  # the module's registry is built at import: build one under the test
    assert reg.names() == ELASTIC_POLICIES.names() == ["fcfs", "sjf", "edf", "greedy-w", "urgent", "threshold", "sarsa"]
    for order in ("fcfs", "sjf", "edf", "greedy-w", "urgent"):
        rigid, elastic = reg.get(order)(3, False), reg.get(order)(3, True)
        assert isinstance(rigid, RulePolicy) and (rigid.order, rigid.sizing, rigid.name) == (order, False, order)
        assert (elastic.order, elastic.sizing, elastic.name) == (order, True, f"{order}+threshold")
    threshold = reg.get("threshold")(3, True)
    assert isinstance(threshold, RulePolicy) and (threshold.order, threshold.sizing) == ("fcfs", True)
    with pytest.raises(ConfigError, match=r"^the threshold autoscaler sizes an elastic pool: use --mode elastic "
                                          r"\(or fcfs on a rigid one\)$"):
        reg.get("threshold")(3, False)
    learner = reg.get("sarsa")(2, True, config=SarsaConfig(units=10))
    assert isinstance(learner, SarsaAgent) and learner.elastic and learner.esn.units == 10
    with pytest.raises(KeyError, match="unknown elastic policy 'lifo'"):
        reg.get("lifo")


def test_the_learner_is_seeded_0_by_default() -> None:
    small = SarsaConfig(units=20)
    default = ELASTIC_POLICIES.get("sarsa")(2, False, config=small)
    assert np.array_equal(default.esn.w, SarsaAgent(2, False, small, seed=0).esn.w)
    assert not np.array_equal(default.esn.w, SarsaAgent(2, False, small, seed=1).esn.w)


def test_run_elastic_defaults_fcfs_seed_0_and_no_validation(monkeypatch) -> None:
    built = []

    class Counting(ElasticValidator):
        def __init__(self, world) -> None:
            built.append(world)
            super().__init__(world)

    monkeypatch.setattr(world_module, "ElasticValidator", Counting)
    result = run_elastic(THREE, PoolConfig(1), trim=0)
    assert result.summary.policy == "fcfs" and result.summary.trainings == 0 and built == []
    assert result.summary.lam == 0.5 and run_elastic(THREE, PoolConfig(1), lam=0.25, trim=0).summary.lam == 0.25
    run_elastic(THREE, PoolConfig(1), trim=0, validate=True)
    assert len(built) == 1


def test_run_elastic_seeds_the_learner_with_0_by_default() -> None:
    # one core, 60 jobs, half of the learner's decisions at random after 10 taught ones: the seed shows
    rng = np.random.default_rng(2)
    jobs = core_jobs(np.sort(rng.integers(0, 3000, 60)), rng.integers(1, 200, 60), rng.integers(0, 2, 60))
    config = SarsaConfig(pretrain=10, retrain_every=10, epsilon=0.5, units=20)
    runs = [run_elastic(jobs, PoolConfig(1), "sarsa", sarsa=config, trim=0, **seed).jobs["start"].tolist()
            for seed in ({}, {"seed": 0}, {"seed": 1})]
    assert runs[0] == runs[1] != runs[2]


def test_run_elastic_reports_progress_to_its_recorder() -> None:
    seen = []
    run_elastic(THREE, PoolConfig(1), trim=0, recorder=Recorder(progress=lambda d, t: seen.append((d, t)), every=2))
    assert seen == [(2, 3), (3, 3)]  # every second job, and the last


def test_run_elastic_leaves_out_500_jobs_at_each_end_by_default() -> None:
    n = 1001
    assert run_elastic(core_jobs(np.arange(n), np.ones(n), np.zeros(n)), PoolConfig(1)).summary.jobs_counted == 1
