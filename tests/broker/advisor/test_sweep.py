"""Advisor sweeps on KTH-SP2 with a small protocol: a cell is a direct evaluation, the tidy table, engines, resume."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from joblib import parallel_config

from broker.advisor import sweep
from broker.advisor.decide import PAPER_OVERHEADS, LinearSpeed, TableSpeed
from broker.advisor.evaluate import Protocol, evaluate
from broker.advisor.features import submission_features
from broker.advisor.promises import PROMISE, promised_waits
from broker.advisor.sweep import (
    CELL_NAME,
    FRAMES,
    PAPER_SPEEDS,
    advise_cell,
    configs,
    option_labels,
    speed_of,
    sweep_table,
    trace_features,
    trace_frame,
)
from broker.sweep import Cell, cells, run_sweep
from tests.conftest import trace_path
from workloads.errors import ConfigError, InputError
from workloads.swf import read_swf

KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
#: A window on which the tuning entries fit a cutoff (on 300 / 2000 / 1000 they fit none).
SMALL = Protocol(tune=500, skip=2000, evaluate=1000)
SPEEDS = PAPER_SPEEDS  # the cutoff is fitted on the tuning entries of every speed: these ten fit one


@pytest.fixture(scope="module")
def grid() -> list[Cell]:
    return cells(configs(KTH, promises=(False, True), protocol=SMALL, speeds=SPEEDS), name=CELL_NAME, root_seed=3,
                 paired=True)


@pytest.fixture(scope="module")
def reference(grid: list[Cell]) -> list[dict[str, Any]]:
    """The grid run in this process, one cell after the other."""
    with parallel_config(backend="sequential"):
        return run_sweep(advise_cell, grid)


def test_a_cell_is_a_direct_evaluation_of_its_configuration(grid, reference) -> None:
    swf = read_swf(KTH)
    frame, _ = submission_features(swf.frame, max_procs=100, unix_start=swf.header.unix_start_time,
                                   time_zone=swf.header.time_zone_string)
    promised = frame.assign(**{PROMISE: np.concatenate([
        promised_waits(swf.frame, frame["job_id"].to_numpy()[:3000], max_procs=100), np.full(len(frame) - 3000,
                                                                                              np.nan)])})
    speeds = [LinearSpeed(o) for o in PAPER_OVERHEADS]
    for cell, got, data in zip(grid, reference, (frame, promised), strict=True):
        direct = evaluate(data, speeds, protocol=SMALL, promises=cell.config["promises"], seed=cell.seed)
        assert got == json.loads(json.dumps(direct.to_dict()))  # the cell's JSON is the evaluation's summary
    off, on = reference
    assert [s["name"] for s in off["scenarios"]] == list(SPEEDS) and off["promises"] is False and on["promises"]
    # known values of this window: a cutoff is fitted, and it spares the advisor the slow clouds' losses
    assert off["cutoff_used"] is True and off["cutoff"]["log_alpha"] == pytest.approx(36.0584, abs=1e-3)
    one, ten = off["scenarios"][-2], off["scenarios"][-1]
    # (recorded; they moved when unseen users stopped sharing one embedding column: 162, 504; 284,498, -8,218,778;
    # 159 and -76,726,360 before)
    assert (one["jobs_to_cloud"], one["no_cutoff_jobs_to_cloud"], one["oracle_jobs_to_cloud"]) == (159, 495, 365)
    assert (one["saved_time_s"], one["no_cutoff_saved_time_s"]) == pytest.approx((420_078.0, -5_069_073.0))
    assert (ten["jobs_to_cloud"], ten["saved_time_s"], ten["no_cutoff_jobs_to_cloud"]) == (0, 0.0, 152)
    assert (ten["no_cutoff_saved_time_s"], ten["oracle_saved_time_s"]) == pytest.approx((-39_524_280.0, 8_020_334.0))
    # (recorded; 88,635.397 before conservative backfilling stopped counting late reservations against earlier jobs)
    assert on["rmse_wait_promises_alone_s"] == pytest.approx(88_315.739, abs=0.01)
    assert off["rmse_wait_s"] != on["rmse_wait_s"] and off["rmse_run_s"] == on["rmse_run_s"]
    assert "rmse_wait_promises_alone_s" not in off


def test_the_tidy_table_has_a_row_per_cell_and_scenario(grid, reference) -> None:
    table = sweep_table(grid, reference)
    assert len(table) == 20 and table["options"].tolist() == ["promises off"] * 10 + ["promises on"] * 10
    assert table["scenario"].tolist() == list(SPEEDS) * 2 and table["s"].tolist() == list(PAPER_OVERHEADS) * 2
    for (cell, result), (_, rows) in zip(zip(grid, reference, strict=True), table.groupby("options", sort=False),
                                         strict=True):
        assert (rows["seed"] == cell.seed).all() and (rows["model"] == "knn").all() and (rows["k"] == 20).all()
        for column in ("saved_time_s", "no_cutoff_saved_time_s", "oracle_saved_time_s", "jobs_to_cloud"):
            assert rows[column].sum() == pytest.approx(sum(s[column] for s in result["scenarios"]))
        assert (rows["jobs_to_cloud"] + rows["jobs_local"] == SMALL.evaluate).all()
        assert (rows["rmse_wait_s"] == result["rmse_wait_s"]).all() and (rows["cutoff_used"]).all()
    assert table["rmse_wait_promises_alone_s"].isna().tolist() == [True] * 10 + [False] * 10
    assert (table["oracle_saved_time_s"] >= table[["saved_time_s", "no_cutoff_saved_time_s"]].max(axis=1)).all()


def test_a_cell_without_a_fitted_cutoff_has_no_line_in_the_table() -> None:
    grid = cells(configs(KTH, cutoff=(False,), protocol=SMALL, speeds=("linear:0.05",)), name=CELL_NAME, root_seed=3)
    table = sweep_table(grid, [advise_cell(grid[0].config, grid[0].seed)])
    assert math.isnan(table["log_alpha"].iloc[0]) and table["beta"].iloc[0] == 0.0
    assert not table["cutoff_used"].iloc[0] and table["options"].iloc[0] == "knn, promises off, weights=correlation, " \
                                                                            "k=20, width=0.1, cutoff off, label=log"
    assert table["jobs_to_cloud"].iloc[0] == table["no_cutoff_jobs_to_cloud"].iloc[0]


def test_the_sweep_on_a_dask_cluster_gives_the_sequential_numbers(grid, reference) -> None:
    from distributed import Client, LocalCluster

    assert reference[0] != reference[1]  # the cells differ: the comparison means something
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client, \
            parallel_config(backend="dask", client=client):
        assert run_sweep(advise_cell, grid) == reference


def test_a_sweep_resumes_from_a_partial_store(grid, reference, tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []

    def counted(config: dict[str, Any], seed: int) -> dict[str, Any]:
        ran.append(config)
        return advise_cell(config, seed)

    with parallel_config(backend="sequential"):
        assert run_sweep(counted, grid[:1], store=tmp_path) == reference[:1]  # stopped after its first cell
        assert run_sweep(counted, grid, store=tmp_path) == reference
    assert [c["promises"] for c in ran] == [False, True]  # the stored cell was not run again
    assert {p.stem for p in tmp_path.glob("*.json")} == {c.key for c in grid}


def test_configs_is_the_product_of_the_options_with_every_speed() -> None:
    grid = configs("t.swf", models=("knn", "gbm"), k=(6, 33), width=(0.1,))
    assert len(grid) == 4 and [(c["model"], c["k"]) for c in grid] == [("knn", 6), ("knn", 33), ("gbm", 6),
                                                                       ("gbm", 33)]
    assert all(c["speeds"] == list(PAPER_SPEEDS) and (c["tune"], c["skip"], c["evaluate"]) == (500, 10_000, 10_000)
               for c in grid)
    assert [speed_of(s).s for s in PAPER_SPEEDS] == list(PAPER_OVERHEADS)
    assert option_labels(grid) == ["knn, k=6", "knn, k=33", "gbm, k=6", "gbm, k=33"]
    for bad, words in [({"models": ("svm",)}, "model must be one of knn, gbm"), ({"k": (0,)}, "k must be"),
                       ({"width": (math.nan,)}, "width must be"), ({"weights": ()}, "weights: give at least one"),
                       ({"speeds": ()}, "speeds:"), ({"promises": ("yes",)}, "true or false")]:
        with pytest.raises(ConfigError, match=words):
            configs("t.swf", **bad)
    for text in ("fast", "linear:x", "table:"):
        with pytest.raises(ConfigError, match="linear:O"):
            speed_of(text)


def test_a_worker_builds_a_traces_frames_once() -> None:
    FRAMES.clear()
    config = configs(KTH, promises=(True,), protocol=SMALL, speeds=("linear:0.05",))[0]
    first = advise_cell(config, 0)
    assert len(FRAMES) == 2  # the features, and the features with promises
    kept = trace_frame(KTH, 3000)
    assert advise_cell(config, 0) == first and len(FRAMES) == 2 and trace_frame(KTH, 3000) is kept
    FRAMES.get(("features", KTH, False, "drop"), lambda: pytest.fail("the features were not kept"))


# --- Advisor sweeps without a real trace: table speeds, option bounds, what a cell hands on, the tidy table -------
# Every expected value is worked by hand.


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

    def frame_of(trace: str, promise_rows: int | None = None, lenient: bool = False, cancelled: str = "drop") -> str:
        frames.append((trace, promise_rows, *(("lenient",) if lenient else ()),
                       *((f"cancelled {cancelled}",) if cancelled != "drop" else ())))
        return f"frame of {trace}"

    _Recorded.calls = []
    monkeypatch.setattr(sweep, "trace_frame", frame_of)
    monkeypatch.setattr(sweep, "evaluate", _Recorded)
    return frames, _Recorded.calls


CELL = {"trace": "t.swf", "tune": 7, "skip": 20, "evaluate": 30, "speeds": ["linear:0.5", "linear:2"],
        "model": "gbm", "promises": False, "weights": "search", "k": 9, "width": 0.25, "cutoff": False,
        "search_iterations": 3, "count": "jobs", "label": "log"}


def test_a_cell_hands_every_option_of_its_configuration_to_the_evaluation(recorded) -> None:
    frames, calls = recorded
    assert sweep.advise_cell(CELL, 11) == {"summary": 1}
    assert frames == [("t.swf", None)]  # no promises: the features alone
    frame, speeds, kwargs = calls[0]
    assert frame == "frame of t.swf" and [s.overhead for s in speeds] == [0.5, 2.0]
    assert kwargs == {"protocol": Protocol(tune=7, skip=20, evaluate=30, count="jobs"), "k": 9, "width": 0.25,
                      "cutoff": False, "model": "gbm", "promises": False, "weights": "search", "label": "log",
                      "search_iterations": 3, "seed": 11}


def test_a_cell_with_promises_asks_for_them_up_to_the_end_of_its_window(recorded) -> None:
    frames, calls = recorded
    sweep.advise_cell({**CELL, "promises": True, "cutoff": True}, 0)
    assert frames == [("t.swf", 20 + 30)]
    kwargs = calls[0][2]
    assert (kwargs["promises"], kwargs["cutoff"], kwargs["seed"]) == (True, True, 0)


def test_a_cell_on_the_replays_waits_asks_for_the_replay_up_to_the_end_of_its_window(recorded) -> None:
    frames, calls = recorded
    sweep.advise_cell({**CELL, "label": "replay"}, 0)
    assert frames == [("t.swf", 20 + 30)] and calls[0][2]["label"] == "replay"


def test_a_lenient_cell_reads_its_trace_leniently(recorded) -> None:
    frames, _ = recorded
    sweep.advise_cell({**CELL, "lenient": True}, 11)
    assert frames == [("t.swf", None, "lenient")]


def test_a_cell_keeping_cancelled_entries_reads_its_trace_with_them_and_one_without_the_key_drops_them(
        recorded) -> None:
    frames, _ = recorded
    sweep.advise_cell({**CELL, "cancelled": "keep"}, 11)
    sweep.advise_cell(CELL, 11)
    assert frames == [("t.swf", None, "cancelled keep"), ("t.swf", None)]
    assert configs("t.swf", cancelled="keep")[0]["cancelled"] == "keep" and "cancelled" not in configs("t.swf")[0]
    with pytest.raises(ConfigError, match="cancelled must be one of keep, drop"):
        configs("t.swf", cancelled="all")


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

COLUMNS = ["options", "trace", "model", "promises", "weights", "k", "width", "cutoff", "label", "tune", "skip",
           "evaluate", "count", "seed", "rmse_wait_s", "rmse_run_s", "rmse_wait_promises_alone_s", "cutoff_used",
           "rmse_wait_ran_s", "evaluated_jobs", "cancelled_evaluated", "log_alpha", "beta", "s_max", "scenario", "s",
           "jobs_to_cloud", "jobs_local", "saved_time_s",
           "no_cutoff_jobs_to_cloud", "no_cutoff_saved_time_s", "oracle_jobs_to_cloud", "oracle_saved_time_s"]


def _scenario(name: str, s: float, sent: int) -> dict[str, Any]:
    return {"name": name, "s": s, "jobs_to_cloud": sent, "jobs_local": 3 - sent, "saved_time_s": 10.0 * sent,
            "no_cutoff_jobs_to_cloud": 3, "no_cutoff_saved_time_s": -5.0, "oracle_jobs_to_cloud": 2,
            "oracle_saved_time_s": 40.0}


def _grid() -> tuple[list[Cell], list[dict[str, Any]]]:
    base = {"tune": 1, "skip": 2, "evaluate": 3, "speeds": ["linear:0.5", "linear:2"], "model": "knn",
            "promises": False, "weights": "correlation", "k": 20, "width": 0.1, "cutoff": True, "label": "log",
            "count": "entries"}
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
