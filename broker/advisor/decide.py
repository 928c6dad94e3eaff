"""The advisor's decision: speed models, the uncertainty cutoff ``C(s)``, saved time and the oracle (``SPEC.md`` §8).

A job goes to the cloud iff its predicted local turnaround beats the cloud's run time and the
prediction is certain enough: ``w_p + r_p > r_cloud(j, r_p)`` and ``sigma_w^2 < C(s)``. Its saved time
is ``T = r_local + w_actual - r_cloud`` when sent, 0 when kept. The oracle knows the actual wait and
run time and sends a job exactly when that saves time, so no advisor saves more on any job.

``C(s) = alpha exp(beta s)`` is the straight line ``log sigma^2 = beta s + log alpha`` that best
separates past hits (a job for which the cloud was the right call) from misses, fitted by logistic
regression on ``(s, log sigma^2)``. Two choices make the line the data's, not the fit's: both axes
are standardised first, so the line does not depend on the units of ``s`` (the default L2 penalty on
raw units, with ``s`` in 0.01..10 and ``log sigma^2`` in ~5..23, shrank the weight of ``s`` and put
the boundary below the smallest overhead: on SDSC-BLUE the advisor with the cutoff sent almost
nothing); and hits and misses weigh the same in total, since their pooled shares only reflect how
many slow scenarios were pooled.

When no such line exists (the fitted weight of ``log sigma^2`` is not negative: the hits are not the
more certain predictions, as on most shared traces), the paper is silent; acting on every
prediction then loses much time at large ``s``. The cutoff falls back to the limit of the line as
the variance's weight goes to 0: a cut on ``s`` alone, from the same classifier fitted on ``s``
only. Below ``s_max`` every prediction is acted on, from it on none. When ``s`` does not separate
either (hits at the larger ``s``, or one scenario), there is no cutoff.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from workloads.errors import ConfigError, InputError

#: The linear model's overheads ``o`` in the paper's scenarios.
PAPER_OVERHEADS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 10.0)


@dataclass(frozen=True, slots=True)
class LinearSpeed:
    """``r_cloud = (o * procs + 1) * r_local``: the cloud slows a job by ``o`` per processor."""

    overhead: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.overhead) and self.overhead >= 0):
            raise ConfigError(f"the overhead o must be a finite number >= 0, got {self.overhead}")

    def cloud_run(self, procs: np.ndarray, run: np.ndarray) -> np.ndarray:
        """The run time in the cloud of jobs of ``procs`` processors that run ``run`` seconds here."""
        return (self.overhead * np.asarray(procs, dtype=np.float64) + 1.0) * np.asarray(run, dtype=np.float64)

    @property
    def s(self) -> float:
        """The scenario's relative speed, the variable of the cutoff."""
        return self.overhead


@dataclass(frozen=True, slots=True)
class TableSpeed:
    """Measured ratios cloud / local run time by processor count; a job takes the row of the most processors <= its."""

    procs: tuple[int, ...]
    ratios: tuple[float, ...]
    source: str = "table"

    @classmethod
    def read(cls, path: str | Path) -> TableSpeed:
        """A CSV file ``procs,ratio`` (a header line, then one row per count); errors name file, line and field."""
        path = Path(path)
        rows: dict[int, float] = {}
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = [h.strip() for h in next(reader, [])]
            if header != ["procs", "ratio"]:
                raise InputError(f"{path}:1: the header must be 'procs,ratio', got {','.join(header)!r}")
            for line, row in enumerate(reader, start=2):
                if not row or not "".join(row).strip():
                    continue
                if len(row) != 2:
                    raise InputError(f"{path}:{line}: {len(row)} fields, expected 2 (procs,ratio)")
                procs, ratio = _positive_int(row[0], path, line), _ratio(row[1], path, line)
                if procs in rows:
                    raise InputError(f"{path}:{line}: field 'procs': {procs} listed twice")
                rows[procs] = ratio
        if not rows:
            raise InputError(f"{path}: no rows")
        order = sorted(rows)
        return cls(tuple(order), tuple(rows[p] for p in order), str(path))

    def cloud_run(self, procs: np.ndarray, run: np.ndarray) -> np.ndarray:
        """The run time in the cloud (a job with fewer processors than the first row takes the first row)."""
        row = np.maximum(np.searchsorted(self.procs, np.asarray(procs), side="right") - 1, 0)
        return np.asarray(self.ratios)[row] * np.asarray(run, dtype=np.float64)

    @property
    def s(self) -> float:
        """The scenario's relative speed: the mean ratio less 1 (0 when the cloud is as fast)."""
        return float(np.mean(self.ratios)) - 1.0


