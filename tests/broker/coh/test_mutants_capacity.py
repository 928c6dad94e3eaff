"""Hand-worked cases of the interval capacity rule that a mutation run (mutmut 3) showed untested.

Every expected value below is worked out by hand in the comment beside it, never by the code under
test. The cases sit on the rule's boundaries: a job that starts exactly when another ends (the
interval is ``[start, end)``), a VM's free capacity exactly equal to the need, equal capacity rows.
"""

from __future__ import annotations

import numpy as np

from heuristics.occupancy import CallRoom, IntervalTable, peaks

INF = np.inf


# --- IntervalTable ---------------------------------------------------------------------------------


def test_a_fresh_table_holds_nothing_and_its_summaries_follow_add_and_remove() -> None:
    t = IntervalTable(2, width=2)
    assert t.start.tolist() == [[-INF, -INF], [-INF, -INF]]  # unused entry: (-inf, inf, 0)
    assert t.end.tolist() == [[INF, INF], [INF, INF]]
    assert t.r.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert t.dep_min.tolist() == [INF, INF]
    assert t.start_max.tolist() == [-INF, -INF]
    t.add(0, job=7, start=5.0, end=20.0, r=3.0)
    assert (t.dep_min[0], t.start_max[0]) == (20.0, 5.0)
    t.add(0, job=8, start=10.0, end=15.0, r=4.0)
    assert (t.dep_min[0], t.start_max[0]) == (15.0, 10.0)  # earliest end 15, latest start 10
    assert (t.dep_min[1], t.start_max[1]) == (INF, -INF)  # the other slot is untouched
    t.remove(8)  # back to job 7 alone: its column is unused again
    assert t.start[0].tolist() == [5.0, -INF]
    assert t.end[0].tolist() == [20.0, INF]
    assert t.r[0].tolist() == [3.0, 0.0]
    assert (t.dep_min[0], t.start_max[0]) == (20.0, 5.0)
    t.remove(7)
    assert t.start[0].tolist() == [-INF, -INF]
    assert t.r[0].tolist() == [0.0, 0.0]
    assert (t.dep_min[0], t.start_max[0]) == (INF, -INF)


def test_a_removed_job_holds_nothing_in_the_peaks() -> None:
    # Slot 0: job 1 (r=3) over [0, 10) and job 2 (r=4) over [0, 10); job 2 leaves. Over [2, 8) the
    # load is job 1's 3 alone (a leftover entry holding anything would show here).
    t = IntervalTable(1, width=2)
    t.add(0, job=1, start=0.0, end=10.0, r=3.0)
    t.add(0, job=2, start=0.0, end=10.0, r=4.0)
    assert peaks(t.start, t.end, t.r, np.array([2.0]), np.array([8.0])).tolist() == [7.0]
    t.remove(2)
    assert peaks(t.start, t.end, t.r, np.array([2.0]), np.array([8.0])).tolist() == [3.0]


def test_grow_adds_exactly_the_missing_empty_rows() -> None:
    t = IntervalTable(1, width=2)
    t.add(0, job=0, start=1.0, end=2.0, r=5.0)
    t.grow(3)  # 1 row -> 3 rows: two more, both empty
    assert t.start.shape == t.end.shape == t.r.shape == (3, 2)
    assert len(t.dep_min) == len(t.start_max) == 3
    assert t.start[1:].tolist() == [[-INF, -INF], [-INF, -INF]]
    assert t.end[1:].tolist() == [[INF, INF], [INF, INF]]
    assert t.r[1:].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert t.dep_min.tolist() == [2.0, INF, INF]
    assert t.start_max.tolist() == [1.0, -INF, -INF]
    t.add(2, job=1, start=3.0, end=9.0, r=1.0)
    assert (t.dep_min[2], t.start_max[2]) == (9.0, 3.0)


def test_a_full_row_doubles_the_width_and_keeps_every_job() -> None:
    # Width 1: the 2nd job widens to 2, the 3rd to 4 (never more than needed). Jobs (r) over
    # [0, 10) 1, [2, 8) 2, [4, 6) 4: the peak over [0, 10) is 1 + 2 + 4 = 7 during [4, 6).
    t = IntervalTable(1, width=1)
    t.add(0, job=0, start=0.0, end=10.0, r=1.0)
    assert t.start.shape == (1, 1)
    t.add(0, job=1, start=2.0, end=8.0, r=2.0)
    assert t.start.shape == (1, 2)
    t.add(0, job=2, start=4.0, end=6.0, r=4.0)
    assert t.start.shape == (1, 4)
    assert t.start[0].tolist() == [0.0, 2.0, 4.0, -INF]  # the 4th column is unused
    assert t.end[0].tolist() == [10.0, 8.0, 6.0, INF]
    assert peaks(t.start, t.end, t.r, np.array([0.0]), np.array([10.0])).tolist() == [7.0]
    t.add(0, job=3, start=9.0, end=12.0, r=8.0)  # the unused 4th column: no widening
    assert t.start.shape == (1, 4)
    t.remove(2)
    t.remove(3)
    assert (t.dep_min[0], t.start_max[0]) == (8.0, 2.0)  # left: [0, 10) and [2, 8)


