"""The CoH pool of leased VMs on its boundaries, worked out by hand.

Each test drives :class:`broker.coh.pool.Pool` directly: ``start`` / ``add`` / ``remove`` / ``release``
and the fleet snapshot. Every expected value is worked out by hand in the comment beside it, never by
the code under test. The cases sit on the pool's boundaries: a VM started exactly when the 64 initial
slots are full, the release of exactly the last slot, a slot reused after a departure, a VM's
statistics before and after a departure, the one live snapshot handed out again until the slot count
changes, a refreshed sum of negative-zero arrivals. Types of the price book: small (100 units, 0.065 $/h),
large (410 units, 0.26 $/h); billing in exact one-hour units from the start (anchor(now) = now).
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.pool import Pool
from broker.pricing.billing import Billing
from broker.pricing.book import load_price_book
from broker.pricing.reservations import HEAVY_CODE, LIGHT_CODE
from heuristics.fleet import Fleet

CATALOG = load_price_book().catalog()
SMALL, LARGE = 0, 1  # the catalog's small (100 units, 0.065 $/h) and large (410 units, 0.26 $/h) types
BOOT = 120.0
NAN = np.nan


def pool(*, intervals: bool = True) -> Pool:
    return Pool(CATALOG, Billing(), BOOT, intervals=intervals)


def snapshot(p: Pool, now: float, arrival: list[float], departure: list[float], *, stats: bool) -> Fleet:
    return p.fleet(now, stats=stats, arrival=np.asarray(arrival, float), departure=np.asarray(departure, float))


def stats_of(fleet: Fleet) -> list[list[float]]:
    return [fleet.arr_min.tolist(), fleet.arr_max.tolist(), fleet.arr_sum.tolist(), fleet.dep_min.tolist(),
            fleet.dep_max.tolist()]


def assert_stats(fleet: Fleet, expected: list[list[float]]) -> None:
    np.testing.assert_array_equal(np.asarray(stats_of(fleet)), np.asarray(expected, float))  # nan == nan here


# --- construction, growth ---------------------------------------------------------------------------


def test_a_pool_keeps_the_interval_table_by_default_and_a_job_without_start_holds_its_last_runtime_seconds() -> None:
    p = Pool(CATALOG, Billing(), BOOT)  # intervals not given: the interval rule's table is kept
    slot = p.start(LARGE, 0.0)
    p.add(slot, 0, 50.0, 100.0, 400.0, 200.0)  # no start: the job holds [400 - 200, 400) = [200, 400)
    occupancy = snapshot(p, 0.0, [100.0], [400.0], stats=False).occupancy
    assert occupancy is not None
    assert occupancy.start.shape == (1, 8)  # one row per slot of the snapshot (1 VM), not per array slot
    assert occupancy.hosted(0) == [(200.0, 400.0, 50.0)]
    assert (float(occupancy.dep_min[0]), float(occupancy.start_max[0])) == (400.0, 200.0)


def test_a_copy_of_a_pool_without_interval_table_has_none_and_is_independent() -> None:
    p = pool(intervals=False)
    slot = p.start(SMALL, 0.0)
    p.add(slot, 0, 30.0, 100.0, 400.0, 200.0)
    twin = p.copy()
    assert twin.table is None and snapshot(twin, 0.0, [100.0], [400.0], stats=False).occupancy is None
    twin.remove(slot, 0, 30.0)
    assert (int(twin.n_jobs[0]), float(twin.free[0])) == (0, 100.0)  # the copy's job left: 70 + 30
    assert (int(p.n_jobs[0]), float(p.free[0])) == (1, 70.0)  # the original still hosts it: 100 - 30


def test_a_slot_that_never_held_a_vm_is_released() -> None:
    p = pool()
    assert [p.state(s, 0.0) for s in (0, 1, 63)] == ["released"] * 3  # 63: the last of the 64 first slots
    slot = p.start(SMALL, 0.0)
    assert (slot, p.state(0, 0.0), p.state(1, 0.0), p.state(63, 0.0)) == (0, "booting", "released", "released")
    assert p.alive.tolist() == [True]


def test_the_vm_after_the_first_64_grows_the_arrays_and_keeps_every_earlier_vm() -> None:
    p = pool()
    for k in range(64):  # VM k: small for even k, large for odd k, started at k s
        assert p.start(k % 2, float(k)) == k
    assert p.n_slots == 64
    # job 0 on VM 63 (large, started at 63 s, ready at 183 s): r 30, arrives 70, runs [400, 500)
    p.add(63, 0, 30.0, 70.0, 500.0, 100.0, start=400.0)
    slot = p.start(LARGE, 64.0)  # exactly at capacity: the 65th VM grows the arrays
    assert (slot, p.n_slots, int(p.vm_id[64])) == (64, 65, 64)
    assert [p.state(s, 64.0) for s in (0, 63, 64)] == ["booting"] * 3  # VM 0 is ready at 120, VM 63 at 183
    assert [p.state(s, 200.0) for s in (0, 63, 64)] == ["idle", "running", "idle"]  # VM 64 is ready at 184
    fleet = snapshot(p, 64.0, [70.0], [500.0], stats=False)
    assert len(fleet) == 65
    assert fleet.vm_type.tolist() == [k % 2 for k in range(64)] + [LARGE]
    assert fleet.capacity[[0, 1, 63, 64]].tolist() == [100.0, 410.0, 410.0, 410.0]
    assert fleet.free[[0, 62, 63, 64]].tolist() == [100.0, 100.0, 380.0, 410.0]  # VM 63: 410 - 30
    assert fleet.ready_at[[0, 63, 64]].tolist() == [120.0, 183.0, 184.0]  # start + 120 s of boot
    assert fleet.anchor[[0, 63, 64]].tolist() == [0.0, 63.0, 64.0]
    assert fleet.last_departure[[0, 63, 64]].tolist() == [0.0, 500.0, 64.0]  # the start if no job
    assert fleet.n_jobs[[62, 63, 64]].tolist() == [0, 1, 0]
    assert fleet.rate[[0, 1, 64]].tolist() == [0.065, 0.26, 0.26]
    assert [row[63] for row in stats_of(fleet)] == [70.0, 70.0, 70.0, 500.0, 500.0]
    assert fleet.arr_sum[[0, 64]].tolist() == [0.0, 0.0]
    assert fleet.occupancy is not None
    assert fleet.occupancy.hosted(63) == [(400.0, 500.0, 30.0)]
    assert p.alive.tolist() == [True] * 65


# --- billing of a VM ----------------------------------------------------------------------------------


def test_one_more_unit_costs_the_rate_except_on_a_heavy_reservation() -> None:
    p = pool()
    p.start(LARGE, 0.0)  # on demand: the large type's 0.26 $/h
    p.start(LARGE, 0.0, option=HEAVY_CODE, rate=0.1, booted=True)  # billed every hour anyway: 0
    p.start(SMALL, 0.0, option=LIGHT_CODE, rate=0.03)  # a light reservation pays its rate per unit
    fleet = snapshot(p, 0.0, [], [], stats=False)
    assert fleet.rate.tolist() == [0.26, 0.0, 0.03]
    assert p.rate[:3].tolist() == [0.26, 0.1, 0.03]
    assert fleet.ready_at.tolist() == [120.0, 0.0, 120.0]  # the heavy VM is booted already


def test_the_ledger_record_counts_each_job_requirement_times_its_runtime() -> None:
    p = pool()
    slot = p.start(LARGE, 0.0)
    p.add(slot, 0, 40.0, 130.0, 330.0, 200.0, start=130.0)  # 40 x 200 = 8,000
    p.add(slot, 1, 10.0, 150.0, 450.0, 300.0, start=150.0)  # 10 x 300 = 3,000
    p.remove(slot, 0, 40.0)
    p.remove(slot, 1, 10.0)
    record = p.release(slot, 3590.0)
    assert record.busy_capacity_s == 11_000.0  # 8,000 + 3,000
    assert (record.jobs_hosted, record.units, record.cost) == (2, 1, 0.26)  # [0, 3590] is one hour


def test_releasing_a_vm_that_hosts_a_job_is_refused_with_its_id_time_and_jobs() -> None:
    p = pool()
    p.start(SMALL, 0.0)
    p.start(SMALL, 0.0)
    p.add(1, 0, 20.0, 130.0, 330.0, 200.0)
    with pytest.raises(RuntimeError, match=r"^VM 1 released at 100\.0 while hosting 1 job\(s\)$"):
        p.release(1, 100.0)


# --- release and trimming ----------------------------------------------------------------------------


def test_a_released_slot_reads_as_dead_and_releasing_the_last_slot_drops_every_free_slot_at_the_end() -> None:
    p = pool()
    for _ in range(3):
        p.start(LARGE, 0.0)  # slots 0, 1, 2 (VM ids 0, 1, 2)
    p.release(1, 3590.0)  # not the last slot: the snapshot keeps 3 slots
    assert p.n_slots == 3 and p.alive.tolist() == [True, False, True]
    assert p.vm_id[:3].tolist() == [0, -1, 2] and p.state(1, 3590.0) == "released"
    fleet = snapshot(p, 3590.0, [], [], stats=False)
    assert fleet.vm_type.tolist() == [LARGE, -1, LARGE]  # a dead slot: vm_type -1, free -1
    assert fleet.free.tolist() == [410.0, -1.0, 410.0]
    p.release(2, 3590.0)  # exactly the last slot: slots 2 and 1 are free at the end, slot 0 holds a VM
    assert p.n_slots == 1 and len(snapshot(p, 3590.0, [], [], stats=False)) == 1
    assert p.start(SMALL, 3600.0) == 1  # the next VM takes the lowest free slot: 1, by growing again
    assert (p.n_slots, int(p.vm_id[1])) == (2, 3)
    p.release(0, 7190.0)  # not the last slot (n_slots 2): nothing dropped
    assert p.n_slots == 2 and p.alive.tolist() == [False, True]
    p.release(1, 7190.0)  # the last slot with slot 0 free too: the pool is empty
    assert p.n_slots == 0 and p.alive.tolist() == []
    assert p.start(SMALL, 7200.0) == 0 and int(p.vm_id[0]) == 4
    assert [r.instance_id for r in p.ledger.records] == [1, 2, 0, 3]


# --- statistics of the hosted jobs -------------------------------------------------------------------


def test_statistics_follow_each_placement_and_a_new_vm_leaves_the_others_alone() -> None:
    p = pool()
    slot = p.start(LARGE, 0.0)
    p.add(slot, 0, 10.0, 100.0, 400.0, 200.0)  # arrival 100, departure 400
    p.add(slot, 1, 10.0, 50.0, 700.0, 300.0)  # arrival 50 (a new minimum), departure 700 (a new maximum)
    p.add(slot, 2, 10.0, 80.0, 600.0, 300.0)  # inside both ranges: only the sum moves
    assert p.start(SMALL, 10.0) == 1
    fleet = snapshot(p, 10.0, [100.0, 50.0, 80.0], [400.0, 700.0, 600.0], stats=False)
    # VM 0: arrivals 100, 50, 80 (min 50, max 100, sum 230), departures 400, 700, 600; VM 1 hosts none
    assert_stats(fleet, [[50.0, NAN], [100.0, NAN], [230.0, 0.0], [400.0, NAN], [700.0, NAN]])
    assert fleet.n_jobs.tolist() == [3, 0] and fleet.arr_mean[0] == 230.0 / 3
    assert fleet.last_departure.tolist() == [700.0, 10.0]


def test_a_departure_refreshes_the_statistics_from_the_jobs_left() -> None:
    p = pool()
    slot = p.start(LARGE, 0.0)
    arrival, departure = [100.0, 40.0, 70.0, 10.0], [500.0, 900.0, 300.0, 200.0]
    for job in range(4):
        p.add(slot, job, 10.0, arrival[job], departure[job], 100.0)
    assert_stats(snapshot(p, 0.0, arrival, departure, stats=False), [[10.0], [100.0], [220.0], [200.0], [900.0]])
    p.remove(slot, 3, 10.0)  # job 3 (arrival 10, departure 200) leaves
    # jobs 0, 1, 2 left: arrivals 100, 40, 70 (min 40, max 100, sum 210), departures 500, 900, 300
    assert_stats(snapshot(p, 0.0, arrival, departure, stats=True), [[40.0], [100.0], [210.0], [300.0], [900.0]])
    assert float(p.free[slot]) == 380.0  # 410 - 3 x 10
    for job in range(3):
        p.remove(slot, job, 10.0)
    assert_stats(snapshot(p, 0.0, arrival, departure, stats=True), [[NAN], [NAN], [0.0], [NAN], [NAN]])
    assert p.state(slot, 200.0) == "idle"


def test_a_slot_reused_after_a_departure_and_a_release_keeps_exact_statistics_without_refresh() -> None:
    p = pool()
    p.start(LARGE, 0.0)
    p.start(LARGE, 0.0)  # slot 1 stays leased: releasing slot 0 drops nothing
    p.add(0, 0, 50.0, 100.0, 300.0, 200.0)
    p.remove(0, 0, 50.0)  # a departure touched slot 0 ...
    p.release(0, 3590.0)  # ... which is released before any refresh
    assert p.start(SMALL, 3600.0) == 0  # the lowest free slot
    p.add(0, 1, 20.0, 3700.0, 3900.0, 150.0)  # the new VM's only job: arrival 3700, departure 3900
    fleet = snapshot(p, 3600.0, [100.0, 3700.0], [300.0, 3900.0], stats=False)
    assert_stats(fleet, [[3700.0, NAN], [3700.0, NAN], [3700.0, 0.0], [3900.0, NAN], [3900.0, NAN]])
    assert fleet.n_jobs.tolist() == [1, 0] and fleet.free.tolist() == [80.0, 410.0]  # 100 - 20


@pytest.mark.parametrize("n", [3, 7, 8, 9])
def test_a_refreshed_arrival_sum_is_the_sum_of_the_jobs_left_as_if_the_departed_job_never_came(n: int) -> None:
    # Two large VMs host the same n jobs (whole-second arrivals 1000, 2001, 3002, ...); VM 0 also hosted one more
    # job, which left, so its statistics are recomputed from the jobs left. Both VMs report the same sum, the
    # exact sum of the arrivals (whole numbers add up exactly in any order).
    arrivals = [1000.0 * (k + 1) + k for k in range(n)]
    p = pool()
    for slot in (p.start(LARGE, 0.0), p.start(LARGE, 0.0)):
        for k, a in enumerate(arrivals):
            p.add(slot, 100 * slot + k, 1.0, a, 100_000.0, 10.0)
    p.add(0, 99, 1.0, 5.0, 100_000.0, 10.0)
    p.remove(0, 99, 1.0)
    arrival, departure = np.full(200, np.nan), np.full(200, 100_000.0)
    for slot in (0, 1):
        arrival[100 * slot: 100 * slot + n] = arrivals
    fleet = p.fleet(0.0, stats=True, arrival=arrival, departure=departure)
    expected = 1000.0 * n * (n + 1) / 2 + n * (n - 1) / 2
    assert fleet.arr_sum[0] == fleet.arr_sum[1] == expected
    assert fleet.arr_min[0] == 1000.0 and fleet.arr_max[0] == arrivals[-1]


# --- the live snapshot ---------------------------------------------------------------------------------


@pytest.mark.parametrize("intervals", [True, False])
def test_the_snapshot_is_one_live_fleet_handed_out_again_until_the_slot_count_changes(intervals: bool) -> None:
    # With and without the interval table (the key's width is the table's 8, or 0 without one): two VMs,
    # then three snapshots at the same slot count, the same object each time with its clock set again
    # (exact billing: anchor(now) = now, so a new VM rolls over a full 3600 s from now). A job placed in
    # between shows through the views: the large VM 0 has 410 - 10 = 400 free. A third VM changes the
    # slot count: a new fleet of 3 slots, and the old one still shows its 2.
    p = pool(intervals=intervals)
    p.start(LARGE, 0.0)
    p.start(SMALL, 0.0)
    first = snapshot(p, 0.0, [], [], stats=False)
    assert (first.now, first.new_rollover) == (0.0, 3600.0)
    again = snapshot(p, 1800.0, [], [], stats=False)
    assert again is first and (first.now, first.new_rollover) == (1800.0, 3600.0)
    p.add(0, 0, 10.0, 1800.0, 2000.0, 200.0)
    third = snapshot(p, 1900.0, [1800.0], [2000.0], stats=True)
    assert third is first and first.now == 1900.0
    assert first.free.tolist() == [400.0, 100.0] and first.n_jobs.tolist() == [1, 0]
    p.start(SMALL, 1900.0)
    grown = snapshot(p, 1900.0, [1800.0], [2000.0], stats=False)
    assert grown is not first and len(grown) == 3 and len(first) == 2
    assert grown.free.tolist() == [400.0, 100.0, 100.0]
    assert snapshot(p, 2000.0, [1800.0], [2000.0], stats=False) is grown and grown.now == 2000.0


@pytest.mark.parametrize("n", [2, 7])
def test_a_refreshed_sum_of_negative_zero_arrivals_keeps_its_sign_as_if_the_departed_job_never_came(n: int) -> None:
    # Two large VMs host the same n jobs, each arriving at -0.0 (IEEE 754: -0.0 + -0.0 = -0.0, so the sum
    # kept job by job, -0.0 for the first job then += -0.0, stays -0.0). VM 0 also hosted a job arriving
    # at 5.0, which left: its statistics are refreshed from the n jobs left, summed in order as add()
    # keeps them, ((-0.0 + -0.0) + ...) = -0.0, the sign included, up to 7 values; VM 1 never hosted
    # that job and kept -0.0. (NumPy 2's sum of negative zeros is +0.0: its reduction starts from +0.0.)
    p = pool()
    for slot in (p.start(LARGE, 0.0), p.start(LARGE, 0.0)):
        for k in range(n):
            p.add(slot, 100 * slot + k, 1.0, -0.0, 1000.0, 10.0)
    p.add(0, 99, 1.0, 5.0, 1000.0, 10.0)
    p.remove(0, 99, 1.0)
    arrival, departure = np.full(200, np.nan), np.full(200, 1000.0)
    arrival[[*range(n), *range(100, 100 + n)]] = -0.0
    fleet = p.fleet(0.0, stats=True, arrival=arrival, departure=departure)
    assert fleet.arr_sum.tolist() == [0.0, 0.0] and np.signbit(fleet.arr_sum).tolist() == [True, True]
    assert fleet.arr_min.tolist() == [0.0, 0.0] and fleet.n_jobs.tolist() == [n, n]


def test_the_snapshot_is_made_again_when_the_interval_table_widens() -> None:
    # One large VM; the table's rows are 8 wide. A snapshot, then nine jobs of 1 unit each on the VM
    # (the ninth widens every row to 16): the next snapshot is a new fleet whose occupancy shows all
    # nine jobs in a 16-wide row (the old one's views still show the 8-wide arrays of before).
    p = pool()
    p.start(LARGE, 0.0)
    before = snapshot(p, 0.0, [], [], stats=False)
    assert before.occupancy is not None and before.occupancy.r.shape == (1, 8)
    for job in range(9):
        p.add(0, job, 1.0, 10.0, 500.0 + job, 100.0)
    after = snapshot(p, 20.0, [], [], stats=False)
    assert after is not before and after.occupancy is not None and after.occupancy.r.shape == (1, 16)
    assert after.occupancy.r[0].sum() == 9.0 and after.free[0] == 401.0


def test_the_fleet_a_heuristic_reads_cannot_write_the_pool() -> None:
    p = pool()
    slot = p.start(LARGE, 0.0)
    p.add(slot, 0, 50.0, 100.0, 400.0, 200.0)
    fleet = p.fleet(0.0, stats=False, arrival=[100.0], departure=[400.0])
    assert fleet.occupancy is not None
    for values in (fleet.free, fleet.capacity, fleet.vm_type, fleet.ready_at, fleet.n_jobs, fleet.dep_max,
                   fleet.occupancy.r, fleet.occupancy.start_max):
        with pytest.raises(ValueError, match="read-only"):
            values[0] = 1
    p.add(slot, 1, 10.0, 150.0, 500.0, 100.0)  # the pool still writes its own columns, and the snapshot sees them
    assert float(fleet.free[0]) == 410.0 - 60.0 and fleet.occupancy.hosted(0)[1] == (400.0, 500.0, 10.0)
