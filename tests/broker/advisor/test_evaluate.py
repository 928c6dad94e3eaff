"""The advisor on a real trace with a small protocol: windows, the oracle never beaten, sums that add up."""

from __future__ import annotations

import numpy as np
import pytest

from broker.advisor.decide import PAPER_OVERHEADS, Cutoff, LinearSpeed, oracle, saved_time
from broker.advisor.evaluate import Protocol, evaluate
from broker.advisor.features import CATEGORIES, NUMBERS, submission_features
from tests.conftest import trace_path
from workloads.errors import ConfigError
from workloads.swf import read_swf


@pytest.fixture(scope="module")
def kth():
    swf = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    frame, _ = submission_features(swf.frame.iloc[:4000], max_procs=100, unix_start=swf.header.unix_start_time,
                                   time_zone=swf.header.time_zone_string)
    return frame


@pytest.fixture(scope="module")
def run(kth):
    return evaluate(kth, [LinearSpeed(o) for o in PAPER_OVERHEADS], protocol=Protocol(tune=300, skip=2000,
                                                                                     evaluate=1500))


def test_the_protocols_windows() -> None:
    tune, window = Protocol(tune=3, skip=10, evaluate=4).windows(20)
    assert tune.tolist() == [7, 8, 9] and window.tolist() == [10, 11, 12, 13]
    with pytest.raises(ConfigError, match="needs skip"):
        Protocol(tune=3, skip=10, evaluate=4).windows(13)
    with pytest.raises(ConfigError, match="tune <= skip"):
        Protocol(tune=11, skip=10)


def test_the_oracle_saves_at_least_the_advisor_in_every_scenario(run) -> None:
    assert len(run.scenarios) == len(PAPER_OVERHEADS)
    for s in run.scenarios:
        assert s.oracle_saved_time_s >= max(s.saved_time_s, s.no_cutoff_saved_time_s), s
        assert s.jobs_to_cloud + s.jobs_local == 1500 and s.jobs_to_cloud <= s.no_cutoff_jobs_to_cloud


def test_the_per_job_table_adds_up_to_the_scenarios(run, kth) -> None:
    table = run.jobs
    assert len(table) == 1500 and table["job_id"].tolist() == kth["job_id"].iloc[2000:3500].tolist()
    procs = kth["requested_procs"].to_numpy()[2000:3500]
    for s, o in zip(run.scenarios, PAPER_OVERHEADS, strict=True):
        sent = table[f"cloud[{s.name}]"].to_numpy()
        cloud = LinearSpeed(o).cloud_run(procs, table["run_s"].to_numpy())
        assert int(sent.sum()) == s.jobs_to_cloud
        assert saved_time(sent, table["run_s"], table["wait_s"], cloud).sum() == pytest.approx(s.saved_time_s)
        best = oracle(table["run_s"], table["wait_s"], cloud)
        assert int(best.sum()) == s.oracle_jobs_to_cloud


def test_predictions_beat_the_mean_and_the_summary_is_json_ready(run, kth) -> None:
    window = kth.iloc[2000:3500]
    assert run.rmse_run_s < window["run_s"].std() * 1.5 and np.isfinite(run.rmse_wait_s)
    d = run.to_dict()
    assert d["jobs_to_cloud"] == run.scenarios[0].jobs_to_cloud and len(d["scenarios"]) == 10
    assert {"rmse_wait_s", "rmse_run_s", "saved_time_s", "oracle_saved_time_s", "jobs_local"} <= set(d)


def test_without_the_cutoff_every_confident_or_not_prediction_counts(kth) -> None:
    free = evaluate(kth, [LinearSpeed(0.05)], protocol=Protocol(tune=300, skip=2000, evaluate=500), cutoff=False)
    s = free.scenarios[0]
    assert free.cutoff == Cutoff() and s.jobs_to_cloud == s.no_cutoff_jobs_to_cloud
    assert free.settings["cutoff_used"] is False and free.settings["cutoff_not_used"] == "--no-cutoff"
    with pytest.raises(ConfigError, match="speed"):
        evaluate(kth, [], protocol=Protocol(tune=300, skip=2000, evaluate=500))


