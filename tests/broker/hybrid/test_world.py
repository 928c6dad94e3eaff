"""The hybrid site (local EASY + cloud cap V), its metrics and the leasing policies, by hand-worked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.hybrid.learning import QLearner, rewards_of
from broker.hybrid.metrics import LeasingResult, balance
from broker.hybrid.policies import LEASING_POLICIES, QLearning, run_constant, run_leasing
from broker.hybrid.validate import HybridValidator
from broker.hybrid.world import CLOUD, LOCAL, HybridWorld, record, replay
from broker.sim.recorder import Recorder
from workloads.rigid import RigidJobs


def run_policy(jobs: RigidJobs, m: int, name: str, *, step: float = 86400.0, **params) -> LeasingResult:
    return run_leasing(jobs, m, LEASING_POLICIES.get(name)(m, **params), step=step)


def sites(result: LeasingResult) -> np.ndarray:
    return np.where(result.jobs["site"] == "cloud", CLOUD, LOCAL)


def starts(result: LeasingResult) -> np.ndarray:
    return result.jobs["start"].to_numpy()


def totals(result: LeasingResult) -> tuple[float, float]:
    return result.summary.twt_s, result.summary.cloud_cpu_s


def rigid(submit, runtime, nodes) -> RigidJobs:
    runtime = np.asarray(runtime, float)
    return RigidJobs(submit=np.asarray(submit, float), runtime=runtime, estimate=runtime,
                     nodes=np.asarray(nodes, np.int64))


def test_a_waiting_job_moves_to_the_cloud_when_it_fits_under_the_cap() -> None:
    # 4 local nodes busy until 100; job 1 (2 nodes, 50 s) arrives at 10
    jobs = rigid([0, 10], [100, 50], [4, 2])
    local, fits, too_small = run_constant(jobs, 4, 0), run_constant(jobs, 4, 2), run_constant(jobs, 4, 1)
    assert totals(local) == (90.0, 0.0)
    assert totals(fits) == (0.0, 100.0) and sites(fits).tolist() == [LOCAL, CLOUD]
    assert totals(too_small) == (90.0, 0.0)
    b = balance(*totals(fits), local.summary.twt_s, run_constant(jobs, 4, math.inf).summary.cloud_cpu_s)
    assert (b.twt_pct, b.twt_imp_pct, b.c_pct, b.balance) == (0.0, 100.0, 100.0, 0.0)


def test_easy_runs_again_when_a_transfer_takes_the_queue_head() -> None:
    # job 1 (4 nodes) blocks the head; job 2 (1 node, 500 s) cannot backfill behind it. Once job 1 goes
    # to the cloud, job 2 heads the queue and starts locally at once, not when job 1 ends.
    jobs = rigid([0, 1, 1], [100, 10, 500], [3, 4, 1])
    result = run_constant(jobs, 4, 4)
    assert starts(result).tolist() == [0, 1, 1] and sites(result).tolist() == [LOCAL, CLOUD, LOCAL]
    assert totals(result) == (0.0, 40.0)
    assert result.instances[["job", "nodes", "hired_at", "released_at", "cloud_cpu_s"]].to_numpy().tolist() == [
        [1, 4, 1, 11, 40]]


def test_a_new_cap_applies_at_the_step_boundary() -> None:
    jobs = rigid([0, 10], [100, 50], [4, 2])
    site = HybridWorld(jobs, 4)
    site.run(50.0, 0)
    assert site.cluster.queue == [1] and site.wait_s == 40.0
    site.run(math.inf, 2)
    assert site.drain_log()[-1] == (1, 50.0, CLOUD)
    assert (site.wait_s, site.cloud_cpu_s) == (40.0, 100.0)


def test_stepped_constant_equals_one_run_and_metrics_split_over_steps() -> None:
    rng = np.random.default_rng(3)
    n = 300
    jobs = rigid(np.sort(rng.integers(0, 5 * 86400, n)), rng.integers(60, 20000, n), rng.integers(1, 17, n))
    whole = run_constant(jobs, 16, 5)
    stepped = run_policy(jobs, 16, "constant", v=5, step=3600.0)
    assert totals(stepped) == pytest.approx(totals(whole))
    np.testing.assert_array_equal(starts(stepped), starts(whole))
    twt, cpu = totals(whole)
    assert cpu == pytest.approx(float(np.sum(jobs.runtime * jobs.nodes * (sites(whole) == CLOUD))))
    assert cpu == pytest.approx(float(whole.instances["cloud_cpu_s"].sum()))
    waits = starts(whole) - jobs.submit
    assert twt == pytest.approx(float(waits.sum())) and twt == pytest.approx(float(whole.jobs["wait"].sum()))


def test_q_values_follow_the_paper_update() -> None:
    learner = QLearner(2)
    assert rewards_of({0: -5.0, 1: 15.0, 2: 5.0}) == {0: 0.0, 1: 1.0, 2: 0.5}
    assert learner.update({0: 0.0, 1: 1.0, 2: 0.5}) == 1
    np.testing.assert_allclose(learner.q, [0.0, 0.1, 0.05])
    assert learner.update({0: 1.0, 1: 0.0, 2: 0.0}) == 0  # max Q 0.1 before the update
    np.testing.assert_allclose(learner.q, [0.101, 0.091, 0.046])
    assert QLearner(3).update(dict.fromkeys(range(4), 1.0)) == 0  # ties go to the smallest V
    assert rewards_of({0: 2.0, 1: 2.0}) == {0: 1.0, 1: 1.0}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("policy", ["qlearning", "egreedy", "sampled"])
def test_shared_clones_give_the_same_run_as_simulating_every_v(seed: int, policy: str) -> None:
    rng = np.random.default_rng(seed)
    n, m = 400, 16
    widths = rng.integers(1, 17, n) if seed % 2 else rng.choice([1, 1, 1, 2, 4, 16], n)
    jobs = rigid(np.sort(rng.integers(0, 3 * 86400, n)), rng.integers(60, 30000, n), widths)
    step = 86400.0 if seed < 3 else 7200.0
    shared = run_policy(jobs, m, policy, step=step, seed=seed)
    naive = run_policy(jobs, m, policy, step=step, seed=seed, share=False)
    assert shared.summary.caps == naive.summary.caps
    assert np.array_equal(shared.q, naive.q)
    assert shared.steps[["twt_s", "cloud_cpu_s"]].equals(naive.steps[["twt_s", "cloud_cpu_s"]])
    assert np.array_equal(starts(shared), starts(naive))
    assert np.array_equal(sites(shared), sites(naive))
    assert shared.summary.clones_simulated <= naive.summary.clones_simulated


def test_q_learning_step_continues_the_chosen_clone() -> None:
    jobs = rigid([0, 10, 20], [100, 50, 50], [4, 2, 2])
    site = HybridWorld(jobs, 4)
    policy = QLearning(4)
    outcome = policy.step(site, 86400.0)
    # the step ran under V = 0 (the first cap); its clone continues, jobs waited locally
    assert outcome.site.drain_log() == [(0, 0.0, LOCAL), (1, 100.0, LOCAL), (2, 100.0, LOCAL)]
    assert site.now == 0.0 and outcome.site.now == 86400.0
    # V = 0, 1: both wait (twt 170 s, c 0): balance 0. V >= 4: both go out at once (twt 0, c 200 = c_ref):
    # balance 0. V = 2, 3: job 2 waits for job 1's cloud nodes (twt 40 s, c 200): balance -23.5, reward 0
    np.testing.assert_allclose(policy.learner.q, [0.1, 0.1, 0.0, 0.0, 0.1])
    assert outcome.cap == 0


def local_nodes_never_exceed(result, jobs: RigidJobs, m: int) -> bool:
    local = sites(result) == LOCAL
    times = np.concatenate((starts(result)[local], (starts(result) + jobs.runtime)[local]))
    delta = np.concatenate((jobs.nodes[local], -jobs.nodes[local]))
    order = np.lexsort((delta, times))
    return bool(np.cumsum(delta[order]).max(initial=0) <= m)


@pytest.mark.parametrize("policy", ["random", "qlearning", "egreedy", "sampled"])
def test_stepped_policies_equal_a_replay_of_their_caps(policy: str) -> None:
    # whatever the policy and its clones, the run it reports is the run its caps give
    rng = np.random.default_rng(11)
    n = 400
    jobs = rigid(np.sort(rng.integers(0, 4 * 86400, n)), rng.integers(60, 40000, n), rng.integers(1, 17, n))
    run = run_policy(jobs, 16, policy, seed=2, step=21600.0)
    site = HybridWorld(jobs, 16)
    t = site.now
    for cap in run.summary.caps:
        site.run(t + 21600.0, cap)
        t += 21600.0
    cumulative = run.steps[["twt_s", "cloud_cpu_s"]].to_numpy()
    assert totals(run) == (site.wait_s, site.cloud_cpu_s) == tuple(cumulative[-1])
    assert len(cumulative) == len(run.summary.caps)
    assert (np.diff(cumulative, axis=0) >= 0).all()
    assert local_nodes_never_exceed(run, jobs, 16)
    assert not np.isnan(starts(run)).any() and np.all(starts(run) >= jobs.submit)


def test_an_empty_site_starts_at_zero_with_no_cloud_and_is_finished() -> None:
    empty = rigid([], [], [])
    site = HybridWorld(empty, 4)
    assert (site.now, site.cap, site.cloud_used, len(site.kernel)) == (0.0, 0.0, 0, 0) and site.finished()
    site.run(100.0, 3)
    assert (site.now, site.wait_s, site.cloud_cpu_s, site.drain_log()) == (100.0, 0.0, 0.0, [])
    schedule, world = replay(empty, 4)
    assert len(schedule.start) == 0 and world.finished()


def test_a_new_site_runs_the_cluster_alone_until_a_run_sets_a_cap() -> None:
    site = HybridWorld(rigid([5, 10], [100, 50], [4, 2]), 4)
    assert (site.now, site.cap, site.cloud_used, site.peak_cloud, site.need) == (5.0, 0.0, 0, 0, math.inf)


def test_validation_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []
    calls: list[str] = []

    class Spy:
        def __init__(self, world: object) -> None:
            made.append(world)

        def before_pass(self) -> None: ...

        def at_pass(self, now: float) -> None: ...

        def at_end(self) -> None:
            calls.append("end")

    monkeypatch.setattr("broker.hybrid.world.HybridValidator", Spy)
    jobs = rigid([0, 10], [100, 50], [4, 2])
    HybridWorld(jobs, 4).run(math.inf, 0)
    replay(jobs, 4)
    assert made == [] and calls == []
    site = HybridWorld(jobs, 4, validate=True)
    assert made == [site]
    _, world = replay(jobs, 4, validate=True)  # checked as it runs, and once at the end
    assert made[-1] is world and calls == ["end"]


def test_replay_defaults_to_the_cluster_alone() -> None:
    jobs = rigid([0, 10], [100, 50], [4, 2])
    schedule, world = replay(jobs, 4)
    assert world.cap == 0.0 and (world.wait_s, world.cloud_cpu_s) == (90.0, 0.0)
    assert schedule.start.tolist() == [0.0, 100.0] and schedule.site.tolist() == [LOCAL, LOCAL]
    assert schedule.end.tolist() == [100.0, 150.0] and np.isnan(schedule.promised).all()


def test_record_writes_the_started_jobs_and_leaves_the_others_unstarted() -> None:
    start, where = record(3, [(1, 5.0, CLOUD)])
    assert np.isnan(start[[0, 2]]).all() and start[1] == 5.0
    assert where.tolist() == [-1, CLOUD, -1]  # -1: not started, neither local nor cloud
    start, where = record(3, [(0, 7.0, LOCAL), (2, 9.0, CLOUD)], start, where)  # into the same arrays
    assert start.tolist() == [7.0, 5.0, 9.0] and where.tolist() == [LOCAL, CLOUD, CLOUD]
    start, where = record(2, [])
    assert np.isnan(start).all() and where.tolist() == [-1, -1]


def test_batches_list_each_instant_of_one_run_only() -> None:
    # job 0 (4 nodes) starts at 0; job 1 (2 nodes) waits at 10 under cap 0
    site = HybridWorld(rigid([0, 10], [100, 50], [4, 2]), 4)
    batches: list[tuple[float, int]] = []
    site.run(50.0, 0, batches)
    assert batches == [(0.0, 0), (0.0, 0), (10.0, 0)]  # the first pass, then the passes at 0 and 10
    site.run(math.inf, 2)  # a later run without a list: nothing more lands in the old one
    assert batches == [(0.0, 0), (0.0, 0), (10.0, 0)]
    assert site.drain_log()[-1] == (1, 50.0, CLOUD)


@pytest.mark.parametrize(("every", "calls"), [(1, [(1, 3), (2, 3), (3, 3)]), (2, [(2, 3), (3, 3)]),
                                              (5, [(3, 3)])])
def test_progress_is_the_runs_own_not_its_clones(every: int, calls: list[tuple[int, int]]) -> None:
    # the learner's clones run ahead of the site: their ends must not reach the run's progress callback
    seen: list[tuple[int, int]] = []
    jobs = rigid([0, 10, 20], [100, 50, 50], [4, 2, 2])
    recorder = Recorder(progress=lambda done, total: seen.append((done, total)), every=every)
    run_leasing(jobs, 4, LEASING_POLICIES.get("qlearning")(4), step=30.0, recorder=recorder)
    assert seen == calls


def test_a_step_shorter_than_a_second_still_integrates_the_wait() -> None:
    site = HybridWorld(rigid([0, 0.25], [100, 50], [4, 2]), 4)
    site.run(0.75, 0)  # job 1 waits from 0.25 to the step's end at 0.75
    assert (site.now, site.wait_s, site.cloud_cpu_s) == (0.75, 0.5, 0.0)
    site.run(1.5, 2)  # the raised cap takes it at 0.75: 2 nodes for 0.75 s
    assert (site.now, site.wait_s, site.cloud_cpu_s) == (1.5, 0.5, 1.5)


def test_a_clone_measures_its_peak_and_the_cap_a_blocked_transfer_needed() -> None:
    # 4 local nodes busy until 100; job 1 (2 nodes) goes to the cloud at 10 under V = 2; job 2 (3 nodes) at 20
    # would need 2 + 3 = 5 cloud nodes: the smallest cap that would have let it go
    site = HybridWorld(rigid([0, 10, 20], [100, 50, 50], [4, 2, 3]), 4)
    site.run(5.0, 0)
    clone = site.clone()
    assert (clone.peak_cloud, clone.need, clone.drain_log()) == (0, math.inf, [])
    clone.run(30.0, 2)
    assert (clone.cloud_used, clone.peak_cloud, clone.need) == (2, 2, 5.0)
    assert clone.drain_log() == [(1, 10.0, CLOUD)]
    again = clone.clone()  # measured afresh from the clone's own state
    assert (again.peak_cloud, again.need) == (2, math.inf)
    again.run(40.0, 5)  # a cap of 5 takes job 2 at once
    assert (again.cloud_used, again.peak_cloud, again.need) == (5, 5, math.inf)


# --- the replay and copies, by hand (issue 19) --------------------------------------------------------------------


# 4 nodes: job 0 (4 nodes, 100 s) at 0; job 1 (1 node, 50 s) at 10; job 2 (2 nodes, 50 s) at 20.
SPLIT = rigid([0, 10, 20], [100, 50, 50], [4, 1, 2])


def test_replay_reports_its_progress_to_the_recorder_it_is_given() -> None:
    seen: list[tuple[int, int]] = []
    schedule, _ = replay(SPLIT, 4, recorder=Recorder(progress=lambda done, total: seen.append((done, total)), every=1))
    assert seen == [(1, 3), (2, 3), (3, 3)]  # one mark per job that ended, in order of their ends
    assert schedule.start.tolist() == [0.0, 100.0, 100.0]  # V = 0: both wait for job 0's nodes


def test_a_copy_of_a_validating_world_validates_itself() -> None:
    world = HybridWorld(SPLIT, 4, validate=True)
    world.run(15.0, 0.0)
    twin = world.copy()
    assert world._validator is not None and twin._validator is not None
    assert twin._validator.world is twin and world._validator.world is world
    twin.run(math.inf, math.inf)  # each runs on under its own checks, to its own end
    world.run(math.inf, 0.0)
    twin._validator.at_end()
    world._validator.at_end()
    # V = 0: jobs 1 and 2 wait for job 0's nodes, 90 + 80 s; unbounded from 15: job 1 goes out at 15 (5 s),
    # job 2 on arrival
    assert (world.wait_s, twin.wait_s) == (170.0, 5.0)


def test_after_the_head_goes_to_the_cloud_with_others_easy_runs_again_at_once() -> None:
    # 4 local nodes, cloud cap 5. Job 0 (3 nodes, 100 s) starts at 0. At 1 jobs 1 (4 nodes, 1,000 s), 2 and 3
    # (1 node, 500 s each) arrive: job 1 heads the queue (1 node free, shadow time 100, no extra node there), so
    # neither 2 nor 3 can backfill. The cloud takes job 1 (4 nodes) and job 2 (1 node: 5 in use); job 3 does
    # not fit. The head went out, so EASY runs again in the same pass: job 3 heads the queue and starts on the
    # free local node at 1, not when job 0 ends at 100.
    jobs = rigid([0, 1, 1, 1], [100, 1000, 500, 500], [3, 4, 1, 1])
    schedule, _ = replay(jobs, 4, cap=5.0)
    assert schedule.start.tolist() == [0.0, 1.0, 1.0, 1.0]
    assert schedule.site.tolist() == [0, 1, 1, 0]  # local, cloud, cloud, local


def test_every_pass_of_a_validating_world_is_checked_at_its_instant(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    checked: list[object] = []
    real = HybridValidator.at_pass

    def spy(self: HybridValidator, now: float) -> None:
        checked.append(now)
        real(self, now)

    monkeypatch.setattr(HybridValidator, "at_pass", spy)
    # cap 0: the run's first pass at 0, then the passes at 0 (job 0 starts), 10 and 20 (jobs 1, 2 queue), 100
    # (job 0 ends: both start) and 150 (both end); with cap 1 job 1 goes out at 10 and ends at 60 (one pass
    # more), and the pass at 20 finds no room for job 2 (2 nodes) in the cloud
    replay(SPLIT, 4, validate=True)
    assert checked == [0.0, 0.0, 10.0, 20.0, 100.0, 150.0]
    checked.clear()
    replay(SPLIT, 4, cap=1.0, validate=True)
    assert checked == [0.0, 0.0, 10.0, 20.0, 60.0, 100.0, 150.0]
