"""The recorders: the silent default, the in-memory one, and the progress callback they share."""

from __future__ import annotations

import pandas as pd

from broker.sim.recorder import MemoryRecorder, Recorder


def test_the_default_recorder_keeps_nothing_and_reports_progress_every_1000_jobs() -> None:
    recorder = Recorder()
    assert recorder.every == 1000 and recorder.wants_records is False
    recorder.progress(3, 10)  # no callback: nothing happens
    recorder.record("portfolio", {"t": 0.0})
    seen: list[tuple[int, int]] = []
    recorder = Recorder(progress=lambda done, total: seen.append((done, total)), every=0)
    assert recorder.every == 1  # at least every job
    recorder.progress(3, 10)
    assert seen == [(3, 10)]


def test_a_memory_recorder_passes_its_progress_callback_and_its_step_on() -> None:
    assert MemoryRecorder().every == 1000 and MemoryRecorder().wants_records is True
    seen: list[tuple[int, int]] = []
    recorder = MemoryRecorder(progress=lambda done, total: seen.append((done, total)), every=5)
    assert recorder.every == 5 and recorder.records == {}
    recorder.progress(5, 12)
    assert seen == [(5, 12)]


def test_a_memory_recorder_keeps_records_by_kind_in_order() -> None:
    recorder = MemoryRecorder()
    recorder.record("portfolio", {"t": 0.0, "chosen": "a"})
    recorder.record("other", {"x": 1})
    recorder.record("portfolio", {"t": 10.0, "chosen": "b"})
    assert recorder.records == {"portfolio": [{"t": 0.0, "chosen": "a"}, {"t": 10.0, "chosen": "b"}],
                                "other": [{"x": 1}]}
    pd.testing.assert_frame_equal(recorder.frame("portfolio"), pd.DataFrame({"t": [0.0, 10.0], "chosen": ["a", "b"]}))
    pd.testing.assert_frame_equal(recorder.frame("other"), pd.DataFrame({"x": [1]}))
    assert recorder.frame("none recorded").empty and len(recorder.frame("none recorded").columns) == 0