def test_gradient_boosting_runs_the_same_protocol(kth) -> None:
    boosted = evaluate(kth, [LinearSpeed(0.05)], protocol=Protocol(tune=300, skip=2000, evaluate=1000), model="gbm")
    s = boosted.scenarios[0]
    assert boosted.settings["model"] == "gbm" and s.oracle_saved_time_s >= max(s.saved_time_s,
                                                                                s.no_cutoff_saved_time_s)
    assert np.isfinite(boosted.rmse_wait_s) and np.isfinite(boosted.rmse_run_s)
    assert s.jobs_local + s.jobs_to_cloud == 1000
    with pytest.raises(ConfigError, match="model"):
        evaluate(kth, [LinearSpeed(0.05)], protocol=Protocol(tune=300, skip=2000, evaluate=500), model="svm")


@pytest.fixture(scope="module")
def kth_promised(kth):
    from broker.advisor.promises import PROMISE, promised_waits

    swf = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    return kth.assign(**{PROMISE: promised_waits(swf.frame.iloc[:4000], kth["job_id"].to_numpy(), max_procs=100)})


def test_promises_join_the_wait_features_and_are_scored_alone(kth, kth_promised) -> None:
    protocol = Protocol(tune=300, skip=2000, evaluate=1000)
    with_promises = evaluate(kth_promised, [LinearSpeed(0.05)], protocol=protocol, promises=True)
    baseline = evaluate(kth_promised, [LinearSpeed(0.05)], protocol=protocol)
    window = kth_promised.iloc[2000:3000]
    alone = np.sqrt(np.mean((window["promised_wait_s"] - window["wait_s"]) ** 2))
    assert with_promises.settings["rmse_wait_promises_alone_s"] == pytest.approx(alone)
    assert with_promises.jobs["promised_wait_s"].tolist() == window["promised_wait_s"].tolist()
    # the promise changes the wait's neighbours but not the run time's
    assert with_promises.rmse_wait_s != baseline.rmse_wait_s and with_promises.rmse_run_s == baseline.rmse_run_s
    assert "rmse_wait_promises_alone_s" not in baseline.settings and baseline.settings["promises"] is False
    with pytest.raises(ConfigError, match="promised_wait_s"):
        evaluate(kth, [LinearSpeed(0.05)], protocol=protocol, promises=True)


def test_the_weight_search_tunes_each_label_on_the_tuning_entries(kth) -> None:
    from broker.advisor.online import first_known
    from broker.advisor.tuning import search

    frame, protocol = kth.iloc[:700], Protocol(tune=40, skip=600, evaluate=100)
    got = evaluate(frame, [LinearSpeed(0.05)], protocol=protocol, weights="search", search_iterations=1, seed=3)
    found = got.settings["searched"]
    assert set(found) == {"wait_s", "run_s"} and all(6 <= found[label]["k"] <= 33 for label in found)
    # the wait's search is the tuning module's, on the tuning rows, with the embedding fitted before the window
    X = frame[[*CATEGORIES, *NUMBERS]].fillna(0.0).to_numpy(dtype=np.float64)
    direct = search(X, frame["wait_s"].to_numpy(dtype=np.float64), first_known(frame, "wait_s"), np.arange(560, 600),
                    [0, 1, 2], fit_rows=600, seed=3, maxiter=1)
    assert (found["wait_s"]["k"], found["wait_s"]["width"]) == (direct.k, direct.width)
    assert found["wait_s"]["tuning_rmse_s"] == direct.rmse
    with pytest.raises(ConfigError, match="weights"):
        evaluate(kth, [LinearSpeed(0.05)], protocol=protocol, weights="ga")


def test_the_cutoff_points_are_the_tuning_entries_each_scenario_sends(run) -> None:
    points = run.cutoff_points
    assert set(points["scenario"]) <= {s.name for s in run.scenarios} and len(points) > 0
    assert set(points.columns) == {"scenario", "s", "variance", "hit"} and points["hit"].dtype == bool
