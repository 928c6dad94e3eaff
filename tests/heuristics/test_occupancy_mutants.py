"""The interval table's copy and the occupancy's ``with_jobs`` on their documented layout (issue 19: the
copy had no test of its own, and a padding entry holding 1 instead of 0 survived).

An unused entry is ``(start, end, r) = (-inf, inf, 0)`` (the module's contract); a row's real entries
are a set of intervals, in whatever columns. Expected values are typed out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.occupancy import CallRoom, IntervalTable, Occupancy, entries_peak, peaks, row_peak, row_sum, sparse_sum

INF = np.inf


def entries(occ: Occupancy, slot: int) -> list[tuple[float, float, float]]:
    """The real entries of ``slot``, sorted; every other entry must be exactly the padding."""
    row = list(zip(occ.start[slot].tolist(), occ.end[slot].tolist(), occ.r[slot].tolist(), strict=True))
    padding = [e for e in row if e[1] == INF]
    assert padding == [(-INF, INF, 0.0)] * len(padding)
    return sorted(e for e in row if e[1] != INF)


def test_a_copy_holds_the_same_jobs_and_goes_its_own_way() -> None:
    table = IntervalTable(2, width=2)
    table.add(0, 10, 0.0, 100.0, 5.0)
    table.add(0, 11, 50.0, 80.0, 7.0)
    table.add(1, 12, 20.0, 30.0, 1.0)
    twin = table.copy()
    for name in ("start", "end", "r", "dep_min", "start_max"):
        assert getattr(twin, name).tolist() == getattr(table, name).tolist()
    # the twin forgets job 11 and takes job 13 (in the freed column) and job 14 (which widens it)
    twin.remove(11)
    twin.add(0, 13, 60.0, 90.0, 2.0)
    twin.add(0, 14, 70.0, 75.0, 3.0)
    twin.remove(12)
    mine, theirs = table.occupancy(2), twin.occupancy(2)
    assert entries(theirs, 0) == [(0.0, 100.0, 5.0), (60.0, 90.0, 2.0), (70.0, 75.0, 3.0)]
    assert entries(theirs, 1) == [] and theirs.dep_min.tolist() == [75.0, INF]
    assert theirs.start_max.tolist() == [70.0, -INF]
    # ... while the original still holds its own three jobs, and removes job 11 itself
    assert entries(mine, 0) == [(0.0, 100.0, 5.0), (50.0, 80.0, 7.0)] and entries(mine, 1) == [(20.0, 30.0, 1.0)]
    assert table.r.shape == (2, 2) and mine.dep_min.tolist() == [80.0, 30.0]
    table.remove(11)
    assert entries(table.occupancy(2), 0) == [(0.0, 100.0, 5.0)] and table.dep_min.tolist() == [100.0, 30.0]


def test_with_jobs_pads_new_slots_and_columns_with_entries_that_hold_nothing() -> None:
    table = IntervalTable(1, width=1)
    table.add(0, 1, 0.0, 100.0, 5.0)
    occ = table.occupancy(1).with_jobs(np.array([0, 1, 0]), np.array([10.0, 20.0, 30.0]),
                                       np.array([40.0, 50.0, 60.0]), np.array([1.0, 2.0, 3.0]), 3)
    assert occ.r.shape[0] == 3
    assert entries(occ, 0) == [(0.0, 100.0, 5.0), (10.0, 40.0, 1.0), (30.0, 60.0, 3.0)]
    assert entries(occ, 1) == [(20.0, 50.0, 2.0)] and entries(occ, 2) == []
    assert occ.dep_min.tolist() == [40.0, 50.0, INF] and occ.start_max.tolist() == [30.0, 20.0, -INF]
    assert entries(table.occupancy(1), 0) == [(0.0, 100.0, 5.0)]  # a copy: the table is unchanged


def test_with_no_job_only_new_empty_slots_are_added() -> None:
    table = IntervalTable(1, width=1)
    table.add(0, 1, 0.0, 100.0, 5.0)
    none = np.zeros(0)
    occ = table.occupancy(1).with_jobs(np.zeros(0, np.int64), none, none, none, 2)
    assert entries(occ, 0) == [(0.0, 100.0, 5.0)] and entries(occ, 1) == []
    assert occ.dep_min.tolist() == [100.0, INF] and occ.start_max.tolist() == [0.0, -INF]


# --- the numbers to the last bit (s29: the survivors of the entries rewrite) ------------------------------------------
# D + 1 is D (doubles at 1e16 are 2 apart; a tie rounds to the even one, D), D + 3 is D + 4 and D + 5 is D + 4 again.
# Whole numbers past 2**53: the order in which NumPy adds them shows in the sum, so the columns a row's entries
# take (and the row's width) decide the load, to the last bit, as do the events a sweep passes.

D = 1e16


def test_a_start_at_either_edge_of_the_window_leaves_numpys_load_at_s() -> None:
    # The load at s = 10 is NumPy's sum of the row in order, D + 1 + 1 + 1 + 1 + 0 = D (each 1 is lost). No start is
    # inside (10, 20): D starts at s, the last job at e. A sweep (by time: the four 1s, then D, then the 1 that
    # leaves at 15) would read D + 4 - 1 = D + 3 -> D + 4 at 15, more than the load it is meant to repeat.
    start, end = [10.0, 0.0, 0.0, 0.0, 0.0, 20.0], [100.0, 100.0, 100.0, 100.0, 15.0, 30.0]
    r = [D, 1.0, 1.0, 1.0, 1.0, 1.0]
    got = peaks(np.array([start]), np.array([end]), np.array([r]), np.array([10.0]), np.array([20.0]))
    assert got.tolist() == [D]
    assert row_peak(start, end, r, 10.0, 20.0) == D
    entries = [(p, a, b, x) for p, (a, b, x) in enumerate(zip(start, end, r, strict=True))]
    assert entries_peak(entries[::-1], 6, 10.0, 20.0) == D


def test_the_sweep_skips_the_instant_s_itself() -> None:
    # A and A' (5 each) leave at s = 10, C (1) stays, D' (1) starts at 15 inside [10, 20). The load is 1 at s and 2
    # from 15. At s the sweep passes 11 - 5 = 6 (one of A, A' gone) before the instant is done: not a load of [s, e).
    entries = [(0, 0.0, 10.0, 5.0), (1, 0.0, 10.0, 5.0), (2, 0.0, 100.0, 1.0), (3, 15.0, 20.0, 1.0)]
    assert entries_peak(entries, 4, 10.0, 20.0) == 2.0


def test_a_row_of_lists_of_unequal_lengths_is_refused() -> None:
    with pytest.raises(ValueError, match="shorter"):
        row_peak([0.0, 5.0], [10.0, 8.0], [1.0], 0.0, 4.0)


def test_an_empty_sum_is_the_float_zero() -> None:
    # NumPy's sum of zeros is 0.0, not the int 0
    assert repr(sparse_sum([], 8)) == repr(row_sum([0.0, 0.0])) == repr(entries_peak([], 8, 0.0, 1.0)) == "0.0"


def test_a_copy_keeps_the_width_of_its_rows() -> None:
    # width 2: slot 1's first entry is the third of each column; a twin of another width would write elsewhere
    table = IntervalTable(2, width=2)
    table.add(0, 1, 0.0, 10.0, 1.0)
    twin = table.copy()
    twin.add(1, 2, 5.0, 20.0, 3.0)
    assert twin.width == 2 and twin.r.tolist() == [[1.0, 0.0], [3.0, 0.0]] and twin.entries(1) == [(0, 5.0, 20.0, 3.0)]
    assert entries(twin.occupancy(2), 1) == [(5.0, 20.0, 3.0)]


def _loads(occ: Occupancy) -> list[float]:
    """Each row's load over [10, 20) (every job here runs from 0 to 100: NumPy's sum of the row)."""
    n = len(occ.r)
    return peaks(occ.start, occ.end, occ.r, np.full(n, 10.0), np.full(n, 20.0)).tolist()


def test_with_jobs_puts_a_slots_new_jobs_right_after_its_row_in_call_order() -> None:
    # Slot 1 holds D in its one column; six jobs of 1 join it, one of 1 joins slot 0: 1 + 6 = 7 columns, below 8,
    # so NumPy adds slot 1's row in order, D + 1 + ... + 1 = D. Columns further right (a row of 9: lanes
    # ((D + 0) + (0 + 1)) + ((1 + 1) + (1 + 1)), then the last 1) or one more of padding (a row of 8: lanes
    # ((D + 1) + (1 + 1)) + ((1 + 1) + (1 + 0))) make it D + 4.
    table = IntervalTable(2, width=1)
    table.add(0, 1, 0.0, 100.0, 1.0)
    table.add(1, 2, 0.0, 100.0, D)
    occ = table.occupancy(2).with_jobs(np.array([0, 1, 1, 1, 1, 1, 1]), np.zeros(7), np.full(7, 100.0), np.ones(7), 2)
    assert occ.r.shape == (2, 7) and _loads(occ) == [2.0, D]
    # slot 1 takes 1 then 2 (call order): (D + 1) + 2 = D + 2, where (D + 2) + 1 = D + 3 would round to D + 4
    occ = table.occupancy(2).with_jobs(np.array([1, 1, 0, 0]), np.zeros(4), np.full(4, 100.0),
                                       np.array([1.0, 2.0, 1.0, 1.0]), 2)
    assert _loads(occ) == [3.0, D + 2.0]


def test_with_no_job_the_rows_keep_their_width() -> None:
    # a row of 7 (D and six 1s) adds up in order to D; with one more column of padding, in lanes, to D + 4
    table = IntervalTable(1, width=7)
    for job, r in enumerate([D, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]):
        table.add(0, job, 0.0, 100.0, r)
    occ = table.occupancy(1).with_jobs(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), 1)
    assert occ.r.shape == (1, 7) and _loads(occ) == [D]


def test_call_room_keeps_the_free_capacity_where_every_job_runs_at_s() -> None:
    # free is the capacity less each job in turn: 1 - 0.1 - 0.3 = 0.6000000000000001, while 1 - (0.1 + 0.3) = 0.6.
    # Slot 0's second job starts exactly at s = 10 and slot 1 (started in the call) holds jobs from 0: every job
    # runs at s and none has left, so both rooms are free to the last bit.
    table = IntervalTable(1)
    table.add(0, 1, 0.0, 100.0, 0.1)
    table.add(0, 2, 10.0, 100.0, 0.3)
    room = CallRoom(table.occupancy(1), np.array([1.0]), np.array([0]), 1)
    room.opened(1, 1.0)
    room.add(1, 0.0, 100.0, 0.1)
    room.add(1, 0.0, 100.0, 0.3)
    free = np.array([1.0 - 0.1 - 0.3, 1.0 - 0.1 - 0.3])
    assert free.tolist() == [0.6000000000000001] * 2
    assert room.over(free, np.array([10.0, 10.0]), np.array([20.0, 20.0])).tolist() == free.tolist()
