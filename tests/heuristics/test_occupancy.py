"""The room of one VM in Python (:func:`heuristics.occupancy.row_peak`) is the array rule's number to the last bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics.occupancy import IntervalTable, entries_peak, peaks, row_peak, row_sum, sparse_sum

WIDTHS = [1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 129, 300]


def _row(rng: np.random.Generator, k: int, fractional: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    used = rng.random(k) < rng.random()
    start = np.where(used, rng.integers(0, 50, k) + fractional * rng.random(k), -np.inf)
    end = np.where(used, start + rng.integers(1, 50, k) + fractional * rng.random(k), np.inf)
    r = np.where(used, rng.random(k) * 100 if fractional else rng.integers(1, 10, k) * 10.0, 0.0)
    return start, end, r


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from(WIDTHS), fractional=st.booleans(),
       s=st.floats(-5, 60), length=st.floats(0.5, 40))
def test_row_peak_is_peaks_of_one_row_to_the_last_bit(seed: int, k: int, fractional: bool, s: float,
                                                      length: float) -> None:
    start, end, r = _row(np.random.default_rng(seed), k, fractional)
    want = float(peaks(start[None], end[None], r[None], np.array([s]), np.array([s + length]))[0])
    assert row_peak(start.tolist(), end.tolist(), r.tolist(), s, s + length) == want


def test_row_peak_on_rows_that_need_the_order_of_the_sum() -> None:
    rng = np.random.default_rng(3)
    for _ in range(3000):
        k = int(rng.choice(WIDTHS))
        start, end, r = _row(rng, k, True)
        s = float(rng.integers(0, 60) + rng.random())
        want = float(peaks(start[None], end[None], r[None], np.array([s]), np.array([s + 20.0]))[0])
        assert row_peak(start.tolist(), end.tolist(), r.tolist(), s, s + 20.0) == want


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(st.just(0.0), st.floats(0, 1e6)), min_size=1, max_size=300))
def test_row_sum_is_numpys_sum(values: list[float]) -> None:
    assert row_sum(values) == float(np.array(values)[None].sum(axis=1)[0])


def test_row_peak_counts_only_what_overlaps_the_window() -> None:
    inf = float("inf")
    start, end, r = [0.0, 5.0, -inf, 12.0], [10.0, 8.0, inf, 20.0], [1.0, 2.0, 0.0, 4.0]
    assert row_peak(start, end, r, 0.0, 4.0) == 1.0  # only the first job runs then
    assert row_peak(start, end, r, 0.0, 6.0) == 3.0  # the second starts inside
    assert row_peak(start, end, r, 10.0, 12.0) == 0.0  # the third starts at the window's end: not in it
    assert row_peak(start, end, r, 9.0, 13.0) == 4.0


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
            assert table.dep_min[slot] == min((v[2] for v in mine), default=np.inf)
            assert table.start_max[slot] == max((v[1] for v in mine), default=-np.inf)
            assert sorted(table.r[slot][table.end[slot] != np.inf].tolist()) == sorted(v[3] for v in mine)
    assert table.r.shape[1] > 8  # some slot held more than the first width


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
    assert table.dep_min[1] == np.inf and twin.dep_min[1] == 20.0 and twin.end[1, 0] == 20.0
    twin.add(0, 8, 1.0, 2.0, 4.0)
    assert table.dep_min[0] == np.inf and twin.dep_min[0] == 2.0


# --- a row's used entries (the small-fleet packer's and the world's interval rule) ----------------------------------


@settings(max_examples=300, deadline=None)
@given(n=st.sampled_from([3, 7, 8, 9, 16, 17, 24, 31, 64, 127, 128, 129, 136, 300]),
       seed=st.integers(0, 2**32 - 1), density=st.floats(0.0, 1.0))
def test_sparse_sum_is_numpys_sum_of_the_row_with_zeros_elsewhere(n: int, seed: int, density: float) -> None:
    rng = np.random.default_rng(seed)
    row = np.where(rng.random(n) < density, rng.random(n) * 10.0 ** rng.integers(-3, 6, n), 0.0)
    items = [(p, x) for p, x in enumerate(row.tolist()) if x != 0.0]
    rng.shuffle(items)  # in any order: the positions decide
    assert sparse_sum(items, n) == float(row[None].sum(axis=1)[0])


def test_sparse_sum_by_hand() -> None:
    # d + 1 is d (the spacing of doubles at 1e16 is 2) but d + 2 is not: each case tells one order from another
    a, b, c, d = 0.1, 0.2, 0.3, 1e16
    assert sparse_sum([], 8) == 0.0
    assert sparse_sum([(5, a)], 8) == a
    assert sparse_sum([(6, b), (1, a)], 8) == a + b
    assert sparse_sum([(2, c), (0, a), (1, b)], 5) == (a + b) + c != a + (b + c)  # below 8: one after another
    assert sparse_sum([(0, d), (1, 1.0), (2, -d), (3, 1.0)], 5) == 1.0
    # from 8: eight lanes (position modulo 8) combined as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))
    assert sparse_sum([(0, d), (1, 1.0), (2, -d), (3, 1.0)], 8) == (d + 1.0) + (-d + 1.0) == 0.0
    assert sparse_sum([(0, d), (8, 1.0), (4, 1.0), (1, -d)], 16) == ((d + 1.0) + -d) + 1.0 == 1.0
    # the values past the last whole block of 8 come after the lanes, one after another
    assert sparse_sum([(2, d), (8, 1.0), (9, 1.0)], 10) == d
    assert sparse_sum([(2, d), (8, 1.0), (9, 1.0)], 16) == (1.0 + 1.0) + d == d + 2.0  # lanes 0 and 1
    # above 128: the two halves (the first a multiple of 8), each pairwise
    assert sparse_sum([(0, 1.0), (64, d), (72, -d)], 136) == 1.0 + (d + -d) == 1.0
    assert sparse_sum([(0, 1.0), (64, d), (72, -d)], 128) == (1.0 + d) + -d == 0.0


@settings(max_examples=200, deadline=None)
@given(n=st.sampled_from([8, 9, 16, 32, 129]), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1, 10, 2**40]))
def test_sparse_sum_of_whole_numbers_is_numpys_sum(n: int, seed: int, scale: int) -> None:
    rng = np.random.default_rng(seed)
    row = np.where(rng.random(n) < 0.6, rng.integers(1, 100, n) * float(scale), 0.0)
    items = [(p, x) for p, x in enumerate(row.tolist()) if x != 0.0]
    assert sparse_sum(items, n) == float(row[None].sum(axis=1)[0])


def test_sparse_sum_takes_whole_numbers_in_any_order_only_while_every_sum_is_exact() -> None:
    top, d = 2.0**53, 2.0**54  # whole numbers up to 2**53 are doubles; at 2**54 they are 4 apart
    assert sparse_sum([(0, 2.0**52), (1, 1.0), (2, 2.0**52 - 1.0)], 8) == top  # magnitudes add up to 2**53
    assert sparse_sum([(0, d), (1, 1.0), (2, -d), (3, 1.0)], 8) == (d + 1.0) + (-d + 1.0) == 0.0  # pairwise
    assert sparse_sum([(0, d), (1, 1.0), (2, -d), (3, 1.0)], 5) == ((d + 1.0) + -d) + 1.0 == 1.0  # in order
    assert sparse_sum([(0, 1.0), (1, top), (2, -top), (3, 1.0)], 8) == (1.0 + top) + (-top + 1.0) == 1.0
    assert sparse_sum([(0, 1.0), (1, top), (2, 1.0)], 5) == (1.0 + top) + 1.0 == top  # in order, not 2**53 + 2
    # magnitudes that add up past 2**53 may round to it exactly: from 2**53 on, the order is NumPy's
    assert sparse_sum([(2, top), (0, 1.0), (1, 1.0)], 5) == (1.0 + 1.0) + top == top + 2.0
    assert sparse_sum([(0, 0.5), (1, 0.25), (2, 1.0)], 8) == 1.75  # not whole: pairwise, exact here as well


def test_entries_peak_is_row_peak_of_the_padded_row() -> None:
    rng = np.random.default_rng(11)
    for _ in range(2000):
        k = int(rng.choice(WIDTHS))
        start, end, r = _row(rng, k, True)
        s = float(rng.integers(0, 60) + rng.random())
        rows = zip(start.tolist(), end.tolist(), r.tolist(), strict=True)
        entries = [(p, a, b, x) for p, (a, b, x) in enumerate(rows) if b != np.inf]
        rng.shuffle(entries)
        want = float(peaks(start[None], end[None], r[None], np.array([s]), np.array([s + 20.0]))[0])
        assert entries_peak(entries, k, s, s + 20.0) == want


def test_entries_peak_at_the_windows_edges() -> None:
    # Jobs (start, end, r): A (0, 10, 1) runs at s = 0; B (5, 8, 2) starts inside [0, 6); C (12, 20, 4).
    entries = [(0, 0.0, 10.0, 1.0), (1, 5.0, 8.0, 2.0), (3, 12.0, 20.0, 4.0)]
    assert entries_peak(entries, 8, 0.0, 5.0) == 1.0  # B starts at the window's end: not in it
    assert entries_peak(entries, 8, 0.0, 5.5) == 3.0
    assert entries_peak(entries, 8, 5.0, 6.0) == 3.0  # B starts at s: in the load at s
    assert entries_peak(entries, 8, 8.0, 12.0) == 1.0  # B ended at 8: out; C starts at 12: out
    assert entries_peak(entries, 8, 10.0, 12.5) == 4.0  # A ended at 10; C starts inside
    assert entries_peak(entries, 8, 20.0, 30.0) == 0.0
    assert entries_peak([], 8, 0.0, 1.0) == 0.0
    # an end before a start at the same instant: B leaves at 8 as D (8, 9, 2) comes, the load stays 3
    assert entries_peak([*entries, (2, 8.0, 9.0, 2.0)], 8, 6.0, 9.0) == 3.0


def test_the_table_shows_each_rows_used_entries_and_its_width() -> None:
    table = IntervalTable(2)
    table.add(1, 7, 5.0, 20.0, 3.0)
    table.add(1, 8, 6.0, 9.0, 2.0)
    table.add(0, 9, 1.0, 2.0, 4.0)
    assert sorted(table.entries(1)) == [(0, 5.0, 20.0, 3.0), (1, 6.0, 9.0, 2.0)] and table.width == 8
    table.remove(7)
    assert table.entries(1) == [(1, 6.0, 9.0, 2.0)] and table.entries(0) == [(0, 1.0, 2.0, 4.0)]
    table.add(1, 10, 7.0, 8.0, 1.0)  # the lowest free column again
    assert sorted(table.entries(1)) == [(0, 7.0, 8.0, 1.0), (1, 6.0, 9.0, 2.0)]
    for job in range(20, 30):  # widened: positions stay
        table.add(1, job, 0.0, 1.0, 1.0)
    assert table.width == 16 and (0, 7.0, 8.0, 1.0) in table.entries(1)
    twin = table.copy()
    twin.remove(10)
    assert (0, 7.0, 8.0, 1.0) in table.entries(1) and (0, 7.0, 8.0, 1.0) not in twin.entries(1)
    occupancy = table.occupancy(2)
    assert occupancy.table is table and occupancy.frozen().table is None
