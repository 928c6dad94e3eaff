"""The pool's slot arrays are NumPy views of its array.array columns, and its fleet snapshots follow every change."""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.pool import Pool
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book

CATALOG = load_price_book().catalog()


def _pool_of(n_vms: int) -> Pool:
    pool = Pool(CATALOG, Billing(), boot_time=120.0)
    for k in range(n_vms):
        pool.start(k % 2, now=10.0 * k)
    return pool


def test_a_write_through_either_side_is_seen_by_the_other_also_after_growing() -> None:
    pool = _pool_of(3)
    pool.col.free[1] = 7.5
    pool.n_jobs[2] = 4
    assert pool.free[1] == 7.5 and pool.col.n_jobs[2] == 4
    for k in range(70):  # past the 64 slots of a new pool: every column is made again
        pool.start(1, now=100.0 + k)
    assert pool.size > 64 and pool.free[1] == 7.5 and pool.col.n_jobs[2] == 4
    pool.col.ready_at[70] = 1.0
    pool.capacity[71] = 2.0
    assert pool.ready_at[70] == 1.0 and pool.col.capacity[71] == 2.0
    assert pool.vm_id[: pool.n_slots].tolist() == list(pool.col.vm_id[: pool.n_slots]) == list(range(73))


def test_a_copy_has_its_own_columns() -> None:
    pool = _pool_of(2)
    twin = pool.copy()
    twin.col.free[0] = -3.0
    twin.anchor[1] = 99.0
    assert pool.free[0] == CATALOG.capacity[0] and pool.col.anchor[1] == pool.anchor[1] != 99.0
    assert twin.free[0] == -3.0 and twin.col.anchor[1] == 99.0


def test_the_snapshot_follows_writes_starts_releases_and_growth() -> None:
    pool = _pool_of(3)
    arrival, departure = [5.0, 50.0], [400.0, 900.0]
    first = pool.fleet(200.0, stats=True, arrival=arrival, departure=departure)
    assert len(first) == 3
    pool.add(1, job=0, r=30.0, arrival=5.0, departure=400.0, runtime=300.0)
    pool.add(1, job=1, r=20.0, arrival=50.0, departure=900.0, runtime=800.0)
    now = pool.fleet(210.0, stats=True, arrival=arrival, departure=departure)
    assert now.free[1] == CATALOG.capacity[1] - 50.0 and now.n_jobs[1] == 2 and now.dep_max[1] == 900.0
    pool.remove(1, job=1, r=20.0)
    after = pool.fleet(220.0, stats=True, arrival=arrival, departure=departure)
    assert after.n_jobs[1] == 1 and after.dep_max[1] == 400.0 and after.arr_sum[1] == 5.0
    assert after.occupancy is not None and after.occupancy.dep_min[1] == 400.0
    pool.release(2, 3590.0)  # the last slot goes: the snapshot is one slot shorter
    assert len(pool.fleet(3600.0, stats=True, arrival=arrival, departure=departure)) == 2
    for k in range(70):
        pool.start(0, now=4000.0 + k)
    grown = pool.fleet(5000.0, stats=True, arrival=arrival, departure=departure)
    assert len(grown) == pool.n_slots == 72
    for name in ("free", "capacity", "vm_type", "ready_at", "anchor", "n_jobs", "dep_max"):
        np.testing.assert_array_equal(getattr(grown, name), getattr(pool, name)[:72])
    assert grown.occupancy is not None and grown.occupancy.start.shape[0] == 72


def test_each_snapshot_field_shows_its_own_slot_array() -> None:
    pool = _pool_of(2)
    fields = ("free", "capacity", "vm_type", "ready_at", "anchor", "last_departure", "n_jobs", "arr_min", "arr_max",
              "arr_sum", "dep_min", "dep_max")
    for k, name in enumerate((*fields, "marginal")):
        getattr(pool.col, name)[1] = 100 + k
    fleet = pool.fleet(50.0, stats=False, arrival=[], departure=[])
    assert [getattr(fleet, name)[1] for name in fields] == list(range(100, 100 + len(fields)))
    assert fleet.rate[1] == 100 + len(fields)  # a VM's marginal price per unit
    assert (fleet.now, fleet.boot_time, fleet.btu) == (50.0, 120.0, 3600.0)


