"""The advisor on a real trace with a small protocol: windows, the oracle never beaten, sums that add up."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from broker.advisor import evaluate as protocol_module
from broker.advisor.decide import PAPER_OVERHEADS, Cutoff, LinearSpeed, TableSpeed, oracle, saved_time
from broker.advisor.evaluate import COLUMNS, Protocol, evaluate
from broker.advisor.features import CATEGORIES, NUMBERS, submission_features
from broker.advisor.online import OnlinePredictions
from broker.advisor.tuning import Guarded, Tuned
from broker.sim.recorder import Recorder
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
    from broker.advisor.tuning import Setting, correlation_weights, tune_knn

    frame, protocol = kth.iloc[:700], Protocol(tune=40, skip=600, evaluate=100, count="jobs")
    got = evaluate(frame, [LinearSpeed(0.05)], protocol=protocol, weights="search", search_iterations=1, seed=3)
    found = got.settings["searched"]
    assert set(found) == {"wait_s", "run_s"} and {found[label]["chosen"] for label in found} <= {"search", "given"}
    # the wait's tuning is the tuning module's, on the tuning rows, with the embedding fitted before the window,
    # guarded by the untuned setting (correlation weights on the tuning rows, k 20, width 0.1, every known job)
    X = frame[[*CATEGORIES, *NUMBERS]].fillna(0.0).to_numpy(dtype=np.float64)
    y = frame["wait_s"].to_numpy(dtype=np.float64)
    given = Setting(correlation_weights(X[560:600], y[560:600], [0, 1, 2]), 20, 0.1, None)
    direct = tune_knn(X, y, first_known(frame, "wait_s"), np.arange(560, 600), [0, 1, 2], fit_rows=600, seed=3,
                      maxiter=1, given=given)
    assert (found["wait_s"]["k"], found["wait_s"]["width"], found["wait_s"]["memory"]) == (
        direct.k, direct.width, direct.memory)
    assert found["wait_s"]["tuning_rmse_s"] == direct.rmse and found["wait_s"]["chosen"] == direct.chosen
    with pytest.raises(ConfigError, match="weights"):
        evaluate(kth, [LinearSpeed(0.05)], protocol=protocol, weights="ga")


def test_the_cutoff_points_are_the_tuning_entries_each_scenario_sends(run) -> None:
    points = run.cutoff_points
    assert set(points["scenario"]) <= {s.name for s in run.scenarios} and len(points) > 0
    assert set(points.columns) == {"scenario", "s", "variance", "hit"} and points["hit"].dtype == bool


# -- the pieces, hand-worked (no trace) ----------------------------------------------------------------------

def test_the_protocols_defaults_and_bounds() -> None:
    assert Protocol() == Protocol(tune=500, skip=10_000, evaluate=10_000)
    tune, window = Protocol(tune=1, skip=1, evaluate=1).windows(2)  # every bound at its least, n just enough
    assert tune.tolist() == [0] and window.tolist() == [1]
    tune, window = Protocol(tune=4, skip=4, evaluate=2).windows(6)
    assert tune.tolist() == [0, 1, 2, 3] and window.tolist() == [4, 5]
    for bad in ({"tune": 0, "skip": 4}, {"tune": 5, "skip": 4}, {"tune": 1, "skip": 4, "evaluate": 0}):
        with pytest.raises(ConfigError, match=r"^the protocol needs 1 <= tune <= skip and evaluate >= 1, got Protocol"):
            Protocol(**bad)
    with pytest.raises(ConfigError, match=r"^the trace has 5 replayable jobs; the protocol needs skip \+ evaluate = "
                                          r"6$"):
        Protocol(tune=4, skip=4, evaluate=2, count="jobs").windows(5)
    with pytest.raises(ConfigError, match=r"^the trace has 5 entries; the protocol needs skip \+ evaluate = 6$"):
        Protocol(tune=4, skip=4, evaluate=2).windows(5)


def test_evaluate_refuses_bad_settings_before_any_work() -> None:
    import pandas as pd

    frame = pd.DataFrame({"job_id": range(5)})
    speed = [LinearSpeed(0.05)]
    with pytest.raises(ConfigError, match=r"^evaluate needs at least one speed model$"):
        evaluate(frame, [])
    with pytest.raises(ConfigError, match=r"^model must be one of knn, gbm, got 'svm'$"):
        evaluate(frame, speed, model="svm")
    with pytest.raises(ConfigError, match=r"^weights must be one of correlation, search, got 'ga'$"):
        evaluate(frame, speed, weights="ga")
    with pytest.raises(ConfigError, match=r"^promises need the frame's 'promised_wait_s' column "
                                          r"\(broker.advisor.promises.promised_waits\)$"):
        evaluate(frame, speed, promises=True)
    with pytest.raises(ConfigError, match=r"^label must be one of log, replay, got 'sim'$"):
        evaluate(frame, speed, label="sim")
    with pytest.raises(ConfigError, match=r"^the replay label needs the frame's 'replay_wait_s' column"):
        evaluate(frame, speed, label="replay")
    with pytest.raises(ConfigError, match=r"^k must be at least 1, got 0$"):
        evaluate(frame, speed, k=0)
    with pytest.raises(ConfigError, match=r"^the knowledge base's size \(memory\) must be at least 1, got 0$"):
        evaluate(frame, speed, memory=0)
    # valid settings reach the protocol: the default one counts entries, which this frame does not say it has
    with pytest.raises(ConfigError, match=r"^counting entries needs the frame's 'entry' column"):
        evaluate(frame, speed)
    jobs = Protocol(count="jobs")
    with pytest.raises(ConfigError, match=r"^the trace has 5 replayable jobs; the protocol needs skip \+ evaluate = "
                                          r"20,000$"):
        evaluate(frame, speed, protocol=jobs)
    for model, weights in (("gbm", "correlation"), ("knn", "search")):
        with pytest.raises(ConfigError, match="the trace has 5"):
            evaluate(frame.assign(promised_wait_s=0.0, replay_wait_s=0.0), speed, model=model, weights=weights,
                     promises=True, label="replay", protocol=jobs, k=1, memory=1)


def test_the_documented_defaults() -> None:
    import inspect

    defaults = {k: p.default for k, p in inspect.signature(evaluate).parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == {"protocol": None, "k": 20, "width": 0.1, "memory": None, "cutoff": True, "model": "knn",
                        "promises": False, "weights": "correlation", "label": "log", "search_iterations": 20, "seed": 0,
                        "recorder": None}
    assert Protocol().count == "entries"  # the paper's count


# Four jobs of 2 processors running 10 s; at o = 0.5 the cloud runs them 20 s. Actual waits 30, 5, 15, 10:
# the cloud saves 20, -5, 5, 0. Predicted waits 25, 20, 5, 20 (runs 10): the advisor without a cutoff sends
# jobs 0, 1, 3 (predicted 35, 30, 15, 30 > 20); with variances 1, 9, 4, 6 and a cutoff of 5, only job 0.
PROCS, RUN, WAIT = np.full(4, 2), np.full(4, 10.0), np.array([30.0, 5.0, 15.0, 10.0])
WAIT_P, RUN_P, VARIANCE = np.array([25.0, 20.0, 5.0, 20.0]), np.full(4, 10.0), np.array([1.0, 9.0, 4.0, 6.0])


def test_a_scenario_by_hand() -> None:
    import math

    from broker.advisor.evaluate import Scenario, _scenario

    outcome, sent = _scenario(LinearSpeed(0.5), Cutoff(log_alpha=math.log(5.0)), PROCS, WAIT, RUN, WAIT_P, RUN_P,
                              VARIANCE)
    assert sent.tolist() == [True, False, False, False]
    assert outcome == Scenario(name="linear:0.5", s=0.5, jobs_to_cloud=1, jobs_local=3, saved_time_s=20.0,
                               no_cutoff_jobs_to_cloud=3, no_cutoff_saved_time_s=15.0, oracle_jobs_to_cloud=2,
                               oracle_saved_time_s=25.0)
    # the cutoff is read at the scenario's speed: from s_max on nothing is sent
    outcome, sent = _scenario(LinearSpeed(0.5), Cutoff(s_max=0.5), PROCS, WAIT, RUN, WAIT_P, RUN_P, VARIANCE)
    assert not sent.any() and (outcome.jobs_to_cloud, outcome.jobs_local, outcome.saved_time_s) == (0, 4, 0.0)


def test_the_tuning_points_by_hand() -> None:
    from broker.advisor.evaluate import _fit_cutoff, _tuning_points

    points = _tuning_points([LinearSpeed(0.5), LinearSpeed(0.0)], PROCS, WAIT, RUN, WAIT_P, RUN_P, VARIANCE)
    # at o = 0.5 the jobs sent without a cutoff (0, 1, 3) save 20, -5 and 0: a hit is a strict saving
    # at o = 0 all four are sent (predicted 35, 30, 15, 30 > 10) and each saves its wait
    assert points.to_dict("list") == {"scenario": ["linear:0.5"] * 3 + ["linear:0"] * 4,
                                      "s": [0.5] * 3 + [0.0] * 4, "variance": [1.0, 9.0, 6.0, 1.0, 9.0, 4.0, 6.0],
                                      "hit": [True, False, False, True, True, True, True]}
    assert points.index.tolist() == list(range(7))
    # a saving of 1 s is a hit
    one = _tuning_points([LinearSpeed(0.0)], np.array([1]), np.array([1.0]), np.array([10.0]), np.array([5.0]),
                         np.array([10.0]), np.array([2.0]))
    assert one["hit"].tolist() == [True]
    fitted, why = _fit_cutoff(points)
    assert why is None and fitted == Cutoff.fit(points["s"], points["variance"], points["hit"])
    none, why = _fit_cutoff(points[points["hit"]])
    assert none == Cutoff() and why == ("the tuning entries fit no cutoff: fitting the cutoff needs both hits and "
                                        "misses with a finite, positive variance")


def test_rmse_names_and_the_summary_by_hand() -> None:
    import math

    import pandas as pd

    from broker.advisor.evaluate import Evaluation, Scenario, _name, _rmse

    assert _rmse(np.array([1.0, 3.0]), np.array([3.0, 1.0])) == 2.0
    assert _rmse(np.array([0.0, 0.0]), np.array([3.0, 4.0])) == math.sqrt(12.5)
    assert _name(LinearSpeed(1.0)) == "linear:1" and _name(LinearSpeed(0.05)) == "linear:0.05"
    assert _name(TableSpeed((1,), (2.0,), "cloud.csv")) == "table:cloud.csv"
    first = Scenario("linear:0.5", 0.5, 1, 3, 20.0, 3, 15.0, 2, 25.0)
    second = Scenario("linear:0", 0.0, 4, 0, 60.0, 4, 60.0, 4, 60.0)
    got = Evaluation(1.5, 2.5, Cutoff(), [first, second], pd.DataFrame(), {"model": "knn"}).to_dict()
    assert got == {"rmse_wait_s": 1.5, "rmse_run_s": 2.5, "jobs_to_cloud": 1, "jobs_local": 3, "saved_time_s": 20.0,
                   "oracle_saved_time_s": 25.0, "cutoff": {"log_alpha": None, "beta": 0.0, "s_max": None},
                   "scenarios": [{"name": "linear:0.5", "s": 0.5, "jobs_to_cloud": 1, "jobs_local": 3,
                                  "saved_time_s": 20.0, "no_cutoff_jobs_to_cloud": 3, "no_cutoff_saved_time_s": 15.0,
                                  "oracle_jobs_to_cloud": 2, "oracle_saved_time_s": 25.0},
                                 {"name": "linear:0", "s": 0.0, "jobs_to_cloud": 4, "jobs_local": 0,
                                  "saved_time_s": 60.0, "no_cutoff_jobs_to_cloud": 4, "no_cutoff_saved_time_s": 60.0,
                                  "oracle_jobs_to_cloud": 4, "oracle_saved_time_s": 60.0}],
                   "model": "knn"}
    finite = Evaluation(1.5, 2.5, Cutoff(1.25, -2.0, 0.75), [first], pd.DataFrame()).to_dict()["cutoff"]
    assert finite == {"log_alpha": 1.25, "beta": -2.0, "s_max": 0.75}


def _small_frame(n: int = 40):
    import pandas as pd

    rng = np.random.default_rng(7)
    submit = np.arange(n) * 100.0
    wait, run = rng.integers(0, 500, n).astype(float), rng.integers(10, 300, n).astype(float)
    frame = pd.DataFrame({"job_id": np.arange(1000, 1000 + n), "user": rng.integers(0, 3, n),
                          "group": rng.integers(0, 2, n), "queue": rng.integers(0, 2, n), "submit_s": submit,
                          "requested_time_s": run * 2, "requested_procs": rng.integers(1, 9, n),
                          "queue_size": rng.integers(0, 5, n), "queued_work": rng.random(n) * 1e3,
                          "remaining_work": rng.random(n) * 1e3, "weekday": rng.integers(0, 7, n),
                          "time_of_day_s": submit % 86400, "free_procs": rng.integers(0, 9, n),
                          "wait_s": wait, "run_s": run, "wait_known_at": submit + wait,
                          "run_known_at": submit + wait + run})
    return frame.assign(promised_wait_s=wait + 10.0)


def test_a_small_evaluation_reports_its_window_settings_and_sums() -> None:
    from broker.advisor.evaluate import _rmse, _scenario

    frame, speed = _small_frame(), LinearSpeed(0.5)
    got = evaluate(frame, [speed], protocol=Protocol(count="jobs", tune=6, skip=15, evaluate=20), k=3, width=0.2,
                   promises=True)
    table = got.jobs
    assert list(table.columns) == ["job_id", "wait_s", "run_s", "cancelled", "wait_pred_s", "run_pred_s",
                                   "wait_std_s", "cloud[linear:0.5]", "promised_wait_s"]
    assert not table["cancelled"].any()  # a frame without the column: every job ran
    assert table.index.tolist() == list(range(20)) and table["job_id"].tolist() == list(range(1015, 1035))
    assert table["promised_wait_s"].tolist() == (frame["wait_s"].iloc[15:35] + 10.0).tolist()
    settings = dict(got.settings)
    assert settings.pop("rmse_wait_promises_alone_s") == 10.0
    used = settings.pop("cutoff_used")
    assert ("cutoff_not_used" in settings) is not used and settings.pop("cutoff_not_used", "") != "--no-cutoff"
    assert settings.pop("rmse_wait_ran_s") == got.rmse_wait_s  # every job ran
    assert settings == {"model": "knn", "weights": "correlation", "k": 3, "width": 0.2, "promises": True, "tune": 6,
                        "skip": 15, "evaluate": 20, "count": "jobs", "label": "log", "memory": None,
                        "tuning_jobs": 6, "evaluated_jobs": 20, "cancelled_evaluated": 0, "placed_jobs": 20,
                        "wait_scored": 20, "run_scored": 20}
    assert got.rmse_wait_s == _rmse(table["wait_pred_s"].to_numpy(), table["wait_s"].to_numpy())
    assert got.rmse_run_s == _rmse(table["run_pred_s"].to_numpy(), table["run_s"].to_numpy())
    outcome, sent = _scenario(speed, got.cutoff, frame["requested_procs"].to_numpy()[15:35], table["wait_s"].to_numpy(),
                              table["run_s"].to_numpy(), table["wait_pred_s"].to_numpy(),
                              table["run_pred_s"].to_numpy(), table["wait_std_s"].to_numpy() ** 2)
    assert got.scenarios == [outcome] and table["cloud[linear:0.5]"].tolist() == sent.tolist()
    # the first query knows no label: its prediction is 0
    assert (table["run_pred_s"] >= 0).all() and np.isfinite(table["wait_pred_s"]).all()
    assert set(got.cutoff_points.columns) == {"scenario", "s", "variance", "hit"}


def test_a_small_evaluation_with_the_default_k_width_and_cutoff() -> None:
    got = evaluate(_small_frame(), [LinearSpeed(0.5)], protocol=Protocol(count="jobs", tune=6, skip=15, evaluate=20))
    assert (got.settings["k"], got.settings["width"], got.settings["promises"]) == (20, 0.1, False)
    assert got.settings.get("cutoff_not_used", "") != "--no-cutoff" and "searched" not in got.settings
    assert "rmse_wait_promises_alone_s" not in got.settings and "promised_wait_s" not in got.jobs


class _Heard(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[tuple[int, int]] = []

    def progress(self, done: int, total: int) -> None:
        self.heard.append((done, total))


@pytest.mark.parametrize("model", ["knn", "gbm"])
def test_the_recorder_hears_every_prediction_made_in_order(model: str) -> None:
    recorder = _Heard()
    evaluate(_small_frame(800), [LinearSpeed(0.1)], protocol=Protocol(count="jobs", tune=40, skip=100, evaluate=600),
             model=model, recorder=recorder)
    total = 2 * (40 + 600)
    done = [d for d, _ in recorder.heard]
    assert {t for _, t in recorder.heard} == {total} and done == sorted(done) and done[-1] == total
    assert len(done) >= 4  # the wait's and the run time's predictions, each in more than one block
    assert total // 2 in done  # the wait's predictions end before the run time's begin


# ------------------------------------------------------------------------------------------------------------------
# The advisor's protocol on a ten-job frame, with the learners replaced by stand-ins whose predictions are set by hand
# Which learner each option runs and with what, a prediction of nothing counted as 0, a fitted cutoff applied, and
# the settings reported; values worked by hand.


N = 10
#: Rows 0..3 tune (tune = skip = 4), rows 4..9 are evaluated.
SMALL = Protocol(tune=4, skip=4, evaluate=6, count="jobs")


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
    searched = Tuned(weights, 6, 0.5, 2.5, 7, 300)

    def fake(X, y, first, queries, categorical, *, fit_rows, seed, maxiter, given):
        calls.append((queries.tolist(), categorical, fit_rows, seed, maxiter, given.k, given.width, given.memory))
        return Guarded(weights, 6, 0.5, 300, 2.5, "search", searched, 3.0, 4.0, 1)

    monkeypatch.setattr(protocol_module, "tune_knn", fake)
    got = evaluate(_frame(), [LinearSpeed(0.0)], protocol=SMALL, weights="search", k=9, width=0.25, memory=40)
    # the wait's tuning, then the run's, each guarded by the setting given
    assert calls == [([0, 1, 2, 3], [0, 1, 2], 4, 0, 20, 9, 0.25, 40)] * 2
    found = {"chosen": "search", "k": 6, "width": 0.5, "memory": 300, "tuning_rmse_s": 2.5, "held_out_entries": 1,
             "held_out_rmse_s": 3.0, "given_held_out_rmse_s": 4.0,
             "search": {"k": 6, "width": 0.5, "memory": 300, "search_rmse_s": 2.5, "evaluations": 7},
             "weights": dict(zip(COLUMNS, weights.tolist(), strict=True))}
    assert got.settings["searched"] == {"wait_s": found, "run_s": found}
    calls.clear()
    evaluate(_frame(), [LinearSpeed(0.0)], protocol=SMALL, weights="search", search_iterations=3, seed=8)
    assert calls == [([0, 1, 2, 3], [0, 1, 2], 4, 8, 3, 20, 0.1, None)] * 2


def test_a_query_that_knows_no_label_predicts_0() -> None:
    # no wait or run time is known before the end of the log: every k-NN prediction is empty
    got = evaluate(_frame(wait_known_late=True), [LinearSpeed(0.0)], protocol=SMALL, k=3, width=0.5)
    assert got.jobs["wait_pred_s"].tolist() == [0.0] * 6 and got.jobs["run_pred_s"].tolist() == [0.0] * 6
    assert np.isinf(got.jobs["wait_std_s"]).all() and got.scenarios[0].jobs_to_cloud == 0


# --- the inputs as a caller may give them: labels as Python objects, a feature that is no number ------------------
# Every expected value is worked by hand.


def _steady_frame(n: int = 10) -> pd.DataFrame:
    """Jobs 100 s apart that all wait 50 s and run 30 s on 2 processors; each label known from the next job on."""
    i = np.arange(n)
    submit = 100.0 * i
    return pd.DataFrame({"job_id": 100 + i, "user": i % 3, "group": i % 2, "queue": np.zeros(n, dtype=np.int64),
                         "submit_s": submit, "requested_time_s": np.full(n, 60.0), "requested_procs": np.full(n, 2.0),
                         "queue_size": i.astype(float), "queued_work": 10.0 * i, "remaining_work": 5.0 * i,
                         "weekday": (i % 7).astype(float), "time_of_day_s": submit, "free_procs": np.full(n, 4.0),
                         "wait_s": np.full(n, 50.0), "run_s": np.full(n, 30.0), "wait_known_at": submit + 50.0,
                         "run_known_at": submit + 80.0})


def test_labels_held_as_python_objects_are_predicted_as_numbers() -> None:
    # every wait is 50 s: whatever the neighbours and their weights (summing to 1), each evaluated job that
    # knows a past (all of rows 4..9) is predicted 50 s, and the run 30 s
    frame = _steady_frame()
    frame["wait_s"] = frame["wait_s"].astype(object)
    got = evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(count="jobs", tune=4, skip=4, evaluate=6), k=3,
                   cutoff=False)
    assert got.jobs["wait_pred_s"].tolist() == pytest.approx([50.0] * 6, rel=1e-12)
    assert got.jobs["run_pred_s"].tolist() == pytest.approx([30.0] * 6, rel=1e-12)
    assert got.rmse_wait_s == pytest.approx(0.0, abs=1e-9)


def test_a_feature_that_is_not_a_number_is_refused_by_name_before_a_weight_search() -> None:
    frame = _steady_frame()
    frame["user"] = [["ann", "bob", "cy"][u] for u in frame["user"]]
    with pytest.raises(ValueError, match="could not convert string to float: 'ann'"):
        evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(count="jobs", tune=4, skip=4, evaluate=6),
                 weights="search", search_iterations=1)


# --- windows counted by the file's entries, and the replay's waits as the label -------------------------------------


def _with_entries(frame: pd.DataFrame, entries: list[int], total: int) -> pd.DataFrame:
    frame = frame.assign(entry=entries)
    frame.attrs["entries"] = total
    return frame


def test_the_protocol_counts_entries_and_a_removed_entry_keeps_its_place() -> None:
    # rows hold entries 0, 2, 3, 5, 6, 7, 9 of 10 (1, 4 and 8 removed by the job view)
    frame = _with_entries(pd.DataFrame({"job_id": range(7)}), [0, 2, 3, 5, 6, 7, 9], 10)
    tune, window = Protocol(tune=2, skip=4, evaluate=4).rows(frame)  # entries 2, 3 tune; 4..7 are evaluated
    assert tune.tolist() == [1, 2] and window.tolist() == [3, 4, 5]
    tune, window = Protocol(tune=1, skip=6, evaluate=4).rows(frame)  # the window ends on the file's last entry
    assert tune.tolist() == [3] and window.tolist() == [4, 5, 6]
    with pytest.raises(ConfigError, match=r"^the trace has 10 entries; the protocol needs skip \+ evaluate = 11$"):
        Protocol(tune=1, skip=6, evaluate=5).rows(frame)
    with pytest.raises(ConfigError, match=r"^the tuning entries of the protocol .* hold no replayable job$"):
        Protocol(tune=1, skip=2, evaluate=3).rows(frame)  # entry 1 alone tunes
    with pytest.raises(ConfigError, match=r"^count must be one of entries, jobs, got 'lines'$"):
        Protocol(count="lines")
    assert Protocol.fitting(11, "jobs") == Protocol(tune=5, skip=5, evaluate=6, count="jobs")


def test_an_entry_window_evaluates_the_jobs_of_its_entries() -> None:
    # entry 2 was removed: entries 2..3 tune (row 2, entry 3), entries 4..10 are rows 3..9
    frame = _with_entries(_steady_frame(), [0, 1, 3, 4, 5, 6, 7, 8, 9, 10], 11)
    got = evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(tune=2, skip=4, evaluate=7), k=3, cutoff=False)
    assert got.jobs["job_id"].tolist() == list(range(103, 110))
    assert (got.settings["count"], got.settings["tuning_jobs"], got.settings["evaluated_jobs"]) == ("entries", 1, 7)


def test_the_replays_waits_are_learned_scored_and_saved_on() -> None:
    # the log's jobs wait 50 s, the replay's 70 s; every job runs 30 s: at o = 0 the cloud saves a job's whole
    # wait, 70 s on the replay's label (the oracle sends all six: 420 s) and 50 s on the log's (300 s)
    frame = _steady_frame().assign(replay_wait_s=70.0)
    replay = evaluate(frame, [LinearSpeed(0.0)], protocol=SMALL, k=3, cutoff=False, label="replay")
    assert replay.jobs["wait_s"].tolist() == [70.0] * 6 and replay.settings["label"] == "replay"
    assert replay.jobs["wait_pred_s"].tolist() == pytest.approx([70.0] * 6, rel=1e-12)
    assert replay.rmse_wait_s == pytest.approx(0.0, abs=1e-9)
    assert replay.scenarios[0].oracle_saved_time_s == pytest.approx(420.0)
    log = evaluate(frame, [LinearSpeed(0.0)], protocol=SMALL, k=3, cutoff=False)
    assert log.settings["label"] == "log" and log.scenarios[0].oracle_saved_time_s == pytest.approx(300.0)
    assert log.jobs["wait_pred_s"].tolist() == pytest.approx([50.0] * 6, rel=1e-12)


def test_a_replay_wait_missing_before_the_windows_end_is_refused() -> None:
    frame = _steady_frame().assign(replay_wait_s=[70.0] * 9 + [np.nan])  # the replay stopped one row short
    with pytest.raises(ConfigError, match=r"up to the window's end \(row 9\); row 9 has none$"):
        evaluate(frame, [LinearSpeed(0.0)], protocol=SMALL, label="replay")
    evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(tune=4, skip=4, evaluate=5, count="jobs"), label="replay")


def test_a_replay_wait_is_known_only_once_the_job_started_in_the_replay() -> None:
    # replay waits of 1,000 s: no job has started in the replay by the submission of any evaluated job (jobs are
    # 100 s apart, the last at 900 s), so nothing is known and every prediction is 0
    frame = _steady_frame().assign(replay_wait_s=1000.0)
    got = evaluate(frame, [LinearSpeed(0.0)], protocol=SMALL, k=3, cutoff=False, label="replay")
    assert got.jobs["wait_pred_s"].tolist() == [0.0] * 6 and got.rmse_wait_s == pytest.approx(1000.0)


# --- entries cancelled while queued: scored for the wait, no run time, no placement -----------------------------------


def _with_cancelled(rows: list[int], wait: float = 500.0, n: int = 12) -> pd.DataFrame:
    """:func:`_steady_frame` whose ``rows`` were cancelled after waiting ``wait`` s (no run time, never known)."""
    frame = _steady_frame(n).assign(cancelled=False)
    frame.loc[rows, ["cancelled", "wait_s", "run_s", "run_known_at"]] = [True, wait, np.nan, np.inf]
    frame.loc[rows, "wait_known_at"] = frame.loc[rows, "submit_s"] + wait
    return frame


def test_a_cancelled_entry_is_scored_for_its_wait_and_takes_no_run_time_nor_placement() -> None:
    # rows 4..11 evaluated; row 6 (submitted at 600) is cancelled at 1,100 after waiting 500 s, row 2 in the tuning
    frame = _with_cancelled([2, 6])
    got = evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(count="jobs", tune=4, skip=4, evaluate=8), k=20,
                   width=100.0, cutoff=False)
    table = got.jobs
    assert table["cancelled"].tolist() == [False, False, True] + [False] * 5
    # rows 4..10 know only 50 s waits (row 2's 500 s is known at 700 but weighs 1/8 or less below); row 11,
    # submitted at the cancellation, learns row 6's 500 s too
    assert table["wait_pred_s"].iloc[:3].tolist() == pytest.approx([50.0] * 3, rel=1e-12)
    assert table["wait_pred_s"].iat[7] > table["wait_pred_s"].iat[6]
    assert table["run_pred_s"].tolist() == pytest.approx([30.0] * 8, rel=1e-12)  # a NaN run time is never learned
    errors = (table["wait_pred_s"] - table["wait_s"]).to_numpy()
    assert got.rmse_wait_s == pytest.approx(np.sqrt(np.mean(errors ** 2)), rel=1e-12)  # row 6's 450 s error in it
    ran = ~table["cancelled"].to_numpy()
    assert got.settings["rmse_wait_ran_s"] == pytest.approx(np.sqrt(np.mean(errors[ran] ** 2)), rel=1e-12)
    assert got.rmse_run_s == pytest.approx(0.0, abs=1e-9)
    assert {k: got.settings[k] for k in ("evaluated_jobs", "cancelled_evaluated", "placed_jobs", "wait_scored",
                                         "run_scored")} == {"evaluated_jobs": 8, "cancelled_evaluated": 1,
                                                            "placed_jobs": 7, "wait_scored": 8, "run_scored": 7}
    # at o = 0 every job that ran saves its 50 s wait; the cancelled one is neither sent nor kept, nor the oracle's
    (s,) = got.scenarios
    assert (s.jobs_to_cloud, s.jobs_local, s.oracle_jobs_to_cloud) == (7, 0, 7)
    assert (s.saved_time_s, s.no_cutoff_saved_time_s, s.oracle_saved_time_s) == (350.0, 350.0, 350.0)
    assert table["cloud[linear:0]"].tolist() == ran.tolist()


def test_a_cancelled_tuning_entry_is_no_cutoff_point() -> None:
    # tuning rows 0..3: row 0 knows nothing and row 1 one wait (no variance), so at o = 0 only rows 2 and 3 are
    # sent, two hits; cancelled, they take no decision and the cutoff has no point at all
    speeds, protocol = [LinearSpeed(0.0), LinearSpeed(1.0)], Protocol(count="jobs", tune=4, skip=4, evaluate=8)
    ran = evaluate(_steady_frame(12).assign(cancelled=False), speeds, protocol=protocol, k=20, width=100.0)
    assert ran.cutoff_points["scenario"].tolist() == ["linear:0", "linear:0"] and ran.cutoff_points["hit"].all()
    gone = evaluate(_with_cancelled([2, 3]), speeds, protocol=protocol, k=20, width=100.0)
    assert gone.cutoff_points.empty and "no cutoff" in gone.settings["cutoff_not_used"]


def test_the_replay_label_scores_no_cancelled_entry_and_refuses_a_missing_replay_wait_of_one_that_ran() -> None:
    frame = _with_cancelled([6])
    waited = np.where(frame["cancelled"], np.nan, 40.0)
    got = evaluate(frame.assign(replay_wait_s=waited), [LinearSpeed(0.0)], label="replay", cutoff=False, k=20,
                   width=100.0, protocol=Protocol(count="jobs", tune=4, skip=4, evaluate=8))
    assert got.settings["wait_scored"] == 7 and got.rmse_wait_s == pytest.approx(0.0, abs=1e-9)
    assert got.scenarios[0].oracle_saved_time_s == 7 * 40.0
    waited[7] = np.nan
    with pytest.raises(ConfigError, match="row 7 has none"):
        evaluate(frame.assign(replay_wait_s=waited), [LinearSpeed(0.0)], label="replay",
                 protocol=Protocol(count="jobs", tune=4, skip=4, evaluate=8))


def test_dropping_cancelled_entries_gives_the_figures_of_before_and_keeping_them_moves_no_oracle() -> None:
    # SDSC-SP2's first 3,000 entries, tune 200, skip 1,500, evaluate 1,500 (61 of them cancelled while queued).
    # Recorded from main at 8610a03, before cancelled entries could be kept (the same call, no cancelled option)
    before = {"wait": 29744.927417828207, "run": 12716.923623309787, "jobs": 1439,
              "scenarios": [[587, 2359687.6, 587, 2359687.6, 506, 5578678.3],
                            [0, 0.0, 150, -4596770.0, 131, 2060623.0]]}
    trace = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")).frame.iloc[:3000]
    speeds, protocol = [LinearSpeed(0.1), LinearSpeed(1.0)], Protocol(tune=200, skip=1500, evaluate=1500)
    got = {}
    for cancelled in ("drop", "keep"):
        frame, _ = submission_features(trace, max_procs=128, cancelled=cancelled)
        got[cancelled] = evaluate(frame, speeds, protocol=protocol, k=20)
    drop, keep = got["drop"], got["keep"]
    assert (drop.rmse_wait_s, drop.rmse_run_s) == pytest.approx((before["wait"], before["run"]), rel=1e-9)
    assert len(drop.jobs) == before["jobs"]
    assert [[s.jobs_to_cloud, s.saved_time_s, s.no_cutoff_jobs_to_cloud, s.no_cutoff_saved_time_s,
             s.oracle_jobs_to_cloud, s.oracle_saved_time_s] for s in drop.scenarios] == [
                 pytest.approx(row, rel=1e-9) for row in before["scenarios"]]
    assert (len(keep.jobs), keep.settings["cancelled_evaluated"], keep.settings["placed_jobs"]) == (1500, 61, 1439)
    assert keep.rmse_wait_s != keep.settings["rmse_wait_ran_s"]  # the cancelled entries' waits are scored
    for k_, d_ in zip(keep.scenarios, drop.scenarios, strict=True):  # the oracle needs no prediction: same jobs
        assert (k_.oracle_jobs_to_cloud, k_.oracle_saved_time_s) == (d_.oracle_jobs_to_cloud, d_.oracle_saved_time_s)
        assert k_.jobs_to_cloud + k_.jobs_local == 1439
