"""Hand-worked cases for the job orders, the VM rules and the packing loop."""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.fleet import Batch, Fleet
from heuristics.registry import HEURISTICS
from heuristics.rules import JOB_ORDERS

CAP = np.array([100.0, 410.0])
ORDER = np.array([1, 0])


def batch(r, runtime=None, arrival=None, user=None) -> Batch:
    m = len(r)
    arrival = arrival if arrival is not None else np.arange(m) + 1000.0
    return Batch(index=np.arange(m), arrival=np.asarray(arrival, float),
                 runtime=np.asarray(runtime if runtime is not None else np.full(m, 100.0), float),
                 r=np.asarray(r, float), user=np.asarray(user if user is not None else np.zeros(m), np.int64))


def fleet(free, *, dep_max=None, arr_min=None, rollover=None, n_jobs=None) -> Fleet:
    n = len(free)
    free = np.asarray(free, float)
    nan = np.full(n, np.nan)
    jobs = np.asarray(n_jobs if n_jobs is not None else np.ones(n), np.int64)
    rollover = np.asarray(rollover, float) if rollover is not None else np.full(n, 1800.0)
    return Fleet(now=1000.0, boot_time=120.0, free=free, capacity=np.full(n, 410.0), vm_type=np.ones(n, np.int64),
                 ready_at=np.zeros(n), anchor=1000.0 - (3600.0 - rollover), last_departure=np.zeros(n), n_jobs=jobs,
                 arr_min=np.asarray(arr_min, float) if arr_min is not None else nan, arr_max=nan, arr_sum=np.zeros(n),
                 dep_min=nan, dep_max=np.asarray(dep_max, float) if dep_max is not None else nan,
                 btu=3600.0, new_rollover=3600.0, type_capacity=CAP, type_order=ORDER,
                 rate=np.full(n, 0.26))


def place_one(name: str, f: Fleet, r: float = 50.0) -> int:
    plan = HEURISTICS.get(name).plan(batch([r]), f, np.random.default_rng(0))
    return int(plan.targets[0])


def test_job_orders() -> None:
    b = batch([30, 10, 50, 10], runtime=[5, 7, 1, 3], arrival=[1, 2, 3, 4], user=[1, 1, 2, 1])
    assert JOB_ORDERS["FCFS"](b).tolist() == [0, 1, 2, 3]
    assert JOB_ORDERS["RR"](b).tolist() == [0, 2, 1, 3]
    assert JOB_ORDERS["LJF"](b).tolist() == [2, 0, 1, 3]
    assert JOB_ORDERS["SJF"](b).tolist() == [1, 3, 0, 2]
    assert JOB_ORDERS["LTJF"](b).tolist() == [1, 0, 3, 2]
    assert JOB_ORDERS["STJF"](b).tolist() == [2, 3, 0, 1]


def test_sm_is_best_fit_and_lm_worst_fit() -> None:
    f = fleet([200, 60, 40, 300])
    assert place_one("FCFS-SM", f) == 1
    assert place_one("FCFS-LM", f) == 3


def test_departure_arrival_and_billing_rules() -> None:
    f = fleet([100, 100, 100], dep_max=[5000, 9000, 7000], arr_min=[900, 500, 700], rollover=[300, 20, 3000])
    assert place_one("FCFS-LD", f) == 1
    assert place_one("FCFS-EA", f) == 1
    assert place_one("FCFS-CFH", f) == 1
    assert place_one("FCFS-FFH", f) == 2


def test_empty_vms_rank_last_for_statistic_rules() -> None:
    f = fleet([100, 100], dep_max=[np.nan, 2000], n_jobs=[0, 1])
    assert place_one("FCFS-LD", f) == 1
    assert place_one("FCFS-ED", fleet([100, 100], n_jobs=[0, 1], dep_max=[np.nan, 1])) in (0, 1)


def test_new_vm_when_nothing_fits_and_keys_update() -> None:
    f = fleet([30])
    plan = HEURISTICS.get("FCFS-SM").plan(batch([50, 50, 20]), f, np.random.default_rng(0))
    # 50 -> new VM (slot 1), 50 -> slot 1 again (310 left), 20 -> slot 0 (best fit: 30 < 310)
    assert plan.targets.tolist() == [1, 1, 0]
    assert plan.new_types.tolist() == [1]


def test_ld_sees_jobs_placed_earlier_in_the_call() -> None:
    f = fleet([400, 400], dep_max=[3000, 2000])
    b = batch([10, 10], runtime=[10_000, 10], arrival=[1000, 1000])
    plan = HEURISTICS.get("SJF-LD").plan(b, f, np.random.default_rng(0))
    assert plan.targets.tolist() == [0, 0]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_rule_follows_seed(seed: int) -> None:
    f = fleet([400] * 8)
    b = batch([10] * 6)
    plans = [HEURISTICS.get("FCFS-Rnd").plan(b, f, np.random.default_rng(seed)).targets.tolist() for _ in range(2)]
    assert plans[0] == plans[1]
    others = {tuple(HEURISTICS.get("FCFS-Rnd").plan(b, f, np.random.default_rng(s)).targets) for s in range(20)}
    assert len(others) > 1
