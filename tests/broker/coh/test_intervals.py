"""The engine's interval table: each slot's jobs, earliest end and latest start through adds, removes,
growing and widening; copies that go their own way; read-only snapshots."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.coh.intervals import IntervalTable
from tests.heuristics.test_occupancy import entries

INF = np.inf


def test_the_table_keeps_each_slots_earliest_end_and_latest_start_through_adds_removes_and_widening() -> None:
    rng = np.random.default_rng(5)
    table = IntervalTable(3)
    hosted: dict[int, tuple[int, float, float, float]] = {}
    for job in range(600):
        if hosted and rng.random() < 0.45:
            gone = int(rng.choice(list(hosted)))
            table.remove(gone)
            del hosted[gone]
        else:
            slot, start = int(rng.integers(3)), float(rng.integers(0, 100))
            hosted[job] = (slot, start, start + float(rng.integers(1, 50)), float(rng.integers(1, 9)))
            table.add(slot, job, *hosted[job][1:])
        for slot in range(3):
            mine = [v for v in hosted.values() if v[0] == slot]
            assert table.dep_min[slot] == min((v[2] for v in mine), default=INF)
            assert table.start_max[slot] == max((v[1] for v in mine), default=-INF)
            assert sorted(table.r[slot][table.end[slot] != INF].tolist()) == sorted(v[3] for v in mine)
            assert sorted(table.entries(slot)) == sorted(v[1:] for v in mine)
    assert table.r.shape[1] > 8  # some slot held more than the first width


def test_the_jobs_ending_by_a_horizon_from_the_tables_lists_are_the_arrays_own_through_adds_and_removes() -> None:
    rng = np.random.default_rng(11)
    table = IntervalTable(4)
    hosted: list[int] = []
    for job in range(400):
        if hosted and rng.random() < 0.4:  # a job leaves: mostly the oldest, sometimes another
            gone = hosted.pop(0 if rng.random() < 0.7 else int(rng.integers(len(hosted))))
            table.remove(gone)
        else:  # ends and requirements on a coarse grid: many ties, on one slot and across slots
            start = float(rng.integers(0, 40))
            table.add(int(rng.integers(4)), job, start, start + float(rng.integers(1, 6)), float(rng.integers(1, 3)))
            hosted.append(job)
        occ = table.occupancy(4)
        assert occ.by_end is not None and occ.by_end[0] == sorted(occ.by_end[0])  # by end
        for horizon in (-1.0, 3.0, 20.0, 44.0, 100.0):
            fast = occ.ending_lists(horizon)
            model = [a.tolist() for a in occ.frozen().ending_by(horizon)]  # no lists: read from the arrays
            assert sorted(zip(*fast, strict=True)) == sorted(zip(*model, strict=True))
            assert fast[1] == model[1]  # the ends in the same order
    twin = table.copy()
    table.remove(hosted[0])
    assert len(twin.occupancy(4).ending_lists(math.inf)[0]) == len(hosted)
    assert len(table.occupancy(4).ending_lists(math.inf)[0]) == len(hosted) - 1


def test_the_tables_arrays_see_its_writes_after_growing_and_a_copy_does_not() -> None:
    table = IntervalTable(2)
    table.add(1, 7, 5.0, 20.0, 3.0)
    table.grow(4)
    for job in range(10):  # widen row 3
        table.add(3, 100 + job, float(job), 50.0, 1.0)
    assert (table.start[1, 0], table.end[1, 0], table.r[1, 0], table.dep_min[1]) == (5.0, 20.0, 3.0, 20.0)
    assert table.start.shape == (4, 16) and table.start_max[3] == 9.0
    twin = table.copy()
    table.remove(7)
    assert table.dep_min[1] == INF and twin.dep_min[1] == 20.0 and twin.end[1, 0] == 20.0
    twin.add(0, 8, 1.0, 2.0, 4.0)
    assert table.dep_min[0] == INF and twin.dep_min[0] == 2.0


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


def test_a_copy_keeps_the_width_of_its_rows() -> None:
    # width 2: slot 1's first entry is the third of each column; a twin of another width would write elsewhere
    table = IntervalTable(2, width=2)
    table.add(0, 1, 0.0, 10.0, 1.0)
    twin = table.copy()
    twin.add(1, 2, 5.0, 20.0, 3.0)
    assert twin.width == 2 and twin.r.tolist() == [[1.0, 0.0], [3.0, 0.0]] and twin.entries(1) == [(5.0, 20.0, 3.0)]
    assert entries(twin.occupancy(2), 1) == [(5.0, 20.0, 3.0)]


def test_the_snapshot_is_read_only_and_sees_the_tables_later_writes() -> None:
    table = IntervalTable(2)
    table.add(0, 1, 0.0, 10.0, 1.0)
    occ = table.occupancy(2)
    for values in (occ.start, occ.end, occ.r, occ.dep_min, occ.start_max):
        with pytest.raises(ValueError, match="read-only"):
            values[0] = 5.0
    table.add(1, 2, 3.0, 4.0, 2.0)
    assert occ.hosted(1) == [(3.0, 4.0, 2.0)] and occ.dep_min.tolist() == [10.0, 4.0]


def test_a_slots_peak_is_the_models_with_or_without_a_job_starting_inside_the_window() -> None:
    from heuristics.occupancy import peak

    rng = np.random.default_rng(11)
    table = IntervalTable(2)
    hosted: dict[int, tuple[int, float, float, float]] = {}
    for job in range(300):
        slot, start = int(rng.integers(2)), float(rng.integers(0, 60))
        hosted[job] = (slot, start, start + float(rng.integers(1, 40)), float(rng.integers(1, 9)))
        table.add(slot, job, *hosted[job][1:])
        if rng.random() < 0.3:
            gone = int(rng.choice(list(hosted)))
            table.remove(gone)
            del hosted[gone]
        s = float(rng.integers(0, 80))
        for slot in range(2):
            mine = [v[1:] for v in hosted.values() if v[0] == slot]
            assert table.peak(slot, s, s + 10.0) == peak(mine, s, s + 10.0)


def test_a_slots_peak_counts_a_job_that_starts_inside_the_window_and_not_one_that_ended_at_its_start() -> None:
    table = IntervalTable(1)
    table.add(0, 1, 0.0, 10.0, 4.0)   # ends at s = 10: does not count
    table.add(0, 2, 5.0, 30.0, 3.0)   # held over the whole window
    assert table.peak(0, 10.0, 20.0) == 3.0
    table.add(0, 3, 15.0, 25.0, 2.0)  # starts inside [10, 20): the peak is at 15
    assert table.peak(0, 10.0, 20.0) == 5.0
    assert table.peak(0, 10.0, 15.0) == 3.0  # [10, 15) ends where job 3 starts
