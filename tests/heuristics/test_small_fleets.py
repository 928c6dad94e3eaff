"""The packing loop over Python lists (small fleets) and over arrays make the same plans: every one of
the 66 heuristics, on real ticks of four traces under both capacity rules, with one job and many."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import heuristics.packing as packing
from heuristics.registry import HEURISTICS
from tests.broker.coh.ipp_cases import captured

CASES = [("KTH-SP2-1996-2.1-cln.swf.gz", "constant-100", 1, 1), ("KTH-SP2-1996-2.1-cln.swf.gz", "heterogeneous", 2, 8),
         ("LCG-2005-1.swf.gz", "heterogeneous", 1, 1), ("LCG-2005-1.swf.gz", "constant-10", 3, 20),
         ("SDSC-BLUE-2000-4.2-cln.swf.gz", "heterogeneous", 1, 4),
         ("LPC-EGEE-2004-1.2-cln.swf.gz", "heterogeneous", 2, 30)]


@pytest.mark.parametrize("capacity", ["interval", "tick"])
@pytest.mark.parametrize(("trace", "reqs", "low", "high"), CASES)
def test_lists_and_arrays_make_the_same_plans(trace: str, reqs: str, low: int, high: int, capacity: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cases = captured(trace, reqs, low, high, n_jobs=3000, every=3, capacity=capacity)[:10]
    assert cases
    opened = 0
    for batch, whole in cases:
        fleet = whole if opened else without_most_vms(whole)  # until a VM is opened, fleets the jobs overflow
        for name in HEURISTICS:
            heuristic = HEURISTICS.get(name)
            plans = []
            for limit in (10**9, -1):  # every fleet over lists, then every fleet over arrays
                monkeypatch.setattr(packing, "SMALL_FLEET", limit)
                plans.append(heuristic.plan(batch, fleet, np.random.default_rng(7)))
            small, large = plans
            assert small.jobs.tolist() == large.jobs.tolist(), name
            assert small.targets.tolist() == large.targets.tolist(), name
            assert small.new_types.tolist() == large.new_types.tolist(), name
            opened += len(small.new_types)
    assert opened > 0


def without_most_vms(fleet: packing.Fleet) -> packing.Fleet:
    """The fleet with all but every eighth slot's VM released (their slots dead)."""
    dead = np.arange(len(fleet)) % 8 != 7
    return dataclasses.replace(fleet, vm_type=np.where(dead, -1, fleet.vm_type), free=np.where(dead, -1.0, fleet.free))
