"""Scheduler promises: the conservative replay runs the jobs up to the last one asked for, and no further.

A test from a mutmut pass over :mod:`broker.advisor.promises`; the expected values are worked by hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from broker.advisor import promises
from broker.advisor.promises import promised_waits
from workloads.schema import COLUMN_NAMES, DTYPES


def _trace(rows: list[tuple[int, int, int, int, int]]) -> pd.DataFrame:
    """SWF rows from (job number, submit, run time, processors, requested time)."""
    records = [{**dict.fromkeys(COLUMN_NAMES, pd.NA), "job_id": j, "submit_time": t, "run_time": r,
                "allocated_procs": p, "requested_time": q, "wait_time": 0} for j, t, r, p, q in rows]
    return pd.DataFrame(records, columns=list(COLUMN_NAMES)).astype(DTYPES)


# two nodes: A (10) holds both over [0, 100), B (11) is promised both over [100, 150), C (12) one node from
# 150, D (13) one node from 150 too (beside C); listed out of submission order
FOUR = [(12, 20, 10, 1, 10), (10, 0, 100, 2, 100), (13, 30, 500, 1, 500), (11, 10, 50, 2, 50)]


def test_the_replay_stops_at_the_last_job_asked_for(monkeypatch) -> None:
    replayed: list[tuple[list[int], int, str]] = []
    real = promises.replay

    def spy(jobs, max_procs, policy):
        replayed.append((jobs.ids.tolist(), max_procs, policy))
        return real(jobs, max_procs, policy)

    monkeypatch.setattr(promises, "replay", spy)
    trace = _trace(FOUR)
    # B is the second job submitted: A and B are replayed, not C and D
    assert promised_waits(trace, np.array([11]), max_procs=2).tolist() == [90.0]
    assert replayed == [([10, 11], 2, "conservative")]
    # C and A: the replay runs up to C, the third submitted
    assert promised_waits(trace, np.array([12, 10]), max_procs=2).tolist() == [130.0, 0.0]
    assert replayed[1] == ([10, 11, 12], 2, "conservative")
    assert promised_waits(trace, np.array([13]), max_procs=2).tolist() == [120.0]
    assert replayed[2][0] == [10, 11, 12, 13]
