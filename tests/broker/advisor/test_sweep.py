"""Advisor sweeps on KTH-SP2 with a small protocol: a cell is a direct evaluation, the tidy table, engines, resume."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from joblib import parallel_config

from broker.advisor.decide import PAPER_OVERHEADS, LinearSpeed
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
    trace_frame,
)
from broker.sweep import Cell, cells, run_sweep
from tests.conftest import trace_path
from workloads.errors import ConfigError
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
                                                                            "k=20, width=0.1, cutoff off"
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
    FRAMES.get(("features", KTH, False), lambda: pytest.fail("the features were not kept"))
