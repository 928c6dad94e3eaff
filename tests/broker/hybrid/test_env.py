"""``cloudbroker/Leasing-v0``: Gymnasium's checker, a constant action is the constant-V run, Q-learning through it."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import broker  # noqa: F401 (registers the environments)
from broker.hybrid.env import DAY, WEEK, LeasingEnv
from broker.hybrid.learning import QLearner, rewards_of
from broker.hybrid.policies import LEASING_POLICIES, run_constant, run_leasing
from heuristics.backfill import Discipline
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


# --- by hand: the bounds, observations mid-step, info, the trace header and its refusals --------------------------


# 4 nodes: job 0 (3 nodes, 100 s) at 0; job 1 (2 nodes, 10 s) at 1; job 2 (4 nodes, 10 s) at 2; job 3 (1 node,
# 200 s) at 3. Work (nodes x estimate): 300 + 20 + 40 + 200 = 560 node-s.
FOUR = rigid([0, 1, 2, 3], [100, 10, 10, 200], [3, 2, 4, 1])
UNKNOWN = "-1 -1 1 -1 -1 -1 -1"  # SWF fields 12-18
JOB = f"1 0 0 100 2 -1 -1 2 100 -1 1 {UNKNOWN}\n"  # one 2-node job of 100 s at 0


def swf(tmp_path: Path, header: str) -> str:
    path = tmp_path / "one.swf"
    path.write_text(header + JOB)
    return str(path)


def test_the_observation_bounds_by_hand() -> None:
    env = LeasingEnv(jobs=FOUR, nodes=4, step_s=5.0)
    # 4 jobs over 4 nodes; 560 node-s over 4 x 5; the last step's wait bounded by max(jobs over nodes, 1)
    space = env.observation_space
    assert isinstance(space, spaces.Box)
    np.testing.assert_array_equal(space.high, [1, 28, 1, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(space.low, np.zeros(8))
    two = LeasingEnv(jobs=FOUR.head(2), nodes=4, step_s=10.0)  # 2 jobs over 4 nodes: 0.5; 320 node-s over 40
    np.testing.assert_array_equal(two.high, [0.5, 8, 1, 1, 1, 1, 1, 1])
    wide = LeasingEnv(jobs=FOUR, nodes=1, step_s=1.0)  # a single node is a site: 4 jobs over 1 node
    np.testing.assert_array_equal(wide.high, [4, 560, 1, 1, 1, 1, 4, 1])


def test_observations_and_info_in_the_middle_of_the_work() -> None:
    env = LeasingEnv(jobs=FOUR, nodes=4, step_s=5.0, references="clones")
    obs, info = env.reset()
    assert info == {"twt_s": 0.0, "cloud_cpu_s": 0.0, "step": 0}
    # [0, 5) under V = 2: job 0 runs locally (3 nodes), job 1 goes to the cloud at 1 (2 nodes); job 2 (4 nodes) and
    # job 3 (1 node, would pass the head's reservation at 100 on no spare node) wait: 3 + 2 s of wait, 8 node-s out
    obs, reward, done, truncated, info = env.step(2)
    scale = 4 * 5.0
    np.testing.assert_allclose(obs, [2 / 4, (40 + 200) / scale, 3 / 4, 2 / 4, 5 / DAY, (5 + 3 * DAY) / WEEK,
                                     5 / scale, 8 / scale], rtol=1e-12)
    assert not done and not truncated
    assert info["twt_s"] == 5.0 and info["cloud_cpu_s"] == 8.0 and info["step"] == 1 and info["cap"] == 2
    assert set(info) == {"twt_s", "cloud_cpu_s", "step", "cap", "twt_ref_s", "c_ref_s", "balances", "simulated"}
    # the clone references over [0, 5): V = 0 waits 4 s (job 1) + 3 s (job 2), job 3 backfilling on the node the
    # head (job 1, 2 nodes at 100) leaves spare; V unbounded sends jobs 1 and 2 out (2 x 4 + 4 x 3 = 20 node-s)
    assert (info["twt_ref_s"], info["c_ref_s"]) == (7.0, 20.0)
    assert reward == pytest.approx(100 - 100 * 5 / 7 - 100 * 8 / 20) and info["balances"][2] == reward
    # the site ran the unbounded clone and the V = 2 one; V = 0 is its own clone: 3 runs
    assert info["simulated"] == 3
    # [5, 10) still under V = 2: the same two jobs wait all along (10 s), job 1 holds its 2 cloud nodes to 11
    obs, _, _, _, info = env.step(2)
    assert info["step"] == 2 and (info["twt_s"], info["cloud_cpu_s"]) == (15.0, 18.0)
    np.testing.assert_allclose(obs[6:], [10 / scale, 10 / scale], rtol=1e-12)
    np.testing.assert_allclose(obs[4:6], [10 / DAY, (10 + 3 * DAY) / WEEK], rtol=1e-12)


def test_the_step_counter_restarts_with_every_episode() -> None:
    env = LeasingEnv(jobs=FOUR, nodes=4, step_s=5.0)
    env.reset()
    env.step(0)
    _, info = env.reset()
    assert info["step"] == 0
    assert env.step(0)[4]["step"] == 1


def test_a_shifted_grid_ends_the_first_step_early() -> None:
    for offset, first_end in ((0.5, 0.5), (2.5, 2.5), (0.0, 5.0)):
        env = LeasingEnv(jobs=FOUR, nodes=4, step_s=5.0, offset_s=offset)
        env.reset()
        obs, _, _, _, _ = env.step(0)
        assert obs[4] == pytest.approx(first_end / DAY, rel=1e-12)
        obs, _, _, _, _ = env.step(0)
        assert obs[4] == pytest.approx((first_end + 5.0) / DAY, rel=1e-12)
    # a step shorter than a second is a step
    short = LeasingEnv(jobs=FOUR, nodes=4, step_s=0.5)
    short.reset()
    assert short.step(0)[0][4] == pytest.approx(0.5 / DAY, rel=1e-12)


def test_the_environment_schedules_with_its_discipline() -> None:
    # V = 0: EASY backfills job 3 at 3 (waits 99 + 201 = 300 s); conservative backfilling keeps job 2's
    # reservation [110, 120) and starts job 3 at 120 (99 + 108 + 117 = 324 s)
    cases: tuple[tuple[Discipline, float], ...] = (("easy", 300.0), ("conservative", 324.0))
    for discipline, twt in cases:
        env = LeasingEnv(jobs=FOUR, nodes=4, discipline=discipline)
        env.reset()
        _, _, done, _, info = env.step(0)
        assert done and info["twt_s"] == twt


def test_the_trace_header_gives_the_nodes_and_the_clock(tmp_path: Path) -> None:
    assert LeasingEnv(swf(tmp_path, "; MaxProcs: 4\n")).m == 4
    assert LeasingEnv(swf(tmp_path, "; MaxNodes: 3\n")).m == 3
    assert LeasingEnv(swf(tmp_path, "; MaxProcs: 4\n; MaxNodes: 3\n")).m == 4
    assert LeasingEnv(swf(tmp_path, "; MaxProcs: 4\n"), nodes=6).m == 6  # nodes given: the header is not read
    # neither in the header: the widest job's processors (the one job holds 2)
    assert LeasingEnv(swf(tmp_path, "; Computer: none\n")).m == 2
    path = tmp_path / "unknown.swf"  # and no processor count on any line either: refused, naming the way out
    path.write_text(f"1 0 0 100 -1 -1 -1 -1 100 -1 1 {UNKNOWN}\n")
    with pytest.raises(ConfigError, match="gives no MaxProcs, no MaxNodes and no processor count: pass nodes"):
        LeasingEnv(str(path))
    # the clock starts at UnixStartTime: 06:00 UTC on a Thursday; without one, at 0
    env = LeasingEnv(swf(tmp_path, "; MaxProcs: 4\n; UnixStartTime: 21600\n"))
    obs, _ = env.reset()
    assert env.origin == 21600.0 and obs[4] == 0.25 and obs[5] == pytest.approx((21600 + 3 * DAY) / WEEK)
    env = LeasingEnv(swf(tmp_path, "; MaxProcs: 4\n"))
    obs, _ = env.reset()
    assert env.origin == 0.0 and obs[4] == 0.0 and obs[5] == 3 / 7


def test_before_reset_the_observation_is_zero_and_a_step_is_refused() -> None:
    env = LeasingEnv(jobs=FOUR, nodes=4)
    assert env.site is None
    np.testing.assert_array_equal(env._observe(), np.zeros(8))
    refused = "call reset() before step(), and again once an episode has terminated"
    with pytest.raises(RuntimeError, match=f"^{re.escape(refused)}$"):
        env.step(0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "give a trace or jobs, not both"),
    ({"trace": "x.swf", "jobs": FOUR, "nodes": 4}, "give a trace or jobs, not both"),
    ({"jobs": FOUR, "nodes": 0}, "the site needs nodes >= 1, got 0"),
    ({"jobs": FOUR}, "the site needs nodes >= 1, got None"),
    ({"jobs": FOUR, "nodes": 4, "limit_jobs": 0}, "the environment needs at least one job"),
    ({"jobs": FOUR, "nodes": 4, "step_s": 0.0}, "need step_s > 0 and 0 <= offset_s < step_s, got 0.0, 0.0"),
    ({"jobs": FOUR, "nodes": 4, "step_s": 10.0, "offset_s": 10.0},
     "need step_s > 0 and 0 <= offset_s < step_s, got 10.0, 10.0"),
    ({"jobs": FOUR, "nodes": 4, "offset_s": -1.0}, "need step_s > 0 and 0 <= offset_s < step_s, got 86400.0, -1.0"),
    ({"jobs": FOUR, "nodes": 4, "evaluate": "some"}, "evaluate must be 'none' or 'all', got 'some'"),
])
def test_each_refusal_says_why(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        LeasingEnv(**kwargs)
