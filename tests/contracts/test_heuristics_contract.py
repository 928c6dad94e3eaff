"""Contract suite over all 66 registered heuristics (hypothesis): every job placed exactly once,
no VM over capacity, new VMs of the Cost-Efficient type, same input (and seed) same plan."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics.fleet import Batch, Fleet, Plan
from heuristics.registry import HEURISTICS, PAPER_TRIO, Heuristic, Registry

TYPE_CAPACITY = np.array([100.0, 410.0])
TYPE_ORDER = np.array([1, 0])  # large is the cost-efficient type (CoH Table 5)


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    m = draw(st.integers(1, 25))
    arrival = np.sort(np.array(draw(st.lists(st.integers(0, 130), min_size=m, max_size=m)), dtype=float)) + 1000
    runtime = np.array(draw(st.lists(st.integers(1, 20_000), min_size=m, max_size=m)), dtype=float)
    r = 10.0 * np.array(draw(st.lists(st.integers(1, 10), min_size=m, max_size=m)))
    user = np.array(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)))
    return Batch(index=np.arange(m) + 100, arrival=arrival, runtime=runtime, r=r, user=user)


@st.composite
def fleets(draw: st.DrawFn) -> Fleet:
    n = draw(st.integers(0, 12))
    vm_type = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int64)
    capacity = TYPE_CAPACITY[vm_type]
    used = np.array([draw(st.integers(0, int(c) // 10)) * 10.0 for c in capacity])
    dead = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    n_jobs = np.where(used > 0, np.maximum(1, used // 30), 0).astype(np.int64)
    start = np.array(draw(st.lists(st.integers(0, 999), min_size=n, max_size=n)), dtype=float)
    stat = np.where(n_jobs > 0, start + 1, np.nan)
    free = np.where(dead, -1.0, capacity - used)
    return Fleet(now=1000.0, boot_time=120.0, free=free, capacity=capacity, vm_type=vm_type,
                 ready_at=start + 120, anchor=start, last_departure=np.where(n_jobs > 0, start + 5000, start),
                 n_jobs=n_jobs, arr_min=stat, arr_max=stat + 3, arr_sum=np.where(n_jobs > 0, (stat + 1) * n_jobs, 0.0),
                 dep_min=stat + 4000,
                 dep_max=stat + 5000, btu=3600.0, new_rollover=3600.0,
                 type_capacity=TYPE_CAPACITY, type_order=TYPE_ORDER, rate=np.array([0.065, 0.26])[vm_type])


def check_plan(plan: Plan, batch: Batch, fleet: Fleet) -> None:
    assert sorted(plan.jobs.tolist()) == list(range(len(batch))), "every job exactly once"
    n = plan.n_slots
    assert n == len(fleet)
    load: dict[int, float] = {}
    for p, t in zip(plan.jobs.tolist(), plan.targets.tolist(), strict=True):
        assert 0 <= t < n + len(plan.new_types)
        load[t] = load.get(t, 0.0) + float(batch.r[p])
    for t, used in load.items():
        room = fleet.free[t] if t < n else TYPE_CAPACITY[plan.new_types[t - n]]
        assert t >= n or fleet.free[t] >= 0, "no job on a released slot"
        assert used <= room + 1e-9, f"VM {t} over capacity: {used} > {room}"
    used_new = {t - n for t in load if t >= n}
    assert used_new == set(range(len(plan.new_types))), "every new VM hosts a job"
    assert all(k == 1 for k in plan.new_types.tolist()), "new VMs are of the Cost-Efficient type"


def test_registry_names_all_66() -> None:
    assert len(HEURISTICS) == 66
    assert {"FCFS-SM", "LJF-CFH", "RR-Rnd", "STJF-FFH", "LTJF-EAA"} <= set(HEURISTICS)
    assert set(PAPER_TRIO) <= set(HEURISTICS)


def test_registry_refuses_duplicates() -> None:
    registry: Registry[Heuristic] = Registry("heuristic")
    h = HEURISTICS.get("FCFS-SM")
    registry.register("FCFS-SM", h)
    with pytest.raises(KeyError, match="already registered"):
        registry.register("FCFS-SM", h)
    with pytest.raises(KeyError, match="unknown heuristic"):
        HEURISTICS.get("FCFS-XX")


@pytest.mark.parametrize("name", HEURISTICS.names())
@settings(max_examples=25, deadline=None)
@given(batch=batches(), fleet=fleets(), seed=st.integers(0, 2**32 - 1))
def test_contract(name: str, batch: Batch, fleet: Fleet, seed: int) -> None:
    heuristic = HEURISTICS.get(name)
    plan = heuristic.plan(batch, fleet, np.random.default_rng(seed))
    check_plan(plan, batch, fleet)
    again = heuristic.plan(batch, fleet, np.random.default_rng(seed))
    for field in ("jobs", "targets", "new_types"):
        np.testing.assert_array_equal(getattr(plan, field), getattr(again, field))
