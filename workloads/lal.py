"""A LAL-like workload: the shape of the elastic RL paper's log (its Table 1), seeded (issue 34).

The paper's log (LAL's PBS log, an EGEE site, §4.2) is not public; its Table 1 and text give its
shape, and this generator draws one-core jobs with it:

- **Class mix**: 4,480 interactive jobs (run time below 900 s) and 5,020 batch jobs (47 % / 53 %).
- **Run times** (Table 1: interactive mean 160 s, median 190 s, std 108 s; batch mean 34,927 s,
  median 15,615 s, std 78,755 s). Interactive: with probability 0.3 uniform in ``[0, 10)`` s, else
  normal with mean 222 s and std 53 s redrawn until in ``[10, 900)`` — fitted to the mean, median
  and std (a sample of 400,000 gives 157, 192 and 109 s). Batch: lognormal with the median 15,615 s
  and the mean 34,927 s (sigma 1.269), redrawn below 900 s (a sample gives mean 35,400 s, median
  15,900 s, std 70,000 s: the tail is a little lighter than the log's).
- **Groups**: the VO of each burst drawn with the paper's target shares
  ``[0.53, 0.02, 0.17, 0.08, 0.01, 0.16, 0.03]``.
- **Arrivals**: bursty, as the paper's Figure 3 shows: "the service request is a bursty process:
  for instance, the peak at 300 amounts to 12 days of work for the 81 cores" in one 10,000 s bin.
  Jobs come in bursts of one class and one VO; a burst holds ``ceil(X)`` jobs, ``X`` Pareto with
  minimum 1 and tail index ``burst_alpha`` (1: the size of a burst is as likely to be 10-100 jobs
  as 100-1,000), its jobs spaced by exponential gaps (mean ``gap_mean_s`` = 2 s, a script's
  submissions); burst starts are uniform over the span (a Poisson process given its count). Chosen
  against Figure 3's peak: over eight seeds the busiest 10,000 s bin holds 2.2 / 3.8 / 11.6 days
  of the 81 cores' work (10th / 50th / 90th percentile; a tail index of 1.5 gives 0.6 / 0.9 / 4.5).
- **Load**: the span is chosen so that the work over ``cores`` x span is ``load`` (the paper: 0.56
  on 81 cores), i.e. about 45 days for the defaults.

Same seed, same workload; the class, run-time and arrival streams are separate children of
``SeedSequence(seed)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workloads import schema
from workloads.errors import ConfigError

#: The paper's target shares of its VOs (§4.2); the last aggregates the small ones.
LAL_SHARES = (0.53, 0.02, 0.17, 0.08, 0.01, 0.16, 0.03)


@dataclass(frozen=True, slots=True)
class LalParams:
    """The generator's parameters (see the module docstring; times in seconds)."""

    interactive: int = 4480
    batch: int = 5020
    load: float = 0.56
    cores: int = 81
    burst_alpha: float = 1.0
    gap_mean_s: float = 2.0

    def __post_init__(self) -> None:
        if self.interactive < 0 or self.batch < 0 or self.interactive + self.batch < 1:
            raise ConfigError(f"a LAL-like workload needs job counts >= 0 and at least one job, got "
                              f"{self.interactive} interactive and {self.batch} batch")
        if not (math.isfinite(self.load) and 0 < self.load <= 10):
            raise ConfigError(f"the load must lie in (0, 10], got {self.load}")
        if self.cores < 1:
            raise ConfigError(f"cores must be >= 1, got {self.cores}")
        if not (math.isfinite(self.burst_alpha) and self.burst_alpha > 0):
            raise ConfigError(f"the bursts' tail index must be a finite number > 0, got {self.burst_alpha}")
        if not (math.isfinite(self.gap_mean_s) and self.gap_mean_s >= 0):
            raise ConfigError(f"the mean gap must be a finite number >= 0 s, got {self.gap_mean_s}")


def interactive_runtimes(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` interactive run times (s, in ``[0, 900)``): the module docstring's mixture."""
    quick = rng.random(n) < 0.3
    out = np.where(quick, rng.uniform(0.0, 10.0, n), 0.0)
    todo = np.flatnonzero(~quick)
    while len(todo):
        draw = rng.normal(222.0, 53.0, len(todo))
        ok = (draw >= 10.0) & (draw < 900.0)
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return out


def batch_runtimes(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` batch run times (s, at least 900): lognormal with Table 1's median and mean."""
    mu, sigma = math.log(15615.0), math.sqrt(2.0 * math.log(34927.0 / 15615.0))
    out = np.empty(n)
    todo = np.arange(n)
    while len(todo):
        draw = np.exp(rng.normal(mu, sigma, len(todo)))
        ok = draw >= 900.0
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return out


def _bursts(n: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Sizes of bursts that hold exactly ``n`` jobs (the last cut short).

    Each is the ``ceil`` of a Pareto with minimum 1 and tail index ``alpha``.
    """
    sizes: list[int] = []
    total = 0
    while total < n:
        size = math.ceil(min(1.0 + rng.pareto(alpha), n - total))  # a Pareto draw can be inf for a tiny alpha
        sizes.append(size)
        total += size
    return np.array(sizes, dtype=np.int64)


def lal_workload(params: LalParams = LalParams(), *, seed: int = 0) -> pd.DataFrame:
    """An SWF-columned trace of one-core jobs with the paper's workload shape (see the module docstring)."""
    class_rng, run_rng, time_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    parts = []
    for interactive, count in ((True, params.interactive), (False, params.batch)):
        if count:
            sizes = _bursts(count, params.burst_alpha, class_rng)
            parts.append((sizes, np.full(len(sizes), interactive)))
    sizes = np.concatenate([p[0] for p in parts])
    kinds = np.concatenate([p[1] for p in parts])
    group = class_rng.choice(len(LAL_SHARES), size=len(sizes), p=np.array(LAL_SHARES) / sum(LAL_SHARES))
    job_kind = np.repeat(kinds, sizes)
    runtime = np.empty(len(job_kind))
    runtime[job_kind] = interactive_runtimes(int(job_kind.sum()), run_rng)
    runtime[~job_kind] = batch_runtimes(int((~job_kind).sum()), run_rng)
    runtime = np.round(runtime)
    span = float(runtime.sum()) / (params.load * params.cores)
    starts = time_rng.uniform(0.0, span, len(sizes))
    gaps = time_rng.exponential(params.gap_mean_s, len(job_kind)) if params.gap_mean_s > 0 else np.zeros(len(job_kind))
    elapsed = np.cumsum(gaps)
    offsets = elapsed - np.repeat(elapsed[np.cumsum(sizes) - sizes], sizes)  # 0 for each burst's first job
    submit = np.floor(np.repeat(starts, sizes) + offsets)
    order = np.argsort(submit, kind="stable")
    n = len(submit)
    columns: dict[str, object] = dict.fromkeys(schema.COLUMN_NAMES, np.full(n, -1.0))
    columns.update(job_id=np.arange(1, n + 1, dtype=np.float64), submit_time=submit[order], run_time=runtime[order],
                   allocated_procs=np.ones(n), requested_procs=np.ones(n), status=np.ones(n),
                   group_id=np.repeat(group, sizes)[order].astype(np.float64) + 1.0)
    return schema.from_float_columns(columns)
