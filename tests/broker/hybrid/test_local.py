"""EASY and conservative backfilling: hand-worked schedules and properties over random job sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.hybrid.world import replay
from workloads.rigid import RigidJobs


def rigid(submit, runtime, nodes, estimate=None) -> RigidJobs:
    runtime = np.asarray(runtime, float)
    return RigidJobs(submit=np.asarray(submit, float), runtime=runtime,
                     estimate=runtime if estimate is None else np.asarray(estimate, float),
                     nodes=np.asarray(nodes, np.int64))


def test_easy_backfills_around_the_head_reservation() -> None:
    # 10 nodes. Job 1 (8 nodes) waits for job 0: shadow time 100, 2 nodes spare then. Job 2 (4 nodes,
    # ends at 52) backfills at once; job 3 (2 nodes, runs past 100) backfills at 52 on the spare nodes;
    # job 4 (3 nodes) finds no room until job 1 ends at 150.
    jobs = rigid([0, 1, 2, 3, 4], [100, 50, 50, 200, 10], [6, 8, 4, 2, 3])
    schedule, world = replay(jobs, 10, "easy")
    assert schedule.start.tolist() == [0, 100, 2, 52, 150]
    assert world.cluster.head_reservation[1] == 100


def test_jobs_ending_at_the_shadow_time_all_count_as_spare() -> None:
    # jobs 0 and 1 both end at 100: the head (8 nodes) then leaves 12 - 8 = 4 spare nodes, so job 3
    # (2 nodes, 1000 s) backfills at once
    jobs = rigid([0, 0, 1, 2], [100, 100, 100, 1000], [6, 4, 8, 2])
    schedule, world = replay(jobs, 12, "easy")
    assert schedule.start.tolist() == [0, 0, 100, 2] and world.cluster.head_reservation[2] == 100


def test_conservative_protects_every_reservation_where_easy_protects_the_head_only() -> None:
    # Job 2 needs the whole cluster after job 1. EASY lets job 3 (2 nodes, 300 s) start at 3 on the
    # head's spare nodes, which pushes job 2 to 303; conservative reserves job 2 at 150 and job 3 at 160.
    jobs = rigid([0, 1, 2, 3], [100, 50, 10, 300], [6, 8, 10, 2])
    easy, _ = replay(jobs, 10, "easy")
    conservative, _ = replay(jobs, 10, "conservative")
    assert easy.start.tolist() == [0, 100, 303, 3]
    assert conservative.start.tolist() == [0, 100, 150, 160]
    assert conservative.promised.tolist() == [0, 100, 150, 160]


def test_estimates_not_run_times_drive_decisions() -> None:
    # job 0 asks for 1000 s but ends at 100: job 2 (est 500) would end after the head's shadow time
    # (1000) only by estimate... it ends at 501 < 1000, so it backfills; the head starts when job 0 ends.
    jobs = rigid([0, 1, 1], [100, 10, 500], [6, 8, 4], estimate=[1000, 10, 500])
    schedule, _ = replay(jobs, 10, "easy")
    assert schedule.start.tolist() == [0, 501, 1]


@pytest.mark.parametrize("discipline", ["easy", "conservative"])
def test_a_job_running_past_its_estimate_keeps_its_nodes(discipline: str) -> None:
    # job 0 asked for 100 s and runs 200: at the submission at 150 its nodes look free by the estimate,
    # but job 1 (8 nodes) must wait for the real end at 200; job 2 (1 node) fits the 4 free nodes.
    jobs = rigid([0, 1, 150], [200, 50, 10], [6, 8, 1], estimate=[100, 50, 10])
    schedule, _ = replay(jobs, 10, discipline)  # type: ignore[arg-type]
    assert schedule.start.tolist() == [0, 200, 150]
    assert used_nodes_never_exceed(schedule, jobs, 10)


def test_a_job_wider_than_the_cluster_is_refused() -> None:
    with pytest.raises(ValueError, match="asks for 12 nodes, the cluster has 10"):
        replay(rigid([0], [1], [12]), 10)


def used_nodes_never_exceed(schedule, jobs: RigidJobs, m: int) -> bool:
    times = np.concatenate((schedule.start, schedule.end))
    delta = np.concatenate((jobs.nodes, -jobs.nodes))
    order = np.lexsort((delta, times))  # ends before starts at the same instant
    return bool(np.cumsum(delta[order]).max(initial=0) <= m)


jobs_strategy = st.integers(1, 25).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 300), min_size=n, max_size=n),
    st.lists(st.integers(1, 120), min_size=n, max_size=n),
    st.lists(st.integers(1, 8), min_size=n, max_size=n),
    st.lists(st.integers(0, 100), min_size=n, max_size=n),
))


@settings(max_examples=150, deadline=None)
@given(jobs_strategy, st.sampled_from(["easy", "conservative"]))
def test_schedule_properties(data, discipline) -> None:
    submit, runtime, nodes, slack = data
    order = np.argsort(submit, kind="stable")
    runtime = np.asarray(runtime, float)[order]
    jobs = rigid(np.asarray(submit, float)[order], runtime, np.asarray(nodes)[order],
                 estimate=runtime + np.asarray(slack, float)[order])  # estimates never below run times
    schedule, world = replay(jobs, 8, discipline)
    assert not np.isnan(schedule.start).any()
    assert np.all(schedule.start >= jobs.submit)
    assert used_nodes_never_exceed(schedule, jobs, 8)
    if discipline == "easy":
        # a backfilled job never delays the queue head past the reservation it got as head
        for job, reserved in world.cluster.head_reservation.items():
            assert schedule.start[job] <= reserved + 1e-9
    else:
        # no job starts later than promised at its submission
        assert np.all(schedule.start <= schedule.promised + 1e-9)


def test_kth_replays_under_both_disciplines() -> None:
    from tests.conftest import trace_path
    from workloads.cache import load_trace
    from workloads.rigid import rigid_view

    swf = load_trace(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    jobs, report = rigid_view(swf.frame, nodes=100)
    assert report.kept + sum(report.removed.values()) == report.read == 28_476
    for discipline in ("easy", "conservative"):
        schedule, _ = replay(jobs, 100, discipline)  # type: ignore[arg-type]
        assert not np.isnan(schedule.start).any() and np.all(schedule.start >= jobs.submit)
        assert used_nodes_never_exceed(schedule, jobs, 100)
