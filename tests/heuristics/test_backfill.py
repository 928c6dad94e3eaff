"""Conservative backfilling (:class:`heuristics.backfill.Cluster`): promises at an instant where nodes were freed,
the fast profile against a plainly written reference (same starts and promises to the last bit), late reservations."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.hybrid.world import LOCAL, HybridWorld, replay
from heuristics.backfill import Cluster, _Profile
from workloads.rigid import RigidJobs


def rigid(submit, runtime, nodes, estimate=None) -> RigidJobs:
    runtime = np.asarray(runtime, float)
    return RigidJobs(submit=np.asarray(submit, float), runtime=runtime,
                     estimate=runtime if estimate is None else np.asarray(estimate, float),
                     nodes=np.asarray(nodes, np.int64))


# -- a promise is made after the reservations are compressed ----------------------------------------------

def test_a_job_submitted_when_another_ends_does_not_overtake_an_earlier_one() -> None:
    # 4 nodes. Job 0 (4 nodes) asks for 100 s and ends at 50; job 1 (3 nodes, 100 s) is promised 100.
    # At 50 job 0 ends and jobs 2 (2 nodes, 10 s) and 3 (1 node, 10 s) arrive. Compressed first, job 1
    # moves to 50 and leaves one node: job 2 is promised 150 (after job 1), job 3 backfills at 50.
    # (Promised before the compression, job 2 took [50, 60) and pushed job 1 to 60.)
    jobs = rigid([0, 1, 50, 50], [50, 100, 10, 10], [4, 3, 2, 1], estimate=[100, 100, 10, 10])
    schedule, _ = replay(jobs, 4, "conservative")
    assert schedule.promised.tolist() == [0, 100, 150, 50]
    assert schedule.start.tolist() == [0, 50, 150, 50]


def test_a_job_submitted_after_a_take_does_not_overtake_an_earlier_one() -> None:
    # 4 nodes, every job all of them: job 0 runs [0, 100) by its estimate, job 1 is promised 100 and
    # job 2 150. Job 1 goes elsewhere; job 3 then arrives: job 2 moves up to 100 first, job 3 gets 150.
    cluster = Cluster(4, rigid([0, 1, 1, 2], [100, 50, 50, 50], [4, 4, 4, 4]), "conservative")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    cluster.submit(1, 1.0)
    cluster.submit(2, 1.0)
    assert cluster.schedule(1.0) == []
    cluster.take(1)
    cluster.submit(3, 2.0)
    assert cluster.promised == {0: 0.0, 1: 100.0, 2: 150.0, 3: 150.0}
    assert cluster.schedule(2.0) == []
    cluster.finish(0)
    assert cluster.schedule(100.0) == [2]
    cluster.finish(2)
    assert cluster.schedule(150.0) == [3]


class Spy(Cluster):
    """A cluster that checks as it runs: each promise made after nodes were freed against the one a full
    pass first would give, and after each pass the profile it keeps against free nodes counted from scratch."""

    def __init__(self, m: int, jobs: RigidJobs) -> None:
        super().__init__(m, jobs, "conservative")
        self.checked = 0
        self.freed_since_pass = False

    def finish(self, job: int) -> None:
        super().finish(job)
        self.freed_since_pass = True

    def take(self, job: int) -> None:
        super().take(job)
        self.freed_since_pass = True

    def schedule(self, now: float) -> list[int]:
        self.freed_since_pass = False
        started = super().schedule(now)
        times, free = self._profile.times, self._profile.free
        assert times[0] == now and all(a < b for a, b in pairwise(times))
        assert all(a != b for a, b in pairwise(free)), "adjacent steps are merged"
        assert free == [free_at(self, now, t) for t in times], "the profile kept is the one rebuilt"
        return started

    def submit(self, job: int, now: float) -> None:
        if self.freed_since_pass:
            twin = self.copy()
            Cluster.schedule(twin, now)  # compresses; a job it starts keeps the same free-node profile
            Cluster.submit(twin, job, now)
            super().submit(job, now)
            assert self.promised[job] == twin.promised[job], f"job {job} at {now}"
            self.checked += 1
            self.freed_since_pass = False  # the submission compressed
        else:
            super().submit(job, now)


def free_at(cluster: Cluster, now: float, t: float) -> int:
    """Free nodes at ``t`` counted from scratch (as :class:`Reference` does)."""
    est, width = cluster.jobs.estimate, cluster.jobs.nodes
    released = sum(int(width[j]) for j, end in cluster.running.items() if max(end, now) <= t)
    held = sum(int(width[j]) for j, s in cluster.reserved.items() if max(s, now) <= t < max(s, now) + est[j])
    return cluster.free + released - held


def spied_world(jobs: RigidJobs, m: int) -> tuple[HybridWorld, Spy]:
    world = HybridWorld(jobs, m, "conservative")
    world.cluster = spy = Spy(m, jobs)
    return world, spy


# Small integer times so that submissions, ends and estimates often coincide; estimates below run times too.
workloads = st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 60), min_size=n, max_size=n),
    st.lists(st.integers(0, 40), min_size=n, max_size=n),
    st.lists(st.integers(1, 6), min_size=n, max_size=n),
    st.lists(st.integers(-20, 30), min_size=n, max_size=n),
))


def jobs_of(data, *, overrun: bool = True) -> RigidJobs:
    submit, runtime, nodes, slack = (np.asarray(x) for x in data)
    order = np.argsort(submit, kind="stable")
    runtime = runtime[order].astype(float)
    # without overruns, no estimate of 0 s either: such a job holds no nodes, so its promise protects nothing
    estimate = np.maximum(runtime + slack[order], 0) if overrun else np.maximum(runtime + np.abs(slack[order]), 1)
    return rigid(submit[order], runtime, nodes[order], estimate=estimate)


@settings(max_examples=300, deadline=None)
@given(workloads, st.sampled_from([0.0, 2.0, 5.0]))
def test_a_promise_after_freed_nodes_is_the_one_a_full_pass_would_give(data, cap) -> None:
    jobs = jobs_of(data)
    world, spy = spied_world(jobs, 6)
    world.run(math.inf, cap)
    assert world.finished() and len(spy.promised) == len(jobs)


def test_the_spy_checks_promises_on_the_hand_worked_case() -> None:
    jobs = rigid([0, 1, 50, 50], [50, 100, 10, 10], [4, 3, 2, 1], estimate=[100, 100, 10, 10])
    world, spy = spied_world(jobs, 4)
    world.run(math.inf, 0.0)
    assert spy.checked == 1 and spy.promised == {0: 0.0, 1: 100.0, 2: 150.0, 3: 50.0}


@settings(max_examples=150, deadline=None)
@given(workloads)
def test_with_estimates_not_below_run_times_no_job_starts_after_its_promise(data) -> None:
    jobs = jobs_of(data, overrun=False)
    schedule, _ = replay(jobs, 6, "conservative")
    assert np.all(schedule.start <= schedule.promised)
    assert np.all(schedule.promised >= jobs.submit)


def test_the_profile_merges_steps_that_cancel_and_forgets_the_past() -> None:
    profile = _Profile(0.0, 4)
    profile.add(0.0, 10.0, -3)
    profile.add(10.0, 20.0, -4)
    assert (profile.times, profile.free) == ([0.0, 10.0, 20.0], [1, 0, 4])
    profile.add(10.0, 20.0, 1)
    assert (profile.times, profile.free) == ([0.0, 20.0], [1, 4])
    profile.advance(15.0)
    assert (profile.times, profile.free) == ([15.0, 20.0], [1, 4])
    profile.add(0.0, 17.0, 1)  # only from the profile's start on
    assert (profile.times, profile.free) == ([15.0, 17.0, 20.0], [2, 1, 4])


def test_the_earliest_window_counts_the_asking_jobs_own_nodes_free() -> None:
    # 4 nodes: none free until 15 (a running job), then a 3-node job J holds [20, 30)
    profile = _Profile(0.0, 4)
    profile.add(0.0, 15.0, -4)
    profile.add(20.0, 30.0, -3)
    assert (profile.times, profile.free) == ([0.0, 15.0, 20.0, 30.0], [0, 4, 1, 4])
    assert profile.earliest(3, 10.0) == 30.0  # a job like J, J's hold in the way
    assert profile.earliest(3, 10.0, before=20.0) == 15.0  # J itself: [15, 25) fits with its own nodes
    assert profile.earliest(3, 10.0, before=20.0, until=15.0) == 20.0  # no window looked at before 15
    assert profile.earliest(1, 0.0) == 15.0 and profile.earliest(5, 1.0) == math.inf


# -- the fast profile against a reference written plainly --------------------------------------------------

class Reference:
    """Conservative backfilling as the module docstring states it, with nothing kept between questions.

    Free nodes at a time are counted from scratch (running jobs free their nodes at their estimated
    end, or now if that is past; a reservation holds its nodes from ``max(start, now)`` for its
    estimate, but a late one, its start past, holds none against the jobs before it in the queue),
    and a job's earliest start is the first candidate time (now, or a time where the count changes)
    whose whole window has room.
    """

    def __init__(self, m: int, jobs: RigidJobs) -> None:
        self.m = self.free = m
        self.width, self.est = jobs.nodes.tolist(), jobs.estimate.tolist()
        self.queue: list[int] = []
        self.running: dict[int, float] = {}
        self.reserved: dict[int, float] = {}
        self.promised: dict[int, float] = {}
        self.freed = False

    def submit(self, job: int, now: float) -> None:
        if self.freed:
            self.compress(now)
        self.queue.append(job)
        self.reserved[job] = self.promised[job] = self.earliest(job, now)

    def finish(self, job: int) -> None:
        del self.running[job]
        self.free += self.width[job]
        self.freed = True

    def take(self, job: int) -> None:
        self.queue.remove(job)
        del self.reserved[job]
        self.freed = True

    def schedule(self, now: float) -> list[int]:
        self.compress(now)
        started = []
        for job in list(self.queue):
            if self.reserved[job] <= now and self.width[job] <= self.free:
                self.queue.remove(job)
                del self.reserved[job]
                self.free -= self.width[job]
                self.running[job] = now + self.est[job]
                started.append(job)
        return started

    def compress(self, now: float) -> None:
        for job in self.queue:
            self.reserved[job] = self.earliest(job, now)
        self.freed = False

    def holds(self, now: float, but: int) -> list[tuple[float, float, int]]:
        """(from, to, nodes) of every reservation but ``but``'s and those of the late jobs after it in the queue."""
        after = set(self.queue[self.queue.index(but) + 1:])
        return [(max(s, now), max(s, now) + self.est[j], self.width[j]) for j, s in self.reserved.items()
                if j != but and not (j in after and s < now)]

    def free_at(self, t: float, now: float, holds: list[tuple[float, float, int]]) -> int:
        released = sum(self.width[j] for j, end in self.running.items() if max(end, now) <= t)
        return self.free + released - sum(w for a, b, w in holds if a <= t < b)

    def earliest(self, job: int, now: float) -> float:
        p, d = self.width[job], self.est[job]
        holds = self.holds(now, job)
        points = sorted({now, *(max(e, now) for e in self.running.values()), *(a for a, _, _ in holds),
                         *(b for _, b, _ in holds)})
        for t in points:
            window = [t] + [x for x in points if t < x < t + d]
            if all(self.free_at(x, now, holds) >= p for x in window):
                return t
        raise AssertionError("no room at all")


