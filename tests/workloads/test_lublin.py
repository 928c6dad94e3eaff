"""The Lublin–Feitelson generator against the model's own values.

Every expected figure below is computed here from the model's parameters (the ``LublinParams``
fields, i.e. the reference program's constants) by direct numerical integration of the model's
densities, independently of the generator's code; tolerances are a few standard errors of a
50,000-job sample. None is a number read off a generated trace.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.conftest import trace_path
from workloads import schema
from workloads.errors import ConfigError
from workloads.lublin import (
    BATCH,
    DEFAULT_PARAMS,
    INTERACTIVE,
    LublinParams,
    _gamma_pdf,
    _points_to_seconds,
    _run_times,
    _sizes,
    _to_frame,
    _truncated_hyper_gamma,
    _users,
    daily_weights,
    default_workload,
    generate_lublin,
)

N_JOBS = 50_000
NODES = 256
SEED = 2003
Z_MAX = 4.0  # standard errors allowed for a single statistic
KINDS = (INTERACTIVE, BATCH)


@dataclass(frozen=True)
class Sample:
    params: LublinParams
    frame: pd.DataFrame
    kind: np.ndarray
    size: np.ndarray
    run: np.ndarray
    submit: np.ndarray


def _sample(params: LublinParams, n: int = N_JOBS, seed: int = SEED) -> Sample:
    frame = generate_lublin(n, nodes=NODES, seed=seed, params=params)
    return Sample(
        params=params,
        frame=frame,
        kind=frame["queue"].to_numpy(np.int64),
        size=frame["allocated_procs"].to_numpy(np.int64),
        run=frame["run_time"].to_numpy(np.float64),
        submit=frame["submit_time"].to_numpy(np.float64),
    )


@pytest.fixture(scope="module", params=["typed", "typeless"])
def sample(request: pytest.FixtureRequest) -> Sample:
    params = DEFAULT_PARAMS if request.param == "typed" else LublinParams.typeless()
    return _sample(params)


# ---------------------------------------------------------------- reference values from the model


def gamma_pdf(x: np.ndarray, shape: float, scale: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        log_pdf = (shape - 1) * np.log(x) - x / scale - math.lgamma(shape) - shape * math.log(scale)
    return np.exp(log_pdf)


def integrate(values: np.ndarray, x: np.ndarray) -> float:
    return float(np.trapezoid(values, x))


def model_bucket_shares(params: LublinParams, kind: int) -> np.ndarray:
    """Share of arrivals per half-hour bucket, literally as ``arrive_init`` weighs them."""
    start = params.cyclic_day_start
    mass = np.zeros(48)
    for i in range(start, start + 48):
        x = np.linspace(i - 0.5, i + 0.5, 2001)
        mass[(i - 1) % 48] = integrate(gamma_pdf(x, params.anum[kind], params.bnum[kind]), x)
    return mass / mass.sum()


def model_hour_shares(params: LublinParams, kind: int) -> np.ndarray:
    return model_bucket_shares(params, kind).reshape(24, 2).sum(axis=1)


def truncated_moments(
    shape: float, scale: float, upper: float, fn: Callable[[np.ndarray], np.ndarray]
) -> tuple[float, float]:
    """``E[fn(X) | X <= upper]`` and ``E[fn(X)**2 | X <= upper]`` for X ~ gamma(shape, scale)."""
    x = np.linspace(1e-9, upper, 1_300_001)
    pdf = gamma_pdf(x, shape, scale)
    values = fn(x)
    mass = integrate(pdf, x)
    return integrate(values * pdf, x) / mass, integrate(values**2 * pdf, x) / mass


def gap_moments(params: LublinParams, kind: int) -> tuple[float, float]:
    """First two moments (s, s**2) of one stream's gap ``exp(g)``, g ~ gamma(aarr * arar, barr)."""
    shape = params.aarr[kind] * params.arar[kind]
    return truncated_moments(shape, params.barr[kind], params.max_log_interarrival, np.exp)


def log_floor_exp(x: np.ndarray) -> np.ndarray:
    """``log(run time)`` for a hyper-gamma draw x (run time is ``floor(exp(x))`` seconds)."""
    return np.log(np.floor(np.exp(x)))


