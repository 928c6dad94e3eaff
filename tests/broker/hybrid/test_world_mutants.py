"""The hybrid world's replay and copies, by hand (issue 19, mutation testing)."""

from __future__ import annotations

import math

from broker.hybrid.validate import HybridValidator
from broker.hybrid.world import HybridWorld, replay
from broker.sim.recorder import Recorder
from tests.broker.hybrid.test_world import rigid

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
