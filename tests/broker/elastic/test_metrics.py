"""The run's figures by hand, the log's own schedule, the one-core view, every policy on real and random work."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.elastic.episode import Action, run_episode
from broker.elastic.metrics import counted, fairness_at_starts, job_figures, native_figures, pool_periods, summarize
from broker.elastic.sarsa import SarsaConfig
from broker.elastic.simulate import ELASTIC_POLICIES, run_elastic
from broker.elastic.world import ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import THREE, core_jobs
from tests.conftest import trace_path
from workloads.cache import load_trace
from workloads.cores import CoreJobs, cores_view
from workloads.errors import ConfigError, InputError


def test_job_figures_by_hand() -> None:
    # interactive: waits 0, 60, 121 for runs of 60 (W 1, 0.5, 60/181); batch: wait 1000 for 1000 (W 0.5)
    runtime = np.array([60.0, 60.0, 60.0, 1000.0, 5.0])
    wait = np.array([0.0, 60.0, 121.0, 1000.0, 0.0])
    interactive = runtime < 900
    keep = np.array([True, True, True, True, False])  # the last is trimmed
    got, undefined = job_figures(runtime, wait, interactive, np.array([1.0, 0.5, 0.5, 1.0, 0.0]), keep)
    w = np.array([1.0, 0.5, 60 / 181])
    assert got["w_interactive_mean"] == pytest.approx(w.mean()) and got["w_interactive_std"] == pytest.approx(w.std())
    assert got["w_batch_mean"] == 0.5 and got["w_batch_std"] == 0.0 and got["wait_batch_mean_s"] == 1000.0
    assert got["wait_interactive_mean_s"] == pytest.approx(181 / 3)
    assert got["wait_interactive_std_s"] == pytest.approx(np.std([0.0, 60.0, 121.0]))
    assert got["share_interactive_wait_over_120s"] == pytest.approx(1 / 3)  # 121 > 120, 60 is not
    assert got["share_interactive_w_over_0_9"] == pytest.approx(1 / 3) and got["share_batch_w_over_0_9"] == 0.0
    assert got["fairness_mean"] == 0.75 and undefined == {}
    # exactly 120 s and exactly W = 0.9 are not "over"
    edge, _ = job_figures(np.array([1080.0, 60.0]), np.array([120.0, 120.0]), np.array([False, True]),
                          np.ones(2), np.ones(2, dtype=bool))
    assert edge["share_batch_w_over_0_9"] == 0.0 and edge["share_interactive_wait_over_120s"] == 0.0
    none, why = job_figures(runtime, wait, interactive, np.ones(5), np.zeros(5, dtype=bool))
    assert none["w_batch_mean"] is None and why["fairness_mean"] == "no counted job"
    assert why["w_interactive_mean"] == "no interactive job among the counted ones"


def test_the_first_and_last_are_left_out() -> None:
    assert counted(7, 2).tolist() == [False, False, True, True, True, False, False]
    assert not counted(4, 2).any() and counted(3, 0).all()


def test_fairness_replayed_from_a_schedule_by_hand() -> None:
    # THREE run FCFS on one core: starts 0, 100, 150 (see test_world)
    got = fairness_at_starts(np.array([0.0, 100.0, 150.0]), THREE.runtime, THREE.group, 2)
    share0 = 1100 / 1150
    np.testing.assert_allclose(got, [1 - (50 / 1150) / share0, 1 - (share0 - 2 / 3) / share0, 1.0])
    # two jobs at one instant: the first has received no core-second yet when the second is elected
    two = fairness_at_starts(np.array([0.0, 0.0]), np.array([10.0, 10.0]), np.array([0, 1]), 2)
    assert two.tolist() == [0.0, 0.0]
    # a job ending at an instant has been served in full for a job starting then
    after = fairness_at_starts(np.array([0.0, 10.0]), np.array([10.0, 10.0]), np.array([0, 1]), 2)
    assert after.tolist() == [0.0, 1.0]


def test_a_run_summary_and_its_tables_by_hand() -> None:
    result = run_elastic(THREE, PoolConfig(1), "fcfs", lam=1.0, trim=0, validate=True)
    s = result.summary
    assert (s.jobs, s.jobs_counted, s.decisions, s.peak_cores, s.resizes) == (3, 3, 3, 1, 0)
    assert s.utilization == 1.0 and s.mean_cores == 1.0 and s.core_hours == pytest.approx(1150 / 3600)
    # j0 (100 s) and j1 (50 s) are interactive, j2 (1000 s) is batch
    assert s.figures["wait_interactive_mean_s"] == 45.0 and s.figures["w_batch_mean"] == pytest.approx(1000 / 1130)
    assert result.jobs["wait"].tolist() == [0.0, 90.0, 130.0] and result.jobs["counted"].all()
    assert result.instances.to_dict("list") == {"start_s": [0.0], "end_s": [1150.0], "cores": [1],
                                                "core_s": [1150.0]}
    flat = s.to_dict()
    assert flat["w_interactive_mean"] == pytest.approx((1 + 50 / 140) / 2) and "figures" not in flat
    assert flat["policy"] == "fcfs" and flat["mode"] == "rigid"
    assert flat["undefined"] == {"size_demand_corr": "a rigid pool keeps its size"}


def test_how_often_the_oldest_job_went_first() -> None:
    # one core busy until 100; then 1 (1000 s) and 2 (50 s) wait: FCFS takes 1, SJF takes 2
    jobs = core_jobs([0, 10, 20], [100, 1000, 50], [0, 0, 0])
    assert run_elastic(jobs, PoolConfig(1), "fcfs", trim=0).summary.share_oldest_first == 1.0
    sjf = run_elastic(jobs, PoolConfig(1), "sjf", trim=0).summary
    assert sjf.share_oldest_first == 0.0 and "share_oldest_first" not in sjf.undefined
    alone = run_elastic(jobs, PoolConfig(3), "sjf", trim=0).summary  # never more than one job waits
    assert alone.share_oldest_first is None and alone.undefined["share_oldest_first"] == "no decision had a choice"


def test_pool_periods() -> None:
    got = pool_periods([(0.0, 30), (100.0, 40), (1000.0, 35)], 1500.0)
    assert got["core_s"].tolist() == [3000.0, 36000.0, 17500.0]


def test_native_figures_use_the_logs_waits() -> None:
    jobs = core_jobs([0, 10, 20], [100, 50, 1000], [0, 1, 0], wait=[5.0, 200.0, np.nan])
    got, undefined, missing = native_figures(jobs, trim=0)
    # the batch job (1000 s) has no recorded wait: left out, so no batch figure; interactive: W 100/105 and 50/250
    assert missing == 1 and got["w_interactive_mean"] == pytest.approx((100 / 105 + 50 / 250) / 2)
    assert got["share_interactive_wait_over_120s"] == 0.5 and got["w_batch_mean"] is None
    assert undefined["w_batch_mean"] == "no batch job among the counted ones"
    none, why, missing = native_figures(core_jobs([0], [10], [0]), trim=0)
    assert missing == 1 and none["w_batch_mean"] is None
    assert why["w_batch_mean"] == "the log records no wait for the counted jobs"


def test_the_one_core_view_expands_or_keeps_parallel_jobs_and_counts() -> None:
    frame = pd.DataFrame({"job_id": [1, 2, 3, 4, 5], "submit_time": [0, 5, 7, pd.NA, 9],
                          "wait_time": [1, pd.NA, 3, 0, 0], "run_time": [10, 20, pd.NA, 5, 8],
                          "allocated_procs": [1, 3, 1, 1, pd.NA], "requested_procs": [1, 4, 1, 1, 2],
                          "group_id": [7, pd.NA, 7, 7, 9]}, dtype="Int64")
    jobs, report = cores_view(frame)
    assert jobs.ids.tolist() == [1, 2, 2, 2, 5, 5] and jobs.submit.tolist() == [0, 5, 5, 5, 9, 9]
    assert jobs.groups == (-1, 7, 9) and jobs.group.tolist() == [1, 0, 0, 0, 2, 2]
    assert np.isnan(jobs.native_wait[1]) and jobs.native_wait[0] == 1.0
    assert report.removed == {"submit time unknown": 1, "run time unknown or < 0": 1}
    assert report.kept_flagged == {"with unknown group (one shared group)": 1, "with unknown processors (one task)": 0}
    one, report = cores_view(frame, parallel="one")
    assert one.ids.tolist() == [1, 2, 5] and report.kept_flagged["wider than one processor (run on one core)"] == 2
    assert jobs.window(5.0, 4.0).ids.tolist() == [2, 2, 2] and jobs.head(2).ids.tolist() == [1, 2]
    with pytest.raises(ConfigError, match="expand' or 'one'"):
        cores_view(frame, parallel="gang")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"group codes must lie in 0\.\.0"):
        core_jobs([0, 1], [1, 1], [0, 1], groups=1)


def test_lpc_egee_as_the_papers_egee_log() -> None:
    swf = load_trace(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    jobs, report = cores_view(swf.frame)
    assert len(jobs) == 220_695 and report.removed["run time unknown or < 0"] == 14_194
    assert jobs.n_groups == 8 and not np.isnan(jobs.native_wait).any()
    assert 0.79 < (jobs.runtime < 900).mean() < 0.80  # about 4 jobs in 5 are interactive


def test_the_threshold_policy_is_for_elastic_pools_and_unknown_policies_are_named() -> None:
    with pytest.raises(ConfigError, match="threshold autoscaler sizes an elastic pool"):
        run_elastic(THREE, PoolConfig(1), "threshold")
    with pytest.raises(ConfigError, match="unknown elastic policy 'lifo'"):
        run_elastic(THREE, PoolConfig(1), "lifo")
    with pytest.raises(ConfigError, match="trim must be >= 0"):
        run_elastic(THREE, PoolConfig(1), "fcfs", trim=-1)


workloads = st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 2000), st.integers(0, 2)), min_size=1,
                     max_size=60)


@settings(max_examples=40, deadline=None)
@given(rows=workloads, policy=st.sampled_from(["fcfs", "sjf", "edf", "threshold", "sarsa"]),
       elastic=st.booleans(), hold=st.sampled_from([0.0, 1.0, 900.0]), estimate=st.sampled_from(["oracle", "median"]))
def test_every_policy_keeps_the_constraints_on_random_work(rows, policy, elastic, hold, estimate) -> None:
    if policy == "threshold" and not elastic:
        elastic = True
    rows = sorted(rows)
    jobs = core_jobs([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], groups=3)
    pool = PoolConfig(3, elastic=elastic, min_cores=2, max_cores=6, hold_s=hold, estimate=estimate)

    result = run_elastic(jobs, pool, policy, trim=0, validate=True, sarsa=SarsaConfig(pretrain=5, retrain_every=7))
    assert result.summary.decisions == len(rows) and result.jobs["start"].notna().all()
    sizes = result.instances["cores"]
    assert sizes.between(2, 6).all() if elastic else (sizes == 3).all()
    changes = result.instances["start_s"].to_numpy()[1:]
    assert (np.diff(changes) >= hold - 1e-9).all()


@pytest.mark.slow
@pytest.mark.parametrize("elastic", [False, True])
def test_every_policy_on_three_days_of_lpc_egee(elastic: bool) -> None:
    swf = load_trace(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    jobs, _ = cores_view(swf.frame)
    week = jobs.window(jobs.submit[0] + 91 * 86400, 3 * 86400)
    pool = PoolConfig(81, elastic=elastic)
    for name in ELASTIC_POLICIES:
        if name == "threshold" and not elastic:
            continue
        result = run_elastic(week, pool, name, validate=True)
        s = result.summary
        assert s.decisions == len(week) > 2000 and s.jobs_counted == len(week) - 1000
        assert 0 < s.utilization <= 1 and not math.isnan(s.figures["w_interactive_mean"] or math.nan)


# --- by hand: overlapping starts, the summary's fields, the log ---------------------------------------------------


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


# --- hand-worked edges: ends at a start, equal waits --------------------------------------------------------------


def test_a_job_ending_at_a_start_has_ended_for_it_also_with_fractional_times() -> None:
    # job 0 (group 0) runs 0.2 s from 100.1; job 1 (group 1, 0.2 s) starts the instant job 0 ends, 100.1 + 0.2 in
    # floating point (the double nearest 100.3). Shares 1/2 each. Job 0: service (0.2, 0): F = 1 - (1/2) / (1/2) = 0.
    # Job 1: job 0 has received its 0.2 s, job 1's 0.2 s join group 1: (0.2, 0.2), the shares exactly: F = 1
    # (counted as still running, job 0 would have (100.1 + 0.2) - 100.1 = 0.20000000000000284 s)
    got = fairness_at_starts(np.array([100.1, 100.1 + 0.2]), np.array([0.2, 0.2]), np.array([0, 1]), 2)
    assert got.tolist() == [0.0, 1.0]


def test_ten_equal_native_waits_have_their_mean_and_no_spread() -> None:
    # ten interactive jobs of 100 s, each logged as waiting 0.1 s: mean 0.1 s, standard deviation 0
    jobs = core_jobs(1000.0 * np.arange(10), np.full(10, 100.0), np.zeros(10), wait=np.full(10, 0.1))
    figures, _, missing = native_figures(jobs, trim=0)
    assert missing == 0
    assert figures["wait_interactive_mean_s"] == 0.1 and figures["wait_interactive_std_s"] == 0.0
    assert figures["w_interactive_mean"] == pytest.approx(100 / 100.1) and figures["w_interactive_std"] < 1e-15