def expected_mean_log_runtime(params: LublinParams, kind: np.ndarray, size: np.ndarray) -> float:
    """Mean of log(run time) over the jobs, each job's hyper-gamma mixed with its own p."""
    x = np.linspace(1e-9, params.max_log_runtime, 1_200_001)
    per_job = np.empty(len(kind))
    for k in KINDS:
        parts = []
        for shape, scale in ((params.a1[k], params.b1[k]), (params.a2[k], params.b2[k])):
            pdf = gamma_pdf(x, shape, scale)
            parts.append((integrate(log_floor_exp(x) * pdf, x), integrate(pdf, x)))
        (m1, f1), (m2, f2) = parts
        mine = kind == k
        p = np.clip(params.pa[k] * size[mine] + params.pb[k], 0.0, 1.0)
        per_job[mine] = (p * m1 + (1 - p) * m2) / (p * f1 + (1 - p) * f2)
    return float(per_job.mean())


def chance_power_of_two(low: float, med: float, high: float, uprob: float) -> float:
    """Pr(round(2**U) is a power of two) for U two-stage uniform on [low, med], [med, high]."""

    def overlap(a: float, b: float, lo: float, hi: float) -> float:
        return max(0.0, min(b, hi) - max(a, lo)) / (hi - lo)

    total = 0.0
    for k in range(1, 20):
        a, b = math.log2(2**k - 0.5), math.log2(2**k + 0.5)
        total += uprob * overlap(a, b, low, med) + (1 - uprob) * overlap(a, b, med, high)
    return total


def scaled_bounds(params: LublinParams, kind: int) -> tuple[float, float, float]:
    """The documented machine-size rule: umed and uhi shift by log2(nodes / reference_nodes)."""
    shift = math.log2(NODES / params.reference_nodes)
    return params.ulow[kind], params.umed[kind] + shift, params.uhi[kind] + shift


# ---------------------------------------------------------------- statistics vs the model


def test_serial_fraction_matches_serial_probability(sample: Sample) -> None:
    prob = np.asarray(sample.params.serial_prob)[sample.kind]
    expected = prob.mean()
    se = math.sqrt(float((prob * (1 - prob)).sum())) / len(prob)
    observed = float((sample.size == 1).mean())
    assert abs(observed - expected) < Z_MAX * se, (observed, expected, se)


@pytest.mark.parametrize("kind", KINDS)
def test_power_of_two_share_among_parallel_jobs(sample: Sample, kind: int) -> None:
    params = sample.params
    parallel = sample.size[(sample.kind == kind) & (sample.size > 1)]
    if not params.job_types and kind == BATCH:
        assert len(parallel) == 0
        return
    # The reference draws one u for both decisions: pow2 is a share of all jobs, not of parallel.
    forced = params.pow2_prob[kind] / (1 - params.serial_prob[kind])
    chance = chance_power_of_two(*scaled_bounds(params, kind), params.uprob[kind])
    expected = forced + (1 - forced) * chance
    observed = float(((parallel & (parallel - 1)) == 0).mean())
    se = math.sqrt(expected * (1 - expected) / len(parallel))
    assert abs(observed - expected) < Z_MAX * se, (observed, expected, se)


def test_mean_log_runtime_matches_hyper_gamma_mixture(sample: Sample) -> None:
    expected = expected_mean_log_runtime(sample.params, sample.kind, sample.size)
    log_run = np.log(sample.run)
    se = log_run.std(ddof=1) / math.sqrt(len(log_run))
    assert abs(log_run.mean() - expected) < Z_MAX * se, (log_run.mean(), expected, se)


