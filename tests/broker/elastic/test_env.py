"""``cloudbroker/Elastic-v0``: registered by ``import broker``, passes Gymnasium's checker, the policies' own step."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import broker  # noqa: F401 (registers the environments)
from broker.elastic.env import ElasticEnv
from broker.elastic.rules import RulePolicy
from broker.elastic.simulate import run_elastic
from broker.elastic.world import PoolConfig
from tests.broker.elastic.test_sarsa import busy
from tests.conftest import REPO_ROOT, trace_path
from workloads.errors import ConfigError


@pytest.mark.parametrize("mode", ["rigid", "elastic"])
def test_check_env_passes_without_a_warning(mode: str) -> None:
    env = gymnasium.make("cloudbroker/Elastic-v0", trace=str(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz")), mode=mode,
                         limit_jobs=2000)
    with pytest.warns() as caught:
        check_env(env.unwrapped)
        import warnings

        warnings.warn("sentinel", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["sentinel"]


def test_registered_on_import_without_importing_gymnasium() -> None:
    code = ("import sys, broker; assert 'gymnasium' not in sys.modules and 'numpy' not in sys.modules; "
            "import gymnasium; assert 'cloudbroker/Elastic-v0' in gymnasium.registry; "
            "import gymnasium as g2; print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    after = subprocess.run([sys.executable, "-c", "import gymnasium, broker; "
                            "print('cloudbroker/Elastic-v0' in gymnasium.registry)"],
                           capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    assert after.stdout.strip() == "True", after.stderr


def _slot_of(env: ElasticEnv, job: int) -> int:
    from broker.elastic.descriptors import slots

    assert env.episode is not None and env.episode.decision is not None
    return int(np.flatnonzero(slots(env.episode.world, env.episode.decision) == job)[0])


@pytest.mark.parametrize("order", ["fcfs", "sjf"])
def test_an_agent_through_the_environment_gets_the_policys_run(order: str) -> None:
    # a rule that picks the oldest / shortest job takes a slot every time: the environment's episode is the run's
    jobs = busy(300)
    env = ElasticEnv(jobs=jobs, mode="rigid", cores=3, lam=1.0)
    env.reset(seed=0)
    rule, total, steps, done = RulePolicy(order), 0.0, 0, False
    while not done:
        assert env.episode is not None and env.episode.decision is not None
        job = rule.decide(env.episode.decision, env.episode.world).job
        _, reward, done, truncated, info = env.step(_slot_of(env, job))
        assert not truncated and not info["invalid_action"] and info["job"] == job
        total, steps = total + reward, steps + 1
    reference = run_elastic(jobs, PoolConfig(3), order, lam=1.0, trim=0)
    assert env.episode is not None
    assert env.episode.world.start.tolist() == reference.jobs["start"].tolist() and steps == 300
    # with lambda = 1 the rewards are the jobs' responsiveness, each paid once
    assert total == pytest.approx(reference.jobs["w"].sum(), rel=1e-12)


def test_an_empty_slot_runs_the_oldest_job_and_says_so() -> None:
    env = ElasticEnv(jobs=busy(50), mode="rigid", cores=2)
    _, info = env.reset()
    assert env.episode is not None and env.episode.decision is not None
    empty = int(np.flatnonzero(info["action_mask"] == 0)[0])
    oldest = int(env.episode.decision.queued[0])
    _, _, _, _, info = env.step(empty)
    assert info["invalid_action"] and info["job"] == oldest
    with pytest.raises(ConfigError, match="outside the action space"):
        env.step(env.n_slots)


def test_the_observation_by_hand() -> None:
    from tests.broker.elastic.test_world import THREE

    env = ElasticEnv(jobs=THREE, mode="elastic", cores=1, min_cores=1, max_cores=3, hold_s=60, levels=3)
    obs, info = env.reset()
    # state: nothing runs, no backlog but job 0 itself (100 s), one idle core of one; shares: group 0 alone;
    # size 1 of nominal 1, may change; slots: 2 kinds x 2 classes x 2 groups = 8, job 0 in "oldest, interactive,
    # group 0" and "shortest, interactive, group 0"
    from broker.elastic.descriptors import scale_time

    head = [0.0, 0.0, scale_time(100.0), 1.0, 1.0, 0.0, 1.0, 1.0]
    table = np.zeros((8, 3))
    table[[2, 6]] = [1.0, scale_time(100.0), 0.0]
    np.testing.assert_allclose(obs, np.concatenate([head, table.ravel()]))
    assert info["action_mask"].tolist() == [0, 0, 1, 0, 0, 0, 1, 0]
    assert env.action_space == gymnasium.spaces.MultiDiscrete([8, 3])
    obs, reward, done, _, info = env.step(np.array([2, 2]))  # job 0, size level 2 = 3 cores
    assert env.episode is not None and env.episode.world.size == 3 and reward == 0.0 and not done


def test_a_terminated_episode_needs_a_reset() -> None:
    env = ElasticEnv(jobs=busy(5), mode="rigid", cores=5)
    env.reset()
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(info_mask(env))[0]))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def info_mask(env: ElasticEnv) -> np.ndarray:
    from broker.elastic.descriptors import slots

    assert env.episode is not None and env.episode.decision is not None
    return slots(env.episode.world, env.episode.decision) >= 0


@pytest.mark.parametrize("kwargs", [{"mode": "fixed"}, {"trace": "x", "jobs": busy(3)}, {"levels": 0}])
def test_bad_settings_are_refused(kwargs) -> None:
    settings = {"jobs": busy(3), **kwargs}
    if "trace" in kwargs:
        settings["jobs"] = kwargs["jobs"]
    with pytest.raises(ConfigError):
        ElasticEnv(**settings)