def test_a_frozen_snapshot_keeps_the_values_of_its_tick() -> None:
    t = IntervalTable(2, width=2)
    t.add(0, job=0, start=0.0, end=10.0, r=3.0)
    t.add(1, job=1, start=4.0, end=6.0, r=2.0)
    live, snap = t.occupancy(2), t.occupancy(2).frozen()
    t.remove(0)
    t.add(1, job=2, start=5.0, end=7.0, r=1.0)
    assert live.r[0].tolist() == [0.0, 0.0]  # the view follows the table...
    assert snap.start.tolist() == [[0.0, -INF], [4.0, -INF]]  # ...the snapshot does not
    assert snap.end.tolist() == [[10.0, INF], [6.0, INF]]
    assert snap.r.tolist() == [[3.0, 0.0], [2.0, 0.0]]
    assert snap.dep_min.tolist() == [10.0, 6.0]
    assert snap.start_max.tolist() == [0.0, 4.0]


def test_hosted_lists_only_the_jobs_on_the_slot() -> None:
    t = IntervalTable(2, width=4)
    t.add(0, job=0, start=0.0, end=10.0, r=3.0)
    t.add(0, job=1, start=2.0, end=5.0, r=2.0)
    t.add(0, job=2, start=4.0, end=9.0, r=1.0)
    t.add(1, job=3, start=1.0, end=2.0, r=7.0)
    t.remove(1)  # leaves an unused column between jobs 0 and 2
    start, end, r = t.occupancy(2).hosted(0)
    assert (start.tolist(), end.tolist(), r.tolist()) == ([0.0, 4.0], [10.0, 9.0], [3.0, 1.0])
    start, end, r = t.occupancy(2).hosted(1)
    assert (start.tolist(), end.tolist(), r.tolist()) == ([1.0], [2.0], [7.0])
    assert [v.tolist() for v in IntervalTable(1).occupancy(1).hosted(0)] == [[], [], []]


# --- CallRoom --------------------------------------------------------------------------------------


def a_on_large() -> CallRoom:
    """Slot 0: a VM of capacity 410 hosting A (r=400) over [0, 1000); two slots for new VMs."""
    t = IntervalTable(1)
    t.add(0, job=0, start=0.0, end=1000.0, r=400.0)
    return CallRoom(t.occupancy(1), np.array([410.0]), np.array([1]), 2)


def test_a_vm_of_type_zero_is_alive() -> None:
    # vm_type 0 is the first VM type (small), not a dead slot (those are negative).
    t = IntervalTable(2)
    t.add(0, job=0, start=0.0, end=50.0, r=60.0)
    room = CallRoom(t.occupancy(2), np.array([100.0, 100.0]), np.array([0, -1]), 0)
    s, e = np.array([50.0, 50.0]), np.array([80.0, 80.0])
    # slot 0: A left at 50, exactly when the window starts: the whole 100 is free then
    assert room.over(np.array([40.0, -1.0]), s, e).tolist() == [100.0, -INF]
    assert room.over(np.array([40.0, -1.0]), s - 1, e).tolist() == [40.0, -INF]  # [49, 80) meets A


def test_a_shorter_row_of_the_calls_jobs_is_padded_with_nothing() -> None:
    # New VMs (capacity 100) in slots 1 and 2. Slot 1 gets two jobs of this call: r=30 over
    # [1000, 1100) and r=50 over [1200, 1300): over [1000, 1500) the peak is 50, room 100 - 50 = 50.
    # Slot 2 gets one, r=20 over [1100, 1500): room 100 - 20 = 80 (its row is one entry shorter).
    # Slot 0: A left at 1000, room 410.
    room = a_on_large()
    room.opened(1, 100.0)
    room.opened(2, 100.0)
    room.add(1, 1000.0, 1100.0, 30.0)
    room.add(1, 1200.0, 1300.0, 50.0)
    room.add(2, 1100.0, 1500.0, 20.0)
    free = np.array([10.0, 20.0, 80.0])
    s, e = np.full(3, 1000.0), np.full(3, 1500.0)
    assert room.over(free, s, e).tolist() == [410.0, 50.0, 80.0]


def test_with_need_a_free_capacity_equal_to_the_need_is_kept() -> None:
    # Slot 0's free capacity is 10 (410 - A's 400). A need of exactly 10 is held by free: kept as
    # 10; a need of 10.5 is not, so the room over [1000, 1500) is worked out: 410 (A has left).
    room = a_on_large()
    free = np.array([10.0, -1.0, -1.0])
    s, e = np.full(3, 1000.0), np.full(3, 1500.0)
    assert room.over(free, s, e, need=10.0).tolist() == [10.0, -INF, -INF]
    assert room.over(free, s, e, need=10.5).tolist() == [410.0, -INF, -INF]
