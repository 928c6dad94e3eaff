"""The site's rules by hand where the first tests leave room: the EDF deadline's slope, defaults and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.rules import RulePolicy, pick
from broker.elastic.world import Action, Decision, ElasticWorld, PoolConfig
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
    ({"order": "rr"}, r"^job order must be one of fcfs, sjf, edf, got 'rr'$"),
    ({"explore": 1.5}, r"^need idle_hold_s >= 0 and explore in \[0, 1\], got 900.0, 1.5$"),
])
def test_bad_rules_say_why(kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message):
        RulePolicy(**kwargs)
