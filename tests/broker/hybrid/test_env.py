"""``cloudbroker/Leasing-v0``: Gymnasium's checker, a constant action is the constant-V run, Q-learning through it."""

from __future__ import annotations

import math
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import broker  # noqa: F401 (registers the environments)
from broker.hybrid.env import LeasingEnv
from broker.hybrid.learning import QLearner, rewards_of
from broker.hybrid.policies import LEASING_POLICIES, run_constant, run_leasing
from tests.broker.hybrid.test_world import rigid
from tests.conftest import trace_path
from workloads.errors import ConfigError

KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))


def busy(n: int = 300, seed: int = 3):
    rng = np.random.default_rng(seed)
    return rigid(np.sort(rng.integers(0, 4 * 86400, n)), rng.integers(60, 40000, n), rng.integers(1, 17, n))


def test_check_env_passes_without_a_warning() -> None:
    env = gymnasium.make("cloudbroker/Leasing-v0", trace=KTH, limit_jobs=1500, step_s=21600.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    assert env.action_space == gymnasium.spaces.Discrete(101)  # KTH's 100 nodes: V in 0..100


@pytest.mark.parametrize("cap", [0, 3, 16])
def test_a_constant_action_is_the_constant_v_run(cap: int) -> None:
    jobs = busy()
    env = LeasingEnv(jobs=jobs, nodes=16, step_s=21600.0)
    env.reset(seed=0)
    done, info = False, {}
    while not done:
        _, _, done, truncated, info = env.step(cap)
        assert not truncated
    whole = run_constant(jobs, 16, float(cap))
    assert (info["twt_s"], info["cloud_cpu_s"]) == pytest.approx((whole.summary.twt_s, whole.summary.cloud_cpu_s),
                                                                 rel=1e-12)


@pytest.mark.parametrize("references", ["clones", "runs"])
def test_q_learning_through_the_environment_is_the_built_in_learner(references: str) -> None:
    jobs = busy(250, seed=8)
    env = LeasingEnv(jobs=jobs, nodes=16, step_s=21600.0, evaluate="all", references=references)
    env.reset()
    learner, caps, done, info = QLearner(16), [], False, {}
    while not done:
        cap = learner.greedy()
        _, reward, done, _, info = env.step(cap)
        assert reward == info["balances"][cap] and sorted(info["balances"]) == list(range(17))
        learner.update(rewards_of(info["balances"]))
        caps.append(float(cap))
    built_in = run_leasing(jobs, 16, LEASING_POLICIES.get("qlearning")(16, references=references), step=21600.0)
    assert caps == built_in.summary.caps and np.array_equal(learner.q, built_in.q)
    assert (info["twt_s"], info["cloud_cpu_s"]) == (built_in.summary.twt_s, built_in.summary.cloud_cpu_s)


def test_the_reward_is_the_steps_balance_and_the_observation_by_hand() -> None:
    # 4 nodes: job 0 (4 nodes, 100 s) at 0; jobs 1 and 2 (2 nodes, 50 s) at 10 and 20; one-day steps
    env = LeasingEnv(jobs=rigid([0, 10, 20], [100, 50, 50], [4, 2, 2]), nodes=4, references="clones")
    obs, info = env.reset()
    # nothing waits or runs yet at the first submission (time 0 on the trace's clock: midnight, a Thursday)
    np.testing.assert_allclose(obs, [0, 0, 0, 0, 0, 3 / 7, 0, 0])
    obs, reward, done, _, info = env.step(2)
    # V = 2: job 1 goes out, job 2 waits 40 s for its nodes: balance 100 - 100 x 40 / 170 - 100 x 200 / 200
    assert reward == pytest.approx(-400 / 17) and done and info["twt_s"] == 40.0 and info["cloud_cpu_s"] == 200.0
    assert (info["twt_ref_s"], info["c_ref_s"]) == (170.0, 200.0) and sorted(info["balances"]) == [0, 2]
    # after the day: nothing waits or runs; the clock at 86400 s is midnight of the next day; the last step's
    # wait 40 s and cloud use 200 node-s over 4 x 86400
    np.testing.assert_allclose(obs, [0, 0, 0, 0, 0, 4 / 7, 40 / (4 * 86400), 200 / (4 * 86400)])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    # the default references are the two whole runs: from the start the same references, no V = 0 clone
    runs = LeasingEnv(jobs=rigid([0, 10, 20], [100, 50, 50], [4, 2, 2]), nodes=4)
    runs.reset()
    _, reward, _, _, info = runs.step(2)
    assert reward == pytest.approx(-400 / 17) and sorted(info["balances"]) == [2] and runs.references_name == "runs"


@pytest.mark.parametrize("kwargs", [{"evaluate": "some"}, {"references": "days"}, {"step_s": 0.0},
                                    {"offset_s": 86400.0}, {"nodes": 0}])
def test_bad_settings_are_refused(kwargs) -> None:
    settings = {"jobs": busy(10), "nodes": 16, **kwargs}
    with pytest.raises(ConfigError):
        LeasingEnv(**settings)


def test_an_action_outside_the_space_is_refused() -> None:
    env = LeasingEnv(jobs=busy(10), nodes=16)
    env.reset()
    with pytest.raises(ConfigError, match="outside the action space"):
        env.step(17)
    assert math.isfinite(env.high.sum())


def test_q_learning_through_the_environment_gives_the_clis_run() -> None:
    import json

    from tests.conftest import cloudbroker

    env = gymnasium.make("cloudbroker/Leasing-v0", trace=KTH, limit_jobs=1200, evaluate="all")
    env.reset()
    learner, done, info, caps = QLearner(100), False, {}, []
    while not done:
        caps.append(float(learner.greedy()))
        _, _, done, _, info = env.step(learner.greedy())
        learner.update(rewards_of(info["balances"]))
    run = cloudbroker("leasing", "--trace", KTH, "--limit-jobs", "1200", "--policy", "qlearning", "--json")
    cli = json.loads(run.out)
    assert run.code == 0 and (info["twt_s"], info["cloud_cpu_s"]) == (cli["twt_s"], cli["cloud_cpu_s"])
    assert cli["learning"]["references"] == "runs" and caps == cli["v_per_step"] and len(caps) > 10
