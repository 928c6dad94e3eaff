"""Scheduler promises as the advisor's feature: hand-worked promises, joined by job number, known at submission."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from broker.advisor import promises
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


def test_a_refusal_names_the_first_clash_or_the_first_missing_job_and_counts_it() -> None:
    # 11 three times and 12 twice among 7 rows: the first clash (11) is named, with its own count (not the others')
    clashes = _trace([*HAND, (11, 30, 10, 1, 10), (11, 40, 10, 1, 10), (12, 50, 10, 1, 10), (13, 60, 10, 1, 10)])
    with pytest.raises(InputError, match=r"^job number 11 appears 3 times in the trace: promises join by job number, "
                                         r"which must be unique$"):
        promised_waits(clashes, np.array([10, 12, 11]), max_procs=2)
    with pytest.raises(InputError, match=r"^job number 12 appears 2 times in the trace"):
        promised_waits(clashes, np.array([10, 12]), max_procs=2)
    # job numbers given as floats (a column with NaN elsewhere) join, and are named, as integers
    with pytest.raises(InputError, match=r"^job number 12 appears 2 times in the trace"):
        promised_waits(clashes, np.array([10.0, 12.0]), max_procs=2)
    assert promised_waits(_trace(HAND), np.array([12.0, 11.0]), max_procs=2).tolist() == [130.0, 90.0]
    # two jobs the replay lacks (wider than the machine): the first asked for is named
    wide = _trace([*HAND, (14, 30, 10, 3, 10), (15, 40, 10, 3, 10)])
    with pytest.raises(InputError, match=r"^job 15 has no promise: the conservative replay does not have it$"):
        promised_waits(wide, np.array([10, 15, 14]), max_procs=2)


def test_with_promises_fills_the_first_rows_and_leaves_the_rest_nan() -> None:
    from broker.advisor.promises import PROMISE, with_promises

    frame = pd.DataFrame({"job_id": [10, 11, 12], "x": [1, 2, 3]})
    got = with_promises(frame, _trace(HAND), 2, 2)
    assert PROMISE == "promised_wait_s" and list(got.columns) == ["job_id", "x", "promised_wait_s", "replay_wait_s"]
    assert got[PROMISE].tolist()[:2] == [0.0, 90.0] and np.isnan(got[PROMISE].iloc[2])
    # every job runs its request: the replay keeps its promises
    assert got["replay_wait_s"].tolist()[:2] == [0.0, 90.0] and np.isnan(got["replay_wait_s"].iloc[2])
    assert got["x"].tolist() == [1, 2, 3] and PROMISE not in frame  # a new frame
    assert with_promises(frame, _trace(HAND), 2, 3)[PROMISE].tolist() == [0.0, 90.0, 130.0]


def test_with_promises_joins_by_row_so_repeated_or_unknown_job_numbers_get_their_promises() -> None:
    # real logs repeat job numbers and carry unknown ones (-1): the advisor's frame still gets the
    # hand-worked promises of HAND, row by row
    from broker.advisor.promises import PROMISE, with_promises

    for numbers in ([10, 10, 12], [pd.NA, 11, pd.NA]):
        trace = _trace(HAND).assign(job_id=pd.array(numbers, dtype="Int64"))
        frame = pd.DataFrame({"x": [1, 2, 3]})
        assert with_promises(frame, trace, 2, 3)[PROMISE].tolist() == [0.0, 90.0, 130.0]


def test_with_promises_follows_the_frames_submission_order_not_the_logs_line_order() -> None:
    # the log's lines out of submit order: the frame (submission order) is A, B, C all the same
    from broker.advisor.promises import PROMISE, with_promises

    trace = _trace([HAND[1], HAND[0], HAND[2]])
    assert with_promises(pd.DataFrame({"x": [1, 2, 3]}), trace, 2, 3)[PROMISE].tolist() == [0.0, 90.0, 130.0]


# --- Scheduler promises: the conservative replay runs the jobs up to the last one asked for, and no further -------
# The expected values are worked by hand.


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


def test_the_replay_gives_each_job_its_own_wait_beside_its_promise():
    # A asks for 100 s and ends at 40: B, promised 100 (a wait of 90), starts at 40 (a wait of 30); C, promised
    # 150 (130), starts once B ends at 90 (70)
    early = _trace([(10, 0, 40, 2, 100), *HAND[1:]])
    promised, waited = promises.replayed_waits(early, np.array([10, 11, 12]), max_procs=2)
    assert promised.tolist() == [0.0, 90.0, 130.0] and waited.tolist() == [0.0, 30.0, 70.0]


def test_the_replay_label_replaces_the_wait_and_when_it_became_known():
    frame = pd.DataFrame({"submit_s": [0.0, 10.0], "wait_s": [5.0, 6.0], "wait_known_at": [5.0, 16.0],
                          promises.REPLAY_WAIT: [30.0, np.nan]})
    got = promises.with_replay_label(frame)
    assert got["wait_s"].tolist()[0] == 30.0 and np.isnan(got["wait_s"].iat[1])
    assert got["wait_known_at"].tolist()[0] == 30.0 and got["log_wait_s"].tolist() == [5.0, 6.0]
    with pytest.raises(promises.ConfigError, match="replay_wait_s"):
        promises.with_replay_label(frame.drop(columns=promises.REPLAY_WAIT))


def test_a_job_cancelled_while_queued_has_no_promise_and_leaves_the_others_promises_as_they_were() -> None:
    # job 13 (run time unknown: cancelled at once) is not in the conservative replay: HAND's promises stand
    from broker.advisor.promises import PROMISE, REPLAY_WAIT, with_promises

    trace = _trace([*HAND, (13, 5, -1, 2, 100)])
    frame = pd.DataFrame({"x": [1, 2, 3, 4], "cancelled": [False, True, False, False]})  # in submission order
    got = with_promises(frame, trace, 2, 4)
    assert got[PROMISE].tolist()[::2] == [0.0, 90.0] and got[PROMISE].iat[3] == 130.0
    assert np.isnan(got[PROMISE].iat[1]) and np.isnan(got[REPLAY_WAIT].iat[1])
    with pytest.raises(ValueError, match="the frame has 3 rows where the trace replays 4 jobs"):
        with_promises(frame.iloc[:3], trace, 2, 3)
