"""The run's figures by hand where the first tests leave room: overlapping starts, the summary's fields, the log."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.episode import Action, run_episode
from broker.elastic.metrics import fairness_at_starts, job_figures, native_figures, summarize
from broker.elastic.simulate import run_elastic
from broker.elastic.world import ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import core_jobs
from workloads.cores import CoreJobs


def test_fairness_with_jobs_running_side_by_side_by_hand() -> None:
    # A (group 0, 100 s) at 5, B (group 0, 100 s) at 10, C (group 1, 20 s) at 20, D (group 1, 80 s) at 300;
    # targets: 200 / 300 and 100 / 300
    got = fairness_at_starts(np.array([5.0, 10.0, 20.0, 300.0]), np.array([100.0, 100.0, 20.0, 80.0]),
                             np.array([0, 0, 1, 1]), 2)
    # A: everything to group 0, group 1 lacks 1/3 of a largest share 2/3: F = 1/2; B: A's 5 s + 100: the same;
    # C: A and B have run 15 + 10 = 25 s, with C's 20: shares 5/9, 4/9, deficit 1/9: F = 1 - (1/9) / (2/3);
    # D: A, B, C have ended (200 and 20 served), with D's 80: exactly the targets
    np.testing.assert_allclose(got, [0.5, 0.5, 5 / 6, 1.0], rtol=1e-12)


def test_no_counted_job_has_no_fairness() -> None:
    got, why = job_figures(np.ones(2), np.zeros(2), np.ones(2, dtype=bool), np.ones(2), np.zeros(2, dtype=bool))
    assert got["fairness_mean"] is None and why["fairness_mean"] == "no counted job"


def test_the_logs_own_schedule_starts_each_job_after_its_wait() -> None:
    # A (group 0, 100 s) starts at 0; B (group 1, 300 s) submitted at 0 starts after its 50 s wait
    jobs = core_jobs([0, 0], [100, 300], [0, 1], wait=[0.0, 50.0])
    got, _, missing = native_figures(jobs, trim=0)
    # targets 1/4, 3/4; A: F = 1 - (3/4) / (3/4) = 0; B at 50: A has 50 s, with B's 300: shares 1/7, 6/7, F = 6/7
    assert missing == 0 and got["fairness_mean"] == pytest.approx((0.0 + 6 / 7) / 2)
    # a job without a recorded wait starts at its submission: A at 0 has run 10 s when B starts at 10
    unknown = core_jobs([0, 10], [100, 300], [0, 1], wait=[np.nan, 0.0])
    got, _, missing = native_figures(unknown, trim=0)
    # B: shares 10 / 310 and 300 / 310, deficit 1/4 - 1/31: F = 1 - (27 / 124) / (3 / 4) = 22/31 (A not counted)
    assert missing == 1 and got["fairness_mean"] == pytest.approx(22 / 31)


def test_the_log_figures_class_threshold_trim_and_reasons() -> None:
    # exactly 900 s is batch (interactive: below 900 s), by default and when given
    batch = core_jobs([0], [900], [0], wait=[0.0])
    for got, _, _ in (native_figures(batch, trim=0), native_figures(batch, 900.0, trim=0)):
        assert got["w_batch_mean"] == 1.0 and got["w_interactive_mean"] is None
    # by default 500 jobs are left out at each end: of 1001, the middle one is counted
    n = 1001
    middle = core_jobs(np.arange(n), np.full(n, 10.0), np.zeros(n), wait=np.zeros(n))
    got, undefined, missing = native_figures(middle)
    assert got["w_interactive_mean"] == 1.0 and missing == 0 and "w_interactive_mean" not in undefined
    none, why, missing = native_figures(core_jobs([0], [10], [0], wait=[0.0]), trim=1)
    assert missing == 0 and none["fairness_mean"] is None and why["fairness_mean"] == "no counted job"


def test_a_summary_carries_the_pool_and_the_run() -> None:
    # one core from 100: A (group 7, 100 s) at 100; B (group 9, 20 s) at 110, C (7, 10 s) at 120, D (9, 1000 s) at 130
    jobs = CoreJobs(submit=np.array([100.0, 110.0, 120.0, 130.0]), runtime=np.array([100.0, 20.0, 10.0, 1000.0]),
                    group=np.array([0, 1, 0, 1]), native_wait=np.full(4, np.nan), groups=(7, 9))
    result = run_elastic(jobs, PoolConfig(1, estimate="median"), "sjf", lam=0.25, trim=0)
    s = result.summary
    # median estimates: when A ends at 200 an interactive job is believed to run 100 s (B and C: the older, B,
    # goes first), D 900 s (the prior); then 60 s (the median of 100 and 20): C at 220, D at 230, ending at 1230
    assert result.jobs["start"].tolist() == [100.0, 200.0, 220.0, 230.0]
    assert (s.policy, s.mode, s.lam, s.estimate, s.cores, s.min_cores, s.max_cores) == (
        "sjf", "rigid", 0.25, "median", 1, 1, 1)
    assert (s.span_s, s.core_hours, s.utilization, s.trainings) == (1130.0, 1130.0 / 3600, 1.0, 0)
    assert list(result.jobs.columns) == ["job_id", "submit", "start", "end", "wait", "runtime", "group",
                                         "interactive", "w", "fairness", "counted"]
    assert result.jobs["group"].tolist() == [7, 9, 7, 9] and result.jobs["runtime"].tolist() == [100, 20, 10, 1000]
    assert result.jobs["interactive"].tolist() == [True, True, True, False]
    assert result.jobs["fairness"].notna().all()


def test_how_often_the_oldest_went_first_when_it_did_half_the_time() -> None:
    # one core busy until 100; SJF takes 1 (10 s, the oldest) before 3 (20 s) and 2 (50 s), then 3 before 2
    jobs = core_jobs([0, 10, 20, 30], [100, 10, 50, 20], [0, 0, 0, 0])
    result = run_elastic(jobs, PoolConfig(1), "sjf", trim=0)
    assert result.jobs["start"].tolist() == [0.0, 100.0, 130.0, 110.0]
    assert result.summary.share_oldest_first == 0.5  # 1 of the 2 decisions with a choice


def test_an_elastic_summary_in_under_a_second() -> None:
    # one core, 1..2 allowed, a 10 s hold: j0 (1 s) at 0, j1 (0.2 s) at 0.5 finds the pool full, which grows to 2
    jobs = core_jobs([0, 0.5], [1.0, 0.2], [0, 0])
    pool = PoolConfig(1, elastic=True, min_cores=1, max_cores=2, hold_s=10.0)
    s = run_elastic(jobs, pool, "threshold", trim=0).summary
    # the last job ends at 1 (the hold ends later, at 10.5): 0.5 x 1 + 0.5 x 2 core-seconds
    assert (s.mode, s.min_cores, s.max_cores, s.peak_cores, s.resizes) == ("elastic", 1, 2, 2, 1)
    assert (s.span_s, s.core_hours * 3600, s.mean_cores) == pytest.approx((1.0, 1.5, 1.5))
    assert s.utilization == pytest.approx(1.2 / 1.5)
    # an elastic pool's floor is its own, not its first size
    floor = run_elastic(core_jobs([0], [5], [0]), PoolConfig(2, elastic=True, min_cores=1, max_cores=3), trim=0)
    assert (floor.summary.cores, floor.summary.min_cores, floor.summary.max_cores) == (2, 1, 3)
    # half a core-second of work on half a core-second
    assert run_elastic(core_jobs([0], [0.5], [0]), PoolConfig(1), trim=0).summary.utilization == 1.0


def test_a_summary_of_no_job() -> None:
    empty = CoreJobs(submit=np.empty(0), runtime=np.empty(0), group=np.empty(0, dtype=np.int64),
                     native_wait=np.empty(0))
    world = ElasticWorld(empty, PoolConfig(2), validate=True)
    assert world.advance() is None
    s = summarize(world, policy="fcfs", lam=0.5).summary
    assert (s.jobs, s.utilization, s.mean_cores, s.span_s, s.core_hours, s.peak_cores) == (0, 0.0, 2.0, 0.0, 0.0, 2)


def test_the_summary_defaults_leave_out_500_jobs_at_each_end_and_count_no_training() -> None:
    n = 1001
    world = ElasticWorld(core_jobs(np.arange(n), np.ones(n), np.zeros(n)), PoolConfig(1))
    run_episode(world, 0.5, lambda d, w: Action(int(d.queued[0])))
    s = summarize(world, policy="fcfs", lam=0.5).summary
    assert (s.jobs_counted, s.trainings) == (1, 0)


def test_jobs_without_group_ids_show_their_codes() -> None:
    jobs = CoreJobs(submit=np.array([0.0, 1.0]), runtime=np.array([5.0, 5.0]), group=np.zeros(2, dtype=np.int64),
                    native_wait=np.full(2, np.nan))
    assert run_elastic(jobs, PoolConfig(2), trim=0).jobs["group"].tolist() == [0, 0]
