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