def run_with(cluster, jobs: RigidJobs, m: int, cap: float) -> tuple[list[tuple[int, float, int]], dict[int, float]]:
    world = HybridWorld(jobs, m, "conservative")
    world.cluster = cluster
    world.run(math.inf, cap)
    assert world.finished()
    return sorted(world.drain_log()), dict(world.cluster.promised)


@settings(max_examples=300, deadline=None)
@given(workloads, st.sampled_from([0.0, 3.0, math.inf]))
def test_the_cluster_schedules_as_the_reference(data, cap) -> None:
    jobs = jobs_of(data)
    fast = run_with(Cluster(6, jobs, "conservative"), jobs, 6, cap)
    assert fast == run_with(Reference(6, jobs), jobs, 6, cap)


def test_the_reference_on_the_hand_worked_case() -> None:
    jobs = rigid([0, 1, 50, 50], [50, 100, 10, 10], [4, 3, 2, 1], estimate=[100, 100, 10, 10])
    log, promised = run_with(Reference(4, jobs), jobs, 4, 0.0)
    assert log == [(0, 0.0, LOCAL), (1, 50.0, LOCAL), (2, 150.0, LOCAL), (3, 50.0, LOCAL)]
    assert promised == {0: 0.0, 1: 100.0, 2: 150.0, 3: 50.0}


