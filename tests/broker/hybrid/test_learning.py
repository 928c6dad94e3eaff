"""The step function of the learners, its readings (references, rewards, which clone continues), the step grid."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.hybrid.learning import (
    CloneReferences,
    QLearner,
    RunReferences,
    balance_rewards,
    leasing_step,
    references_of,
    rewards_of,
)
from broker.hybrid.policies import LEASING_POLICIES, EpsilonGreedy, QLearning, Sampled, run_constant, run_leasing
from broker.hybrid.world import LOCAL, HybridWorld
from tests.broker.hybrid.test_world import rigid
from workloads.errors import ConfigError

# 4 nodes: job 0 (4 nodes, 100 s) at 0; jobs 1 and 2 (2 nodes, 50 s) at 10 and 20
THREE = rigid([0, 10, 20], [100, 50, 50], [4, 2, 2])


def test_one_step_by_hand_with_either_reference() -> None:
    # V = 0, 1: both wait locally (twt 90 + 80 = 170 s... job 1 90 s, job 2 80 s; c 0): balance 0
    # V >= 4: both go out at once (twt 0, c 200 = c_ref): balance 100 - 100 = 0
    # V = 2, 3: job 1 goes out, job 2 waits for its nodes (twt 40 s, c 200): 100 - 40/170 x 100 - 100 = -23.53
    for references in (CloneReferences(), RunReferences()):  # from the run's start the two readings agree
        site = HybridWorld(THREE, 4)
        report = leasing_step(site, 86400.0, 0, references, evaluate=range(5))
        assert (report.twt_ref_s, report.c_ref_s) == (170.0, 200.0)
        np.testing.assert_allclose([report.balances[v] for v in range(5)], [0, 0, -400 / 17, -400 / 17, 0])
        assert report.cap == 0 and report.site.drain_log() == [(0, 0.0, LOCAL), (1, 100.0, LOCAL), (2, 100.0, LOCAL)]
        assert site.now == 0.0 and report.site.now == 86400.0


def test_the_best_clone_continues_only_when_asked() -> None:
    jobs = rigid([0, 10, 20], [100, 50, 50], [4, 2, 2])
    best = leasing_step(HybridWorld(jobs, 4), 86400.0, 2, CloneReferences(), evaluate=range(5), continue_best=True)
    # V = 0, 1 and 4 tie at 0: the smallest wins; the step's cap is the V that continues
    assert best.cap == 0 and best.site.wait_s == 170.0
    chosen = leasing_step(HybridWorld(jobs, 4), 86400.0, 2, CloneReferences(), evaluate=range(5))
    assert chosen.cap == 2 and chosen.site.wait_s == 40.0


def test_an_unevaluated_v_is_not_simulated_but_the_references_are() -> None:
    report = leasing_step(HybridWorld(THREE, 4), 86400.0, 3, CloneReferences())
    assert sorted(report.balances) == [0, 3]  # the cap, and V = 0 for the clone reference
    runs = leasing_step(HybridWorld(THREE, 4), 86400.0, 3, RunReferences())
    assert sorted(runs.balances) == [3] and runs.twt_ref_s == 170.0
    free = leasing_step(HybridWorld(THREE, 4), 86400.0, 1, RunReferences(), free=True)
    assert sorted(free.balances) == [1, 4]  # the unbounded clone used 4 nodes at most: V = 4 is free


def test_run_references_are_the_whole_runs_increments_step_by_step() -> None:
    rng = np.random.default_rng(2)
    n, m, step = 300, 16, 21600.0
    jobs = rigid(np.sort(rng.integers(0, 3 * 86400, n)), rng.integers(60, 40000, n), rng.integers(1, 17, n))
    zero = run_leasing(jobs, m, LEASING_POLICIES.get("constant")(m, v=0.0), step=step)
    unbounded = run_leasing(jobs, m, LEASING_POLICIES.get("constant")(m, v=math.inf), step=step)
    references, site, until, seen = RunReferences(), HybridWorld(jobs, m), 0.0, []
    until = site.now + step
    while not site.finished():
        report = leasing_step(site, until, 5, references)
        seen.append((report.twt_ref_s, report.c_ref_s))
        site, until = report.site, until + step
    # V = 5 ends after 165 steps; V = 0 after 168, V unbounded after 14 (its later steps add nothing)
    k = len(seen)
    assert (len(zero.steps), k, len(unbounded.steps)) == (168, 165, 14)
    twt0 = np.diff(np.r_[0.0, zero.steps["twt_s"].to_numpy()])
    cpu_inf = np.r_[np.diff(np.r_[0.0, unbounded.steps["cloud_cpu_s"].to_numpy()]), np.zeros(k - 14)]
    np.testing.assert_allclose([t for t, _ in seen], twt0[:k], rtol=1e-12, atol=1e-6)
    np.testing.assert_allclose([c for _, c in seen], cpu_inf, rtol=1e-12, atol=1e-6)
    assert references.zero is not None and references.zero.wait_s == zero.steps["twt_s"].iloc[k - 1]
    # references built for one run refuse a site already under way
    with pytest.raises(ConfigError, match="start with the run"):
        leasing_step(site, until, 5, RunReferences())


def test_rewards_by_hand() -> None:
    assert rewards_of({0: -5.0, 1: 15.0, 2: 5.0}) == {0: 0.0, 1: 1.0, 2: 0.5}
    assert balance_rewards({0: -5.0, 1: 15.0}) == {0: -0.05, 1: 0.15}


def test_epsilon_greedy_by_hand() -> None:
    # epsilon 0, no other V: always the greedy V, and only it learns
    greedy = EpsilonGreedy(4, epsilon=0.0, k=0, seed=1)
    step = greedy.step(HybridWorld(THREE, 4), 86400.0)
    assert step.cap == 0.0 and greedy.learner.q.tolist() == [0.1, 0.0, 0.0, 0.0, 0.0]  # a lone reward: 1 (min-max)
    # epsilon 1: the step's V is the generator's draw; k others, none of them the step's V
    policy = EpsilonGreedy(4, epsilon=1.0, k=2, seed=7)
    rng = np.random.default_rng(7)
    rng.random()
    expected = int(rng.integers(5))
    others = rng.choice([v for v in range(5) if v != expected], size=2, replace=False).tolist()
    step = policy.step(HybridWorld(THREE, 4), 86400.0)
    assert step.cap == float(expected)
    updated = set(np.flatnonzero(policy.learner.q != 0.0).tolist())
    assert updated <= {expected, *others} and expected not in others


def test_the_sampled_policy_learns_every_simulated_v() -> None:
    policy = Sampled(4, k=1, seed=0)
    policy.step(HybridWorld(THREE, 4), 86400.0)
    # V = 0 (the reference), the drawn V, the greedy V (0) and every V at or above the peak (4)
    assert policy.learner.q[0] > 0 and policy.learner.q[4] > 0


def test_the_step_grid_can_be_shifted() -> None:
    rng = np.random.default_rng(5)
    n, m = 200, 16
    jobs = rigid(np.sort(rng.integers(0, 3 * 86400, n)), rng.integers(60, 40000, n), rng.integers(1, 17, n))
    shifted = run_leasing(jobs, m, LEASING_POLICIES.get("constant")(m, v=4.0), offset_s=6 * 3600.0)
    starts = shifted.steps["start_s"].to_numpy()
    assert starts[1] - starts[0] == 6 * 3600.0 and (np.diff(starts[1:]) == 86400.0).all()
    whole = run_constant(jobs, m, 4.0)
    assert (shifted.summary.twt_s, shifted.summary.cloud_cpu_s) == pytest.approx(
        (whole.summary.twt_s, whole.summary.cloud_cpu_s), rel=1e-12)
    for bad in (-1.0, 86400.0):
        with pytest.raises(ConfigError, match="offset"):
            run_leasing(jobs, m, LEASING_POLICIES.get("constant")(m, v=4.0), offset_s=bad)


def test_the_readings_are_options_of_every_learner() -> None:
    for name in ("qlearning", "egreedy", "sampled"):
        policy = LEASING_POLICIES.get(name)(8, references="runs", reward="balance", alpha=0.5, gamma=0.2)
        assert isinstance(policy, QLearning) and isinstance(policy.references, RunReferences)
        assert policy.learner.alpha == 0.5 and policy.learner.gamma == 0.2
    with pytest.raises(ConfigError, match="references must be one of clones, runs, got 'days'"):
        references_of("days")
    with pytest.raises(ConfigError, match="reward must be one of minmax, balance"):
        QLearning(8, reward="rank")
    with pytest.raises(ConfigError, match="epsilon in"):
        EpsilonGreedy(8, epsilon=1.5)
    assert QLearner(3).m == 3


def test_a_step_counts_the_site_runs_it_needed() -> None:
    # the unbounded clone, the cap's clone (V = 1 follows nothing shared: its own run), and with the whole-run
    # references their two runs stepped alongside; with clone references V = 0's clone is V = 1's (no transfer
    # of the first step fits under V = 1 either: both wait 170 s)
    clones = leasing_step(HybridWorld(THREE, 4), 86400.0, 1, CloneReferences())
    runs = leasing_step(HybridWorld(THREE, 4), 86400.0, 1, RunReferences())
    assert (clones.simulated, runs.simulated) == (2, 4)
