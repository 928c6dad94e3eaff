"""Synthetic rigid parallel jobs from the Lublin–Feitelson workload model.

Implements U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", J. Parallel Distrib. Comput. 63(11):1105-1122, 2003, as coded in
the authors' reference program ``m_lublin99.c`` (Parallel Workloads Archive). Three parts:

* **Job size** (``calc_number_of_nodes``): a job is serial with probability ``serial_prob``;
  otherwise ``log2(size)`` follows a two-stage uniform on ``[ulow, umed]`` (probability ``uprob``)
  or ``[umed, uhi]``. The *same* uniform draw ``u`` decides both: ``u <= serial_prob`` is serial,
  ``u <= serial_prob + pow2_prob`` rounds ``log2(size)`` to an integer (a power of two), so
  ``pow2_prob`` is a fraction of *all* jobs, ``pow2_prob / (1 - serial_prob)`` of parallel ones.
* **Run time** (``time_from_nodes``): ``log(run time)`` is hyper-gamma, i.e. gamma(a1, b1) with
  probability ``p`` and gamma(a2, b2) otherwise, ``p = clip(pa * size + pb, 0, 1)``. The reference
  program is linear in the *number of nodes* (not its log2); a draw above ``max_log_runtime`` is
  redrawn (component choice included). Run time is ``floor(exp(x))`` seconds, hence >= 1.
* **Arrivals** (``arrive_init``, ``calc_next_arrive``, ``arrive``): the day has 48 half-hour
  buckets; bucket ``k`` gets weight ``w_k`` = the gamma(anum, bnum) probability of a unit interval
  around its index, counted cyclically from ``cyclic_day_start``, normalised to mean 1. A job brings
  ``exp(g) / 1800`` "points", ``g ~ gamma(aarr * arar, barr)`` redrawn above
  ``max_log_interarrival``; time advances through bucket ``k`` at ``w_k`` points per 1800 s. So the
  cumulative points map to time through a piecewise-linear clock, which is how it is vectorised
  here, and on average ``w_k / 48`` of the arrivals fall in bucket ``k``.

**Job types** (``INCLUDE_JOBS_TYPE``): by default, as in the reference program, interactive and
batch jobs come from two independent arrival streams with their own parameters; the merged stream
takes whichever stream's next job comes first (ties go to interactive). The type is written to the
SWF ``queue`` field (0 interactive, 1 batch) as the reference program does.
``LublinParams.typeless()`` gives the model's single "whole sample" parameter set and one stream
(queue 0).

**Machine size**: ``umed`` and ``uhi`` are the reference values for a ``reference_nodes`` = 128
node machine (``UHI = log2(128)``); for ``nodes`` both shift by ``log2(nodes / 128)``, keeping their
gap (the program advises ``UMED = UHI - 2.5``, within 1.5-3.5); ``ulow`` (smallest parallel job)
stays. Sizes are capped at ``nodes``.

**Users**: the model has none. Each job's user is drawn independently from ``n_users`` users with
Zipf-like probabilities proportional to ``rank ** -user_zipf_exponent`` (this project's choice).

Differences from the C program: NumPy's gamma sampler replaces Jain's method (same distribution);
times accumulate in floating point and are floored once, where the C program truncates after each
job (less than 1 s per job). Complexity: O(n log n) time, O(n) memory.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from workloads import schema
from workloads.errors import ConfigError

logger = logging.getLogger(__name__)

#: Job types: indices of the per-type tuples of :class:`LublinParams` (reference ACTIVE, BATCH).
INTERACTIVE = 0
BATCH = 1
#: Half-hour buckets in a day (reference ``BUCKETS``) and their length in seconds.
BUCKETS = 48
SECONDS_IN_BUCKET = 86400 // BUCKETS
_MAX_REDRAW_ROUNDS = 200
_QUADRATURE_POINTS = 32

Pair = tuple[float, float]


@dataclass(frozen=True, slots=True)
class LublinParams:
    """Every parameter of the model; per-type tuples are ``(interactive, batch)``.

    Values are the ``#define`` constants of ``m_lublin99.c`` (named in the comments; ``_ACTIVE`` is
    interactive), fitted in the paper to the SDSC Paragon, CTC SP2 and KTH SP2 logs. Sizes in
    ``log2(processors)``, run times and inter-arrivals in ``log(seconds)``.
    """

    # Job size: serial and power-of-two probabilities, two-stage uniform on log2(size).
    serial_prob: Pair = (0.1541, 0.2927)  # SERIAL_PROB_ACTIVE, SERIAL_PROB_BATCH
    pow2_prob: Pair = (0.625, 0.6686)  # POW2_PROB_ACTIVE, POW2_PROB_BATCH
    ulow: Pair = (1.0, 1.2)  # ULOW_ACTIVE, ULOW_BATCH
    umed: Pair = (3.0, 5.0)  # UMED_ACTIVE, UMED_BATCH (for reference_nodes)
    uhi: Pair = (5.5, 7.0)  # UHI_ACTIVE, UHI_BATCH (for reference_nodes)
    uprob: Pair = (0.705, 0.875)  # UPROB_ACTIVE, UPROB_BATCH
    reference_nodes: int = 128  # 2**UHI_BATCH: machine size the umed/uhi values are for
    # Run time: hyper-gamma on log(seconds), p = pa * size + pb.
    a1: Pair = (3.8351, 6.57)  # A1_ACTIVE, A1_BATCH (gamma shape)
    b1: Pair = (0.6605, 0.823)  # B1_ACTIVE, B1_BATCH (gamma scale)
    a2: Pair = (7.073, 639.1)  # A2_ACTIVE, A2_BATCH
    b2: Pair = (0.6856, 0.0156)  # B2_ACTIVE, B2_BATCH
    pa: Pair = (-0.0118, -0.003)  # PA_ACTIVE, PA_BATCH (per processor)
    pb: Pair = (0.9156, 0.6986)  # PB_ACTIVE, PB_BATCH
    max_log_runtime: float = 12.0  # TOO_MUCH_TIME: exp(12) s, about 1.9 days
    # Arrivals: gamma(aarr * arar, barr) on log(seconds); daily cycle gamma(anum, bnum) on buckets.
    aarr: Pair = (6.5510, 6.0415)  # AARR_ACTIVE, AARR_BATCH
    barr: Pair = (0.6621, 0.8531)  # BARR_ACTIVE, BARR_BATCH
    anum: Pair = (8.9186, 6.1271)  # ANUM_ACTIVE, ANUM_BATCH
    bnum: Pair = (3.6680, 5.2740)  # BNUM_ACTIVE, BNUM_BATCH
    arar: Pair = (0.9797, 1.0519)  # ARAR_ACTIVE, ARAR_BATCH (arrive rush-to-all ratio)
    max_log_interarrival: float = 13.0  # TOO_MUCH_ARRIVE_TIME: exp(13) s, about 5 days
    cyclic_day_start: int = 11  # CYCLIC_DAY_START (bucket index where the fitted day begins)
    start_hour: int = 0  # START: hour of day at time 0
    job_types: bool = True  # INCLUDE_JOBS_TYPE: two streams (True) or one typeless stream
    # Users: not part of the model (this project's choice).
    n_users: int = 64
    user_zipf_exponent: float = 1.0

    def __post_init__(self) -> None:
        if not 0 <= self.start_hour < 24:
            raise ConfigError(f"start_hour must be in 0..23, got {self.start_hour}")
        if self.n_users < 1 or self.reference_nodes < 1:
            raise ConfigError("n_users and reference_nodes must be >= 1")

    @classmethod
    def typeless(cls) -> LublinParams:
        """Return the "whole sample" parameters (reference ``INCLUDE_JOBS_TYPE 0``), one stream."""
        return replace(
            cls(),
            serial_prob=_both(0.244),  # SERIAL_PROB
            pow2_prob=_both(0.576),  # POW2_PROB
            ulow=_both(0.8),  # ULOW
            umed=_both(4.5),  # UMED
            uhi=_both(7.0),  # UHI
            uprob=_both(0.86),  # UPROB
            a1=_both(4.2),  # A1
            b1=_both(0.94),  # B1
            a2=_both(312.0),  # A2
            b2=_both(0.03),  # B2
            pa=_both(-0.0054),  # PA
            pb=_both(0.78),  # PB
            aarr=_both(10.2303),  # AARR
            barr=_both(0.4871),  # BARR
            anum=_both(8.1737),  # ANUM
            bnum=_both(3.9631),  # BNUM
            arar=_both(1.0225),  # ARAR
            job_types=False,
        )

    def size_bounds(self, kind: int, nodes: int) -> tuple[float, float, float]:
        """``(ulow, umed, uhi)`` in log2(processors) for a job type on a ``nodes`` machine.

        ``umed`` and ``uhi`` shift by ``log2(nodes / reference_nodes)``; both are kept >= ``ulow``.
        """
        shift = math.log2(nodes / self.reference_nodes)
        low = self.ulow[kind]
        med = max(self.umed[kind] + shift, low)
        return low, med, max(self.uhi[kind] + shift, med)


def _both(value: float) -> Pair:
    return (value, value)


DEFAULT_PARAMS = LublinParams()


def daily_weights(params: LublinParams, kind: int) -> np.ndarray:
    """Relative arrival intensity of each half-hour bucket of the day (reference ``arrive_init``).

    Bucket ``k`` (``k * 1800`` s after midnight) gets the gamma(``anum``, ``bnum``) probability of
    ``[i - 0.5, i + 0.5]`` with ``i = cyclic_day_start + (k + 1 - cyclic_day_start) mod 48``; the
    weights are normalised to mean 1.

    Returns
    -------
    np.ndarray
        48 float64 weights, mean 1.
    """
    k = np.arange(BUCKETS)
    start = params.cyclic_day_start
    centre = start + (k + 1 - start) % BUCKETS
    abscissae, quad_weights = np.polynomial.legendre.leggauss(_QUADRATURE_POINTS)
    x = centre[:, None] + 0.5 * abscissae[None, :]
    mass = 0.5 * (_gamma_pdf(x, params.anum[kind], params.bnum[kind]) @ quad_weights)
    return mass / mass.mean()


def _gamma_pdf(x: np.ndarray, shape: float, scale: float) -> np.ndarray:
    log_pdf = (shape - 1) * np.log(x) - x / scale - math.lgamma(shape) - shape * math.log(scale)
    return np.exp(log_pdf)


def _truncated_hyper_gamma(
    rng: np.random.Generator,
    p: np.ndarray,
    first: tuple[np.ndarray, np.ndarray],
    second: tuple[np.ndarray, np.ndarray],
    upper: float,
) -> np.ndarray:
    """Draw gamma(first) with probability ``p``, else gamma(second); redraw both above ``upper``.

    ``first`` and ``second`` are per-draw (shape, scale) arrays (reference ``hyper_gamma`` inside
    the rejection loops of ``time_from_nodes`` and ``calc_next_arrive``).
    """
    out = np.empty(len(p))
    todo = np.arange(len(p))
    for _ in range(_MAX_REDRAW_ROUNDS):
        if todo.size == 0:
            return out
        pick = rng.random(todo.size) <= p[todo]
        shape = np.where(pick, first[0][todo], second[0][todo])
        scale = np.where(pick, first[1][todo], second[1][todo])
        draw = rng.gamma(shape, scale)
        ok = draw <= upper
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    if todo.size:
        raise ConfigError(f"gamma parameters put almost no mass below the cut-off {upper}")
    return out


def _stream_arrivals(
    rng: np.random.Generator, n: int, params: LublinParams, kind: int
) -> np.ndarray:
    """Arrival times (float seconds since time 0) of ``n`` jobs of one type's stream."""
    shape = np.full(n, params.aarr[kind] * params.arar[kind])
    scale = np.full(n, params.barr[kind])
    log_gap = _truncated_hyper_gamma(
        rng, np.ones(n), (shape, scale), (shape, scale), params.max_log_interarrival
    )
    points = np.cumsum(np.exp(log_gap) / SECONDS_IN_BUCKET)
    return _points_to_seconds(points, daily_weights(params, kind), params.start_hour)


