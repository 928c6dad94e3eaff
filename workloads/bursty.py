"""A synthetic bursty multi-user HTC load, scaled by its number of users (cloud-cluster paper §5, S1-S5).

Each user alternates between quiet intervals and bursts (the paper's "intervals of no job submissions
interleaved with intervals of job submissions"): quiet and burst lengths are exponential, and during
a burst the user submits a Poisson stream at the user's own rate. Run times are lognormal around the
user's own median. User ``k`` always draws from child ``k`` of ``SeedSequence(seed)``, so the load at
scale 2 holds exactly the users of scale 1 plus as many more: scales 1-5 are the paper's idea of one
to five times the load by adding users.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workloads import schema
from workloads.errors import ConfigError, require_finite


@dataclass(frozen=True, slots=True)
class BurstyParams:
    """The generator's parameters (times in hours unless named otherwise)."""

    users: int = 10
    days: float = 14.0
    burst_mean_h: float = 3.0
    quiet_mean_h: float = 30.0
    rate_median_per_h: float = 30.0
    rate_sigma: float = 1.0
    runtime_median_s: float = 1200.0
    runtime_user_sigma: float = 0.8
    runtime_sigma: float = 1.2
    runtime_max_s: float = 3 * 86400.0

    def __post_init__(self) -> None:
        for name, least, strict in _LIMITS:
            require_finite(f"BurstyParams.{name}", getattr(self, name), least=least, strict=strict)
        for name in ("users", "runtime_max_s"):  # a count of users; run times are whole seconds
            if getattr(self, name) != int(getattr(self, name)):
                raise ConfigError(f"BurstyParams.{name} must be a whole number, got {getattr(self, name)!r}")


#: (field, least value, whether the least is excluded) of :class:`BurstyParams`.
_LIMITS = (("users", 1, False), ("days", 0, True), ("burst_mean_h", 0, True), ("quiet_mean_h", 0, True),
           ("rate_median_per_h", 0, False), ("rate_sigma", 0, False), ("runtime_median_s", 0, True),
           ("runtime_user_sigma", 0, False), ("runtime_sigma", 0, False), ("runtime_max_s", 1, False))


def bursty_workload(scale: float = 1.0, *, seed: int = 0, params: BurstyParams = BurstyParams()) -> pd.DataFrame:
    """An SWF-columned trace of ``round(params.users * scale)`` bursty users (see the module docstring)."""
    if not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"scale must be a finite number > 0, got {scale}")
    n_users = max(1, round(params.users * scale))
    streams = np.random.SeedSequence(seed).spawn(n_users)
    parts = [_user(np.random.default_rng(s), k + 1, params) for k, s in enumerate(streams)]
    submit = np.concatenate([p[0] for p in parts])
    run = np.concatenate([p[1] for p in parts])
    user = np.concatenate([p[2] for p in parts])
    order = np.argsort(submit, kind="stable")
    n = len(submit)
    columns: dict[str, object] = dict.fromkeys(schema.COLUMN_NAMES, np.full(n, -1.0))
    columns.update(job_id=np.arange(1, n + 1, dtype=np.float64), submit_time=submit[order], run_time=run[order],
                   allocated_procs=np.ones(n), requested_procs=np.ones(n), status=np.ones(n),
                   user_id=user[order])
    return schema.from_float_columns(columns)


def _user(rng: np.random.Generator, uid: int, p: BurstyParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One user's submit times (integer s), run times (s, >= 1) and user id column."""
    horizon = p.days * 86400.0
    rate = p.rate_median_per_h * float(np.exp(rng.normal(0.0, p.rate_sigma))) / 3600.0
    median = p.runtime_median_s * float(np.exp(rng.normal(0.0, p.runtime_user_sigma)))
    t = rng.exponential(p.quiet_mean_h * 3600.0) * rng.random()  # start part-way into a quiet interval
    times = []
    while t < horizon:
        end = min(t + rng.exponential(p.burst_mean_h * 3600.0), horizon)
        n = rng.poisson(rate * (end - t))
        times.append(np.sort(rng.uniform(t, end, n)))
        t = end + rng.exponential(p.quiet_mean_h * 3600.0)
    submit = np.floor(np.concatenate(times)) if times else np.empty(0)
    run = np.clip(np.round(median * np.exp(rng.normal(0.0, p.runtime_sigma, len(submit)))), 1, p.runtime_max_s)
    return submit, run, np.full(len(submit), float(uid))
