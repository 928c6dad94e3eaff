"""``cloudbroker/Elastic-v0``: registered by ``import broker``, passes Gymnasium's checker, the policies' own step."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import broker  # noqa: F401 (registers the environments)
from broker.elastic.descriptors import scale_time
from broker.elastic.env import ElasticEnv
from broker.elastic.rules import RulePolicy
from broker.elastic.simulate import run_elastic
from broker.elastic.world import PoolConfig
from tests.broker.elastic.test_sarsa import busy
from tests.broker.elastic.test_world import THREE
from tests.conftest import REPO_ROOT, trace_path
from tests.workloads.test_swf import job_line, write_swf
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


# --- by hand: the defaults, bounds, observations and infos --------------------------------------------------------


def test_the_defaults_are_the_papers_rigid_pool() -> None:
    env = ElasticEnv(jobs=THREE)
    assert env.pool == PoolConfig(81, elastic=False, min_cores=30, hold_s=900.0, estimate="oracle")
    assert env.action_space == gymnasium.spaces.Discrete(8) and env.sizes.tolist() == [81]
    elastic = ElasticEnv(jobs=THREE, mode="elastic")
    # 17 levels over [30, 162] (see test_descriptors)
    assert elastic.sizes.tolist() == [30, 38, 46, 55, 63, 71, 80, 88, 96, 104, 112, 121, 129, 137, 146, 154, 162]
    assert elastic.action_space == gymnasium.spaces.MultiDiscrete([8, 17])
    held = ElasticEnv(jobs=THREE, hold_s=60.0, estimate="median")
    assert (held.pool.hold_s, held.pool.estimate) == (60.0, "median")
    one = ElasticEnv(jobs=THREE, mode="elastic", cores=1, min_cores=1, max_cores=3, levels=1)
    assert one.sizes.tolist() == [1] and one.action_space == gymnasium.spaces.MultiDiscrete([8, 1])


def test_the_observation_bounds_by_hand() -> None:
    env = ElasticEnv(jobs=THREE, mode="elastic", cores=2, min_cores=1, max_cores=4)
    # three times, idle cores over nominal (at most 4 / 2), two shares, size over nominal, resizable; 8 slots
    head = [10.0, 10.0, 10.0, 2.0, 1.0, 1.0, 2.0, 1.0]
    np.testing.assert_array_equal(env.observation_space.high, head + [1.0, 10.0, 10.0] * 8)
    assert env.observation_space.low.tolist() == [0.0] * 32


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"jobs": THREE, "mode": "fixed"}, r"^mode must be 'rigid' or 'elastic', got 'fixed'$"),
    ({}, r"^give a trace or jobs, not both$"),
    ({"jobs": THREE, "limit_jobs": 0}, r"^the environment needs at least one job$"),
    ({"jobs": THREE, "mode": "elastic", "levels": 0}, r"^levels must be >= 1, got 0$"),
])
def test_the_refusals_say_why(kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message):
        ElasticEnv(**kwargs)


def test_a_step_before_reset_is_refused() -> None:
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)"):
        ElasticEnv(jobs=THREE).step(0)


def test_a_trace_file_its_origin_parallel_jobs_and_limit(tmp_path) -> None:
    # job 1 ran on 2 processors, job 2 on 1: three one-core jobs expanded, two with one core each
    lines = [job_line(1, allocated_procs="2", group_id="5"), job_line(2, allocated_procs="1", group_id="5")]
    dated = write_swf(tmp_path, "dated.swf", ["; UnixStartTime: 1000000000", *lines], compress=False)
    undated = write_swf(tmp_path, "undated.swf", lines, compress=False)
    expanded = ElasticEnv(str(dated))
    assert len(expanded.jobs) == 3 and expanded.jobs.origin == 1_000_000_000.0
    assert len(ElasticEnv(str(dated), parallel="one").jobs) == 2
    assert len(ElasticEnv(str(dated), limit_jobs=2).jobs) == 2
    assert ElasticEnv(str(undated)).jobs.origin == 0.0
    with pytest.raises(ConfigError, match="not both"):
        ElasticEnv(str(dated), jobs=THREE)


def test_a_rigid_step_by_hand() -> None:
    # THREE on one core: j0 (group 0, 100 s) at 0; j1 (group 1, 50 s) at 10 and j2 (group 0, 1000 s) at 20 wait
    env = ElasticEnv(jobs=THREE, cores=1)
    _, info = env.reset()
    # j0 is interactive (100 s < 900) of group 0: key 1 x 2 + 0 = 2, in slots 2 and 4 + 2
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].tolist() == [0, 0, 1, 0, 0, 0, 1, 0]
    assert (info["rewards"], info["invalid_action"], info["job"], info["now"]) == ([], False, -1, 0.0)
    obs, reward, done, truncated, info = env.step(2)
    # at 100 j0 ends: the core is idle (1 of nominal 1), j1 and j2 wait (half of the queue each, backlog 1050)
    head = [0.0, 0.0, scale_time(1050.0), 1.0, 0.5, 0.5, 1.0, 0.0]
    table = np.zeros((8, 3))
    table[[0, 4]] = [1.0, scale_time(1000.0), scale_time(80.0)]  # j2: batch, group 0 (key 0), waited 80 s
    table[[3, 7]] = [1.0, scale_time(50.0), scale_time(90.0)]  # j1: interactive, group 1 (key 3), waited 90 s
    np.testing.assert_allclose(obs, np.concatenate([head, table.ravel()]), rtol=1e-12)
    # decision 0: W = 1 (no wait); F = 1 - (50/1150) / (1100/1150) = 21/22 with lambda 0.5
    assert (done, truncated, info["job"], info["invalid_action"], info["now"]) == (False, False, 0, False, 100.0)
    assert [n for n, _ in info["rewards"]] == [0] and info["rewards"][0][1] == pytest.approx(0.5 + 0.5 * 21 / 22)
    assert reward == pytest.approx(0.5 + 0.5 * 21 / 22)
    assert info["action_mask"].tolist() == [1, 0, 0, 1, 1, 0, 0, 1]


def test_an_elastic_step_takes_the_slot_then_the_level_and_clips_it() -> None:
    env = ElasticEnv(jobs=THREE, mode="elastic", cores=1, min_cores=1, max_cores=3, hold_s=0.0, levels=3)
    assert env.sizes.tolist() == [1, 2, 3]
    env.reset()
    _, _, _, _, info = env.step(np.array([2, 0]))  # slot 2 is j0; level 0 keeps one core
    assert not info["invalid_action"] and info["job"] == 0 and info["now"] == 10.0
    assert env.episode is not None and env.episode.world.size == 1
    # at 10 j1 arrives to a full pool: it may grow, to at least 2 cores; level 0 (1 core) is clipped up to 2
    _, _, _, _, info = env.step(np.array([3, 0]))
    assert info["job"] == 1 and env.episode.world.size == 2 and env.episode.world.sizes == [(0.0, 1), (10.0, 2)]
    with pytest.raises(ConfigError, match="outside the action space"):
        env.step(np.array([0, 3]))  # there are three levels: 0, 1, 2
