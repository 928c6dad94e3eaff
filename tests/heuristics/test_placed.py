"""``heuristics.fleet.placed`` against the world: the fleet a plan leaves is the fleet the world shows
after it applies the plan, field by field, on every tick of real replays under both capacity rules."""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.policies import build_policy
from broker.coh.world import CohWorld
from heuristics.fleet import Batch, Fleet, Plan, placed
from tests.broker.coh.ipp_cases import CATALOG, copy_fleet
from tests.conftest import trace_path
from workloads.cache import load_trace
from workloads.jobs import job_view

FIELDS = ("free", "capacity", "vm_type", "ready_at", "anchor", "last_departure", "n_jobs", "arr_min", "arr_max",
          "arr_sum", "dep_min", "dep_max", "rate")


def intervals(fleet: Fleet, slot: int) -> list[tuple[float, float, float]]:
    assert fleet.occupancy is not None
    return sorted(fleet.occupancy.hosted(slot))


def check(before: Fleet, batch: Batch, plan: Plan, after: Fleet, first_new_slot: list[int]) -> None:
    """``placed(before, ...)`` equals ``after`` with its new VMs (in the world's slots) moved to the end."""
    got = placed(before, batch, plan, anchor=before.now, hourly=CATALOG.hourly)
    n, k = len(before), len(plan.new_types)
    where = np.concatenate((np.arange(n), np.array(first_new_slot, dtype=np.int64)))  # got's slots in the world
    assert len(got) == n + k
    live = np.flatnonzero(got.vm_type >= 0)  # a dead slot of the fleet may hold a new VM in the world
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(got, name)[live], getattr(after, name)[where[live]], err_msg=name)
    if after.occupancy is not None:
        assert got.occupancy is not None
        for j in live.tolist():
            assert intervals(got, j) == intervals(after, int(where[j]))
        np.testing.assert_array_equal(got.occupancy.dep_min[live], after.occupancy.dep_min[where[live]])
        np.testing.assert_array_equal(got.occupancy.start_max[live], after.occupancy.start_max[where[live]])


@pytest.mark.parametrize("capacity", ["interval", "tick"])
@pytest.mark.parametrize(("trace", "policy"), [("LCG-2005-1.swf.gz", "coh"), ("KTH-SP2-1996-2.1-cln.swf.gz",
                                                                            "FCFS-LD")])
def test_placed_is_the_fleet_the_world_shows_after_the_plan(trace: str, policy: str, capacity: str) -> None:
    swf = load_trace(trace_path(trace))
    jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=3, origin=0)
    config = SimulationConfig(CohConfig(policy), EngineConfig(capacity=capacity))  # type: ignore[arg-type]
    chooser = build_policy(config, seed=1, billing=config.engine.billing(0), catalog=CATALOG)
    world = CohWorld(jobs.head(1500), CATALOG, config.engine, lookahead=chooser.lookahead)
    ticks = with_new = 0
    while (decision := world.advance()) is not None:
        before = copy_fleet(world.fleet(stats=True))
        plan = chooser.decide(decision.now, decision.batch, world)
        first_id = world.pool.next_id
        world.act(plan)
        after = world.fleet(stats=True)
        ids = world.pool.vm_id[:len(after)]
        new_slots = [int(np.flatnonzero(ids == first_id + k)[0]) for k in range(len(plan.new_types))]
        check(before, decision.batch, plan, after, new_slots)
        ticks += 1
        with_new += len(plan.new_types) > 0
    assert ticks > 500 and with_new > 20
