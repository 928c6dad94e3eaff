"""The step function of the learners, its readings (references, rewards, which clone continues), the step grid."""

from __future__ import annotations

import math
import re

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


# --- the Q-learning step by hand: bounds, update, rewards, the references in mid-run, the clones ------------------


def exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


def test_the_learners_bounds_are_inclusive_where_the_paper_allows() -> None:
    assert QLearner(0).q.tolist() == [0.0]  # V = 0 alone
    assert QLearner(2, alpha=1.0, gamma=0.0).q.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ConfigError, match=exactly("Q-learning needs m >= 0 actions above V = 0, got -1")):
        QLearner(-1)
    for alpha, gamma in ((0.0, 0.1), (1.5, 0.1), (-0.1, 0.1), (0.1, 1.0), (0.1, -0.1), (0.1, 1.5)):
        with pytest.raises(ConfigError, match=exactly(
                f"Q-learning needs alpha in (0, 1] and gamma in [0, 1), got {alpha}, {gamma}")):
            QLearner(2, alpha=alpha, gamma=gamma)


def test_the_update_by_hand_with_the_max_taken_before_the_steps_updates() -> None:
    learner = QLearner(2, alpha=0.5, gamma=0.5)
    # max Q = 0: Q(0) = 0.5 x 1 = 0.5, Q(2) = 0.5 x 0.5 = 0.25; the greedy V is 0
    assert learner.update({0: 1.0, 2: 0.5}) == 0
    assert learner.q.tolist() == [0.5, 0.0, 0.25]
    # max Q = 0.5 before the step: Q(1) = 0.5 (1 + 0.25) = 0.625; Q(0) = 0.5 + 0.5 (0 + 0.25 - 0.5) = 0.375
    # (were max Q taken after Q(1)'s update, Q(0) would be 0.53125)
    assert learner.update({1: 1.0, 0: 0.0}) == 1
    assert learner.q.tolist() == [0.375, 0.625, 0.25]
    # an unevaluated V keeps its value; a negative reward lowers Q
    assert learner.update({1: -1.0}) == 0  # Q(1) = 0.625 + 0.5 (-1 + 0.3125 - 0.625) = -0.03125
    assert learner.q.tolist() == [0.375, -0.03125, 0.25]


def test_the_greedy_v_on_ties_is_the_smallest() -> None:
    learner = QLearner(3)
    assert learner.greedy() == 0
    learner.q[:] = [0.0, 0.5, 0.5, 0.25]
    assert learner.greedy() == 1
    learner.q[:] = [-1.0, -1.0, -2.0, -0.5]
    assert learner.greedy() == 3


def test_min_max_rewards_on_ties_and_single_values() -> None:
    assert rewards_of({0: 3.0, 1: 3.0, 4: 3.0}) == {0: 1.0, 1: 1.0, 4: 1.0}
    assert rewards_of({2: -5.0}) == {2: 1.0}
    assert rewards_of({0: -30.0, 1: 10.0, 2: 0.0}) == {0: 0.0, 1: 1.0, 2: 0.75}


def test_the_references_by_name_are_fresh_each_time() -> None:
    first, second = references_of("runs"), references_of("runs")
    assert isinstance(first, RunReferences) and first is not second
    assert first.zero is None and first.unbounded is None  # built at the first step
    assert isinstance(references_of("clones"), CloneReferences)
    assert (first.name, first.clone_zero, first.runs_per_step) == ("runs", False, 2)
    clones = references_of("clones")
    assert (clones.name, clones.clone_zero, clones.runs_per_step) == ("clones", True, 0)
    with pytest.raises(ConfigError, match=exactly("references must be one of clones, runs, got 'Runs'")):
        references_of("Runs")


def test_clone_references_in_the_middle_of_a_run() -> None:
    # THREE (4 nodes: job 0, 4 nodes 100 s at 0; jobs 1 and 2, 2 nodes 50 s at 10 and 20), first step [0, 30) under
    # V = 2: job 1 goes out at 10, job 2 waits from 20 (the cloud is full): wait 10 s, 40 node-s out.
    # references of [0, 30): V = 0 waits 20 + 10 = 30 s; unbounded uses 2 x 20 + 2 x 10 = 60 node-s
    first = leasing_step(HybridWorld(THREE, 4), 30.0, 2, CloneReferences())
    assert (first.site.wait_s, first.site.cloud_cpu_s, first.twt_ref_s, first.c_ref_s) == (10.0, 40.0, 30.0, 60.0)
    assert first.balances[0] == 0.0 and first.balances[2] == pytest.approx(0.0, abs=1e-12)  # 100 - 33.3 - 66.7
    # the rest, from 30: V = 0 and 1 keep job 2 waiting to 100 (70 s) while job 1 ends out (60 node-s): -37.5;
    # V = 2, 3 send job 2 out when job 1 ends at 60 (30 s, 60 + 100 node-s): 100 - 300 / 7 - 100;
    # V = 4 at once: the unbounded clone (0 s, 160 node-s): 0. Only the step's increments count.
    second = leasing_step(first.site, 86400.0, 2, CloneReferences(), evaluate=range(5))
    assert (second.twt_ref_s, second.c_ref_s) == (70.0, 160.0)
    np.testing.assert_allclose([second.balances[v] for v in range(5)],
                               [-37.5, -37.5, -300 / 7, -300 / 7, 0.0], rtol=1e-12)
    assert (second.site.wait_s, second.site.cloud_cpu_s) == (40.0, 200.0)
    # the unbounded clone; V = 0's (V = 1 shares it: job 2 needs 2 nodes); V = 2's (V = 3 shares it)
    assert second.simulated == 3