def _positive_int(text: str, path: Path, line: int) -> int:
    text = text.strip()
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise InputError(f"{path}:{line}: field 'procs': {text!r} is not an integer >= 1")
    return int(text)


def _ratio(text: str, path: Path, line: int) -> float:
    try:
        value = float(text) if "_" not in text else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{path}:{line}: field 'ratio': {text.strip()!r} is not a finite number > 0")
    return value


@dataclass(frozen=True, slots=True)
class Cutoff:
    """``C(s) = alpha exp(beta s)`` below ``s_max``, 0 from it; the default is no cutoff: every prediction counts.

    An infinite ``log alpha`` stands for no limit on the variance (below ``s_max``).
    """

    log_alpha: float = math.inf
    beta: float = 0.0
    s_max: float = math.inf

    def __call__(self, s: float) -> float:
        """The largest wait variance acted on at relative speed ``s`` (strictly below it)."""
        if s >= self.s_max:
            return 0.0
        return math.exp(self.log_alpha + self.beta * s) if math.isfinite(self.log_alpha) else math.inf

    @classmethod
    def fit(cls, s: np.ndarray, variance: np.ndarray, hit: np.ndarray) -> Cutoff:
        """The line in ``(s, log variance)`` that best separates hits (below) from misses (above)."""
        s, variance, hit = np.asarray(s, float), np.asarray(variance, float), np.asarray(hit, bool)
        usable = np.isfinite(variance) & (variance > 0)
        if hit[usable].all() or not hit[usable].any():
            raise ConfigError("fitting the cutoff needs both hits and misses with a finite, positive variance")
        X = np.column_stack([s[usable], np.log(variance[usable])])
        scaler = StandardScaler().fit(X)  # a constant column (one scenario) keeps scale 1, and its weight is 0
        model = LogisticRegression(class_weight="balanced").fit(scaler.transform(X), hit[usable])
        # back to raw units: w . (x - mean) / scale + b  =  (w / scale) . x + b - w . mean / scale
        w_s, w_var = model.coef_[0] / scaler.scale_
        w0 = float(model.intercept_[0] - model.coef_[0] @ (scaler.mean_ / scaler.scale_))
        if not w_var < 0:
            return cls(s_max=_speed_cut(s[usable], hit[usable]))
        # w0 + w_s s + w_var log var = 0  <=>  log var = -(w0 + w_s s) / w_var
        return cls(log_alpha=float(-w0 / w_var), beta=float(-w_s / w_var))


def _speed_cut(s: np.ndarray, hit: np.ndarray) -> float:
    """The ``s`` from which misses outweigh hits (the classifier on ``s`` alone), when the hits lie at smaller ``s``."""
    if np.ptp(s) == 0:
        raise ConfigError("hits are not the more certain predictions and there is one speed: no cutoff separates them")
    mean, scale = s.mean(), s.std()
    model = LogisticRegression(class_weight="balanced").fit(((s - mean) / scale)[:, None], hit)
    w, b = float(model.coef_[0, 0]), float(model.intercept_[0])
    if not w < 0:
        raise ConfigError("hits are neither the more certain predictions nor those at the smaller speeds: "
                          "no cutoff separates them")
    return float(mean - b * scale / w)  # w (s - mean) / scale + b = 0


def decide(wait_pred: np.ndarray, run_pred: np.ndarray, wait_var: np.ndarray, cloud_run: np.ndarray,
           limit: float) -> np.ndarray:
    """True where the advisor sends a job to the cloud (module docstring); ``limit`` is ``C(s)``.

    ``cloud_run`` is the cloud's run time of the *predicted* local run time; :func:`saved_time` then
    takes the cloud's run time of the actual one.
    """
    return (np.asarray(wait_pred) + np.asarray(run_pred) > np.asarray(cloud_run)) & (np.asarray(wait_var) < limit)


def saved_time(to_cloud: np.ndarray, run: np.ndarray, wait: np.ndarray, cloud_run: np.ndarray) -> np.ndarray:
    """``T = r_local + w_actual - r_cloud`` for the jobs sent to the cloud, 0 for those kept (may be negative)."""
    return np.where(np.asarray(to_cloud), np.asarray(run) + np.asarray(wait) - np.asarray(cloud_run), 0.0)


def oracle(run: np.ndarray, wait: np.ndarray, cloud_run: np.ndarray) -> np.ndarray:
    """The oracle's choice: the cloud exactly when it saves time, knowing the actual wait and run time."""
    return np.asarray(run) + np.asarray(wait) > np.asarray(cloud_run)