def hour_of_day_z(sample: Sample) -> np.ndarray:
    """Per hour of day: |observed - model share| in standard errors.

    Arrivals cluster in time (heavy-tailed gaps), so hourly counts are over-dispersed compared
    with independent draws; the standard error comes from 50 consecutive blocks (batch means).
    """
    expected = sum((sample.kind == k).mean() * model_hour_shares(sample.params, k) for k in KINDS)
    clock = sample.submit + sample.params.start_hour * 3600
    hours = ((clock % 86400) // 3600).astype(np.int64)
    observed = np.bincount(hours, minlength=24) / len(hours)
    blocks = np.array_split(hours, 50)
    block_shares = np.array([np.bincount(b, minlength=24) / len(b) for b in blocks])
    se = block_shares.std(axis=0, ddof=1) / math.sqrt(len(blocks))
    return np.abs(observed - expected) / se


def test_arrivals_follow_the_daily_cycle(sample: Sample) -> None:
    z = hour_of_day_z(sample)
    assert z.max() < 4.5, z.round(2)  # 24 simultaneous comparisons
    hours = ((sample.submit % 86400) // 3600).astype(np.int64)
    assert 9 <= int(np.argmax(np.bincount(hours))) <= 17  # busiest hour: working hours


@pytest.mark.parametrize("kind", KINDS)
def test_mean_interarrival_matches_model(sample: Sample, kind: int) -> None:
    """Per stream, the mean gap in seconds is E[exp(g) | g <= 13], g ~ gamma(aarr * arar, barr).

    The daily cycle only warps time within a day (weights of mean 1), so it leaves the mean.
    """
    params = sample.params
    gaps = np.diff(sample.submit[sample.kind == kind])
    if not params.job_types and kind == BATCH:
        assert len(gaps) == 0
        return
    mean, second = gap_moments(params, kind)
    se = math.sqrt(second - mean**2) / math.sqrt(len(gaps))
    assert abs(gaps.mean() - mean) < Z_MAX * se, (gaps.mean(), mean, se)


def test_daily_weights_equal_reference_bucket_weights() -> None:
    for params in (DEFAULT_PARAMS, LublinParams.typeless()):
        for kind in KINDS:
            weights = daily_weights(params, kind)
            assert weights.shape == (48,)
            assert weights.mean() == pytest.approx(1.0)
            np.testing.assert_allclose(weights / 48, model_bucket_shares(params, kind), rtol=1e-5)


@pytest.mark.parametrize("start_hour", [0, 8])
def test_vectorised_clock_equals_the_reference_bucket_loop(start_hour: int) -> None:
    """The piecewise-linear clock reproduces ``calc_next_arrive``'s points/bucket/reminder loop."""
    weights = daily_weights(DEFAULT_PARAMS, INTERACTIVE)
    gaps = np.random.default_rng(0).gamma(6.4, 0.66, size=3000)  # log(seconds)
    points, reminder, bucket, now, reference = 0.0, 0.0, start_hour * 2, 0.0, []
    for gap in gaps:  # literal transcription of the reference loop (without integer truncation)
        points += math.exp(gap) / 1800
        advance = 0.0
        while points > weights[bucket]:
            points -= weights[bucket]
            bucket = (bucket + 1) % 48
            advance += 1800
        new_reminder = points / weights[bucket]
        advance += 1800 * (new_reminder - reminder)
        reminder = new_reminder
        now += advance
        reference.append(now)
    ours = _points_to_seconds(np.cumsum(np.exp(gaps) / 1800), weights, start_hour)
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-6)


def test_type_mix_follows_the_stream_rates() -> None:
    """Typed mode: each stream's share is its rate over the total rate (1 / mean gap)."""
    sample = _sample(DEFAULT_PARAMS)
    rates = [1 / gap_moments(DEFAULT_PARAMS, k)[0] for k in KINDS]
    expected = rates[BATCH] / sum(rates)
    assert abs((sample.kind == BATCH).mean() - expected) < 0.25 * expected  # heavy-tailed gaps


# ---------------------------------------------------------------- frame contract


def test_frame_has_schema_columns_and_dtypes(sample: Sample) -> None:
    frame = sample.frame
    assert list(frame.columns) == list(schema.COLUMN_NAMES)
    assert frame.dtypes.to_dict() == schema.empty_frame().dtypes.to_dict()
    assert frame["job_id"].tolist() == list(range(1, N_JOBS + 1))
    assert frame["submit_time"].is_monotonic_increasing
    assert 0 <= frame["submit_time"].iloc[0] < 86400
    assert (frame["run_time"] >= 1).all()
    assert frame["run_time"].max() <= math.exp(sample.params.max_log_runtime)
    assert frame["allocated_procs"].between(1, NODES).all()
    assert frame["requested_procs"].equals(frame["allocated_procs"])
    assert (frame["status"] == 1).all()
    assert frame["user_id"].between(1, sample.params.n_users).all()
    unknown = [
        "wait_time",
        "avg_cpu_time",
        "used_memory",
        "requested_time",
        "requested_memory",
        "group_id",
        "executable",
        "partition",
        "preceding_job",
        "think_time",
    ]
    assert frame[unknown].isna().all().all()


def test_users_are_zipf_like() -> None:
    users = generate_lublin(20_000, seed=5)["user_id"].to_numpy(np.int64)
    counts = np.bincount(users, minlength=DEFAULT_PARAMS.n_users + 1)[1:]
    assert counts[0] > counts[1] > counts[7] > counts[-1]
    assert counts[0] / counts[1] == pytest.approx(2.0, rel=0.15)  # rank ** -1


def test_same_seed_same_frame_different_seed_different_frame() -> None:
    first = generate_lublin(3000, seed=7)
    pd.testing.assert_frame_equal(first, generate_lublin(3000, seed=7))
    pd.testing.assert_frame_equal(first, generate_lublin(3000, seed=np.random.SeedSequence(7)))
    other = generate_lublin(3000, seed=8)
    assert not first["submit_time"].equals(other["submit_time"])
    assert not first["run_time"].equals(other["run_time"])


def test_start_hour_shifts_the_clock() -> None:
    """Time 0 is ``start_hour`` o'clock: shifted back to wall-clock hours, the cycle is the same."""
    sample = _sample(replace(DEFAULT_PARAMS, start_hour=12), seed=9)
    assert hour_of_day_z(sample).max() < 4.5
    with pytest.raises(ValueError, match="start_hour"):
        replace(DEFAULT_PARAMS, start_hour=24)


def test_machine_size_bounds_job_sizes() -> None:
    assert (generate_lublin(2000, nodes=1, seed=1)["allocated_procs"] == 1).all()
    small = generate_lublin(5000, nodes=8, seed=1)["allocated_procs"]
    assert small.between(1, 8).all() and small.max() == 8
    big = generate_lublin(20_000, nodes=1024, seed=1)["allocated_procs"]
    assert big.max() == 1024


def test_empty_and_invalid_requests() -> None:
    empty = generate_lublin(0, seed=1)
    assert len(empty) == 0
    assert empty.dtypes.to_dict() == schema.empty_frame().dtypes.to_dict()
    with pytest.raises(ValueError, match="n_jobs"):
        generate_lublin(-1, seed=1)
    with pytest.raises(ValueError, match="nodes"):
        generate_lublin(10, nodes=0, seed=1)


def test_default_workload_is_small_fast_and_seeded() -> None:
    start = time.perf_counter()
    frame = default_workload()
    assert time.perf_counter() - start < 0.5
    assert len(frame) == 2000
    assert frame["allocated_procs"].max() <= 256
    pd.testing.assert_frame_equal(frame, generate_lublin(2000, nodes=256, seed=0))
    pd.testing.assert_frame_equal(frame, default_workload(seed=0))
    assert not frame.equals(default_workload(seed=1))


def test_hundred_thousand_jobs_generate_quickly() -> None:
    start = time.perf_counter()
    frame = generate_lublin(100_000, seed=3)
    assert time.perf_counter() - start < 2.0
    assert len(frame) == 100_000


# ---------------------------------------------------------------- the shared synthetic trace


def _read_shared_lublin() -> pd.DataFrame:
    return pd.read_csv(trace_path("lublin_256.swf.gz"), sep=r"\s+", comment=";", header=None)


def _summary(size: np.ndarray, run: np.ndarray, submit: np.ndarray) -> dict[str, float]:
    parallel = size[size > 1]
    return {
        "serial": float((size == 1).mean()),
        "pow2_parallel": float(((parallel & (parallel - 1)) == 0).mean()),
        "median_run": float(np.median(run)),
        "mean_gap": float(np.diff(submit).mean()),
    }


def test_loosely_like_the_shared_lublin_256_trace() -> None:
    """Sanity check against ``../shared/traces/lublin_256.swf.gz`` (10,000 jobs, 256 nodes).

    That file is another run of the model (deep-batch-scheduler's copy; all its jobs are type 0,
    so its generator ran the typeless parameter set), with an unknown seed and generator version,
    so only generous bounds apply. Our typed default differs by design (more interactive jobs:
    fewer serial jobs, shorter run times), so only its serial share is compared, loosely.
    """
    shared = _read_shared_lublin()
    assert len(shared) == 10_000 and shared[14].eq(0).all()
    ref = _summary(shared[4].to_numpy(), shared[3].to_numpy(), shared[1].to_numpy())
    ours_sample = _sample(LublinParams.typeless(), n=10_000, seed=11)
    ours = _summary(ours_sample.size, ours_sample.run, ours_sample.submit)
    assert abs(ours["serial"] - ref["serial"]) < 0.03, (ours, ref)
    assert abs(ours["pow2_parallel"] - ref["pow2_parallel"]) < 0.05, (ours, ref)
    assert 0.5 < ours["median_run"] / ref["median_run"] < 2.0, (ours, ref)
    assert 0.5 < ours["mean_gap"] / ref["mean_gap"] < 2.0, (ours, ref)
    assert shared[4].max() == ours_sample.size.max() == NODES
    assert shared[3].min() >= 1 and shared[3].max() <= math.exp(12)
    typed = generate_lublin(10_000, nodes=NODES, seed=11)["allocated_procs"].to_numpy()
    assert abs((typed == 1).mean() - ref["serial"]) < 0.12


# The Lublin-Feitelson generator on its boundaries, ties and refusals (issue 19).
#
# Expected values come from the model's reference program ``m_lublin99.c`` (U. Lublin and D. G.
# Feitelson, "The workload on parallel supercomputers: modeling the characteristics of rigid jobs",
# JPDC 63(11), 2003; the program distributed with the paper), typed here from that file, from SciPy
# (the gamma density), or by hand in the comments. The program's tie rules are the ones tested:
#
# * ``calc_number_of_nodes``: ``if (u <= SerialProb) return 1;`` and ``if (u <= (SerialProb + Pow2Prob))``
#   rounds ``log2(size)``;
# * ``two_stage_uniform``: ``if (u <= prob)`` takes the lower uniform ``[low, med]``;
# * ``time_from_nodes``: ``p = pa*nodes + pb``, then ``if (p>1) p=1; else if (p<0) p=0;`` and a draw is
#   redrawn only ``while (hg > TOO_MUCH_TIME)``;
# * ``hyper_gamma``: ``if (u <= p)`` takes the first gamma (a1, b1).
#
# A tie needs a uniform draw exactly on a boundary, which a seeded generator gives too rarely to find:
# those cases use :class:`FixedDraws`, a stand-in generator whose every uniform is one chosen value
# and whose every gamma draw is its mean (shape * scale), so the answer follows from the rule alone.


# m_lublin99.c, interactive (_ACTIVE) constants used below
SERIAL_PROB_ACTIVE, POW2_PROB_ACTIVE, UPROB_ACTIVE = 0.1541, 0.625, 0.705
A1_ACTIVE, B1_ACTIVE, A2_ACTIVE, B2_ACTIVE = 3.8351, 0.6605, 7.073, 0.6856
SERIAL_PROB_BATCH = 0.2927
# the typeless ("whole sample", INCLUDE_JOBS_TYPE 0) constants of the same file
TYPELESS = {
    "serial_prob": 0.244, "pow2_prob": 0.576, "ulow": 0.8, "umed": 4.5, "uhi": 7.0, "uprob": 0.86,
    "a1": 4.2, "b1": 0.94, "a2": 312.0, "b2": 0.03, "pa": -0.0054, "pb": 0.78,
    "aarr": 10.2303, "barr": 0.4871, "anum": 8.1737, "bnum": 3.9631, "arar": 1.0225,
}
UNKNOWN = ("wait_time", "avg_cpu_time", "used_memory", "requested_time", "requested_memory", "group_id",
           "executable", "partition", "preceding_job", "think_time")


class FixedDraws:
    """Stands in for ``np.random.Generator``: every uniform is ``u``, every gamma draw is shape * scale."""

    def __init__(self, u: float) -> None:
        self.u = u
        self.choice_p: np.ndarray | None = None

    def random(self, size: int) -> np.ndarray:
        return np.full(size, self.u)

    def gamma(self, shape: np.ndarray, scale: np.ndarray) -> np.ndarray:
        return np.asarray(shape, float) * np.asarray(scale, float)

    def choice(self, a: int, size: int, p: np.ndarray) -> np.ndarray:
        self.choice_p = np.asarray(p)
        return np.zeros(size, dtype=np.int64)


def fixed(u: float) -> np.random.Generator:
    return cast(np.random.Generator, FixedDraws(u))


# -- parameters ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("n_users", "reference_nodes"), [(0, 128), (64, 0), (0, 0), (-3, 128)])
def test_params_refuse_no_users_or_no_reference_nodes(n_users: int, reference_nodes: int) -> None:
    with pytest.raises(ConfigError) as refused:
        LublinParams(n_users=n_users, reference_nodes=reference_nodes)
    assert str(refused.value) == "n_users and reference_nodes must be >= 1"


def test_params_accept_one_user_and_a_one_node_reference() -> None:
    params = LublinParams(n_users=1, reference_nodes=1)  # the boundary itself is allowed
    assert (params.n_users, params.reference_nodes) == (1, 1)
    users = generate_lublin(20, nodes=4, seed=3, params=params)["user_id"]
    assert users.eq(1).all()  # a single user owns every job


def test_typeless_is_the_default_with_the_whole_sample_constants_and_one_stream() -> None:
    expected = replace(LublinParams(), **{k: (v, v) for k, v in TYPELESS.items()}, job_types=False)
    assert LublinParams.typeless() == expected
    assert LublinParams.typeless().job_types is False
    # "make all jobs interactive": one stream, every job in queue 0
    queue = generate_lublin(300, nodes=128, seed=5, params=LublinParams.typeless())["queue"]
    assert queue.eq(INTERACTIVE).all()


@pytest.mark.parametrize(("kind", "nodes", "bounds"), [
    (INTERACTIVE, 128, (1.0, 3.0, 5.5)),  # the reference machine: ULOW, UMED, UHI as published
    (INTERACTIVE, 256, (1.0, 4.0, 6.5)),  # shift log2(256 / 128) = +1 on UMED and UHI
    (BATCH, 256, (1.2, 6.0, 8.0)),
    (BATCH, 1024, (1.2, 8.0, 10.0)),  # shift +3
    (INTERACTIVE, 32, (1.0, 1.0, 3.5)),  # shift -2: UMED 3 - 2 = 1 ties with ULOW 1
    (BATCH, 32, (1.2, 3.0, 5.0)),
    (INTERACTIVE, 2, (1.0, 1.0, 1.0)),  # shift -6: UMED -3 and UHI -0.5 are both raised to ULOW
])
def test_size_bounds_shift_umed_and_uhi_by_the_machine_size(kind: int, nodes: int, bounds: tuple) -> None:
    assert DEFAULT_PARAMS.size_bounds(kind, nodes) == bounds


# -- the gamma density and the daily cycle ---------------------------------------------------------------

@pytest.mark.parametrize(("shape", "scale"), [(8.9186, 3.6680), (6.1271, 5.2740), (3.0, 1.0), (2.5, 0.5)])
def test_gamma_pdf_is_scipys_gamma_density(shape: float, scale: float) -> None:
    x = np.array([0.5, 1.0, 11.5, 23.0, 47.5, 58.5])
    np.testing.assert_allclose(_gamma_pdf(x, shape, scale), stats.gamma.pdf(x, shape, scale=scale), rtol=1e-12)


# -- the piecewise-linear clock --------------------------------------------------------------------------

def test_points_of_whole_days_map_to_whole_days_to_the_last_bit() -> None:
    # Bucket k consumes weights[k] points in 1800 s, so a day's points S = sum(weights) take 86400 s and
    # k * S points take k days. With this ramp, k * S and its neighbours one or a few ulps away give
    # a remainder after whole days that rounds to a hair below 0 or to S itself: the clock must still
    # read k days (to far below a millisecond), not a bucket off or past the end of the weights.
    weights = np.linspace(0.1, 1.9, 48)
    day_points = float(np.cumsum(weights)[-1])
    probes, days = [], []
    for k in range(1, 101):
        x = k * day_points
        for _ in range(4):
            x = np.nextafter(x, -np.inf)
        for _ in range(9):
            probes.append(x)
            days.append(k)
            x = np.nextafter(x, np.inf)
    seconds = _points_to_seconds(np.array(probes), weights, 0)
    np.testing.assert_allclose(seconds, 86400.0 * np.array(days), rtol=0, atol=1e-6)


def test_points_ending_exactly_on_a_bucket_edge_arrive_at_the_buckets_start() -> None:
    # Points that exactly use up buckets 0 .. j-1 reach the start of bucket j, j * 1800 s (the reference
    # loop stays in bucket j-1 with reminder 1: the same instant). Exactly, not a hair before, since
    # the generator floors the times: a hair before would be the previous second.
    weights = np.linspace(1.9, 0.1, 48)
    edges = np.cumsum(weights)[:-1]  # the points at the start of buckets 1 .. 47
    j = np.arange(1, 48)
    seconds = _points_to_seconds(edges, weights, 0)
    assert np.array_equal(seconds, 1800.0 * j)
    assert np.array_equal(np.floor(seconds), 1800.0 * j)


# -- sizes -----------------------------------------------------------------------------------------------

def test_a_uniform_equal_to_the_serial_probability_gives_a_serial_job() -> None:
    # u <= SerialProb: serial, 1 node (otherwise 2: log2 = 1 + u * 3 = 1.46, a power of two, rounded to 1)
    for kind, u in ((INTERACTIVE, SERIAL_PROB_ACTIVE), (BATCH, SERIAL_PROB_BATCH)):
        assert _sizes(fixed(u), np.array([kind]), DEFAULT_PARAMS, 256).tolist() == [1.0]


def test_a_uniform_equal_to_serial_plus_pow2_probability_gives_a_power_of_two() -> None:
    # u = SerialProb + Pow2Prob = 0.7791 > UPROB 0.705: upper stage [UMED + 1, UHI + 1] = [4, 6.5] on
    # 256 nodes, log2 = 4 + u * 2.5 = 5.948; a power-of-two job rounds it to 6: 64 nodes
    # (otherwise round(2 ** 5.948) = 62)
    u = SERIAL_PROB_ACTIVE + POW2_PROB_ACTIVE
    assert _sizes(fixed(u), np.array([INTERACTIVE]), DEFAULT_PARAMS, 256).tolist() == [64.0]


def test_a_uniform_equal_to_uprob_takes_the_lower_stage() -> None:
    # u = UPROB 0.705 (also <= 0.7791: a power of two): lower stage [ULOW, UMED + 1] = [1, 4],
    # log2 = 1 + 0.705 * 3 = 3.115, rounded to 3: 8 nodes (upper stage: 4 + 0.705 * 2.5 = 5.76 -> 64)
    assert _sizes(fixed(UPROB_ACTIVE), np.array([INTERACTIVE]), DEFAULT_PARAMS, 256).tolist() == [8.0]


def test_a_job_has_at_least_one_processor_even_below_one_in_log2() -> None:
    # log2(size) in [-4, -2]: round(2 ** x) is 0 for every such x; a job still gets 1 processor
    params = replace(DEFAULT_PARAMS, serial_prob=(0.0, 0.0), ulow=(-4.0, -4.0), umed=(-3.0, -3.0),
                     uhi=(-2.0, -2.0))
    frame = generate_lublin(200, nodes=128, seed=2, params=params)
    assert frame["allocated_procs"].eq(1).all() and frame["requested_procs"].eq(1).all()


# -- run times -------------------------------------------------------------------------------------------

def test_p_below_zero_is_clipped_to_zero_and_a_zero_uniform_takes_the_first_gamma() -> None:
    # 200 nodes: p = -0.0118 * 200 + 0.9156 < 0, clipped to 0; u = 0 <= 0 takes gamma(A1, B1), whose
    # mean draw here is A1 * B1 = 2.533: floor(exp(2.533)) = 12 s (gamma(A2, B2) would give 127 s)
    run = _run_times(fixed(0.0), np.array([INTERACTIVE]), np.array([200.0]), DEFAULT_PARAMS)
    assert run.tolist() == [math.floor(math.exp(A1_ACTIVE * B1_ACTIVE))] == [12]


def test_a_uniform_equal_to_p_takes_the_first_gamma() -> None:
    first = (np.array([2.0]), np.array([1.0]))
    second = (np.array([5.0]), np.array([1.0]))
    assert _truncated_hyper_gamma(fixed(0.5), np.array([0.5]), first, second, 12.0).tolist() == [2.0]


def test_a_draw_exactly_at_the_cut_off_is_kept() -> None:
    # redrawn only while hg > TOO_MUCH_TIME: a draw of exactly 12 stays
    first = (np.array([12.0]), np.array([1.0]))
    assert _truncated_hyper_gamma(fixed(0.5), np.array([1.0]), first, first, 12.0).tolist() == [12.0]


def test_a_cut_off_below_every_gamma_draw_is_refused_with_its_value() -> None:
    params = replace(DEFAULT_PARAMS, max_log_runtime=-1.0)  # gamma draws are >= 0: none is kept
    message = "gamma parameters put almost no mass below the cut-off -1.0"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        generate_lublin(5, nodes=8, seed=1, params=params)


# -- users -----------------------------------------------------------------------------------------------

def test_an_integer_zipf_exponent_gives_rank_to_the_minus_exponent() -> None:
    params = LublinParams(n_users=4, user_zipf_exponent=2)  # an int, as a caller may well write it
    draws = FixedDraws(0.5)
    assert _users(cast(np.random.Generator, draws), 3, params).tolist() == [1.0, 1.0, 1.0]
    assert draws.choice_p is not None
    np.testing.assert_allclose(draws.choice_p, np.array([1, 1 / 4, 1 / 9, 1 / 16]) / (1 + 1 / 4 + 1 / 9 + 1 / 16))
    users = generate_lublin(50, nodes=8, seed=1, params=params)["user_id"]
    assert users.between(1, 4).all()


# -- the generator and its frame -------------------------------------------------------------------------

def test_the_default_machine_has_256_nodes() -> None:
    pd.testing.assert_frame_equal(generate_lublin(2000, seed=4), generate_lublin(2000, nodes=256, seed=4))


def test_the_frame_of_three_hand_made_jobs() -> None:
    frame = _to_frame(np.array([0.0, 5.0, 9.0]), np.array([1.0, 20.0, 300.0]), np.array([1.0, 4.0, 8.0]),
                      np.array([3.0, 1.0, 2.0]), np.array([INTERACTIVE, BATCH, INTERACTIVE]))
    known = {"job_id": [1, 2, 3], "submit_time": [0, 5, 9], "run_time": [1, 20, 300], "allocated_procs": [1, 4, 8],
             "requested_procs": [1, 4, 8], "status": [1, 1, 1], "user_id": [3, 1, 2], "queue": [0, 1, 0]}
    expected = pd.DataFrame({name: pd.Series(known.get(name, [pd.NA] * 3), dtype=dtype)
                             for name, dtype in schema.SWF_COLUMNS})
    pd.testing.assert_frame_equal(frame, expected)


def test_a_tiny_generated_frame_fills_exactly_the_model_fields() -> None:
    frame = generate_lublin(4, nodes=8, seed=6)
    assert list(frame.columns) == list(schema.COLUMN_NAMES)
    assert frame.dtypes.to_dict() == schema.empty_frame().dtypes.to_dict()
    assert frame["job_id"].tolist() == [1, 2, 3, 4]
    assert frame["status"].tolist() == [1, 1, 1, 1]  # completed, as the program writes
    assert frame["requested_procs"].tolist() == frame["allocated_procs"].tolist()
    assert frame[list(UNKNOWN)].isna().all().all()  # the program's -1 fields: unknown


def test_each_call_logs_what_it_generated(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="workloads.lublin"):
        generate_lublin(3, nodes=8, seed=1)
    assert [r.getMessage() for r in caplog.records if r.name == "workloads.lublin"] == [
        "generated 3 Lublin jobs on 8 nodes"
    ]
