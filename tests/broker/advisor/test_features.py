"""The advisor's features as of each submission: a hand-worked replay, ties, leakage, a brute-force oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from broker.advisor.features import known, submission_features
from tests.conftest import trace_path
from workloads.errors import ConfigError
from workloads.swf import read_swf

# job submit wait run alloc . . req_procs req_time . status user group . queue . . .
LINES = [
    "1   0  0 100 2 -1 -1 2 150 -1 1 1 1 -1 1 -1 -1 -1",  # on the machine 0..100, request due at 150
    "2  10 90  50 3 -1 -1 3  60 -1 1 2 1 -1 1 -1 -1 -1",  # waits for job 1; 100..150, due 160
    "3  20 80   0 1 -1 -1 1  -1 -1 1 2 2 -1 2 -1 -1 -1",  # no requested time; starts at 100 and ends at once
    "4 100  0  30 1 -1 -1 1  20 -1 1 1 1 -1 1 -1 -1 -1",  # 100..130: its request runs out at 120
    "5 120 10  10 1 -1 -1 1  10 -1 1 3 1 -1 1 -1 -1 -1",
    "6 200  0  10 2 -1 -1 2  10 -1 1 1 1 -1 1 -1 -1 -1",  # two jobs submitted and started at 200:
    "7 200  0  10 2 -1 -1 2  10 -1 1 1 1 -1 1 -1 -1 -1",  # job 7 sees job 6 running, job 6 does not see 7
    "8 210 -1  10 1 -1 -1 1  10 -1 1 1 1 -1 1 -1 -1 -1",  # no wait time: removed, counted
]


@pytest.fixture
def hand(tmp_path: Path) -> tuple[pd.DataFrame, object]:
    path = tmp_path / "hand.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(LINES) + "\n")
    return submission_features(read_swf(path).frame, max_procs=4, unix_start=0, time_zone="America/New_York")


def test_the_state_at_each_submission_as_worked_by_hand(hand) -> None:
    frame, report = hand
    assert frame["job_id"].tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert frame["queue_size"].tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert frame["queued_work"].tolist() == [0, 0, 3 * 60, 0, 0, 0, 0]
    # job 1's 2 processors x (150 - t) at 10 and 20; job 2's 3 x (160 - t) at 100 and 120 (job 4's request is out)
    assert frame["remaining_work"].tolist() == [0, 280, 260, 180, 120, 0, 20]
    assert frame["free_procs"].tolist() == [4, 2, 2, 1, 0, 4, 2]
    assert np.isnan(frame["requested_time_s"].iat[2]) and frame["requested_time_s"].iat[3] == 20
    assert (report.read, report.kept, report.removed["wait time unknown"]) == (8, 7, 1)
    assert report.kept_flagged == {"requested time unknown (its work counts as 0)": 1}


def test_categories_labels_and_the_local_clock(hand) -> None:
    frame, _ = hand
    assert frame[["user", "group", "queue"]].iloc[2].tolist() == [2, 2, 2]
    assert frame["wait_s"].tolist() == [0, 90, 80, 0, 10, 0, 0] and frame["run_s"].tolist()[:3] == [100, 50, 0]
    assert frame["wait_known_at"].tolist() == [0, 100, 100, 100, 130, 200, 200]
    assert frame["run_known_at"].tolist() == [100, 150, 100, 130, 140, 210, 210]
    # the epoch is Wednesday 1969-12-31 19:00 in New York (UTC-5)
    assert frame["weekday"].tolist() == [2] * 7
    assert frame["time_of_day_s"].tolist() == [19 * 3600 + s for s in (0, 10, 20, 100, 120, 200, 200)]


def test_a_label_is_known_only_once_it_happened_and_only_from_earlier_jobs(hand) -> None:
    frame, _ = hand
    assert known(frame, 4, "wait_s").tolist() == [True, True, True, True, False, False, False]
    assert known(frame, 4, "run_s").tolist() == [True, False, True, False, False, False, False]  # ends 100, 100
    # at 100 job 4 itself starts, but a query never learns from itself or from later submissions
    assert known(frame, 3, "wait_s").tolist() == [True, True, True, False, False, False, False]
    assert known(frame, 6, "wait_s").tolist() == [True] * 6 + [False]  # job 6, same instant, earlier in the log
    assert not known(frame, 0, "run_s").any()
    with pytest.raises(ConfigError, match="label"):
        known(frame, 0, "cost")


def test_a_machine_needs_a_processor_and_a_time_zone_must_exist(hand, tmp_path: Path) -> None:
    trace = read_swf(tmp_path / "hand.swf").frame
    with pytest.raises(ConfigError, match="max_procs"):
        submission_features(trace, max_procs=0)
    with pytest.raises(ConfigError, match="Mars/Olympus"):
        submission_features(trace, max_procs=4, time_zone="Mars/Olympus")
    wide = submission_features(trace, max_procs=2)[1]
    assert wide.removed["wider than the machine's 2 processors"] == 1  # job 2 (3); jobs 1, 6 and 7 hold 2


def brute_force(frame: pd.DataFrame, held: np.ndarray, max_procs: int) -> dict[str, np.ndarray]:
    """The state at each submission from its definition, job by job (quadratic)."""
    t = frame["submit_s"].to_numpy()
    start, end = frame["wait_known_at"].to_numpy(), frame["run_known_at"].to_numpy()
    request = np.nan_to_num(frame["requested_time_s"].to_numpy())
    procs = frame["requested_procs"].to_numpy()
    out: dict[str, list[float]] = {k: [] for k in ("queue_size", "queued_work", "remaining_work", "free_procs")}
    for i in range(len(t)):
        before = np.arange(len(t)) < i
        waiting = before & (start > t[i])
        running = before & (start <= t[i]) & (end > t[i])
        out["queue_size"].append(waiting.sum())
        out["queued_work"].append((procs * request)[waiting].sum())
        out["remaining_work"].append((held * np.maximum(0, start + request - t[i]))[running].sum())
        out["free_procs"].append(max_procs - held[running].sum())
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


def test_the_replay_matches_a_brute_force_count_on_kth() -> None:
    swf = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    trace = swf.frame.iloc[:2500]
    frame, report = submission_features(trace, max_procs=100)
    kept = trace[trace["run_time"].notna() & (trace["allocated_procs"].fillna(0) > 0)]
    held = kept["allocated_procs"].to_numpy(dtype=np.float64)[np.argsort(kept["submit_time"], kind="stable")]
    assert report.kept == len(frame) == len(held)
    expected = brute_force(frame, held, 100)
    for name, values in expected.items():
        np.testing.assert_array_equal(frame[name].to_numpy(), values, err_msg=name)
    assert frame["queue_size"].max() > 5 and (frame["remaining_work"] > 0).mean() > 0.5  # a busy stretch


# processors: allocated, else requested (held); requested, else allocated (requested_procs)
PROCS_LINES = [
    " 1 0 0 100  -1 -1 -1  2 100 -1 1 1 1 -1 1 -1 -1 -1",  # no allocation: holds its 2 requested
    " 2 1 0 100   0 -1 -1  3 100 -1 1 1 1 -1 1 -1 -1 -1",  # an allocation of 0 is none: holds 3
    " 3 2 0 100   1 -1 -1  4 100 -1 1 1 1 -1 1 -1 -1 -1",  # allocated 1 of 4 requested: holds 1
    " 4 3 0 100   2 -1 -1 -1 100 -1 1 1 1 -1 1 -1 -1 -1",  # no request: requested_procs is the allocation
    " 5 4 0 100   2 -1 -1  0 100 -1 1 1 1 -1 1 -1 -1 -1",  # a request of 0 is none
    " 6 5 0 100   2 -1 -1  1 100 -1 1 1 1 -1 1 -1 -1 -1",  # requested 1, allocated 2
    " 7 6 0   1   1 -1 -1  1   1 -1 1 -1 -1 -1 -1 -1 -1 -1",  # no user, group or queue: -1 each
    " 8 7 0  -1   1 -1 -1  1 100 -1 1 1 1 -1 1 -1 -1 -1",  # no run time: removed
    " 9 8 0 100  -1 -1 -1 -1 100 -1 1 1 1 -1 1 -1 -1 -1",  # no processor count at all: removed
    "10 9 0 100   0 -1 -1  0 100 -1 1 1 1 -1 1 -1 -1 -1",  # 0 allocated and 0 requested: removed
    "11 -1 0 100  1 -1 -1  1 100 -1 1 1 1 -1 1 -1 -1 -1",  # no submit time: removed
]


def _features(tmp_path: Path, lines: list[str], max_procs: int, **kwargs):
    path = tmp_path / "t.swf"
    path.write_text(f"; MaxProcs: {max_procs}\n" + "\n".join(lines) + "\n")
    trace = read_swf(path).frame
    return trace, *submission_features(trace, max_procs=max_procs, **kwargs)


def test_processors_held_and_requested_fall_back_on_each_other_and_unknown_jobs_are_removed(tmp_path: Path) -> None:
    _, frame, report = _features(tmp_path, PROCS_LINES, 16)
    assert frame["job_id"].tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert frame["requested_procs"].tolist() == [2, 3, 4, 2, 2, 1, 1]
    # each job starts at its submission and holds 2, 3, 1, 2, 2, 2 processors of 16
    assert frame["free_procs"].tolist() == [16, 14, 11, 10, 8, 6, 4]
    assert frame[["user", "group", "queue"]].iloc[6].tolist() == [-1, -1, -1]
    assert report.removed == {"submit time unknown": 1, "wait time unknown": 0, "run time unknown": 1,
                              "processors unknown": 2, "wider than the machine's 16 processors": 0}
    assert (report.read, report.kept, report.kept_flagged) == (11, 7, {
        "requested time unknown (its work counts as 0)": 0})


# requested times: none, 0 (none either), 1 (the shortest real one) and longer; 4 processors
REQUEST_LINES = [
    "1  0  0 50 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1",  # runs 0..50, no request: no remaining work
    "2  0  0 50 1 -1 -1 1  0 -1 1 1 1 -1 1 -1 -1 -1",  # the same with a request of 0
    "3  0  0 50 1 -1 -1 1  1 -1 1 1 1 -1 1 -1 -1 -1",  # its request runs out at 1
    "4  0  0 50 1 -1 -1 1 30 -1 1 1 1 -1 1 -1 -1 -1",  # its request runs out at 30
    "5 10 90 10 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1",  # queued 10..100, no request: queued work 0
    "6 10 90 10 1 -1 -1 1  1 -1 1 1 1 -1 1 -1 -1 -1",  # queued 10..100, 1 x 1 of queued work
    "7 20 80 10 1 -1 -1 1  5 -1 1 1 1 -1 1 -1 -1 -1",
]


def test_a_request_of_0_is_no_request_and_one_of_1_counts_by_hand(tmp_path: Path) -> None:
    _, frame, report = _features(tmp_path, REQUEST_LINES, 4)
    np.testing.assert_array_equal(frame["requested_time_s"], [np.nan, np.nan, 1, 30, np.nan, 1, 5])
    assert frame["queue_size"].tolist() == [0, 0, 0, 0, 0, 1, 2]
    assert frame["queued_work"].tolist() == [0, 0, 0, 0, 0, 0, 1]
    # at 0 job 3's 1 s of request is left; at 10 and 20 only job 4's (30 - t), job 3's having run out at 1
    assert frame["remaining_work"].tolist() == [0, 0, 0, 1, 20, 20, 10]
    assert frame["free_procs"].tolist() == [4, 3, 2, 1, 0, 0, 0]
    assert report.kept_flagged == {"requested time unknown (its work counts as 0)": 3}


def test_the_clock_starts_at_unix_start_in_utc_when_no_zone_is_given(tmp_path: Path) -> None:
    # 1970-01-05 01:00 UTC is a Monday (weekday 0); the submissions are at 0, 10 and 20 s after it
    _, frame, _ = _features(tmp_path, REQUEST_LINES, 4, unix_start=4 * 86400 + 3600)
    assert frame["weekday"].tolist() == [0] * 7
    assert frame["time_of_day_s"].tolist() == [3600 + s for s in (0, 0, 0, 0, 10, 10, 20)]


def test_a_one_processor_machine_is_a_machine(tmp_path: Path) -> None:
    lines = ["1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1", "2 5 5 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1"]
    _, frame, _ = _features(tmp_path, lines, 1)
    assert frame["free_procs"].tolist() == [1, 0] and frame["remaining_work"].tolist() == [0, 5]


def test_jobs_submitted_at_one_instant_keep_the_traces_order(tmp_path: Path) -> None:
    submits = [(7 * i) % 5 for i in range(60)]  # out of order, twelve jobs at each instant
    lines = [f"{i + 1} {s} 0 1 1 -1 -1 1 1 -1 1 1 1 -1 1 -1 -1 -1" for i, s in enumerate(submits)]
    _, frame, _ = _features(tmp_path, lines, 4)
    expected = [job for _, job in sorted((s, i + 1) for i, s in enumerate(submits))]  # Python's sort is stable
    assert frame["job_id"].tolist() == expected


def test_integer_ids_and_float_numbers_whatever_the_traces_column_types(tmp_path: Path) -> None:
    trace, frame, _ = _features(tmp_path, PROCS_LINES, 16)  # every kept job has a requested time
    assert frame["job_id"].dtype == np.int64 and all(frame[c].dtype == np.int64
                                                      for c in ("entry", "user", "group", "queue"))
    floats = [c for c in frame.columns if c not in ("job_id", "entry", "user", "group", "queue", "cancelled")]
    assert [frame[c].dtype for c in floats] == [np.float64] * len(floats) and frame["cancelled"].dtype == bool
    # the same trace in plain float columns (NaN for unknown) gives the same frame, types included
    again, _ = submission_features(trace.astype("float64"), max_procs=16)
    pd.testing.assert_frame_equal(again, frame)


def test_each_row_keeps_its_entry_in_the_file_and_the_file_its_count(tmp_path: Path) -> None:
    # entry 1 (job 2) has no wait and is removed but still counted; job 4 is listed before job 3 but submitted after
    lines = [LINES[0], LINES[7].replace("8 210", "2  10"), "4 300 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1",
             "3  50 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1"]
    path = tmp_path / "entries.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    frame, report = submission_features(read_swf(path).frame, max_procs=4)
    assert frame["job_id"].tolist() == [1, 3, 4] and frame["entry"].tolist() == [0, 3, 2]
    assert frame.attrs["entries"] == 4 and report.removed["wait time unknown"] == 1


# --- entries cancelled while queued: run time unknown, wait known -------------------------------------------------

# job submit wait run alloc . . req_procs req_time . status user group . queue . . .
CANCELLED_LINES = [
    "1   0  0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1",  # the whole machine 0..100
    "2  10 50  -1 -1 -1 -1 2 30 -1 5 2 1 -1 1 -1 -1 -1",  # cancelled at 60, never ran
    "3  20 80  10 1 -1 -1 1  10 -1 1 1 1 -1 1 -1 -1 -1",  # 100..110
    "4  60 40  10 1 -1 -1 1  10 -1 1 1 1 -1 1 -1 -1 -1",  # submitted at job 2's cancellation: 100..110
    "5 105  0  10 1 -1 -1 1  10 -1 1 1 1 -1 1 -1 -1 -1",  # 105..115: jobs 3 and 4 run, job 2 does not
    "6 110 -1  -1 1 -1 -1 1  10 -1 5 1 1 -1 1 -1 -1 -1",  # neither wait nor run time: removed either way
]


def test_a_job_cancelled_while_queued_counts_in_the_queue_until_its_cancellation_and_never_runs(
        tmp_path: Path) -> None:
    _, frame, report = _features(tmp_path, CANCELLED_LINES, 4, cancelled="keep")
    assert frame["job_id"].tolist() == [1, 2, 3, 4, 5] and frame["cancelled"].tolist() == [0, 1, 0, 0, 0]
    # job 3 sees job 2 waiting (2 processors x its 30 s request); job 4, submitted at the cancellation, does not
    assert frame["queue_size"].tolist() == [0, 0, 1, 1, 0]
    assert frame["queued_work"].tolist() == [0, 0, 60, 10, 0]
    assert frame["remaining_work"].tolist() == [0, 360, 320, 160, 10]  # job 1's 4 x (100 - t); jobs 3, 4: 5 s each
    assert frame["free_procs"].tolist() == [4, 0, 0, 0, 2]  # job 2 never holds its 2 processors
    assert (report.kept, report.removed["wait time unknown"], report.removed["run time unknown"]) == (5, 1, 0)
    assert report.kept_flagged["cancelled while queued (run time unknown: wait scored, no placement)"] == 1


def test_a_cancelled_jobs_wait_is_a_label_known_at_its_cancellation_and_its_run_time_never(tmp_path: Path) -> None:
    _, frame, _ = _features(tmp_path, CANCELLED_LINES, 4, cancelled="keep")
    assert frame["wait_s"].iat[1] == 50 and np.isnan(frame["run_s"].iat[1])
    assert frame["wait_known_at"].iat[1] == 60 and frame["run_known_at"].iat[1] == np.inf
    assert known(frame, 3, "wait_s").tolist() == [True, True, False, False, False]  # job 4 at 60 knows job 2's wait
    assert known(frame, 2, "wait_s").tolist() == [True, False, False, False, False]
    assert known(frame, 4, "run_s").tolist() == [True, False, False, False, False]  # job 2's run time: never


def test_dropping_the_cancelled_jobs_is_the_replay_of_the_trace_without_them(tmp_path: Path) -> None:
    trace, frame, report = _features(tmp_path, CANCELLED_LINES, 4, cancelled="drop")
    assert frame["job_id"].tolist() == [1, 3, 4, 5] and not frame["cancelled"].any()
    assert frame["queue_size"].tolist() == [0, 0, 1, 0] and frame["queued_work"].tolist() == [0, 0, 10, 0]
    assert report.removed["run time unknown"] == 1 and len(report.kept_flagged) == 1
    with pytest.raises(ConfigError, match="cancelled must be one of keep, drop"):
        submission_features(trace, max_procs=4, cancelled="ignore")


def test_keeping_cancelled_jobs_matches_a_brute_force_count_on_sdsc_sp2() -> None:
    trace = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")).frame.iloc[:2000]
    frame, _ = submission_features(trace, max_procs=128, cancelled="keep")
    gone = frame["cancelled"].to_numpy()
    held = frame["job_id"].map(trace.set_index("job_id")["allocated_procs"]).to_numpy(dtype=np.float64)
    held = np.where(held > 0, held, frame["requested_procs"].to_numpy())
    # the definition: a cancelled job waits until its cancellation and is never on the machine
    expected = brute_force(frame.assign(run_known_at=np.where(gone, frame["wait_known_at"], frame["run_known_at"])),
                           held, 128)
    for name, values in expected.items():
        np.testing.assert_array_equal(frame[name].to_numpy(), values, err_msg=name)
    assert gone.sum() > 50 and (frame["queue_size"] > 5).mean() > 0.1  # many cancelled jobs in a busy stretch
