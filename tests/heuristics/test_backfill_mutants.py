"""EASY and conservative backfilling (:class:`heuristics.backfill.Cluster`) on hand-worked schedules (issue 19).

Each case is a few jobs on a few nodes, driven through the cluster's own calls (submit, schedule,
finish, take) as the hybrid world drives it; the starts, shadow times and reservations in the
comments are worked out by hand from the rules in the module docstring, on their boundaries and ties.
"""

from __future__ import annotations

import numpy as np

from heuristics.backfill import Cluster
from workloads.rigid import RigidJobs


def rigid(nodes: list[int], estimate: list[float]) -> RigidJobs:
    """Jobs with the given widths and estimates (run times equal to them; submit times unused here)."""
    est = np.array(estimate, float)
    return RigidJobs(submit=np.zeros(len(nodes)), runtime=est, estimate=est, nodes=np.array(nodes, np.int64))


def easy_pass(m: int, nodes: list[int], estimate: list[float], running: int) -> tuple[Cluster, list[int]]:
    """Jobs ``0 .. running - 1`` start at 0 on an empty cluster, the others then queue; one EASY pass at 0."""
    cluster = Cluster(m, rigid(nodes, estimate), "easy")
    for job in range(running):
        cluster.submit(job, 0.0)
    assert cluster.schedule(0.0) == list(range(running))
    for job in range(running, len(nodes)):
        cluster.submit(job, 0.0)
    return cluster, cluster.schedule(0.0)


# -- EASY --------------------------------------------------------------------------------------------------

def test_easy_backfills_at_a_later_pass_once_the_head_has_its_reservation() -> None:
    # 4 nodes. Job 0 (3 nodes, 100 s) runs [0, 100); head job 1 (4 nodes) waits: shadow time 100, no
    # extra node, and 1 node free now. At 10 job 2 (1 node, 90 s) arrives: it ends exactly at the
    # shadow time (10 + 90 = 100), so the pass at 10 starts it on the free node although the head
    # already had its reservation (only with no node free is there nothing to do).
    cluster = Cluster(4, rigid([3, 4, 1], [100.0, 50.0, 90.0]), "easy")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    cluster.submit(1, 0.0)
    assert cluster.schedule(0.0) == [] and cluster.head_reservation == {1: 100.0}
    cluster.submit(2, 10.0)
    assert cluster.schedule(10.0) == [2]
    assert cluster.queue == [1] and cluster.free == 0 and cluster.running == {0: 100.0, 2: 100.0}
    assert cluster.head_reservation == {1: 100.0}


def test_easy_late_backfills_use_up_the_extra_nodes_and_no_more() -> None:
    # 10 nodes. Job 0 (6 nodes, 100 s) runs [0, 100), 4 free. Head job 1 needs 7: at 100 ten are free,
    # 3 extra. Jobs 2 (1 node), 3 (2 nodes) and 4 (1 node), 500 s each, end after the shadow time:
    # job 2 takes 1 extra node (2 left), job 3 the other 2 (0 left); job 4 fits the 1 free node but
    # no extra one is left, so it waits. At 100 exactly 7 nodes are free for the head (10 - 1 - 2).
    cluster, started = easy_pass(10, [6, 7, 1, 2, 1], [100.0, 10.0, 500.0, 500.0, 500.0], running=1)
    assert started == [2, 3]
    assert cluster.queue == [1, 4] and cluster.free == 1 and cluster.head_reservation == {1: 100.0}


def test_easy_backfills_ending_in_time_leave_the_extra_nodes_alone() -> None:
    # 10 nodes. Job 0 (6 nodes, 100 s) runs [0, 100), 4 free; head job 1 needs 7: shadow 100, 3 extra.
    # Job 2 (2 nodes, 100 s) ends exactly at the shadow time: it starts and the 3 extra nodes stay.
    # Job 3 (2 nodes, 500 s) ends after it: 2 <= 3 extra, and 2 nodes are still free: it starts.
    # At 100 job 2 has ended: 10 - 2 = 8 free, enough for the head.
    cluster, started = easy_pass(10, [6, 7, 2, 2], [100.0, 10.0, 100.0, 500.0], running=1)
    assert started == [2, 3]
    assert cluster.queue == [1] and cluster.free == 0


def test_the_shadow_time_follows_the_estimated_ends_not_the_job_numbers() -> None:
    # 5 nodes. Job 0 (2 nodes, 200 s) and job 1 (2 nodes, 100 s) run from 0, 1 node free. Head job 2
    # needs 3: job 1 ends first (100) and leaves 1 + 2 = 3 free: shadow 100, no extra node (job 0,
    # ending at 200, is after it). Job 3 (1 node, 150 s) would end at 150 > 100 on no extra node:
    # it waits. (Taken in job order, job 0's end 200 would have been the shadow and job 3 would run.)
    cluster, started = easy_pass(5, [2, 2, 3, 1], [200.0, 100.0, 10.0, 150.0], running=2)
    assert started == []
    assert cluster.head_reservation == {2: 100.0} and cluster.queue == [2, 3] and cluster.free == 1
    assert cluster._shadow(3, 0.0) == (100.0, 0)
    assert cluster._shadow(5, 0.0) == (200.0, 0)


