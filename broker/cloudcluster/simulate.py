"""One call from HTC jobs to a cloud-cluster result: build the world, run it, bill it."""

from __future__ import annotations

import numpy as np

from broker.cloudcluster.bill import ClusterResult
from broker.cloudcluster.policies import ClusterPolicy
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.world import ClusterWorld, run
from broker.sim.recorder import Recorder
from workloads.htc import HtcJobs


def simulate_cluster(jobs: HtcJobs, policy: ClusterPolicy | None = None, terms: CloudTerms | None = None, *,
                     seed: int | np.random.SeedSequence | None = 0, recorder: Recorder | None = None,
                     validate: bool = False) -> ClusterResult:
    """Replay ``jobs`` on a cloud cluster run by ``policy`` under ``terms`` (:mod:`broker.cloudcluster.world`).

    Defaults: no cap, merged pools, no keep-alive, no delays; c1.medium's price, no egress charge,
    exact charging, no boot time (``cloudbroker cluster`` bills
    ``CloudTerms.from_book(load_price_book("ec2-2013-cluster"))``: the same price, and the egress).
    ``seed`` drives the keep-alive draws (the only randomness); ``validate`` checks the world's
    invariants after every event. Every job completes.
    """
    world = ClusterWorld(jobs, policy or ClusterPolicy(), terms or CloudTerms(), recorder=recorder, validate=validate)
    return run(world, np.random.default_rng(seed)).result()
