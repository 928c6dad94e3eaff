"""The Lublin-Feitelson generator on its boundaries, ties and refusals (issue 19, mutation testing).

Expected values come from the model's reference program ``m_lublin99.c`` (U. Lublin and D. G.
Feitelson, "The workload on parallel supercomputers: modeling the characteristics of rigid jobs",
JPDC 63(11), 2003; the program distributed with the paper), typed here from that file, from SciPy
(the gamma density), or by hand in the comments. The program's tie rules are the ones tested:

* ``calc_number_of_nodes``: ``if (u <= SerialProb) return 1;`` and ``if (u <= (SerialProb + Pow2Prob))``
  rounds ``log2(size)``;
* ``two_stage_uniform``: ``if (u <= prob)`` takes the lower uniform ``[low, med]``;
* ``time_from_nodes``: ``p = pa*nodes + pb``, then ``if (p>1) p=1; else if (p<0) p=0;`` and a draw is
  redrawn only ``while (hg > TOO_MUCH_TIME)``;
* ``hyper_gamma``: ``if (u <= p)`` takes the first gamma (a1, b1).

A tie needs a uniform draw exactly on a boundary, which a seeded generator gives too rarely to find:
those cases use :class:`FixedDraws`, a stand-in generator whose every uniform is one chosen value
and whose every gamma draw is its mean (shape * scale), so the answer follows from the rule alone.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import replace
from typing import cast

import numpy as np
import pandas as pd
import pytest
from scipy import stats

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
    generate_lublin,
)

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
