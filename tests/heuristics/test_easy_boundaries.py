"""EASY backfilling exactly on its boundaries, worked by hand (issue 19's first example).

A waiting job may start now, ahead of the queue's head, if it fits the free nodes and either ends
(by its estimate) no later than the head's *shadow time* or needs no more than the *extra* nodes
left at the shadow time once the head has its own.
"""

from __future__ import annotations

import numpy as np

from heuristics.backfill import Cluster
from workloads.rigid import RigidJobs


def rigid(nodes: list[int], estimate: list[float]) -> RigidJobs:
    est = np.array(estimate)
    return RigidJobs(submit=np.zeros(len(nodes)), runtime=est, estimate=est, nodes=np.array(nodes, np.int64))


def easy_after_the_first_job_runs(m: int, nodes: list[int], estimate: list[float]) -> list[int]:
    """Job 0 starts at 0 on an empty cluster; every other job then queues; one EASY pass at 0."""
    cluster = Cluster(m, rigid(nodes, estimate), "easy")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    for job in range(1, len(nodes)):
        cluster.submit(job, 0.0)
    return cluster.schedule(0.0)


def test_a_job_ending_exactly_at_the_shadow_time_backfills() -> None:
    # 4 nodes; job 0 (3 nodes) runs until 100; head job 1 needs all 4: its shadow time is 100 and
    # no node is extra then. Job 2 (1 node, 100 s) ends exactly at 100: it backfills.
    assert easy_after_the_first_job_runs(4, [3, 4, 1], [100.0, 50.0, 100.0]) == [2]


def test_a_job_ending_a_second_after_the_shadow_time_waits() -> None:
    # The same, job 2 asking for 101 s: it would delay the head and there is no extra node.
    assert easy_after_the_first_job_runs(4, [3, 4, 1], [100.0, 50.0, 101.0]) == []


def test_a_late_job_backfills_on_exactly_the_extra_nodes_and_not_on_one_more() -> None:
    # 5 nodes; job 0 (3 nodes) runs until 100, 2 nodes free now; head job 1 needs 4: at 100 five are
    # free, one extra. Job 2 (1 node, 500 s) ends after the shadow time but fits the extra node:
    # it starts. Job 3 (2 nodes, 500 s) fits the free nodes but not the extra one: it waits.
    assert easy_after_the_first_job_runs(5, [3, 4, 1], [100.0, 50.0, 500.0]) == [2]
    assert easy_after_the_first_job_runs(5, [3, 4, 2], [100.0, 50.0, 500.0]) == []


def test_the_shadow_time_counts_every_job_ending_at_that_instant() -> None:
    # 6 nodes; jobs 0 and 1 (2 nodes each) both end at 100; 2 free now. Head job 2 needs 4: at 100
    # six nodes are free, two extra (both jobs ending then count). Job 3 (2 nodes, 500 s) uses them.
    cluster = Cluster(6, rigid([2, 2, 4, 2], [100.0, 100.0, 50.0, 500.0]), "easy")
    for job in (0, 1):
        cluster.submit(job, 0.0)
    assert cluster.schedule(0.0) == [0, 1]
    for job in (2, 3):
        cluster.submit(job, 0.0)
    assert cluster.schedule(0.0) == [3]
    assert cluster.head_reservation == {2: 100.0}