def _points_to_seconds(points: np.ndarray, weights: np.ndarray, start_hour: int) -> np.ndarray:
    """Invert the piecewise-linear clock: bucket ``k`` consumes ``weights[k]`` points in 1800 s."""
    edges = np.concatenate(([0.0], np.cumsum(weights)))
    per_day = edges[-1]
    first_bucket = start_hour * BUCKETS // 24
    total = points + edges[first_bucket]
    day = np.floor(total / per_day)
    rest = total - day * per_day
    bucket = np.clip(np.searchsorted(edges, rest, side="right") - 1, 0, BUCKETS - 1)
    within = (rest - edges[bucket]) / weights[bucket]
    return (day * BUCKETS + bucket + within - first_bucket) * SECONDS_IN_BUCKET


def _arrivals(
    rng: np.random.Generator, n: int, params: LublinParams
) -> tuple[np.ndarray, np.ndarray]:
    """Merge the streams: arrival times (s) and types of the first ``n`` jobs (``arrive``)."""
    if not params.job_types:
        return _stream_arrivals(rng, n, params, INTERACTIVE), np.full(n, INTERACTIVE)
    times = np.concatenate([_stream_arrivals(rng, n, params, k) for k in (INTERACTIVE, BATCH)])
    kinds = np.repeat([INTERACTIVE, BATCH], n)
    order = np.lexsort((kinds, times))[:n]
    return times[order], kinds[order]