def stepped(jobs: RigidJobs, split: float, *, detour: bool) -> tuple[list[tuple[int, float, int]], dict[int, float]]:
    """Run to ``split``, then on to the end; with ``detour``, on a copy while the original goes another way."""
    world = HybridWorld(jobs, 6, "conservative")
    world.run(split, 2.0)
    if detour:
        twin = world.copy()
        world.run(math.inf, 0.0)  # the copy must not see this
        world = twin
    world.run(math.inf, 2.0)
    return sorted(world.log), dict(world.cluster.promised)


@settings(max_examples=100, deadline=None)
@given(workloads, st.integers(0, 80))
def test_a_copy_goes_on_as_the_original_would(data, split) -> None:
    jobs = jobs_of(data)
    split_at = float(jobs.submit[0]) + split
    assert stepped(jobs, split_at, detour=True) == stepped(jobs, split_at, detour=False)


# -- late reservations (a job running past its estimate) ---------------------------------------------------

# 6 nodes, every job submitted at 0; jobs 0 and 2 run past their estimates (2 s and 3 s for 1 s).
LATE = rigid([0] * 6, [2, 1, 3, 1, 3, 2], [4, 3, 4, 4, 3, 4], estimate=[1, 1, 1, 1, 3, 2])


def test_a_late_reservation_holds_no_nodes_against_the_jobs_before_it() -> None:
    # Promises: job 0 [0, 1), 1 [1, 2), 2 [2, 3), 3 [3, 4), 4 [4, 7), 5 [7, 9). Job 0 holds its 4
    # nodes until 2: at 2 job 1 is late and is fitted again, at 4 (beside job 4), and job 2 starts,
    # to hold 4 nodes until 5. At 5 jobs 1, 3 and 4 are late; fitted in queue order, job 1 takes
    # [5, 6) and starts, job 3 [6, 7), job 4 [9, 12) (job 5 holds 4 nodes over [7, 9)). Were the later
    # late jobs' holds at 5 counted, job 1 would go to 6 around them, job 3 to 9 and job 4 to 10, with
    # nothing running and nothing left to happen: [5, 6) idle and the run stopped with 4 jobs queued.
    cluster = Cluster(6, LATE, "conservative")
    for job in range(6):
        cluster.submit(job, 0.0)
    assert cluster.promised == {0: 0.0, 1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 7.0}
    assert cluster.schedule(0.0) == [0]
    cluster.finish(0)
    assert cluster.schedule(2.0) == [2]
    assert cluster.reserved == {1: 4.0, 3: 3.0, 4: 4.0, 5: 7.0}
    cluster.finish(2)
    assert cluster.schedule(5.0) == [1]
    assert cluster.reserved == {3: 6.0, 4: 9.0, 5: 7.0}
    cluster.finish(1)
    assert cluster.schedule(6.0) == [3]
    cluster.finish(3)
    assert cluster.schedule(7.0) == [5]
    cluster.finish(5)
    assert cluster.schedule(9.0) == [4]


