"""The advisor on a trace, with the paper's protocol: tune on 500 entries, skip the first 10k, evaluate 10k.

The weights (by correlation) and the cutoff are fitted on the tuning entries, the 500 just before
the evaluated window; every job of the window is predicted from the labels known when it was
submitted (:mod:`broker.advisor.online`). Jobs sent to the cloud stay in the log: the decision does
not change later waits, as in the paper. Each speed scenario reports the jobs sent and kept and the
saved time of the advisor with and without the cutoff and of the oracle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from broker.advisor.boosting import predict_boosted
from broker.advisor.decide import Cutoff, LinearSpeed, TableSpeed, decide, oracle, saved_time
from broker.advisor.features import CATEGORIES, NUMBERS
from broker.advisor.knn import HeomEmbedding
from broker.advisor.online import first_known, predict_as_submitted
from broker.advisor.tuning import correlation_weights
from workloads.errors import ConfigError

COLUMNS = (*CATEGORIES, *NUMBERS)
MODELS = ("knn", "gbm")
Speed = LinearSpeed | TableSpeed


@dataclass(frozen=True, slots=True)
class Protocol:
    """Which entries tune, which are skipped, which are evaluated (counts of jobs in submission order)."""

    tune: int = 500
    skip: int = 10_000
    evaluate: int = 10_000

    def __post_init__(self) -> None:
        if not (1 <= self.tune <= self.skip and self.evaluate >= 1):
            raise ConfigError(f"the protocol needs 1 <= tune <= skip and evaluate >= 1, got {self}")

    def windows(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The tuning rows and the evaluated rows of an ``n``-job trace."""
        if n < self.skip + self.evaluate:
            raise ConfigError(f"the trace has {n:,} replayable jobs; the protocol needs skip + evaluate = "
                              f"{self.skip + self.evaluate:,}")
        return np.arange(self.skip - self.tune, self.skip), np.arange(self.skip, self.skip + self.evaluate)


@dataclass(frozen=True, slots=True)
class Scenario:
    """One speed model's outcome over the evaluated window (times in seconds)."""

    name: str
    s: float
    jobs_to_cloud: int
    jobs_local: int
    saved_time_s: float
    no_cutoff_jobs_to_cloud: int
    no_cutoff_saved_time_s: float
    oracle_jobs_to_cloud: int
    oracle_saved_time_s: float


@dataclass(frozen=True, slots=True)
class Evaluation:
    """RMSE of the predictions, the fitted cutoff, each scenario, and the per-job table."""

    rmse_wait_s: float
    rmse_run_s: float
    cutoff: Cutoff
    scenarios: list[Scenario]
    jobs: pd.DataFrame = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the first scenario's figures at the top level, every scenario under ``scenarios``)."""
        first = self.scenarios[0]
        return {"rmse_wait_s": self.rmse_wait_s, "rmse_run_s": self.rmse_run_s,
                "jobs_to_cloud": first.jobs_to_cloud, "jobs_local": first.jobs_local,
                "saved_time_s": first.saved_time_s, "oracle_saved_time_s": first.oracle_saved_time_s,
                "cutoff": {"log_alpha": self.cutoff.log_alpha if math.isfinite(self.cutoff.log_alpha) else None,
                           "beta": self.cutoff.beta},
                "scenarios": [_fields(s) for s in self.scenarios],
                **self.settings}


def _fields(s: Scenario) -> dict[str, Any]:
    return {name: getattr(s, name) for name in Scenario.__slots__}


