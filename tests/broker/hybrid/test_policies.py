"""The leasing policies by hand: fixed and random caps, the sampled learner's evaluations, the registry's factories."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from broker.hybrid import policies
from broker.hybrid.learning import CloneReferences, RunReferences, StepReport
from broker.hybrid.policies import Constant, EpsilonGreedy, QLearning, RandomCap, Sampled, run_constant, run_leasing
from broker.hybrid.world import HybridWorld
from broker.sim.recorder import Recorder
from tests.broker.hybrid.test_world import rigid
from workloads.errors import ConfigError, UnknownName

# 4 nodes: job 0 (4 nodes, 100 s) at 0; job 1 (1 node, 50 s) at 10; job 2 (2 nodes, 50 s) at 20; one-day steps.
# V = 0: jobs 1 and 2 wait 90 + 80 = 170 s (the reference). V unbounded: both out at once, 50 + 100 = 150 node-s
# (the reference; peak 3 nodes). V = 1: job 1 out (50 node-s), job 2 (2 nodes) never fits beside it, waits 80 s:
# balance 100 - 100 x 80 / 170 - 100 x 50 / 150 = 19.61, the best. V = 2: job 2 follows job 1 out at 60 (waits
# 40 s, 150 node-s): -23.53. V = 3, 4: the unbounded run, 0.
SPLIT = rigid([0, 10, 20], [100, 50, 50], [4, 1, 2])
B1 = 100 - 8000 / 170 - 100 / 3
B2 = 100 - 4000 / 170 - 100


def spy(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Record the arguments every policy hands to ``leasing_step`` (and run it)."""
    calls: list[dict[str, Any]] = []
    real = policies.leasing_step

    def recorded(site: HybridWorld, until: float, cap: int, references: Any, **kwargs: Any) -> StepReport:
        calls.append({"cap": cap, **kwargs, "evaluate": list(kwargs.get("evaluate", ()))})
        return real(site, until, cap, references, **kwargs)

    monkeypatch.setattr(policies, "leasing_step", recorded)
    return calls


def test_a_fixed_cap_runs_one_site_per_step() -> None:
    step = Constant(1).step(HybridWorld(SPLIT, 4), 86400.0)
    assert (step.cap, step.simulated, step.site.wait_s, step.site.cloud_cpu_s) == (1.0, 1, 80.0, 50.0)
    run = run_constant(SPLIT, 4, 2.0)
    assert run.summary.clones_simulated == 1 and run.summary.caps == [2.0]  # the whole trace in one step
    assert (run.summary.twt_s, run.summary.cloud_cpu_s) == (40.0, 150.0)


def test_run_constant_is_one_step_under_the_discipline() -> None:
    # job 3 (1 node, 200 s) backfills at once under EASY (waits: 99 + 201); conservative backfilling keeps job 2's
    # reservation and starts it at 120 (99 + 108 + 117)
    four = rigid([0, 1, 2, 3], [100, 10, 10, 200], [3, 2, 4, 1])
    assert run_constant(four, 4, 0.0).summary.twt_s == 300.0
    conservative = run_constant(four, 4, 0.0, discipline="conservative")
    assert conservative.summary.twt_s == 324.0 and conservative.summary.discipline == "conservative"
    # one step however long the trace: steps of a day would take two here
    late = rigid([0, 100000], [10, 10], [1, 1])
    assert run_constant(late, 1, 0.0).summary.caps == [0.0]


def test_random_caps_are_the_generators_draws_over_0_to_m() -> None:
    for seed, m in ((0, 4), (3, 4), (5, 1)):
        policy = RandomCap(m, seed=seed) if seed else RandomCap(m)  # the default seed is 0
        rng = np.random.default_rng(seed)
        expected = [float(rng.integers(0, m + 1)) for _ in range(40)]
        site, caps = HybridWorld(SPLIT, 4), []
        for t in range(40):
            step = policy.step(site, float(t))
            assert step.site is site and step.simulated == 1
            caps.append(step.cap)
        assert caps == expected and min(caps) == 0.0 and max(caps) == float(m)  # both ends drawn
    # m = 0: the local cluster alone
    zero = RandomCap(0, seed=1)
    assert [zero.step(HybridWorld(SPLIT, 4), 86400.0).cap for _ in range(3)] == [0.0, 0.0, 0.0]
    with pytest.raises(ConfigError, match="m >= 0, got -1"):
        RandomCap(-1)