def test_the_late_case_replays_to_the_end_as_the_reference_does() -> None:
    schedule, world = replay(LATE, 6, "conservative")
    assert world.finished()
    assert schedule.start.tolist() == [0, 5, 2, 6, 9, 7]
    assert schedule.promised.tolist() == [0, 1, 2, 3, 4, 7]
    log, promised = run_with(Reference(6, LATE), LATE, 6, 0.0)
    assert log == sorted(zip(range(6), schedule.start.tolist(), [LOCAL] * 6, strict=True))
    assert promised == dict(enumerate(schedule.promised.tolist()))


# -- refusals and edges, hand-worked ----------------------------------------------------------------------

def test_a_cluster_refuses_no_nodes_an_unknown_discipline_and_a_job_wider_than_itself() -> None:
    import pytest

    from workloads.errors import ConfigError, InputError

    one = rigid([0], [10], [1])
    assert Cluster(1, one, "conservative").free == 1  # one node is enough
    with pytest.raises(ConfigError, match=r"^a cluster needs m >= 1 nodes, got 0$"):
        Cluster(0, one)
    with pytest.raises(ConfigError, match=r"^discipline must be 'easy' or 'conservative', got 'fifo'$"):
        Cluster(1, one, "fifo")  # type: ignore[arg-type]
    assert Cluster(2, rigid([0, 0], [10, 10], [2, 1]), "easy").discipline == "easy"  # as wide as the cluster
    with pytest.raises(InputError, match=r"^job 1 asks for 3 nodes, the cluster has 2$"):
        Cluster(2, rigid([0, 0, 0, 0], [10, 10, 10, 10], [2, 3, 1, 4]))


