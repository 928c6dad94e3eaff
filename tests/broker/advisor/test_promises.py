"""Scheduler promises as the advisor's feature: hand-worked promises, joined by job number, known at submission."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from broker.advisor.promises import promised_waits
from workloads.errors import InputError
from workloads.schema import COLUMN_NAMES, DTYPES


def _trace(rows: list[tuple[int, int, int, int, int]]) -> pd.DataFrame:
    """SWF rows from (job number, submit, run time, processors, requested time)."""
    records = [{**dict.fromkeys(COLUMN_NAMES, pd.NA), "job_id": j, "submit_time": t, "run_time": r,
                "allocated_procs": p, "requested_time": q, "wait_time": 0} for j, t, r, p, q in rows]
    return pd.DataFrame(records, columns=list(COLUMN_NAMES)).astype(DTYPES)


# two nodes: A holds both over [0, 100), B is promised both over [100, 150), C one node from 150
HAND = [(10, 0, 100, 2, 100), (11, 10, 50, 2, 50), (12, 20, 10, 1, 10)]


def test_promised_waits_by_hand_in_the_order_asked():
    trace = _trace(HAND)
    assert promised_waits(trace, np.array([10, 11, 12]), max_procs=2).tolist() == [0.0, 90.0, 130.0]
    assert promised_waits(trace, np.array([12, 10]), max_procs=2).tolist() == [130.0, 0.0]
    assert promised_waits(trace, np.array([], dtype=np.int64), max_procs=2).tolist() == []


def test_a_promise_uses_only_what_was_submitted_before_it():
    # a later job changes later promises but not the earlier ones (which it would if it leaked back)
    later = _trace([*HAND, (13, 30, 500, 1, 500)])
    assert promised_waits(later, np.array([10, 11, 12]), max_procs=2).tolist() == [0.0, 90.0, 130.0]
    # and a promise is the scheduler's at submission: A ending early (run 40 of 100) does not change B's
    early = _trace([(10, 0, 40, 2, 100), *HAND[1:]])
    assert promised_waits(early, np.array([11]), max_procs=2).tolist() == [90.0]


def test_requested_times_not_run_times_set_the_promise():
    # B asks for 200 s and runs 50: C (one node, 10 s) is promised after B's request, at 300
    trace = _trace([HAND[0], (11, 10, 50, 2, 200), HAND[2]])
    assert promised_waits(trace, np.array([12]), max_procs=2).tolist() == [280.0]


def test_a_job_number_twice_or_a_job_the_replay_lacks_is_refused():
    twice = _trace([*HAND, (11, 30, 10, 1, 10)])
    with pytest.raises(InputError, match="job number 11 appears 2 times"):
        promised_waits(twice, np.array([10, 11]), max_procs=2)
    # a number appearing twice among jobs not asked for is no obstacle
    assert promised_waits(twice, np.array([10]), max_procs=2).tolist() == [0.0]
    wide = _trace([*HAND, (14, 30, 10, 3, 10)])  # wider than the machine: not in the replay
    with pytest.raises(InputError, match="job 14 has no promise"):
        promised_waits(wide, np.array([14]), max_procs=2)