def test_the_sampled_policy_evaluates_the_greedy_the_drawn_zero_and_the_free_v(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spy(monkeypatch)
    rng = np.random.default_rng(4)
    drawn = rng.choice(5, size=2, replace=False).tolist()
    policy = Sampled(4, k=2, seed=4, references="clones", reward="balance")
    step = policy.step(HybridWorld(SPLIT, 4), 86400.0)
    assert calls == [{"cap": 0, "evaluate": [0, *drawn], "free": True, "share": True, "continue_best": False}]
    assert step.cap == 0.0
    # every simulated V learned its balance over 100 (alpha 0.1, Q = 0 before): the drawn, 0, and 3, 4 (free)
    learned = {0, *drawn, 3, 4}
    expected = [0.1 * {1: B1, 2: B2}.get(v, 0.0) / 100 if v in learned else 0.0 for v in range(5)]
    np.testing.assert_allclose(policy.learner.q, expected, rtol=1e-12, atol=1e-15)
    # the run references need no V = 0 clone: only the drawn V (k = m + 1: every V, each once)
    calls.clear()
    Sampled(4, k=5, seed=4).step(HybridWorld(SPLIT, 4), 86400.0)
    assert sorted(calls[0]["evaluate"]) == [0, 1, 2, 3, 4] and calls[0]["free"] is True
    calls.clear()
    Sampled(4, k=9, seed=4, share=False).step(HybridWorld(SPLIT, 4), 86400.0)
    assert sorted(calls[0]["evaluate"]) == [0, 1, 2, 3, 4] and calls[0]["share"] is False


def test_the_sampled_policy_learns_the_free_v_it_did_not_draw() -> None:
    # k = 1, seed 1 draws V = 2 alone; the free V (3, 4: at or above the unbounded peak) are simulated anyway
    assert np.random.default_rng(1).choice(5, size=1, replace=False).tolist() == [2]
    # min-max rewards over V = 0, 2, 3, 4 (balances 0, B2, 0, 0): 1, 0, 1, 1; alpha 1 and gamma 0 make them Q
    policy = Sampled(4, k=1, seed=1, references="clones", alpha=1.0, gamma=0.0)
    step = policy.step(HybridWorld(SPLIT, 4), 86400.0)
    assert policy.learner.q.tolist() == [1.0, 0.0, 0.0, 1.0, 1.0]
    # the unbounded clone, V = 0's and V = 2's (V = 3 and 4 are the unbounded one)
    assert step.simulated == 3 and step.cap == 0.0


def test_the_sampled_policy_counts_its_clones_shared_or_not() -> None:
    # every V, clone references: the unbounded clone; V = 0 (its own), V = 1, V = 2 from the unbounded run's state
    shared = Sampled(4, k=5, seed=0, references="clones").step(HybridWorld(SPLIT, 4), 86400.0)
    # unshared: a clone per V from the step's start, V = 3 and 4 included, besides the unbounded one
    alone = Sampled(4, k=5, seed=0, references="clones", share=False).step(HybridWorld(SPLIT, 4), 86400.0)
    assert (shared.simulated, alone.simulated) == (4, 6)
    assert (shared.site.wait_s, alone.site.wait_s) == (170.0, 170.0)


def test_the_sampled_policy_continues_the_best_clone_when_asked() -> None:
    best = Sampled(4, k=5, seed=0, references="clones", continue_best=True).step(HybridWorld(SPLIT, 4), 86400.0)
    assert best.cap == 1.0 and (best.site.wait_s, best.site.cloud_cpu_s) == (80.0, 50.0)
    greedy = Sampled(4, k=5, seed=0, references="clones").step(HybridWorld(SPLIT, 4), 86400.0)
    assert greedy.cap == 0.0 and (greedy.site.wait_s, greedy.site.cloud_cpu_s) == (170.0, 0.0)


def test_the_registry_builds_each_policy_with_its_defaults_and_parameters() -> None:
    registry = policies._registry()  # a fresh one (the module's was built at import)
    assert registry.names() == ["constant", "random", "qlearning", "egreedy", "sampled"]
    with pytest.raises(UnknownName, match=r"^unknown leasing policy 'fixed'; known: constant, random, qlearning"):
        registry.get("fixed")
    constant = registry.get("constant")(4)
    assert isinstance(constant, Constant) and constant.v == 0.0 and constant.name == "constant:0"
    unbounded = registry.get("constant")(4, v=math.inf, seed=3)
    assert isinstance(unbounded, Constant) and unbounded.v == math.inf
    for seed in (0, 7):
        random = registry.get("random")(6, seed=seed) if seed else registry.get("random")(6)
        assert isinstance(random, RandomCap) and random.m == 6
        assert random.rng.integers(0, 10**9, 4).tolist() == np.random.default_rng(seed).integers(0, 10**9, 4).tolist()
    qlearning = registry.get("qlearning")(5, seed=9, alpha=0.5, references="clones")
    assert type(qlearning) is QLearning and qlearning.learner.m == 5 and qlearning.learner.alpha == 0.5
    assert isinstance(qlearning.references, CloneReferences)
    egreedy = registry.get("egreedy")(5)
    assert isinstance(egreedy, EpsilonGreedy) and (egreedy.learner.m, egreedy.epsilon, egreedy.k) == (5, 0.1, 3)
    assert egreedy.rng.random() == np.random.default_rng(0).random()
    egreedy = registry.get("egreedy")(5, epsilon=0.5, k=1, seed=2, gamma=0.3, references="runs")
    assert isinstance(egreedy, EpsilonGreedy)
    assert (egreedy.epsilon, egreedy.k, egreedy.learner.gamma) == (0.5, 1, 0.3)
    assert egreedy.rng.random() == np.random.default_rng(2).random()
    assert isinstance(egreedy.references, RunReferences)
    sampled = registry.get("sampled")(5)
    assert isinstance(sampled, Sampled) and (sampled.learner.m, sampled.k) == (5, 3)
    assert sampled.rng.random() == np.random.default_rng(0).random()
    sampled = registry.get("sampled")(5, k=2, seed=2, alpha=0.25)
    assert isinstance(sampled, Sampled)
    assert (sampled.k, sampled.learner.alpha) == (2, 0.25) and sampled.rng.random() == np.random.default_rng(2).random()


def test_q_learning_defaults_and_readings() -> None:
    policy = QLearning(4)
    assert (policy.learner.m, policy.learner.alpha, policy.learner.gamma) == (4, 0.1, 0.1)
    assert isinstance(policy.references, RunReferences) and policy.share is True and policy.continue_best is False
    assert policy.reward({0: -5.0, 1: 15.0, 2: 5.0}) == {0: 0.0, 1: 1.0, 2: 0.5}  # min-max
    balance = QLearning(4, reward="balance", references="clones", alpha=0.3, gamma=0.2)
    assert balance.reward({0: -5.0, 1: 15.0}) == {0: -0.05, 1: 0.15}
    assert isinstance(balance.references, CloneReferences) and (balance.learner.alpha, balance.learner.gamma) == (
        0.3, 0.2)
    with pytest.raises(ConfigError, match=r"^reward must be one of minmax, balance, got 'rank'$"):
        QLearning(4, reward="rank")


def test_q_learning_steps_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spy(monkeypatch)
    # every V, clone references; min-max rewards of the balances 0, B1, B2, 0, 0: V = 1 gets 1, V = 2 gets 0, the
    # others -B2 / (B1 - B2); Q = 0.1 x reward (alpha 0.1, every Q 0 before)
    policy = QLearning(4, references="clones")
    step = policy.step(HybridWorld(SPLIT, 4), 86400.0)
    assert calls == [{"cap": 0, "evaluate": [0, 1, 2, 3, 4], "share": True, "continue_best": False}]
    low = -B2 / (B1 - B2)  # the reward of a balance of 0
    np.testing.assert_allclose(policy.learner.q, [0.1 * low, 0.1, 0.0, 0.1 * low, 0.1 * low], rtol=1e-12)
    # the greedy V was 0 (all Q were 0); the unbounded clone, V = 0's, V = 1's and V = 2's (3 and 4 are the
    # unbounded one)
    assert (step.cap, step.simulated, step.site.wait_s) == (0.0, 4, 170.0)
    # the next step's V is the greedy one: 1
    assert policy.learner.greedy() == 1
    unshared = QLearning(4, references="clones", share=False).step(HybridWorld(SPLIT, 4), 86400.0)
    assert (unshared.cap, unshared.simulated, unshared.site.wait_s) == (0.0, 6, 170.0)
    best = QLearning(4, references="clones", continue_best=True).step(HybridWorld(SPLIT, 4), 86400.0)
    assert (best.cap, best.site.wait_s, best.site.cloud_cpu_s) == (1.0, 80.0, 50.0)


def test_epsilon_greedy_defaults() -> None:
    policy = EpsilonGreedy(4)
    assert (policy.epsilon, policy.k, policy.learner.m) == (0.1, 3, 4)
    assert policy.rng.random() == np.random.default_rng(0).random()
    sampled = Sampled(4)
    assert sampled.k == 3 and sampled.rng.random() == np.random.default_rng(0).random()
    with pytest.raises(ConfigError, match=r"^epsilon-greedy needs k >= 0 other V evaluated per step, got -1$"):
        EpsilonGreedy(4, k=-1)
    with pytest.raises(ConfigError, match=r"^the sampled policy needs k >= 1 random V per step, got 0$"):
        Sampled(4, k=0)


def test_epsilon_greedy_evaluates_the_greedy_v_and_k_others(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spy(monkeypatch)
    # epsilon 0: the greedy V (0); seed 2 then draws V = 1 among the others 1..4 (the first draw decides exploring)
    rng = np.random.default_rng(2)
    rng.random()
    assert rng.choice([1, 2, 3, 4], size=1, replace=False).tolist() == [1]
    policy = EpsilonGreedy(4, epsilon=0.0, k=1, seed=2, references="clones")
    step = policy.step(HybridWorld(SPLIT, 4), 86400.0)
    assert calls == [{"cap": 0, "evaluate": [0, 1], "share": True, "continue_best": False}]
    # only V = 0 and 1 learn, from the min-max rewards of their balances 0 and B1: 0 and 1
    assert policy.learner.q.tolist() == [0.0, 0.1, 0.0, 0.0, 0.0] and step.cap == 0.0
    # k above the others: every other V, each once
    calls.clear()
    EpsilonGreedy(4, epsilon=0.0, k=9, seed=2).step(HybridWorld(SPLIT, 4), 86400.0)
    assert calls[0]["cap"] == 0 and sorted(calls[0]["evaluate"]) == [0, 1, 2, 3, 4]
    # m = 0: no other V to draw
    calls.clear()
    alone = EpsilonGreedy(0, epsilon=1.0, k=3, seed=2)
    assert alone.step(HybridWorld(SPLIT, 4), 86400.0).cap == 0.0 and calls[0]["evaluate"] == [0]


def test_epsilon_greedy_shares_clones_and_continues_the_best_when_asked() -> None:
    # every V evaluated, clone references: the unbounded clone, V = 0's, 1's and 2's; unshared, one per V besides
    shared = EpsilonGreedy(4, epsilon=0.0, k=4, references="clones").step(HybridWorld(SPLIT, 4), 86400.0)
    alone = EpsilonGreedy(4, epsilon=0.0, k=4, references="clones", share=False).step(HybridWorld(SPLIT, 4), 86400.0)
    assert (shared.simulated, alone.simulated) == (4, 6) and shared.cap == alone.cap == 0.0
    best = EpsilonGreedy(4, epsilon=0.0, k=4, references="clones", continue_best=True).step(
        HybridWorld(SPLIT, 4), 86400.0)
    assert (best.cap, best.site.wait_s, best.site.cloud_cpu_s) == (1.0, 80.0, 50.0)


def test_run_leasing_steps_by_hand() -> None:
    # V = 1 in steps of 30 s: job 1 out at 10 (1 node to 60), job 2 waits from 20 to 100 locally (ends 150)
    run = run_leasing(SPLIT, 4, Constant(1), step=30.0)
    assert run.steps.to_dict("list") == {"start_s": [0.0, 30.0, 60.0, 90.0, 120.0], "cap": [1.0] * 5,
                                         "twt_s": [10.0, 40.0, 70.0, 80.0, 80.0],
                                         "cloud_cpu_s": [20.0, 50.0, 50.0, 50.0, 50.0], "simulated": [1] * 5}
    s = run.summary
    assert (s.policy, s.jobs, s.nodes, s.discipline, s.step_s, s.twt_s, s.cloud_cpu_s, s.cloud_jobs) == (
        "constant:1", 3, 4, "easy", 30.0, 80.0, 50.0, 1)
    assert (s.clones_simulated, s.caps, run.q) == (5, [1.0] * 5, None)
    assert run.jobs[["start", "site"]].to_dict("list") == {"start": [0.0, 10.0, 100.0],
                                                          "site": ["local", "cloud", "local"]}
    # the grid shifted by 10 s: a first step of 10 s, then steps of 30 s
    shifted = run_leasing(SPLIT, 4, Constant(1), step=30.0, offset_s=10.0)
    assert shifted.steps["start_s"].tolist() == [0.0, 10.0, 40.0, 70.0, 100.0, 130.0]
    assert shifted.steps["twt_s"].tolist() == [0.0, 20.0, 50.0, 80.0, 80.0, 80.0]
    # an offset of 0 is the unshifted grid; the smallest offsets shift it
    assert run_leasing(SPLIT, 4, Constant(1), step=30.0, offset_s=0.0).steps.equals(run.steps)
    tiny = run_leasing(SPLIT, 4, Constant(1), step=30.0, offset_s=0.5)
    assert tiny.steps["start_s"].tolist()[:3] == [0.0, 0.5, 30.5]


def test_run_leasing_reports_a_learners_values_and_the_clones_it_ran() -> None:
    policy = QLearning(4, references="clones")
    run = run_leasing(SPLIT, 4, policy, step=30.0)
    assert run.q is not None and run.q is not policy.learner.q and np.array_equal(run.q, policy.learner.q)
    assert run.summary.policy == "qlearning" and run.summary.caps == [0.0, 1.0, 1.0, 2.0, 2.0]
    assert run.steps["simulated"].tolist() == [3, 3, 3, 2, 2] and run.summary.clones_simulated == 13
    assert run.jobs[["start", "site"]].to_dict("list") == {"start": [0.0, 30.0, 90.0],
                                                          "site": ["local", "cloud", "cloud"]}


@pytest.mark.parametrize("every", [1, 2])
@pytest.mark.parametrize("learns", [False, True])
def test_run_leasing_reports_progress_through_the_clones_that_continue(every: int, learns: bool) -> None:
    # a learner continues a clone each step (a clone reports to no one): the run passes its progress on
    policy = QLearning(4, references="clones") if learns else Constant(1)
    seen: list[tuple[int, int]] = []
    recorder = Recorder(progress=lambda done, total: seen.append((done, total)), every=every)
    run_leasing(SPLIT, 4, policy, step=30.0, recorder=recorder)
    assert seen == [(1, 3), (2, 3), (3, 3)][every - 1:]


def test_run_leasing_under_conservative_backfilling_and_with_validation() -> None:
    four = rigid([0, 1, 2, 3], [100, 10, 10, 200], [3, 2, 4, 1])
    run = run_leasing(four, 4, Constant(0), discipline="conservative", validate=True)
    assert (run.summary.twt_s, run.summary.discipline) == (324.0, "conservative")


def test_a_step_shorter_than_a_second_is_a_step() -> None:
    run = run_leasing(rigid([0], [1], [1]), 1, Constant(0), step=0.5)
    assert run.steps["start_s"].tolist() == [0.0, 0.5] and run.summary.step_s == 0.5


def test_run_leasing_refusals_say_why() -> None:
    with pytest.raises(ConfigError, match=r"^the policy step must be > 0 s, got 0\.0$"):
        run_leasing(SPLIT, 4, Constant(0), step=0.0)
    with pytest.raises(ConfigError, match=r"^the step grid's offset must lie in \[0, step\) = \[0, 30\) s, got 30\.0$"):
        run_leasing(SPLIT, 4, Constant(0), step=30.0, offset_s=30.0)
    with pytest.raises(ConfigError, match=r"^the step grid's offset must lie in \[0, step\) = \[0, 30\) s, got -1\.0$"):
        run_leasing(SPLIT, 4, Constant(0), step=30.0, offset_s=-1.0)


class _Drawn:
    """A generator whose uniform draws are given; ``integers`` would explore to V = 3, ``choice`` draws nothing."""

    def __init__(self, *uniform: float) -> None:
        self.uniform = list(uniform)

    def random(self) -> float:
        return self.uniform.pop(0)

    def integers(self, *_: int) -> int:
        return 3

    def choice(self, _: object, size: int, replace: bool) -> np.ndarray:
        return np.zeros(0, dtype=np.int64)


def test_epsilon_greedy_explores_on_draws_below_epsilon_only() -> None:
    caps = []
    for draw in (0.2499, 0.25, 0.9):
        policy = EpsilonGreedy(4, epsilon=0.25, k=0)
        policy.rng = _Drawn(draw)  # type: ignore[assignment]
        caps.append(policy.step(HybridWorld(SPLIT, 4), 86400.0).cap)
    assert caps == [3.0, 0.0, 0.0]  # a draw of exactly epsilon keeps the greedy V (0, all values still 0)


def test_a_negative_constant_cap_is_refused_with_its_value() -> None:
    with pytest.raises(ConfigError) as refused:
        Constant(-1.0)
    assert str(refused.value) == "a constant cap needs V >= 0 (or inf), got -1.0"