def evaluate(frame: pd.DataFrame, speeds: Sequence[Speed], *, protocol: Protocol | None = None, k: int = 20,
             width: float = 0.1, cutoff: bool = True, model: str = "knn", seed: int = 0) -> Evaluation:
    """Run the advisor over ``frame`` (:func:`broker.advisor.features.submission_features`) for each speed.

    ``model``: ``knn`` (the paper's estimator) or ``gbm`` (gradient boosting,
    :mod:`broker.advisor.boosting`, refitted every 500 queries; ``seed`` is its random state).
    """
    if not speeds:
        raise ConfigError("evaluate needs at least one speed model")
    if model not in MODELS:
        raise ConfigError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    protocol = protocol or Protocol()
    tune, window = protocol.windows(len(frame))
    X = frame[list(COLUMNS)].fillna(0.0).to_numpy(dtype=np.float64)
    categorical = list(range(len(CATEGORIES)))
    rows = np.concatenate([tune, window])
    predicted = {}
    for label in ("wait_s", "run_s"):
        y = frame[label].to_numpy(dtype=np.float64)
        if model == "gbm":
            got = predict_boosted(X, y, first_known(frame, label), rows, categorical, seed=seed)
        else:
            weights = correlation_weights(X[tune], y[tune], categorical)
            embedded = HeomEmbedding(weights.tolist(), categorical).fit(X[:protocol.skip]).transform(X)
            got = predict_as_submitted(embedded, y, first_known(frame, label), rows, n_neighbors=k, width=width)
        predicted[label] = (np.nan_to_num(got.mean, nan=0.0), got.std)
    wait, run = frame["wait_s"].to_numpy(), frame["run_s"].to_numpy()
    procs = frame["requested_procs"].to_numpy()
    (wait_p, wait_sd), (run_p, _) = predicted["wait_s"], predicted["run_s"]
    n_tune = len(tune)
    fitted, why = (_fit_cutoff(speeds, procs[tune], wait[tune], run[tune], wait_p[:n_tune], run_p[:n_tune],
                               wait_sd[:n_tune] ** 2) if cutoff else (Cutoff(), "--no-cutoff"))
    scenarios, table = [], frame.iloc[window][["job_id", "wait_s", "run_s"]].reset_index(drop=True)
    table["wait_pred_s"], table["run_pred_s"] = wait_p[n_tune:], run_p[n_tune:]
    table["wait_std_s"] = wait_sd[n_tune:]
    for speed in speeds:
        outcome, choices = _scenario(speed, fitted, procs[window], wait[window], run[window], wait_p[n_tune:],
                                     run_p[n_tune:], wait_sd[n_tune:] ** 2)
        scenarios.append(outcome)
        table[f"cloud[{outcome.name}]"] = choices
    rmse = {label: float(np.sqrt(np.mean((predicted[label][0][n_tune:] - frame[label].to_numpy()[window]) ** 2)))
            for label in ("wait_s", "run_s")}
    settings = {"model": model, "k": k, "width": width, "cutoff_used": why is None, "tune": protocol.tune,
                "skip": protocol.skip, "evaluate": protocol.evaluate, **({"cutoff_not_used": why} if why else {})}
    return Evaluation(rmse["wait_s"], rmse["run_s"], fitted, scenarios, table, settings)


def _name(speed: Speed) -> str:
    return f"linear:{speed.overhead:g}" if isinstance(speed, LinearSpeed) else f"table:{speed.source}"


def _fit_cutoff(speeds: Sequence[Speed], procs: np.ndarray, wait: np.ndarray, run: np.ndarray, wait_p: np.ndarray,
                run_p: np.ndarray, variance: np.ndarray) -> tuple[Cutoff, str | None]:
    """The line over the tuning entries' (s, log variance), hit = sending to the cloud saved time.

    When no line separates them (no hits, no misses, or hits less certain than misses) there is no
    cutoff, and the reason is returned with it.
    """
    s, var, hit = [], [], []
    for speed in speeds:
        sent = decide(wait_p, run_p, variance, speed.cloud_run(procs, run_p), math.inf)
        gain = saved_time(sent, run, wait, speed.cloud_run(procs, run))
        s.append(np.full(int(sent.sum()), speed.s))
        var.append(variance[sent])
        hit.append(gain[sent] > 0)
    try:
        return Cutoff.fit(np.concatenate(s), np.concatenate(var), np.concatenate(hit)), None
    except ConfigError as exc:
        return Cutoff(), f"the tuning entries fit no cutoff: {exc}"


def _scenario(speed: Speed, fitted: Cutoff, procs: np.ndarray, wait: np.ndarray, run: np.ndarray,
              wait_p: np.ndarray, run_p: np.ndarray, variance: np.ndarray) -> tuple[Scenario, np.ndarray]:
    actual = speed.cloud_run(procs, run)
    planned = speed.cloud_run(procs, run_p)
    sent = decide(wait_p, run_p, variance, planned, fitted(speed.s))
    free = decide(wait_p, run_p, variance, planned, math.inf)
    best = oracle(run, wait, actual)
    outcome = Scenario(name=_name(speed), s=speed.s, jobs_to_cloud=int(sent.sum()), jobs_local=int((~sent).sum()),
                       saved_time_s=float(saved_time(sent, run, wait, actual).sum()),
                       no_cutoff_jobs_to_cloud=int(free.sum()),
                       no_cutoff_saved_time_s=float(saved_time(free, run, wait, actual).sum()),
                       oracle_jobs_to_cloud=int(best.sum()),
                       oracle_saved_time_s=float(saved_time(best, run, wait, actual).sum()))
    return outcome, sent
