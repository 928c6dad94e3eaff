"""The interval table's copy and the occupancy's ``with_jobs`` on their documented layout (issue 19: the
copy had no test of its own, and a padding entry holding 1 instead of 0 survived).

An unused entry is ``(start, end, r) = (-inf, inf, 0)`` (the module's contract); a row's real entries
are a set of intervals, in whatever columns. Expected values are typed out by hand.
"""

from __future__ import annotations

import numpy as np

from heuristics.occupancy import IntervalTable, Occupancy

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
