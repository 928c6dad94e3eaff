"""Validate mode over preemptions (:mod:`broker.coh.validate`): states that break a spot rule are caught.

The world of :mod:`tests.broker.coh.test_spot_world`: one job (200 s to 2200 s) on a spot VM started
at 70; the market closes at 1000, the VM is preempted at 1120.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from broker.coh.policies import build_policy
from broker.coh.spot import SpotCohWorld
from broker.coh.validate import Validator, check_spot_fleet, check_spot_release
from broker.sim.validate import InvariantError
from tests.broker.coh.test_spot_world import CATALOG, CLOSES_AT_1000, ENGINE, POLICY, offer, spot_run, table
from workloads.jobs import JobTable


def paused_after(t: float, jobs: JobTable | None = None) -> SpotCohWorld:
    """The world paused at its first decision tick at or after ``t`` (acted on)."""
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    jobs = jobs if jobs is not None else table([200, 1300], [2000, 100], [50, 50])
    world = SpotCohWorld(jobs, CATALOG, ENGINE, offer=offer(CLOSES_AT_1000), lookahead=policy.lookahead)
    while (batch := world.next_batch()) is not None:
        world.act(policy.decide(world.now, batch, world))
        if world.now >= t:
            return world
    raise AssertionError("the run ended first")


def validator(world: SpotCohWorld) -> Validator:
    assert world._validator is not None
    return world._validator


def test_a_vm_alive_past_its_preemption_is_caught() -> None:
    world = paused_after(1120)  # the job preempted at 1120 is placed again on an on-demand VM there
    vm = int(world.pool.vm_id[world.job_slot[0]])
    world.doomed[vm] = 1000.0  # as if this VM had been due at 1000
    with pytest.raises(InvariantError, match=f"VM {vm} runs past its preemption at 1000"):
        check_spot_fleet(world, world.now)


def test_spot_vms_beyond_the_cap_are_caught() -> None:
    world = paused_after(70)
    assert world.spot_running == 1
    with pytest.raises(InvariantError, match="the market's cap is 0"):
        check_spot_fleet(world, 1050.0)  # the market is closed from 1000 and nothing gave the VM notice


def test_a_spot_vm_the_world_lost_count_of_is_caught() -> None:
    world = paused_after(70)
    world._spot_live.clear()
    with pytest.raises(InvariantError, match="1 spot VMs without notice, the world counts 0"):
        check_spot_fleet(world, world.now)


def test_a_release_after_the_preemption_or_billed_past_it_is_caught() -> None:
    world, _ = spot_run(table([200], [2000], [50]))
    record = world.pool.ledger.records[0]
    assert (record.option, record.released_at) == ("spot", 1120.0)
    check_spot_release(world, record)
    with pytest.raises(InvariantError, match=r"released at 1130\.0, after its preemption at 1120\.0"):
        check_spot_release(world, replace(record, released_at=1130.0))
    with pytest.raises(InvariantError, match="billed 2 unit"):
        check_spot_release(world, replace(record, units=2))


def test_a_job_completed_twice_is_caught_at_the_end() -> None:
    world, _ = spot_run(table([200], [2000], [50]))
    validator(world).at_end()
    world.completions[0] = 2
    with pytest.raises(InvariantError, match="completed 2 times"):
        validator(world).at_end()


def test_a_preempted_job_still_on_its_vm_is_caught_at_release() -> None:
    world = paused_after(1050, table([200, 1180], [2000, 100], [50, 50]))  # the VM got notice at 1000: due at 1120
    slot = int(world.job_slot[0])
    vm = int(world.pool.vm_id[slot])
    assert world.doomed == {vm: 1120.0}
    world.job_end[0] = 1500.0  # a job that would run past the notice, and is not taken off
    members = set(world.pool.members[slot])
    world.pool.members[slot].clear()
    world.pool.col.n_jobs[slot] = 0
    record = world.pool.release(slot, 1120.0)
    world.pool.members[slot] = members
    with pytest.raises(InvariantError, match=f"VM {vm}: a job ran outside"):
        validator(world).at_release(record)
    assert np.all(world.completions == 0)
