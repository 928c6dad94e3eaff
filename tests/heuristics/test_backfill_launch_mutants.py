"""Conservative backfilling: a waiting 0-s job stays counted when other jobs start (issue 19, mutation testing).

A job asking for 0 s holds no nodes, so a job promised later may be reserved over its start; the
scheduler therefore refits every waiting 0-s job at every pass, even a pass with nothing freed (the
module docstring of :mod:`heuristics.backfill`). Starting some other job must not make it forget that
such a job waits: the case below, worked out by hand from the rules, changes start times if it does.
"""

from __future__ import annotations

import numpy as np

from broker.hybrid.world import replay
from heuristics.backfill import Cluster
from workloads.rigid import RigidJobs

# 4 nodes. Job 0 (2 nodes, 10 s) and job 2 (2 nodes, 1 s) start at 0; job 1 (4 nodes, 0 s) is
# promised 10, when job 0 ends. Job 3 (4 nodes, 50 s) arrives at 2: job 1 holds no node at 10, so
# job 3 is promised 10 too, [10, 60). The pass at 2 refits job 1 after job 3: 60 (the first instant
# with 4 nodes free), and nothing moves job 1 back (no nodes are freed before their estimated ends).
# At 10 job 0 ends and job 3 starts; job 1 starts at 60. Had starting job 2 (a 1-s job, not 0 s) or
# job 0 cleared the count of waiting 0-s jobs, the pass at 2 would have had nothing to do: job 1
# would have kept 10 and started there, ahead of job 3 in the queue, taking its 4 nodes.
NODES = [2, 4, 2, 4]
ESTIMATE = [10.0, 0.0, 1.0, 50.0]


def rigid(submit: list[float], nodes: list[int], estimate: list[float]) -> RigidJobs:
    """Jobs with the given widths and estimates (run times equal to them)."""
    est = np.array(estimate, float)
    return RigidJobs(submit=np.array(submit, float), runtime=est, estimate=est, nodes=np.array(nodes, np.int64))


def test_a_waiting_0s_job_is_still_refitted_after_other_jobs_start() -> None:
    cluster = Cluster(4, rigid([0.0, 0.0, 0.0, 2.0], NODES, ESTIMATE), "conservative")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    cluster.submit(1, 0.0)
    cluster.submit(2, 0.0)
    assert cluster.reserved == {1: 10.0, 2: 0.0}
    assert cluster.schedule(0.0) == [2]  # a 1-s job starts while the 0-s job 1 waits
    assert cluster.queue == [1] and cluster.reserved == {1: 10.0}
    cluster.finish(2)  # at 1, by its estimate: nothing freed after now
    assert cluster.schedule(1.0) == []
    cluster.submit(3, 2.0)
    assert cluster.promised == {0: 0.0, 1: 10.0, 2: 0.0, 3: 10.0}
    assert cluster.schedule(2.0) == []
    assert cluster.reserved == {1: 60.0, 3: 10.0}
    cluster.finish(0)
    assert cluster.schedule(10.0) == [3]
    assert cluster.queue == [1] and cluster.free == 0 and cluster.running == {3: 60.0}
    cluster.finish(3)
    assert cluster.schedule(60.0) == [1]
    assert cluster.queue == [] and cluster.reserved == {}


def test_the_same_case_replayed_starts_the_0s_job_last() -> None:
    # the same jobs through the plain replay of the cluster (jobs 0, 1 and 2 submitted at 0, job 3 at 2)
    schedule, _ = replay(rigid([0.0, 0.0, 0.0, 2.0], NODES, ESTIMATE), 4, "conservative")
    assert schedule.start.tolist() == [0.0, 60.0, 0.0, 10.0]
    assert schedule.promised.tolist() == [0.0, 10.0, 0.0, 10.0]