def test_the_latest_departure_stays_current_without_a_refresh() -> None:
    # Jobs leave in order of their departures: the latest departure of the jobs left is the one before.
    pool = _pool_of(2)
    arrival, departure = [5.0, 50.0, 70.0, 80.0], [400.0, 900.0, 600.0, 950.0]
    for job in range(3):
        pool.add(0, job=job, r=10.0, arrival=arrival[job], departure=departure[job], runtime=100.0)
    pool.remove(0, job=0, r=10.0)  # at 400, the earliest departure
    plain = pool.fleet(400.0, stats=False, arrival=arrival, departure=departure)
    assert plain.dep_max[0] == 900.0 and plain.n_jobs[0] == 2
    assert plain.arr_min[0] == 5.0 and 0 in pool.dirty  # the other statistics wait for a refresh
    pool.add(0, job=3, r=10.0, arrival=80.0, departure=950.0, runtime=100.0)  # on a slot waiting for one
    assert pool.fleet(410.0, stats=False, arrival=arrival, departure=departure).dep_max[0] == 950.0
    pool.add(0, job=4, r=10.0, arrival=90.0, departure=700.0, runtime=100.0)  # an earlier one leaves it
    assert pool.dep_max[0] == 950.0
    fresh = pool.fleet(420.0, stats=True, arrival=[*arrival, 90.0], departure=[*departure, 700.0])
    assert (fresh.dep_max[0], fresh.arr_min[0], fresh.arr_max[0], fresh.dep_min[0]) == (950.0, 50.0, 90.0, 600.0)
    assert fresh.arr_sum[0] == (50.0 + 70.0) + 80.0 + 90.0 and not pool.dirty


def test_a_vm_left_without_jobs_has_no_statistics_and_waits_for_no_refresh() -> None:
    pool = _pool_of(2)
    pool.add(1, job=0, r=10.0, arrival=5.0, departure=400.0, runtime=100.0)
    pool.add(1, job=1, r=10.0, arrival=6.0, departure=500.0, runtime=100.0)
    pool.remove(1, job=0, r=10.0)
    assert pool.dirty == {1}
    pool.remove(1, job=1, r=10.0)
    assert not pool.dirty and pool.n_jobs[1] == 0 and pool.arr_sum[1] == 0.0
    assert all(np.isnan(getattr(pool, name)[1]) for name in ("arr_min", "arr_max", "dep_min", "dep_max"))
    pool.add(1, job=2, r=10.0, arrival=7.0, departure=300.0, runtime=100.0)  # statistics from this job alone
    assert (pool.arr_min[1], pool.arr_sum[1], pool.dep_min[1], pool.dep_max[1]) == (7.0, 7.0, 300.0, 300.0)


def test_what_the_occupancy_kept_for_one_decision_is_not_shown_at_the_next() -> None:
    pool = _pool_of(2)
    arrival, departure = [5.0, 50.0], [400.0, 900.0]
    pool.add(0, job=0, r=30.0, arrival=5.0, departure=400.0, runtime=300.0)
    occ = pool.fleet(200.0, stats=False, arrival=arrival, departure=departure).occupancy
    assert occ is not None
    assert [a.tolist() for a in occ.ending_by(500.0)] == [[0], [400.0], [30.0]] and occ.latest_start() == 100.0
    pool.add(1, job=1, r=20.0, arrival=150.0, departure=450.0, runtime=300.0)  # the same live snapshot, changed
    again = pool.fleet(210.0, stats=False, arrival=arrival, departure=departure).occupancy
    assert again is occ  # handed out again: what it kept is dropped
    assert [a.tolist() for a in again.ending_by(500.0)] == [[0, 1], [400.0, 450.0], [30.0, 20.0]]
    assert again.latest_start() == 150.0


def test_an_evicted_job_leaves_its_vm_releasable_counting_only_the_time_it_ran() -> None:
    pool = Pool(CATALOG, Billing(), boot_time=0.0)
    slot = pool.start(1, 0.0)
    pool.add(slot, 0, 100.0, 0.0, 1000.0, 1000.0)
    pool.add(slot, 1, 50.0, 0.0, 500.0, 500.0)
    with pytest.raises(RuntimeError, match="while hosting 2 job"):
        pool.release(slot, 300.0)
    pool.evict(slot, 0, 100.0, 1000.0, 300.0)
    pool.evict(slot, 1, 50.0, 500.0, 300.0)
    assert (pool.n_jobs[slot], pool.hosted[slot], pool.free[slot]) == (0, 0, 410.0)
    record = pool.release(slot, 300.0)
    assert (record.jobs_hosted, record.busy_capacity_s, record.released_at) == (0, 150.0 * 300.0, 300.0)