# -- conservative ------------------------------------------------------------------------------------------

def test_a_job_asking_for_no_time_is_refitted_after_a_take() -> None:
    # 4 nodes. Job 0 (4 nodes, 100 s) runs [0, 100). Job 1 (4 nodes, 0 s) holds no node: promised 100.
    # Job 2 (1 node, 1 s) is promised 100 too, [100, 101). A 0-s job is refitted at every pass: at the
    # pass at 0 the first instant with 4 nodes free is 101. At 1 job 2 is taken elsewhere. Job 3
    # (4 nodes, 50 s) arrives at 2: compressed first, job 1 is back at 100; it holds nothing, so job 3
    # is promised 100, [100, 150). The pass at 2 refits job 1 after job 3: 150. At 100 job 0 ends and
    # job 3 starts; job 1 starts at 150. (Had the take made the scheduler forget it has a waiting 0-s
    # job, job 1 would have stayed at 100 and started there, before job 3.)
    cluster = Cluster(4, rigid([4, 4, 1, 4], [100.0, 0.0, 1.0, 50.0]), "conservative")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    cluster.submit(1, 0.0)
    cluster.submit(2, 0.0)
    assert cluster.schedule(0.0) == []
    assert cluster.reserved == {1: 101.0, 2: 100.0}
    cluster.take(2)
    cluster.submit(3, 2.0)
    assert cluster.promised == {0: 0.0, 1: 100.0, 2: 100.0, 3: 100.0}
    assert cluster.reserved == {1: 100.0, 3: 100.0}
    assert cluster.schedule(2.0) == []
    assert cluster.reserved == {1: 150.0, 3: 100.0}
    cluster.finish(0)
    assert cluster.schedule(100.0) == [3]
    cluster.finish(3)
    assert cluster.schedule(150.0) == [1]
    assert cluster.queue == [] and cluster.reserved == {}


def test_nodes_freed_by_a_take_then_an_end_both_count_for_compression() -> None:
    # 4 nodes. Jobs 0 (2 nodes, 100 s) and 1 (2 nodes, 40 s) run from 0. Job 2 (2 nodes, 10 s) is
    # promised 40 ([40, 50), when job 1 ends), job 3 (2 nodes, 50 s) 50 ([50, 100)). At a pass at 5
    # job 3 is taken elsewhere (its [50, 100) is free again); at 10 job 0 ends, 90 s early ([10, 100)
    # free). Job 1 holds 2 nodes until 40, so 2 are free from 10: job 2 moves up to 10 and starts.
    cluster = Cluster(4, rigid([2, 2, 2, 2], [100.0, 40.0, 10.0, 50.0]), "conservative")
    cluster.submit(0, 0.0)
    cluster.submit(1, 0.0)
    assert cluster.schedule(0.0) == [0, 1]
    cluster.submit(2, 0.0)
    cluster.submit(3, 0.0)
    assert cluster.promised == {0: 0.0, 1: 0.0, 2: 40.0, 3: 50.0}
    assert cluster.schedule(0.0) == []
    assert cluster.schedule(5.0) == []
    cluster.take(3)
    cluster.finish(0)
    assert cluster.schedule(10.0) == [2]
    assert cluster.running == {1: 40.0, 2: 20.0} and cluster.free == 0 and cluster.queue == []


def test_a_job_started_off_its_reservation_moves_its_hold() -> None:
    # The scheduler itself only starts a job at its reservation (a late one is first shifted to now);
    # a caller may start a waiting job itself (``_launch``): its hold then moves to where it runs.
    # 4 nodes. Job 0 (4 nodes, 100 s) runs [0, 100). Job 1 (2 nodes, 50 s) is promised 100,
    # [100, 150); job 2 (4 nodes, 50 s) 150, [150, 200). Job 0 ends at 20 and the caller starts job 1
    # at once: it holds 2 nodes over [20, 70) and [100, 150) is free again. At the pass at 20 job 2
    # moves up to 70 (4 nodes free over [70, 120)); job 1 ends at 70 and job 2 starts then.
    cluster = Cluster(4, rigid([4, 2, 4], [100.0, 50.0, 50.0]), "conservative")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    cluster.submit(1, 0.0)
    cluster.submit(2, 0.0)
    assert cluster.promised == {0: 0.0, 1: 100.0, 2: 150.0}
    assert cluster.schedule(0.0) == []
    cluster.finish(0)
    cluster.queue.remove(1)
    assert cluster._launch(1, 20.0) == 1
    assert cluster.running == {1: 70.0} and cluster.free == 2 and cluster.reserved == {2: 150.0}
    assert cluster.schedule(20.0) == []
    assert cluster.reserved == {2: 70.0}
    assert (cluster._profile.times, cluster._profile.free) == ([20.0, 70.0, 120.0], [2, 0, 4])
    cluster.finish(1)
    assert cluster.schedule(70.0) == [2]
    assert cluster.running == {2: 120.0} and cluster.free == 0 and cluster.queue == []