def _sizes(
    rng: np.random.Generator, kinds: np.ndarray, params: LublinParams, nodes: int
) -> np.ndarray:
    """Processors per job (reference ``calc_number_of_nodes`` and ``two_stage_uniform``)."""
    serial_prob = np.asarray(params.serial_prob)[kinds]
    u = rng.random(len(kinds))
    serial = u <= serial_prob
    pow2 = ~serial & (u <= serial_prob + np.asarray(params.pow2_prob)[kinds])
    bounds = np.array([params.size_bounds(k, nodes) for k in (INTERACTIVE, BATCH)])[kinds]
    lower = rng.random(len(kinds)) <= np.asarray(params.uprob)[kinds]
    low = np.where(lower, bounds[:, 0], bounds[:, 1])
    high = np.where(lower, bounds[:, 1], bounds[:, 2])
    log2_size = low + rng.random(len(kinds)) * (high - low)
    log2_size = np.where(pow2, np.floor(log2_size + 0.5), log2_size)
    size = np.floor(np.exp2(log2_size) + 0.5)
    return np.clip(np.where(serial, 1.0, size), 1, nodes)


def _run_times(
    rng: np.random.Generator, kinds: np.ndarray, sizes: np.ndarray, params: LublinParams
) -> np.ndarray:
    """Run times in whole seconds >= 1 (reference ``time_from_nodes``)."""
    p = np.clip(np.asarray(params.pa)[kinds] * sizes + np.asarray(params.pb)[kinds], 0.0, 1.0)
    first = (np.asarray(params.a1)[kinds], np.asarray(params.b1)[kinds])
    second = (np.asarray(params.a2)[kinds], np.asarray(params.b2)[kinds])
    log_run = _truncated_hyper_gamma(rng, p, first, second, params.max_log_runtime)
    return np.floor(np.exp(log_run))


