"""The hybrid site's invariant checks on hand-made states: each check fires on its violation, and only then."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from broker.hybrid.validate import HybridValidator
from broker.sim.validate import InvariantError
from workloads.rigid import RigidJobs


class Site:
    """What the checks read: 3 jobs (2, 1 and 3 nodes, submitted at 0, 5, 10) on 4 local nodes.

    Job 0 ran locally and ended, job 1 runs locally (1 node), job 2 waits.
    """

    def __init__(self) -> None:
        runtime = np.array([10.0, 10.0, 10.0])
        self.jobs = RigidJobs(submit=np.array([0.0, 5.0, 10.0]), runtime=runtime, estimate=runtime,
                              nodes=np.array([2, 1, 3], dtype=np.int64))
        self.cluster = SimpleNamespace(queue=[2], running={1: 15.0}, free=3, m=4)
        self.cap, self.cloud_used = 0.0, 0
        self.next_job, self.started, self.ended = 3, 2, 1
        self.log: list[tuple[int, float, int]] = [(0, 0.0, 0), (1, 5.0, 0)]


def checked(site: Site) -> HybridValidator:
    v = HybridValidator(site)
    v.before_pass()
    return v


def test_a_consistent_state_passes() -> None:
    site = Site()
    checked(site).at_pass(10.0)


def test_conservation_of_jobs() -> None:
    site = Site()
    site.cluster.queue = []  # job 2 neither waits nor runs
    with pytest.raises(InvariantError, match="submitted"):
        checked(site).at_pass(10.0)


def test_local_nodes_in_use_and_free_add_up_to_the_cluster() -> None:
    site = Site()
    site.cluster.free = 0  # 1 in use + 0 free on 4 nodes
    with pytest.raises(InvariantError, match="local nodes"):
        checked(site).at_pass(10.0)
    site = Site()
    site.cluster.running, site.cluster.free = {1: 15.0, 2: 20.0}, 0  # 1 + 3 in use, none free: full, fine
    site.cluster.queue, site.started = [], 3
    checked(site).at_pass(10.0)
    site = Site()
    site.cluster.running, site.cluster.free, site.cluster.m = {}, -1, -1  # sums agree but free < 0
    with pytest.raises(InvariantError, match="local nodes"):
        checked(site).at_pass(10.0)


def test_a_pass_may_fill_the_cloud_up_to_the_cap_and_no_further() -> None:
    site = Site()
    site.cap = 3.0
    v = checked(site)
    site.cloud_used, site.cluster.queue, site.started = 3, [], 3  # job 2 (3 nodes) moved: exactly the cap
    site.log.append((2, 10.0, 1))
    v.at_pass(10.0)
    site = Site()
    site.cap = 2.0
    v = checked(site)
    site.cloud_used, site.cluster.queue, site.started = 3, [], 3  # one node over the cap
    with pytest.raises(InvariantError, match=r"the cap is 2\.0"):
        v.at_pass(10.0)


def test_a_lowered_cap_does_not_stop_jobs_already_in_the_cloud() -> None:
    site = Site()
    site.cloud_used, site.cap = 3, 1.0  # 3 nodes in the cloud from an earlier step; the cap is now 1
    checked(site).at_pass(10.0)


def test_no_job_starts_before_its_submission() -> None:
    site = Site()
    v = checked(site)
    site.cluster.queue, site.started, site.cloud_used, site.cap = [], 3, 3, 3.0
    site.log.append((2, 10.0, 1))  # on its submission: fine
    v.at_pass(10.0)
    site = Site()
    v = checked(site)
    site.cluster.queue, site.started, site.cloud_used, site.cap = [], 3, 3, 3.0
    site.log.append((2, 9.5, 1))
    with pytest.raises(InvariantError, match="before its submission"):
        v.at_pass(10.0)


def test_starts_logged_after_a_drain_are_checked() -> None:
    site = Site()
    v = checked(site)
    v.at_pass(10.0)  # two starts seen
    site.log = []  # the driver drained the log
    v.before_pass()
    site.cluster.queue, site.started, site.cloud_used, site.cap = [], 3, 3, 3.0
    site.log.append((2, 9.5, 1))
    with pytest.raises(InvariantError, match="before its submission"):
        v.at_pass(10.0)


def test_at_the_end_every_job_started_and_ended() -> None:
    site = Site()
    site.started, site.ended = 3, 3
    HybridValidator(site).at_end()
    for started, ended in ((3, 2), (2, 3), (2, 2), (4, 3)):
        site.started, site.ended = started, ended
        with pytest.raises(InvariantError, match="3 jobs"):
            HybridValidator(site).at_end()
