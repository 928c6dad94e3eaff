"""The advisor's protocol on a ten-job frame, with the learners replaced by stand-ins whose predictions are set by hand.

Tests from a mutmut pass over :mod:`broker.advisor.evaluate`: which learner each option runs and with what, a
prediction of nothing counted as 0, a fitted cutoff applied, and the settings reported; values worked by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from broker.advisor import evaluate as protocol_module
from broker.advisor.decide import LinearSpeed
from broker.advisor.evaluate import COLUMNS, Protocol, evaluate
from broker.advisor.online import OnlinePredictions
from broker.advisor.tuning import Tuned

N = 10
#: Rows 0..3 tune (tune = skip = 4), rows 4..9 are evaluated.
SMALL = Protocol(tune=4, skip=4, evaluate=6)


def _frame(wait_known_late: bool = False) -> pd.DataFrame:
    """Ten jobs 100 s apart, 2 processors, run 30 s; even jobs wait 50 s, odd ones 0; job 3 has no requested time."""
    i = np.arange(N)
    submit, wait, run = 100.0 * i, np.where(i % 2 == 0, 50.0, 0.0), np.full(N, 30.0)
    requested = np.where(i == 3, np.nan, 60.0)
    known = np.full(N, 1e9) if wait_known_late else submit + wait
    return pd.DataFrame({"job_id": 100 + i, "user": i % 3, "group": i % 2, "queue": np.zeros(N, dtype=np.int64),
                         "submit_s": submit, "requested_time_s": requested, "requested_procs": np.full(N, 2.0),
                         "queue_size": i.astype(float), "queued_work": 10.0 * i, "remaining_work": 5.0 * i,
                         "weekday": (i % 7).astype(float), "time_of_day_s": submit, "free_procs": np.full(N, 4.0),
                         "wait_s": wait, "run_s": run, "wait_known_at": known,
                         "run_known_at": np.full(N, 1e9) if wait_known_late else submit + wait + run})


@pytest.fixture
def boosted(monkeypatch) -> list:
    """Gradient boosting replaced: every query predicted 30 s (nothing for query 5), deviation 1 (even) or 10 (odd)."""
    calls: list = []

    def fake(X, labels, first, queries, categorical, *, seed, progress):
        calls.append({"X": X, "labels": labels, "first": first, "queries": queries, "categorical": categorical,
                      "seed": seed, "progress": progress})
        mean = np.where(queries == 5, np.nan, 30.0)
        return OnlinePredictions(queries, mean, np.where(queries % 2 == 0, 1.0, 10.0), np.zeros(len(queries)))

    monkeypatch.setattr(protocol_module, "predict_boosted", fake)
    return calls


def test_the_gbm_model_runs_gradient_boosting_on_every_row_with_the_seed(boosted) -> None:
    evaluate(_frame(), [LinearSpeed(0.0)], protocol=SMALL, model="gbm", seed=5, cutoff=False)
    assert [c["labels"].tolist() for c in boosted] == [[50.0, 0.0] * 5, [30.0] * N]  # the wait, then the run
    for call in boosted:
        assert call["queries"].tolist() == list(range(N)) and call["categorical"] == [0, 1, 2] and call["seed"] == 5
        assert call["progress"] is None  # no recorder, nothing to tell
        assert call["first"].tolist() == list(range(1, N + 1))  # each label known from the next submission on
        assert call["X"].shape == (N, len(COLUMNS)) and call["X"].dtype == np.float64
        # the unknown requested time is a 0 among the features
        assert call["X"][:, COLUMNS.index("requested_time_s")].tolist() == [60.0] * 3 + [0.0] + [60.0] * 6


def test_a_fitted_cutoff_keeps_the_uncertain_jobs_and_no_prediction_counts_as_0(boosted) -> None:
    got = evaluate(_frame(), [LinearSpeed(0.0)], protocol=SMALL, model="gbm")
    # tuning rows 0..3: predicted 30 + 30 > a cloud run of 30, so all four are sent; the even ones (wait 50)
    # save time, the odd ones (wait 0) do not; the hits have variance 1, the misses 100: a line between them
    assert got.settings["cutoff_used"] is True and "cutoff_not_used" not in got.settings
    assert 1.0 < got.cutoff(0.0) < 100.0
    assert got.cutoff_points.to_dict("list") == {"scenario": ["linear:0"] * 4, "s": [0.0] * 4,
                                                 "variance": [1.0, 100.0, 1.0, 100.0],
                                                 "hit": [True, False, True, False]}
    # the window, rows 4..9: job 5 has no prediction (0 s of wait and of run): not sent
    assert got.jobs["wait_pred_s"].tolist() == [30.0, 0.0, 30.0, 30.0, 30.0, 30.0]
    assert got.jobs["run_pred_s"].tolist() == [30.0, 0.0, 30.0, 30.0, 30.0, 30.0]
    assert got.jobs["cloud[linear:0]"].tolist() == [True, False, True, False, True, False]
    s = got.scenarios[0]
    assert (s.jobs_to_cloud, s.jobs_local, s.saved_time_s) == (3, 3, 150.0)  # jobs 4, 6, 8 save their 50 s
    assert (s.no_cutoff_jobs_to_cloud, s.no_cutoff_saved_time_s) == (5, 150.0)  # and jobs 7, 9 save 0
    assert (s.oracle_jobs_to_cloud, s.oracle_saved_time_s) == (3, 150.0)
    # errors of the wait: -20, 0, -20, 30, -20, 30; of the run: 0, -30, 0, 0, 0, 0
    assert got.rmse_wait_s == pytest.approx(math.sqrt(3000 / 6)) and got.rmse_run_s == pytest.approx(math.sqrt(150))


def test_the_search_tunes_on_the_tuning_rows_with_the_default_budget_and_seed(monkeypatch) -> None:
    calls: list = []
    weights = np.arange(len(COLUMNS)) / 16

    def fake(X, y, first, queries, categorical, *, fit_rows, seed, maxiter):
        calls.append((queries.tolist(), categorical, fit_rows, seed, maxiter))
        return Tuned(weights, 6, 0.5, 2.5, 7)

    monkeypatch.setattr(protocol_module, "search", fake)
    got = evaluate(_frame(), [LinearSpeed(0.0)], protocol=SMALL, weights="search")
    assert calls == [([0, 1, 2, 3], [0, 1, 2], 4, 0, 20)] * 2  # the wait's search, then the run's
    found = {"k": 6, "width": 0.5, "weights": dict(zip(COLUMNS, weights.tolist(), strict=True)), "tuning_rmse_s": 2.5,
             "evaluations": 7}
    assert got.settings["searched"] == {"wait_s": found, "run_s": found}
    calls.clear()
    evaluate(_frame(), [LinearSpeed(0.0)], protocol=SMALL, weights="search", search_iterations=3, seed=8)
    assert calls == [([0, 1, 2, 3], [0, 1, 2], 4, 8, 3)] * 2


def test_a_query_that_knows_no_label_predicts_0() -> None:
    # no wait or run time is known before the end of the log: every k-NN prediction is empty
    got = evaluate(_frame(wait_known_late=True), [LinearSpeed(0.0)], protocol=SMALL, k=3, width=0.5)
    assert got.jobs["wait_pred_s"].tolist() == [0.0] * 6 and got.jobs["run_pred_s"].tolist() == [0.0] * 6
    assert np.isinf(got.jobs["wait_std_s"]).all() and got.scenarios[0].jobs_to_cloud == 0