def _users(rng: np.random.Generator, n: int, params: LublinParams) -> np.ndarray:
    """User ids 1..n_users, Zipf-like: ``Pr(user = k)`` proportional to ``k ** -exponent``."""
    weights = np.arange(1, params.n_users + 1, dtype=np.float64) ** -params.user_zipf_exponent
    return rng.choice(params.n_users, size=n, p=weights / weights.sum()) + 1.0


def generate_lublin(
    n_jobs: int,
    *,
    nodes: int = 256,
    seed: int | np.random.SeedSequence | None,
    params: LublinParams = DEFAULT_PARAMS,
) -> pd.DataFrame:
    """Generate a synthetic trace from the Lublin–Feitelson model (see the module docstring).

    Parameters
    ----------
    n_jobs : int
        Number of jobs (>= 0).
    nodes : int
        Processors of the machine (>= 1); sizes are scaled to it and never exceed it.
    seed : int, SeedSequence or None
        Seed of the one generator this call uses.
    params : LublinParams
        Model parameters (default: the reference program's batch + interactive parameters).

    Returns
    -------
    pd.DataFrame
        SWF columns and dtypes (:mod:`workloads.schema`): job ids 1..n in arrival order; submit
        time in integer seconds since time 0, which is ``params.start_hour`` o'clock (midnight by
        default); run time in seconds (>= 1); allocated = requested processors = size; status 1
        (completed); user id from the Zipf-like user model; queue = job type (0 interactive,
        1 batch); all other fields unknown (``pd.NA``).
    """
    if n_jobs < 0:
        raise ConfigError(f"n_jobs must be >= 0, got {n_jobs}")
    if nodes < 1:
        raise ConfigError(f"nodes must be >= 1, got {nodes}")
    rng = np.random.default_rng(seed)
    submit, kinds = _arrivals(rng, n_jobs, params)
    sizes = _sizes(rng, kinds, params, nodes)
    run = _run_times(rng, kinds, sizes, params)
    users = _users(rng, n_jobs, params)
    logger.debug("generated %d Lublin jobs on %d nodes", n_jobs, nodes)
    return _to_frame(np.floor(submit), run, sizes, users, kinds)


def _to_frame(
    submit: np.ndarray, run: np.ndarray, sizes: np.ndarray, users: np.ndarray, kinds: np.ndarray
) -> pd.DataFrame:
    n = len(submit)
    unknown = np.full(n, -1.0)
    columns: dict[str, object] = dict.fromkeys(schema.COLUMN_NAMES, unknown)
    columns.update(
        job_id=np.arange(1, n + 1, dtype=np.float64),
        submit_time=submit,
        run_time=run,
        allocated_procs=sizes,
        requested_procs=sizes,
        status=np.ones(n),
        user_id=users,
        queue=kinds.astype(np.float64),
    )
    return schema.from_float_columns(columns)


def default_workload(*, seed: int = 0, n_jobs: int = 2000) -> pd.DataFrame:
    """Return the embedded default trace for the README's first command, demos and notebooks.

    The Lublin–Feitelson model with its default (batch + interactive) parameters on a 256-node
    machine: ``generate_lublin(n_jobs, nodes=256, seed=seed)``. 2,000 jobs span about 11 days and
    take a few milliseconds to generate.
    """
    return generate_lublin(n_jobs, nodes=256, seed=seed)
