"""The interval capacity rule as plain data: the peak of a VM's jobs over a run, by hand and against the
array sweep, and the occupancy's layout (``Occupancy.of``, ``hosted``, ``with_jobs``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics.occupancy import Occupancy, peak, peaks, room

INF = np.inf


def entries(occ: Occupancy, slot: int) -> list[tuple[float, float, float]]:
    """The real entries of ``slot``, sorted; every other entry must be exactly the padding."""
    row = list(zip(occ.start[slot].tolist(), occ.end[slot].tolist(), occ.r[slot].tolist(), strict=True))
    padding = [e for e in row if e[1] == INF]
    assert padding == [(-INF, INF, 0.0)] * len(padding)
    return sorted(e for e in row if e[1] != INF)


# --- the peak over a run, by hand ------------------------------------------------------------------------------------

JOBS = [(0.0, 10.0, 1.0), (5.0, 8.0, 2.0), (12.0, 20.0, 4.0)]


@pytest.mark.parametrize(("s", "e", "want"), [
    (0.0, 4.0, 1.0),  # only the first job runs then
    (0.0, 6.0, 3.0),  # the second starts inside the run
    (8.0, 10.0, 1.0),  # the second left at 8 ([start, end) is half open)
    (10.0, 12.0, 0.0),  # the first left at 10, the third starts at the run's end: not in it
    (9.0, 13.0, 4.0),  # the third starts inside
    (12.0, 12.5, 4.0),  # a start at s counts
    (20.0, 30.0, 0.0),
])
def test_the_peak_is_the_most_the_jobs_hold_at_any_instant_of_the_run(s: float, e: float, want: float) -> None:
    assert peak(JOBS, s, e) == want
    assert room(10.0, JOBS, s, e) == 10.0 - want


def test_jobs_that_leave_at_s_do_not_count_and_one_starting_inside_does() -> None:
    # two jobs of 5 leave at s = 10, one of 1 stays, one of 1 starts at 15: 1 at s, 2 from 15
    jobs = [(0.0, 10.0, 5.0), (0.0, 10.0, 5.0), (0.0, 100.0, 1.0), (15.0, 20.0, 1.0)]
    assert peak(jobs, 10.0, 20.0) == 2.0
    assert peak(jobs, 9.0, 20.0) == 11.0


def test_no_job_is_no_load() -> None:
    assert peak([], 0.0, 1.0) == 0 and room(410.0, [], 0.0, 1.0) == 410.0


def _rows(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    used = rng.random((n, k)) < rng.random()
    start = np.where(used, rng.integers(0, 50, (n, k)), -INF).astype(float)
    end = np.where(used, start + rng.integers(1, 50, (n, k)), INF)
    r = np.where(used, rng.integers(1, 10, (n, k)) * 10.0, 0.0)
    return start, end, r


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([1, 3, 8, 9, 17, 33]), s=st.integers(-5, 60),
       length=st.integers(1, 40))
def test_the_array_sweep_is_the_peak_of_each_row(seed: int, k: int, s: int, length: int) -> None:
    start, end, r = _rows(np.random.default_rng(seed), 6, k)
    got = peaks(start, end, r, np.full(6, float(s)), np.full(6, float(s + length)))
    occ = Occupancy(start, end, r, end.min(axis=1), start.max(axis=1))
    assert got.tolist() == [peak(occ.hosted(j), s, s + length) for j in range(6)]


# --- the layout ------------------------------------------------------------------------------------------------

def test_an_occupancy_built_by_hand_pads_its_rows_and_knows_their_bounds() -> None:
    occ = Occupancy.of([[(0.0, 100.0, 5.0), (50.0, 80.0, 7.0)], [], [(20.0, 30.0, 1.0)]], width=3)
    assert occ.r.shape == (3, 3)
    assert entries(occ, 0) == [(0.0, 100.0, 5.0), (50.0, 80.0, 7.0)] and entries(occ, 1) == []
    assert occ.dep_min.tolist() == [80.0, INF, 30.0] and occ.start_max.tolist() == [50.0, -INF, 20.0]
    assert occ.hosted(2) == [(20.0, 30.0, 1.0)] and occ.hosted(1) == []
    assert Occupancy.of([[]]).r.shape == (1, 1)


def test_a_frozen_copy_does_not_see_later_writes() -> None:
    occ = Occupancy.of([[(0.0, 100.0, 5.0)]])
    kept = occ.frozen()
    occ.r[0, 0] = 9.0
    assert kept.r.tolist() == [[5.0]]


def test_with_jobs_pads_new_slots_and_columns_with_entries_that_hold_nothing() -> None:
    base = Occupancy.of([[(0.0, 100.0, 5.0)]])
    occ = base.with_jobs(np.array([0, 1, 0]), np.array([10.0, 20.0, 30.0]), np.array([40.0, 50.0, 60.0]),
                         np.array([1.0, 2.0, 3.0]), 3)
    assert occ.r.shape[0] == 3
    assert entries(occ, 0) == [(0.0, 100.0, 5.0), (10.0, 40.0, 1.0), (30.0, 60.0, 3.0)]
    assert entries(occ, 1) == [(20.0, 50.0, 2.0)] and entries(occ, 2) == []
    assert occ.dep_min.tolist() == [40.0, 50.0, INF] and occ.start_max.tolist() == [30.0, 20.0, -INF]
    assert entries(base, 0) == [(0.0, 100.0, 5.0)]  # a copy: the original is unchanged


def test_with_jobs_puts_a_slots_new_jobs_after_its_row_in_call_order() -> None:
    base = Occupancy.of([[(0.0, 100.0, 1.0)], [(0.0, 100.0, 4.0)]])
    occ = base.with_jobs(np.array([1, 1, 0]), np.zeros(3), np.full(3, 100.0), np.array([1.0, 2.0, 3.0]), 2)
    assert occ.r.tolist() == [[1.0, 3.0, 0.0], [4.0, 1.0, 2.0]]


def test_with_no_job_only_new_empty_slots_are_added() -> None:
    none = np.zeros(0)
    occ = Occupancy.of([[(0.0, 100.0, 5.0)]]).with_jobs(np.zeros(0, np.int64), none, none, none, 2)
    assert entries(occ, 0) == [(0.0, 100.0, 5.0)] and entries(occ, 1) == []
    assert occ.dep_min.tolist() == [100.0, INF] and occ.start_max.tolist() == [0.0, -INF]
    assert occ.r.shape == (2, 1)


def test_with_jobs_keeps_the_call_order_of_many_jobs_on_one_slot() -> None:
    # 20 jobs alternate between slots 1 and 0 (r 1, 2, ..., 20): each slot's new columns list its jobs in the
    # order they came, whatever the sort NumPy would use for so many equal slots
    base = Occupancy.of([[], []])
    slots = np.array([1, 0] * 10)
    occ = base.with_jobs(slots, np.zeros(20), np.full(20, 10.0), np.arange(1.0, 21.0), 2)
    assert occ.r[0, 1:].tolist() == [2.0 * k for k in range(1, 11)]
    assert occ.r[1, 1:].tolist() == [2.0 * k - 1 for k in range(1, 11)]


def test_the_jobs_ending_by_a_horizon_come_by_end_with_their_slot_the_horizon_itself_included() -> None:
    occ = Occupancy.of([[(0.0, 50.0, 2.0), (0.0, 30.0, 1.0)], [], [(5.0, 40.0, 4.0), (5.0, 41.0, 8.0)]])
    slot, end, r = occ.ending_by(40.0)
    assert slot.tolist() == [0, 2] and end.tolist() == [30.0, 40.0] and r.tolist() == [1.0, 4.0]
    assert not (slot.flags.writeable or end.flags.writeable or r.flags.writeable)
    assert [a.tolist() for a in occ.ending_by(29.0)] == [[], [], []]
    assert occ.latest_start() == 5.0 and Occupancy.of([[]]).latest_start() == -np.inf
    assert Occupancy.of([]).latest_start() == -np.inf


def test_what_an_occupancy_kept_is_dropped_when_it_forgets() -> None:
    start, end, r = np.array([[0.0]]), np.array([[30.0]]), np.array([[1.0]])
    occ = Occupancy(start, end, r, end.min(axis=1), start.max(axis=1))
    assert occ.ending_by(40.0)[1].tolist() == [30.0]
    end[0, 0] = 45.0  # the arrays change under the views, as the engine's do between decisions
    occ.dep_min[0] = 45.0
    assert occ.ending_by(40.0)[1].tolist() == [30.0]  # kept for the decision
    occ.forget()
    assert occ.ending_by(40.0)[1].tolist() == []
