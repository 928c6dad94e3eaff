"""The site's rules (:mod:`broker.elastic.rules`) by hand: the EDF deadline's slope, defaults and refusals, and
the autoscaler's exploration below its probability."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.episode import Action
from broker.elastic.rules import RulePolicy, pick
from broker.elastic.world import Decision, ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import core_jobs
from workloads.errors import ConfigError


def test_the_edf_deadline_adds_a_ninth_of_the_run_time() -> None:
    # one core busy until 1000; X (100 s) at 10 and Y (10 s) at 30 wait: deadlines 10 + 100/9 = 21.1 and
    # 30 + 10/9 = 31.1, so X; any slope above 20/90 (as 11/9) would put Y first
    jobs = core_jobs([0, 10, 30], [1000, 100, 10], [0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(1))
    world.advance()
    world.act(Action(0))
    d = world.advance()
    assert d is not None and d.queued.tolist() == [1, 2]
    assert pick("edf", d, world) == 1 and pick("sjf", d, world) == 2


def _decision(size: int, running: int, queued: int, idle_for: float) -> Decision:
    return Decision(0.0, np.arange(queued), running, size, max(30, running + 1), 100, True, idle_for)


def test_the_defaults_fcfs_without_sizing_a_900_s_idle_hold_and_seed_0() -> None:
    world = ElasticWorld(core_jobs([0, 1], [10, 10], [0, 0]), PoolConfig(1))
    policy = RulePolicy()
    assert (policy.order, policy.sizing, policy.explore, policy.name) == ("fcfs", False, 0.0, "fcfs")
    grow = _decision(40, 40, 10, 0.0)
    assert policy.decide(grow, world).cores is None  # no sizing: even a pool that may grow keeps its size
    # 900 s idle without a break is enough to shrink to the demand (45) by default
    assert RulePolicy(sizing=True).decide(_decision(80, 40, 5, 900.0), world).cores == 45
    draws = [[RulePolicy(sizing=True, explore=1.0, **seed).decide(grow, world).cores for _ in range(20)]
             for seed in ({}, {"seed": 0}, {"seed": 1})]
    assert draws[0] == draws[1] != draws[2]


def test_an_idle_hold_of_0_is_allowed() -> None:
    assert RulePolicy(sizing=True, idle_hold_s=0.0).idle_hold_s == 0.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"order": "rr"}, r"^job order must be one of fcfs, sjf, edf, greedy-w, urgent, got 'rr'$"),
    ({"explore": 1.5}, r"^need idle_hold_s >= 0 and explore in \[0, 1\], got 900.0, 1.5$"),
])
def test_bad_rules_say_why(kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message):
        RulePolicy(**kwargs)


# --- hand-worked edges: exploration on the draw -------------------------------------------------------------------
# Where a test places an input exactly on a random draw, the draw is read from an independent
# ``numpy.random.default_rng`` of the same seed (the definition: a connection, an exploration, when the draw is
# *below* the probability).


def test_the_autoscaler_explores_only_below_the_probability() -> None:
    # 35 run, 5 wait on 40 cores: the demand (40) is the size, the autoscaler keeps it. With explore set to
    # exactly the policy's first draw (seed 2: 0.2616121342493164) that draw is not below it: no exploration
    draw = np.random.default_rng(2).random()
    world = ElasticWorld(core_jobs([0], [10], [0]), PoolConfig(1))
    decision = Decision(0.0, np.arange(5), 35, 40, 36, 100, True, 0.0)
    assert RulePolicy(sizing=True, explore=draw, seed=2).decide(decision, world) == Action(0, None)
