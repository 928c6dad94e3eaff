"""Advisor sweeps without a real trace: table speeds, option bounds, what a cell hands on, the tidy table.

Tests from a mutmut pass over :mod:`broker.advisor.sweep`: every expected value is worked by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from broker.advisor import sweep
from broker.advisor.decide import TableSpeed
from broker.advisor.evaluate import Protocol
from broker.advisor.sweep import FRAMES, configs, option_labels, speed_of, sweep_table, trace_features, trace_frame
from broker.sweep import Cell
from workloads.errors import ConfigError, InputError

# -- speeds ----------------------------------------------------------------------------------------------------


def test_a_table_speed_is_read_from_the_file_after_the_first_colon(tmp_path: Path) -> None:
    # the path holds a colon: everything after the first "table:" is the path
    folder = tmp_path / "cloud:2026"
    folder.mkdir()
    path = folder / "speed.csv"
    path.write_text("procs,ratio\n1,1.5\n8,3.0\n")
    speed = speed_of(f"table:{path}")
    assert isinstance(speed, TableSpeed) and (speed.procs, speed.ratios, speed.source) == ((1, 8), (1.5, 3.0),
                                                                                         str(path))
    assert speed.s == pytest.approx((1.5 + 3.0) / 2 - 1)


def test_a_missing_speed_table_is_an_input_error_naming_the_speed(tmp_path: Path) -> None:
    text = f"table:{tmp_path / 'nowhere.csv'}"
    with pytest.raises(InputError, match=r"^speed 'table:.*nowhere\.csv': \[Errno 2\] No such file or directory"):
        speed_of(text)


# -- option checks: each bound, and each refusal's words ---------------------------------------------------------


def test_the_least_k_and_the_least_search_budget_are_accepted() -> None:
    grid = configs("t.swf", k=(1,), search_iterations=1)
    assert [(c["k"], c["search_iterations"]) for c in grid] == [(1, 1)]


def test_configs_carry_a_search_budget_of_20_by_default() -> None:
    assert [c["search_iterations"] for c in configs("t.swf", k=(6, 7))] == [20, 20]
    assert configs("t.swf", search_iterations=4)[0]["search_iterations"] == 4


@pytest.mark.parametrize("k", [True, 2.5, 0, -1])
def test_k_must_be_an_integer_not_a_bool_nor_a_fraction(k: Any) -> None:
    with pytest.raises(ConfigError, match=r"^k must be integers >= 1, got \[" + str(k) + r"\]$"):
        configs("t.swf", k=(k,))


@pytest.mark.parametrize("width", [0.0, -1.0, -0.5])
def test_a_width_of_0_or_below_is_refused(width: float) -> None:
    with pytest.raises(ConfigError, match=r"^width must be finite numbers > 0, got \[" + str(width) + r"\]$"):
        configs("t.swf", width=(width,))


@pytest.mark.parametrize(("options", "words"), [
    ({"speeds": ()}, "speeds: give at least one speed model"),
    ({"cutoff": (1,)}, "promises and cutoff must be true or false"),
    ({"search_iterations": 0}, "search_iterations must be at least 1, got 0"),
])
def test_each_refusal_says_exactly_what_is_wrong(options: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=f"^{words}$"):
        configs("t.swf", **options)


# -- a cell: its configuration handed to evaluate, key by key -----------------------------------------------------


class _Recorded:
    """A stand-in for the evaluation: keeps how it was called; its summary is a fixed dict."""

    calls: ClassVar[list] = []

    def __init__(self, frame: Any, speeds: list, **kwargs: Any) -> None:
        _Recorded.calls.append((frame, speeds, kwargs))

    def to_dict(self) -> dict[str, Any]:
        return {"summary": len(_Recorded.calls)}


@pytest.fixture
def recorded(monkeypatch) -> tuple[list, list]:
    frames: list = []

    def frame_of(trace: str, promise_rows: int | None = None, lenient: bool = False) -> str:
        frames.append((trace, promise_rows, *(("lenient",) if lenient else ())))
        return f"frame of {trace}"

    _Recorded.calls = []
    monkeypatch.setattr(sweep, "trace_frame", frame_of)
    monkeypatch.setattr(sweep, "evaluate", _Recorded)
    return frames, _Recorded.calls


CELL = {"trace": "t.swf", "tune": 7, "skip": 20, "evaluate": 30, "speeds": ["linear:0.5", "linear:2"],
        "model": "gbm", "promises": False, "weights": "search", "k": 9, "width": 0.25, "cutoff": False,
        "search_iterations": 3}


def test_a_cell_hands_every_option_of_its_configuration_to_the_evaluation(recorded) -> None:
    frames, calls = recorded
    assert sweep.advise_cell(CELL, 11) == {"summary": 1}
    assert frames == [("t.swf", None)]  # no promises: the features alone
    frame, speeds, kwargs = calls[0]
    assert frame == "frame of t.swf" and [s.overhead for s in speeds] == [0.5, 2.0]
    assert kwargs == {"protocol": Protocol(tune=7, skip=20, evaluate=30), "k": 9, "width": 0.25, "cutoff": False,
                      "model": "gbm", "promises": False, "weights": "search", "search_iterations": 3, "seed": 11}


def test_a_cell_with_promises_asks_for_them_up_to_the_end_of_its_window(recorded) -> None:
    frames, calls = recorded
    sweep.advise_cell({**CELL, "promises": True, "cutoff": True}, 0)
    assert frames == [("t.swf", 20 + 30)]
    kwargs = calls[0][2]
    assert (kwargs["promises"], kwargs["cutoff"], kwargs["seed"]) == (True, True, 0)


def test_a_lenient_cell_reads_its_trace_leniently(recorded) -> None:
    frames, _ = recorded
    sweep.advise_cell({**CELL, "lenient": True}, 11)
    assert frames == [("t.swf", None, "lenient")]


def test_a_cell_stored_before_the_search_budget_existed_searches_20_generations(recorded) -> None:
    _, calls = recorded
    older = {k: v for k, v in CELL.items() if k != "search_iterations"}
    sweep.advise_cell(older, 5)
    assert calls[0][2]["search_iterations"] == 20


# -- a trace's frames -------------------------------------------------------------------------------------------

# two processors: job 10 holds both over [0, 100), job 11 is promised both over [100, 150) and job 12 (one
# processor) is promised 150: promised waits 0, 100 - 10 = 90 and 150 - 20 = 130
SWF = ["10  0   0 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1",
       "11 10  90  50 2 -1 -1 2  50 -1 1 1 1 -1 1 -1 -1 -1",
       "12 20 130  10 1 -1 -1 1  10 -1 1 1 1 -1 1 -1 -1 -1"]


@pytest.fixture
def frames():
    FRAMES.clear()
    yield FRAMES
    FRAMES.clear()


def test_the_promises_cover_only_the_rows_asked_for_and_each_count_is_kept_apart(frames, tmp_path: Path) -> None:
    path = tmp_path / "three.swf"
    path.write_text("; MaxProcs: 2\n" + "\n".join(SWF) + "\n")
    two = trace_frame(str(path), 2)
    np.testing.assert_array_equal(two["promised_wait_s"], [0.0, 90.0, np.nan])
    three = trace_frame(str(path), 3)
    assert three["promised_wait_s"].tolist() == [0.0, 90.0, 130.0]
    assert trace_frame(str(path), 2) is two and len(frames) == 3  # the features, then one frame per count
    assert "promised_wait_s" not in trace_frame(str(path))


def test_a_trace_without_maxprocs_is_read_on_a_machine_of_its_widest_job(frames, tmp_path: Path) -> None:
    path = tmp_path / "headless.swf"
    path.write_text("\n".join(SWF) + "\n")
    frame, _ = trace_features(str(path))
    assert frame["free_procs"].tolist()[0] == 2  # the widest job holds 2: the machine's size
    nothing = tmp_path / "no-count.swf"
    nothing.write_text("\n".join(" ".join("-1" if i in (4, 7) else v for i, v in enumerate(line.split()))
                                 for line in SWF) + "\n")
    with pytest.raises(ConfigError, match=r"^" + re.escape(str(nothing)) + r": the trace gives no MaxProcs, no "
                                          r"MaxNodes and no processor count \(the machine's size the features "
                                          r"need\)$"):
        trace_features(str(nothing))


# -- the tidy table ---------------------------------------------------------------------------------------------

COLUMNS = ["options", "trace", "model", "promises", "weights", "k", "width", "cutoff", "tune", "skip", "evaluate",
           "seed", "rmse_wait_s", "rmse_run_s", "rmse_wait_promises_alone_s", "cutoff_used", "log_alpha", "beta",
           "s_max", "scenario", "s", "jobs_to_cloud", "jobs_local", "saved_time_s", "no_cutoff_jobs_to_cloud",
           "no_cutoff_saved_time_s", "oracle_jobs_to_cloud", "oracle_saved_time_s"]


def _scenario(name: str, s: float, sent: int) -> dict[str, Any]:
    return {"name": name, "s": s, "jobs_to_cloud": sent, "jobs_local": 3 - sent, "saved_time_s": 10.0 * sent,
            "no_cutoff_jobs_to_cloud": 3, "no_cutoff_saved_time_s": -5.0, "oracle_jobs_to_cloud": 2,
            "oracle_saved_time_s": 40.0}


def _grid() -> tuple[list[Cell], list[dict[str, Any]]]:
    base = {"tune": 1, "skip": 2, "evaluate": 3, "speeds": ["linear:0.5", "linear:2"], "model": "knn",
            "promises": False, "weights": "correlation", "k": 20, "width": 0.1, "cutoff": True}
    grid = [Cell("advisor-test", {**base, "trace": "logs/a.swf"}, 4),
            Cell("advisor-test", {**base, "trace": "other/b.swf.gz"}, 5)]
    results = [{"rmse_wait_s": 1.5, "rmse_run_s": 2.5, "cutoff_used": True,
                "cutoff": {"log_alpha": 36.5, "beta": -0.25, "s_max": None},
                "scenarios": [_scenario("linear:0.5", 0.5, 1), _scenario("linear:2", 2.0, 0)]},
               {"rmse_wait_s": 3.5, "rmse_run_s": 4.5, "cutoff_used": True,
                "cutoff": {"log_alpha": None, "beta": 0.0, "s_max": 0.75},
                "scenarios": [_scenario("linear:0.5", 0.5, 2), _scenario("linear:2", 2.0, 1)]}]
    return grid, results


def test_the_tidy_table_by_hand() -> None:
    grid, results = _grid()
    table = sweep_table(grid, results)
    assert list(table.columns) == COLUMNS
    # only the trace varies: each cell is labelled by its file's name
    assert table["options"].tolist() == ["a.swf", "a.swf", "b.swf.gz", "b.swf.gz"]
    assert table["trace"].tolist() == ["logs/a.swf"] * 2 + ["other/b.swf.gz"] * 2
    assert table[["tune", "skip", "evaluate", "seed"]].to_numpy().tolist() == [[1, 2, 3, 4]] * 2 + [[1, 2, 3, 5]] * 2
    np.testing.assert_array_equal(table["log_alpha"], [36.5, 36.5, np.nan, np.nan])
    np.testing.assert_array_equal(table["s_max"], [np.nan, np.nan, 0.75, 0.75])
    assert table["beta"].tolist() == [-0.25, -0.25, 0.0, 0.0]
    assert table["rmse_wait_s"].tolist() == [1.5, 1.5, 3.5, 3.5]
    # no cell has the promises' own error: a float column of NaN, not of None
    assert table["rmse_wait_promises_alone_s"].dtype == np.float64
    assert table["rmse_wait_promises_alone_s"].isna().all()
    assert table["scenario"].tolist() == ["linear:0.5", "linear:2"] * 2
    assert table["jobs_to_cloud"].tolist() == [1, 0, 2, 1] and table["saved_time_s"].tolist() == [10.0, 0.0, 20.0,
                                                                                                  10.0]


def test_a_result_stored_before_the_speed_cut_has_no_s_max() -> None:
    grid, results = _grid()
    older = [{**r, "cutoff": {"log_alpha": r["cutoff"]["log_alpha"], "beta": r["cutoff"]["beta"]}} for r in results]
    assert sweep_table(grid, older)["s_max"].isna().all()


def test_an_empty_sweep_is_an_empty_table_with_every_column() -> None:
    table = sweep_table([], [])
    assert list(table.columns) == COLUMNS and len(table) == 0


def test_a_result_per_cell_is_required() -> None:
    grid, results = _grid()
    with pytest.raises(ValueError, match="zip"):
        sweep_table(grid, results[:1])


def test_labels_write_floats_short_and_integers_as_they_are() -> None:
    base = configs("t.swf")[0]
    labels = option_labels([{**base, "width": 1.0, "k": 6}, {**base, "width": 2.0, "k": 7}])
    assert labels == ["k=6, width=1", "k=7, width=2"]