def test_no_shadow_time_when_the_running_jobs_cannot_free_enough() -> None:
    import pytest

    cluster = Cluster(4, rigid([0], [10], [3]), "easy")
    cluster.submit(0, 0.0)
    assert cluster.schedule(0.0) == [0]
    assert cluster._shadow(4, 0.0) == (10.0, 0) and cluster._shadow(2, 0.0) == (10.0, 2)
    assert cluster._shadow(1, 20.0) == (20.0, 3)  # past its estimate: it ends any moment now, all 3 nodes spare
    with pytest.raises(RuntimeError, match=r"^no time at which 5 nodes are free on a 4-node cluster$"):
        cluster._shadow(5, 0.0)


def test_easy_records_the_heads_reservation_even_with_no_node_free() -> None:
    # 4 nodes all held by job 0 until 100: job 1 (4 nodes) arrives at 10 and is told 100 then
    schedule, world = replay(rigid([0, 10], [100, 10], [4, 4]), 4, "easy")
    assert schedule.start.tolist() == [0, 100] and world.cluster.head_reservation == {1: 100.0}


# EASY and conservative backfilling (:class:`heuristics.backfill.Cluster`) on hand-worked schedules (issue 19).
#
# Each case is a few jobs on a few nodes, driven through the cluster's own calls (submit, schedule,
# finish, take) as the hybrid world drives it; the starts, shadow times and reservations in the
# comments are worked out by hand from the rules in the module docstring, on their boundaries and ties.


def estimated(nodes: list[int], estimate: list[float]) -> RigidJobs:
    """Jobs with the given widths and estimates (run times equal to them; submit times unused here)."""
    est = np.array(estimate, float)
    return RigidJobs(submit=np.zeros(len(nodes)), runtime=est, estimate=est, nodes=np.array(nodes, np.int64))


def easy_pass(m: int, nodes: list[int], estimate: list[float], running: int) -> tuple[Cluster, list[int]]:
    """Jobs ``0 .. running - 1`` start at 0 on an empty cluster, the others then queue; one EASY pass at 0."""
    cluster = Cluster(m, estimated(nodes, estimate), "easy")
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
    cluster = Cluster(4, estimated([3, 4, 1], [100.0, 50.0, 90.0]), "easy")
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
    cluster = Cluster(4, estimated([4, 4, 1, 4], [100.0, 0.0, 1.0, 50.0]), "conservative")
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
    cluster = Cluster(4, estimated([2, 2, 2, 2], [100.0, 40.0, 10.0, 50.0]), "conservative")
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
    cluster = Cluster(4, estimated([4, 2, 4], [100.0, 50.0, 50.0]), "conservative")
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


# Conservative backfilling: a waiting 0-s job stays counted when other jobs start (issue 19).
#
# A job asking for 0 s holds no nodes, so a job promised later may be reserved over its start; the
# scheduler therefore refits every waiting 0-s job at every pass, even a pass with nothing freed (the
# module docstring of :mod:`heuristics.backfill`). Starting some other job must not make it forget that
# such a job waits: the case below, worked out by hand from the rules, changes start times if it does.


# 4 nodes. Job 0 (2 nodes, 10 s) and job 2 (2 nodes, 1 s) start at 0; job 1 (4 nodes, 0 s) is
# promised 10, when job 0 ends. Job 3 (4 nodes, 50 s) arrives at 2: job 1 holds no node at 10, so
# job 3 is promised 10 too, [10, 60). The pass at 2 refits job 1 after job 3: 60 (the first instant
# with 4 nodes free), and nothing moves job 1 back (no nodes are freed before their estimated ends).
# At 10 job 0 ends and job 3 starts; job 1 starts at 60. Had starting job 2 (a 1-s job, not 0 s) or
# job 0 cleared the count of waiting 0-s jobs, the pass at 2 would have had nothing to do: job 1
# would have kept 10 and started there, ahead of job 3 in the queue, taking its 4 nodes.
NODES = [2, 4, 2, 4]
ESTIMATE = [10.0, 0.0, 1.0, 50.0]


def test_a_waiting_0s_job_is_still_refitted_after_other_jobs_start() -> None:
    cluster = Cluster(4, rigid([0.0, 0.0, 0.0, 2.0], ESTIMATE, NODES), "conservative")
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
    schedule, _ = replay(rigid([0.0, 0.0, 0.0, 2.0], ESTIMATE, NODES), 4, "conservative")
    assert schedule.start.tolist() == [0.0, 60.0, 0.0, 10.0]
    assert schedule.promised.tolist() == [0.0, 10.0, 0.0, 10.0]