def test_clone_references_need_the_v_0_clone() -> None:
    site = HybridWorld(THREE, 4)
    with pytest.raises(RuntimeError, match=exactly("clone references need the V = 0 clone of the step")):
        CloneReferences().of_step(site, 86400.0, None, site.clone())


def test_run_references_refuse_a_site_under_way() -> None:
    site = HybridWorld(THREE, 4)
    site.run(5.0, 0.0)
    with pytest.raises(ConfigError, match=exactly(
            "run references start with the run: give a fresh RunReferences to a new run")):
        leasing_step(site, 86400.0, 0, RunReferences())


def test_run_references_schedule_under_the_sites_discipline() -> None:
    # 4 nodes: job 0 (3 nodes, 100 s) at 0; at 1 together job 1 (2 nodes, 10 s), job 2 (4 nodes, 10 s) and job 3
    # (1 node, 200 s). EASY protects the head (job 1: 2 of 4 nodes free at 100) alone, so job 3 starts at once on
    # the spare node; conservative backfilling also keeps job 2's reservation [110, 120) and holds job 3 back.
    # V = 0: EASY waits 99 + 200 (job 2 waits for job 3) = 299 s; conservative 99 + 109 + 119 (job 3 at 120) = 327 s.
    # V unbounded: whatever waits goes out: jobs 1 and 2 (20 + 40 node-s), under conservative job 3 too (+ 200).
    jobs = rigid([0, 1, 1, 1], [100, 10, 10, 200], [3, 2, 4, 1])
    easy = leasing_step(HybridWorld(jobs, 4), 86400.0, 0, RunReferences())
    conservative = leasing_step(HybridWorld(jobs, 4, "conservative"), 86400.0, 0, RunReferences())
    assert (easy.twt_ref_s, easy.c_ref_s) == (299.0, 60.0)
    assert (conservative.twt_ref_s, conservative.c_ref_s) == (327.0, 260.0)
    assert conservative.balances == {0: 0.0}


def test_every_clone_from_the_start_gives_the_shared_clones_balances_at_a_higher_count() -> None:
    shared = leasing_step(HybridWorld(THREE, 4), 86400.0, 0, CloneReferences(), evaluate=range(5))
    alone = leasing_step(HybridWorld(THREE, 4), 86400.0, 0, CloneReferences(), evaluate=range(5), share=False)
    assert alone.balances == shared.balances
    # shared: the unbounded clone, V = 0's (V = 1 takes the same decisions), V = 2's (V = 3 too); V = 4 is the
    # unbounded one. Unshared: the unbounded clone and one per V.
    assert (shared.simulated, alone.simulated) == (3, 6)


# 4 nodes: jobs 0 (4 nodes, 100 s) and 1 (4 nodes, 50 s) both at 0, job 2 (2 nodes, 10 s) at 5.
# V = 0, 1: job 1 waits to 100, job 2 behind it to 150: 100 + 145 = 245 s (the reference), no cloud: balance 0.
# V unbounded: job 1 out at 0 (200 node-s), job 2 out at 5 (20): 220 node-s (the reference), no wait.
# V = 2, 3: job 1 waits to 100 while job 2 goes out at 5: 100 s, 20 node-s: 100 - 100 x 100 / 245 - 100 x 20 / 220.
# V = 4: job 1 out at 0; job 2 follows it out at 50 when it ends: 45 s, 220 node-s: 100 - 100 x 45 / 245 - 100.
TWIN = rigid([0, 0, 5], [100, 50, 10], [4, 4, 2])
TWIN_BALANCES = [0.0, 0.0, 100 - 10000 / 245 - 2000 / 220, 100 - 10000 / 245 - 2000 / 220, -4500 / 245]


def test_every_clone_from_the_start_when_jobs_arrive_together_at_the_first_step() -> None:
    report = leasing_step(HybridWorld(TWIN, 4), 86400.0, 0, CloneReferences(), evaluate=range(5), share=False)
    assert (report.twt_ref_s, report.c_ref_s) == (245.0, 220.0)
    np.testing.assert_allclose([report.balances[v] for v in range(5)], TWIN_BALANCES, rtol=1e-12, atol=1e-12)
    assert report.simulated == 6


def test_shared_clones_when_jobs_arrive_together_at_the_first_step() -> None:
    report = leasing_step(HybridWorld(TWIN, 4), 86400.0, 0, CloneReferences(), evaluate=range(5))
    assert (report.twt_ref_s, report.c_ref_s) == (245.0, 220.0)
    np.testing.assert_allclose([report.balances[v] for v in range(5)], TWIN_BALANCES, rtol=1e-12, atol=1e-12)


def test_shared_clones_equal_every_clone_when_the_first_instant_holds_several_jobs() -> None:
    # before the fix, 146 of 200 such worlds disagreed: a cap's clone started after the unbounded run's
    # first transfer
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(3, 9))
        submits = np.sort(np.where(rng.random(n) < 0.5, 0, rng.integers(0, 400, n)))
        jobs = rigid(submits.tolist(), rng.integers(5, 300, n).tolist(), rng.integers(1, 5, n).tolist())
        shared = leasing_step(HybridWorld(jobs, 4), 86400.0, 2, CloneReferences(), evaluate=range(5))
        every = leasing_step(HybridWorld(jobs, 4), 86400.0, 2, CloneReferences(), evaluate=range(5), share=False)
        assert shared.balances == every.balances and (shared.twt_ref_s, shared.c_ref_s) == (every.twt_ref_s,
                                                                                           every.c_ref_s)
