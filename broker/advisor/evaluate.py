"""The advisor on a trace, with the paper's protocol: tune on 500 entries, skip the first 10k, evaluate 10k.

Entries are the SWF file's (the paper's count; :class:`Protocol` also counts replayable jobs). The
weights (by correlation) and the cutoff are fitted on the tuning entries, the 500 just before
the evaluated window; every job of the window is predicted from the labels known when it was
submitted (:mod:`broker.advisor.online`). Jobs sent to the cloud stay in the log: the decision does
not change later waits, as in the paper. Each speed scenario reports the jobs sent and kept and the
saved time of the advisor with and without the cutoff and of the oracle.

A row cancelled while queued (the frame's ``cancelled`` column, :mod:`broker.advisor.features`) is an
entry of its window: its wait is predicted and scored (with the replay's label it has none: not
scored), it has no run time, and it takes no placement decision: it is in no scenario's counts, saved
time, cutoff point or oracle. An RMSE is over the rows whose label is known; the settings count them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from broker.advisor.boosting import predict_boosted
from broker.advisor.decide import Cutoff, LinearSpeed, TableSpeed, decide, oracle, saved_time
from broker.advisor.features import CATEGORIES, NUMBERS
from broker.advisor.knn import HeomEmbedding
from broker.advisor.online import first_known, predict_as_submitted
from broker.advisor.promises import PROMISE, REPLAY_WAIT, with_replay_label
from broker.advisor.tuning import Setting, correlation_weights, tune_knn
from broker.sim.recorder import Recorder
from workloads.errors import ConfigError

COLUMNS = (*CATEGORIES, *NUMBERS)
MODELS = ("knn", "gbm")
WEIGHTS = ("correlation", "search")
#: What the protocol's windows count (:class:`Protocol`).
COUNTS = ("entries", "jobs")
#: The wait the model learns and is scored on: the log's, or the conservative replay's (:mod:`broker.advisor.promises`).
LABELS_OF_WAIT = ("log", "replay")
Speed = LinearSpeed | TableSpeed


@dataclass(frozen=True, slots=True)
class Protocol:
    """Which entries tune, which are skipped, which are evaluated.

    ``count``: ``entries`` (the paper's "the first 10k entries of the logs": positions in the SWF
    file, the entries a job view removes counted too, so a window holds the replayable jobs of its
    entries) or ``jobs`` (positions among the replayable jobs in submission order).
    """

    tune: int = 500
    skip: int = 10_000
    evaluate: int = 10_000
    count: str = "entries"

    def __post_init__(self) -> None:
        if not (1 <= self.tune <= self.skip and self.evaluate >= 1):
            raise ConfigError(f"the protocol needs 1 <= tune <= skip and evaluate >= 1, got {self}")
        if self.count not in COUNTS:
            raise ConfigError(f"count must be one of {', '.join(COUNTS)}, got {self.count!r}")

    @classmethod
    def fitting(cls, n: int, count: str = "entries") -> Protocol:
        """The paper's protocol (tune 500, skip 10,000, evaluate 10,000), or half and half on a shorter trace.

        ``n`` entries (or replayable jobs, as ``count`` says), at least 2 (one to learn from, one to evaluate).
        """
        if n >= 20_000:
            return cls(count=count)
        if n < 2:
            raise ConfigError(f"the trace has {n} {_unit(count)}; the advisor needs 2 (one learns, one is "
                              "evaluated)")
        skip = n // 2
        return cls(tune=min(500, skip), skip=skip, evaluate=n - skip, count=count)

    def windows(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The tuning positions and the evaluated positions among ``n`` (entries or jobs, as counted)."""
        if n < self.skip + self.evaluate:
            raise ConfigError(f"the trace has {n:,} {_unit(self.count)}; the protocol needs skip + evaluate = "
                              f"{self.skip + self.evaluate:,}")
        return np.arange(self.skip - self.tune, self.skip), np.arange(self.skip, self.skip + self.evaluate)

    def rows(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The frame's tuning rows and evaluated rows (ascending).

        Counting entries needs the frame's ``entry`` column and ``attrs["entries"]``
        (:func:`broker.advisor.features.submission_features`); each window must hold a replayable job.
        """
        if self.count == "jobs":
            return self.windows(len(frame))
        if "entry" not in frame or "entries" not in frame.attrs:
            raise ConfigError("counting entries needs the frame's 'entry' column and attrs['entries'] "
                              "(submission_features gives both); count jobs otherwise")
        tune, window = self.windows(int(frame.attrs["entries"]))
        entry = frame["entry"].to_numpy()
        rows = [np.flatnonzero((entry >= part[0]) & (entry <= part[-1])) for part in (tune, window)]
        for part, name in zip(rows, ("tuning entries", "evaluated entries"), strict=True):
            if not len(part):
                raise ConfigError(f"the {name} of the protocol ({self}) hold no replayable job")
        return rows[0], rows[1]


def _unit(count: str) -> str:
    return "entries" if count == "entries" else "replayable jobs"


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
    #: The tuning points the cutoff was fitted on (``scenario``, ``s``, ``variance``, ``hit``).
    cutoff_points: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the first scenario's figures at the top level, every scenario under ``scenarios``)."""
        first = self.scenarios[0]
        return {"rmse_wait_s": _finite(self.rmse_wait_s), "rmse_run_s": _finite(self.rmse_run_s),
                "jobs_to_cloud": first.jobs_to_cloud, "jobs_local": first.jobs_local,
                "saved_time_s": first.saved_time_s, "oracle_saved_time_s": first.oracle_saved_time_s,
                "cutoff": {"log_alpha": _finite(self.cutoff.log_alpha), "beta": self.cutoff.beta,
                           "s_max": _finite(self.cutoff.s_max)},
                "scenarios": [_fields(s) for s in self.scenarios],
                **self.settings}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _fields(s: Scenario) -> dict[str, Any]:
    return {name: getattr(s, name) for name in Scenario.__slots__}


def evaluate(frame: pd.DataFrame, speeds: Sequence[Speed], *, protocol: Protocol | None = None, k: int = 20,
             width: float = 0.1, memory: int | None = None, cutoff: bool = True, model: str = "knn",
             promises: bool = False, weights: str = "correlation", label: str = "log", search_iterations: int = 20,
             seed: int = 0, recorder: Recorder | None = None) -> Evaluation:
    """Run the advisor over ``frame`` (:func:`broker.advisor.features.submission_features`) for each speed.

    ``model``: ``knn`` (the paper's estimator) or ``gbm`` (gradient boosting,
    :mod:`broker.advisor.boosting`, refitted every 500 queries). ``promises``: the frame's
    :data:`broker.advisor.promises.PROMISE` column joins the wait's features (:mod:`broker.advisor.promises`),
    and the RMSE of the promises alone is reported. ``label``: the wait learned and scored, ``log``
    (the log's) or ``replay`` (the conservative replay's, the frame's
    :data:`broker.advisor.promises.REPLAY_WAIT`; the paper's Table 5): the RMSE, the cutoff, the saved
    time and the oracle are all on it. ``memory``: the k-NN's knowledge-base size ``s`` (None: every
    known job). ``weights`` (k-NN): ``correlation``, or ``search`` (:func:`broker.advisor.tuning.tune_knn`:
    the weights, ``k``, the width and ``s`` searched on the tuning entries and kept only if they beat
    the given ones on the entries held out of the search; ``search_iterations`` generations of
    differential evolution). ``seed`` seeds the search and the boosting. ``recorder`` hears the
    progress: the predictions made of twice the tuning and evaluated rows, the wait's then the run time's.
    """
    _check(frame, speeds, model=model, weights=weights, label=label, promises=promises, k=k, memory=memory)
    protocol = protocol or Protocol()
    tune, window = protocol.rows(frame)
    frame = frame.iloc[:int(window[-1]) + 1]  # later rows are never asked for nor known to an asked row
    gone = _cancelled(frame)
    if label == "replay":
        missing = np.isnan(frame[REPLAY_WAIT].to_numpy(dtype=np.float64)) & ~gone  # a cancelled job is not replayed
        if missing.any():  # a NaN label would make every figure NaN: refused, not dropped
            raise ConfigError(f"the replay label needs the replay's wait of every row up to the window's end "
                              f"(row {len(frame) - 1:,}); row {int(np.flatnonzero(missing)[0]):,} has none")
        frame = with_replay_label(frame)
    learner = _Learner(frame, tune, window, model, weights, (k, width, memory), seed, search_iterations)
    steps = _steps(recorder, len(learner.rows))
    predicted = {"wait_s": learner.predict("wait_s", promises, steps(0)),
                 "run_s": learner.predict("run_s", False, steps(1))}
    wait, run = frame["wait_s"].to_numpy(dtype=np.float64), frame["run_s"].to_numpy(dtype=np.float64)
    procs = frame["requested_procs"].to_numpy()
    at_tune, at_window = np.searchsorted(learner.rows, tune), np.searchsorted(learner.rows, window)
    (wait_p, wait_sd), (run_p, _) = predicted["wait_s"], predicted["run_s"]
    ran_tune, ran = ~gone[tune], ~gone[window]  # only a job that ran takes a placement decision
    points = _tuning_points(speeds, procs[tune][ran_tune], wait[tune][ran_tune], run[tune][ran_tune],
                            wait_p[at_tune][ran_tune], run_p[at_tune][ran_tune], wait_sd[at_tune][ran_tune] ** 2)
    fitted, why = _fit_cutoff(points) if cutoff else (Cutoff(), "--no-cutoff")
    scenarios, table = [], frame.iloc[window][["job_id", "wait_s", "run_s"]].reset_index(drop=True)
    table["cancelled"] = gone[window]
    table["wait_pred_s"], table["run_pred_s"] = wait_p[at_window], run_p[at_window]
    table["wait_std_s"] = wait_sd[at_window]
    for speed in speeds:
        outcome, choices = _scenario(speed, fitted, procs[window][ran], wait[window][ran], run[window][ran],
                                     wait_p[at_window][ran], run_p[at_window][ran], wait_sd[at_window][ran] ** 2)
        scenarios.append(outcome)
        table[f"cloud[{outcome.name}]"] = _placed(choices, ran)
    rmse = {name: _rmse(predicted[name][0][at_window], actual[window]) for name, actual in
            (("wait_s", wait), ("run_s", run))}
    settings: dict[str, Any] = {
        "model": model, "weights": weights, "k": k, "width": width, "memory": memory, "promises": promises,
        "label": label, **({"searched": learner.tuned} if learner.tuned else {}),
        "cutoff_used": why is None, "tune": protocol.tune, "skip": protocol.skip, "evaluate": protocol.evaluate,
        "count": protocol.count, "tuning_jobs": len(tune), "evaluated_jobs": len(window),
        "cancelled_evaluated": int(gone[window].sum()), "placed_jobs": int(ran.sum()),
        "wait_scored": int(np.isfinite(wait[window]).sum()), "run_scored": int(np.isfinite(run[window]).sum()),
        "rmse_wait_ran_s": _finite(_rmse(wait_p[at_window][ran], wait[window][ran])),  # None: no job ran
        **({"cutoff_not_used": why} if why else {}),
        **({"rmse_wait_promises_alone_s": _rmse(frame[PROMISE].to_numpy(dtype=np.float64)[window], wait[window])}
           if promises
           else {})}
    if promises:
        table[PROMISE] = frame[PROMISE].to_numpy()[window]
    return Evaluation(rmse["wait_s"], rmse["run_s"], fitted, scenarios, table, settings, points)


def _check(frame: pd.DataFrame, speeds: Sequence[Speed], *, model: str, weights: str, label: str, promises: bool,
           k: int, memory: int | None) -> None:
    """Refuse bad options before any work."""
    if not speeds:
        raise ConfigError("evaluate needs at least one speed model")
    for name, value, known in (("model", model, MODELS), ("weights", weights, WEIGHTS),
                               ("label", label, LABELS_OF_WAIT)):
        if value not in known:
            raise ConfigError(f"{name} must be one of {', '.join(known)}, got {value!r}")
    if isinstance(k, bool) or k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if memory is not None and (isinstance(memory, bool) or memory < 1):
        raise ConfigError(f"the knowledge base's size (memory) must be at least 1, got {memory}")
    if promises and PROMISE not in frame:
        raise ConfigError(f"promises need the frame's {PROMISE!r} column (broker.advisor.promises.promised_waits)")
    if label == "replay" and REPLAY_WAIT not in frame:
        raise ConfigError(f"the replay label needs the frame's {REPLAY_WAIT!r} column "
                          "(broker.advisor.promises.with_promises)")


def _steps(recorder: Recorder | None, rows: int) -> Callable[[int], Callable[[int], None] | None]:
    """For label ``i`` (0: the wait, 1: the run time), a callback telling ``recorder`` of its predictions made."""
    def label(i: int) -> Callable[[int], None] | None:
        if recorder is None:
            return None
        return lambda done: recorder.progress(i * rows + done, 2 * rows)
    return label


def _rmse(predicted: np.ndarray, actual: np.ndarray) -> float:
    """Over the rows with both values (a cancelled job has no run time, nor a replay's wait, nor a promise)."""
    both = np.isfinite(predicted) & np.isfinite(actual)
    return float(np.sqrt(np.mean((predicted[both] - actual[both]) ** 2))) if both.any() else math.nan


def _cancelled(frame: pd.DataFrame) -> np.ndarray:
    """The rows cancelled while queued (:mod:`broker.advisor.features`; none in a frame without the column)."""
    if "cancelled" not in frame:
        return np.zeros(len(frame), dtype=bool)
    return frame["cancelled"].to_numpy(dtype=bool)


def _placed(choices: np.ndarray, ran: np.ndarray) -> np.ndarray:
    """The decisions of the jobs that ran spread over the window's rows; a cancelled row is not sent (no decision)."""
    out = np.zeros(len(ran), dtype=bool)
    out[ran] = choices
    return out


class _Learner:
    """Predictions of one label for the tuning and evaluated rows (ascending), each from its own past."""

    def __init__(self, frame: pd.DataFrame, tune: np.ndarray, window: np.ndarray, model: str, weights: str,
                 given: tuple[int, float, int | None], seed: int, iterations: int) -> None:
        self.frame, self.model, self.weights = frame, model, weights
        self.given, self.seed, self.iterations = given, seed, iterations
        self.tuned: dict[str, dict[str, Any]] = {}  # per label, what the search found
        self.tune, self.fit_rows = tune, int(window[0])  # the embedding's ranges: the rows before the window
        self.rows = np.union1d(tune, window)

    def predict(self, label: str, promises: bool,
                progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The mean (0 where nothing was known) and the standard deviation for :attr:`rows`."""
        columns = [*COLUMNS, PROMISE] if promises else list(COLUMNS)
        X = self.frame[columns].fillna(0.0).to_numpy(dtype=np.float64)
        y = self.frame[label].to_numpy(dtype=np.float64)
        first = first_known(self.frame, label)
        categorical = list(range(len(CATEGORIES)))
        if self.model == "gbm":
            got = predict_boosted(X, y, first, self.rows, categorical, seed=self.seed, progress=progress)
            return np.nan_to_num(got.mean, nan=0.0), got.std
        k, width, memory = self.given
        tune = self.tune[np.isfinite(y[self.tune])]  # a cancelled job has no run time (nor a replay's wait)
        weight = correlation_weights(X[tune], y[tune], categorical)
        if self.weights == "search":
            found = tune_knn(X, y, first, tune, categorical, fit_rows=self.fit_rows, seed=self.seed,
                         maxiter=self.iterations, given=Setting(weight, k, width, memory))
            weight, k, width, memory = found.weights, found.k, found.width, found.memory
            self.tuned[label] = {**found.report(), "weights": dict(zip(columns, weight.tolist(), strict=True))}
        embedded = HeomEmbedding(weight.tolist(), categorical).fit(X[:self.fit_rows]).embed_together(X)
        got = predict_as_submitted(embedded, y, first, self.rows, n_neighbors=k, width=width, memory=memory,
                                   progress=progress)
        return np.nan_to_num(got.mean, nan=0.0), got.std


def _name(speed: Speed) -> str:
    return f"linear:{speed.overhead:g}" if isinstance(speed, LinearSpeed) else f"table:{speed.source}"


def _tuning_points(speeds: Sequence[Speed], procs: np.ndarray, wait: np.ndarray, run: np.ndarray,
                   wait_p: np.ndarray, run_p: np.ndarray, variance: np.ndarray) -> pd.DataFrame:
    """The tuning entries each scenario would send to the cloud: ``s``, the wait variance, and ``hit``.

    A hit is a job whose move saved time; the cutoff is the line over these points.
    """
    parts = []
    for speed in speeds:
        sent = decide(wait_p, run_p, variance, speed.cloud_run(procs, run_p), math.inf)
        gain = saved_time(sent, run, wait, speed.cloud_run(procs, run))
        parts.append(pd.DataFrame({"scenario": _name(speed), "s": speed.s, "variance": variance[sent],
                                   "hit": gain[sent] > 0}))
    return pd.concat(parts, ignore_index=True)


def _fit_cutoff(points: pd.DataFrame) -> tuple[Cutoff, str | None]:
    """The cutoff over the tuning points, or none and why (no hits, no misses, or hits less certain)."""
    try:
        return Cutoff.fit(points["s"].to_numpy(), points["variance"].to_numpy(), points["hit"].to_numpy()), None
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
