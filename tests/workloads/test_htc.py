"""HTC jobs from an SWF frame: the filter's boundaries, the width rule, the volume model's draws.

Expected values are worked by hand in the comments or recomputed here with NumPy from the documented
model (``workloads/htc.py``): per job, independent lognormal draws with ``mu = log(mean) - sigma^2/2``
(so the mean before clipping is ``mean``), clipped at ``max_mb``, in MB of 10^6 bytes; one generator
``default_rng(seed)`` draws the inputs of all ``n`` jobs first, then their outputs; a mean of 0 gives
zeros and draws nothing. The frames are small and hand-made; only the columns ``htc_view`` reads.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from workloads.errors import ConfigError, InputError
from workloads.htc import HtcJobs, VolumeModel, htc_view

COLUMNS = ("submit_time", "run_time", "status", "user_id", "allocated_procs", "requested_procs")
NA = None
REASONS = ("submit time unknown", "run time unknown or < 0", "cancelled by the user (status 5)",
           "no data volume (or < 0)")
UNKNOWN_USER = "with unknown user (one shared user)"
UNKNOWN_PROCS = "with unknown processors (one task)"


def trace(rows: list[tuple], volumes: list[tuple] | None = None) -> pd.DataFrame:
    """A frame of the SWF columns ``htc_view`` reads (Int64, ``None`` unknown), with volumes if given."""
    frame = pd.DataFrame({name: pd.array([row[i] for row in rows], dtype="Int64") for i, name in enumerate(COLUMNS)})
    if volumes is not None:
        frame["input_bytes"] = pd.array([v[0] for v in volumes], dtype="Float64")
        frame["output_bytes"] = pd.array([v[1] for v in volumes], dtype="Float64")
    return frame


def lognormal_volumes(n: int, seed, mean_in: float, mean_out: float, sigma: float, max_mb: float):
    """The documented model, written out: inputs of all n jobs, then outputs, from one generator."""
    rng = np.random.default_rng(seed)
    drawn = []
    for mean in (mean_in, mean_out):
        if mean == 0:
            drawn.append(np.zeros(n))
            continue
        mu = math.log(mean) - sigma * sigma / 2
        drawn.append(np.minimum(rng.lognormal(mu, sigma, n), max_mb) * 1_000_000.0)
    return drawn[0], drawn[1]


# ---------------------------------------------------------------------------------------------- VolumeModel


def test_the_volume_model_defaults_are_the_papers_calibration() -> None:
    model = VolumeModel()
    # 28 MB in, 287 MB out per job, log-scale spread 1, largest transfer 903 MB
    assert (model.mean_in_mb, model.mean_out_mb, model.sigma, model.max_mb) == (28.0, 287.0, 1.0, 903.0)


def test_the_volume_model_accepts_its_boundaries() -> None:
    # means exactly 0, sigma exactly 0 and a max just above 0 are allowed
    VolumeModel(mean_in_mb=0.0, mean_out_mb=0.0, sigma=0.0, max_mb=1e-9)
    VolumeModel(mean_in_mb=0.0)
    VolumeModel(mean_out_mb=0.0)
    VolumeModel(sigma=0.0)


@pytest.mark.parametrize(("bad", "message"), [
    ({"mean_in_mb": -1e-9}, "mean_in_mb must be a finite number >= 0, got -1e-09"),
    ({"mean_out_mb": -1e-9}, "mean_out_mb must be a finite number >= 0, got -1e-09"),
    ({"mean_in_mb": float("nan")}, "mean_in_mb must be a finite number >= 0, got nan"),
    ({"mean_out_mb": float("inf")}, "mean_out_mb must be a finite number >= 0, got inf"),
    ({"sigma": -1e-9}, "sigma must be a finite number >= 0, got -1e-09"),
    ({"sigma": float("nan")}, "sigma must be a finite number >= 0, got nan"),
    ({"max_mb": 0.0}, "max_mb must be a finite number > 0, got 0.0"),
    ({"max_mb": -1.0}, "max_mb must be a finite number > 0, got -1.0"),
    ({"max_mb": float("nan")}, "max_mb must be a finite number > 0, got nan"),
])
def test_the_volume_model_refuses_each_parameter_out_of_range_by_name(bad: dict, message: str) -> None:
    # a NaN mean used to pass and draw NaN volumes, and htc_view then removed every job as having none
    with pytest.raises(ConfigError, match="^VolumeModel." + re.escape(message) + "$"):
        VolumeModel(**bad)


@pytest.mark.parametrize("seed", [0, 7, np.random.SeedSequence(11)])
def test_the_draw_is_inputs_for_all_jobs_then_outputs_from_one_seeded_generator(seed) -> None:
    # sigma 0.5 (not 1) so that sigma^2/2 differs from sigma/2, sigma^2 and sigma^3/2
    model = VolumeModel(mean_in_mb=40.0, mean_out_mb=300.0, sigma=0.5, max_mb=500.0)
    got_in, got_out = model.draw(50, seed=seed)
    want_in, want_out = lognormal_volumes(50, seed, 40.0, 300.0, 0.5, 500.0)
    assert got_in.shape == (50,) and got_out.shape == (50,)
    np.testing.assert_allclose(got_in, want_in, rtol=1e-13, atol=0)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-13, atol=0)


def test_the_default_draw_with_sigma_two() -> None:
    # sigma 2: mu_in = log 28 - 2 = 1.3322..., mu_out = log 287 - 2 = 3.6594...
    model = VolumeModel(sigma=2.0)
    got_in, got_out = model.draw(30, seed=5)
    want_in, want_out = lognormal_volumes(30, 5, 28.0, 287.0, 2.0, 903.0)
    np.testing.assert_allclose(got_in, want_in, rtol=1e-13, atol=0)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-13, atol=0)


def test_a_mean_of_zero_gives_zero_bytes_and_draws_nothing() -> None:
    # no input draw: the outputs are the generator's first n lognormals
    got_in, got_out = VolumeModel(mean_in_mb=0.0, mean_out_mb=10.0, sigma=0.5).draw(6, seed=3)
    assert got_in.shape == (6,) and np.all(got_in == 0.0)
    first = np.random.default_rng(3).lognormal(math.log(10.0) - 0.125, 0.5, 6) * 1e6
    np.testing.assert_allclose(got_out, first, rtol=1e-13, atol=0)
    got_in, got_out = VolumeModel(mean_in_mb=10.0, mean_out_mb=0.0, sigma=0.5).draw(6, seed=3)
    np.testing.assert_allclose(got_in, first, rtol=1e-13, atol=0)
    assert got_out.shape == (6,) and np.all(got_out == 0.0)


def test_a_mean_of_one_megabyte_is_drawn_like_any_other() -> None:
    # mean 1 MB is not "zero": mu = log 1 - 0.125 = -0.125, the draws are positive
    got_in, got_out = VolumeModel(mean_in_mb=1.0, mean_out_mb=1.0, sigma=0.5).draw(5, seed=2)
    want_in, want_out = lognormal_volumes(5, 2, 1.0, 1.0, 0.5, 903.0)
    np.testing.assert_allclose(got_in, want_in, rtol=1e-13, atol=0)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-13, atol=0)
    assert np.all(got_in > 0) and np.all(got_out > 0)


def test_no_spread_gives_the_mean_itself() -> None:
    # sigma 0: every draw is exp(log(mean)) = mean, to rounding
    got_in, got_out = VolumeModel(mean_in_mb=12.0, mean_out_mb=34.0, sigma=0.0).draw(4, seed=1)
    np.testing.assert_allclose(got_in, np.full(4, 12e6), rtol=1e-12)
    np.testing.assert_allclose(got_out, np.full(4, 34e6), rtol=1e-12)


def test_draws_are_clipped_exactly_at_max_mb() -> None:
    # mean 100 MB, sigma 1, max 120 MB: about a quarter of the draws are above 120 MB and become 120e6 bytes exactly
    model = VolumeModel(mean_in_mb=100.0, mean_out_mb=100.0, sigma=1.0, max_mb=120.0)
    got_in, got_out = model.draw(400, seed=9)
    rng = np.random.default_rng(9)
    raw_in = rng.lognormal(math.log(100.0) - 0.5, 1.0, 400)
    raw_out = rng.lognormal(math.log(100.0) - 0.5, 1.0, 400)
    for got, raw in ((got_in, raw_in), (got_out, raw_out)):
        above = raw > 120.0
        assert 50 < above.sum() < 200
        assert np.all(got[above] == 120e6) and got.max() == 120e6
        np.testing.assert_allclose(got[~above], raw[~above] * 1e6, rtol=1e-13, atol=0)
        assert np.all(got[~above] < 120e6)


def test_the_unclipped_draw_has_the_documented_mean_and_spread() -> None:
    # 200,000 draws of lognormal(mean 50, sigma 0.5) and (mean 5, sigma 0.5): the sample mean is within
    # 1 % (its standard error is 0.53 / sqrt(2e5) = 0.12 %), the median is mean * exp(-sigma^2 / 2),
    # the log-scale standard deviation is sigma, inputs and outputs are uncorrelated
    got_in, got_out = VolumeModel(mean_in_mb=50.0, mean_out_mb=5.0, sigma=0.5, max_mb=1e12).draw(200_000, seed=4)
    assert got_in.mean() == pytest.approx(50e6, rel=0.01)
    assert got_out.mean() == pytest.approx(5e6, rel=0.01)
    assert np.median(got_in) == pytest.approx(50e6 * math.exp(-0.125), rel=0.01)
    assert np.log(got_out).std() == pytest.approx(0.5, rel=0.01)
    assert abs(np.corrcoef(np.log(got_in), np.log(got_out))[0, 1]) < 0.02


def test_the_default_model_puts_about_287_mb_out_and_28_mb_in_per_job() -> None:
    # clipping at 903 MB trims the output mean: for X lognormal(mu = log 287 - 0.5, s = 1) and z = (log 903 - mu) / s,
    # E[min(X, 903)] = 287 * Phi(z - s) + 903 * (1 - Phi(z)) = 257.67 MB (z = 1.646); inputs: 27.99 MB
    mu, s = math.log(287.0) - 0.5, 1.0
    z = (math.log(903.0) - mu) / s
    phi = 0.5 * (1 + math.erf((z - s) / math.sqrt(2)))
    tail = 0.5 * math.erfc(z / math.sqrt(2))
    clipped_mean = 287.0 * phi + 903.0 * tail
    got_in, got_out = VolumeModel().draw(100_000, seed=8)
    assert got_out.mean() == pytest.approx(clipped_mean * 1e6, rel=0.02)
    assert got_in.mean() == pytest.approx(28e6, rel=0.03)
    assert got_out.max() == 903e6 and got_in.max() <= 903e6


# ---------------------------------------------------------------------------------------------- HtcJobs


def jobs(n: int = 3, **change) -> HtcJobs:
    fields = {"submit": np.arange(n, dtype=float), "runtime": np.full(n, 10.0), "user": np.zeros(n, dtype=np.int64),
              "input_bytes": np.zeros(n), "output_bytes": np.zeros(n)}
    fields.update(change)
    return HtcJobs(**fields)


def test_htc_jobs_default_to_no_user_list_and_time_zero() -> None:
    table = jobs()
    assert table.users == () and table.origin == 0.0 and len(table) == 3


def test_htc_jobs_accept_zero_run_times_and_zero_bytes_and_no_rows() -> None:
    jobs(runtime=np.zeros(3))
    assert len(jobs(0)) == 0


@pytest.mark.parametrize("column", ["runtime", "input_bytes", "output_bytes"])
def test_htc_jobs_refuse_a_negative_run_time_or_byte_count(column: str) -> None:
    values = np.array([0.0, 5.0, -1e-9])
    with pytest.raises(InputError, match=r"^HtcJobs need non-negative run times and byte counts$"):
        jobs(**{column: values})


def test_htc_jobs_refuse_columns_of_other_lengths_and_unsorted_submits() -> None:
    with pytest.raises(InputError, match=r"^HtcJobs\.output_bytes has 2 rows, expected 3$"):
        jobs(output_bytes=np.zeros(2))
    with pytest.raises(InputError, match=r"^HtcJobs\.submit must be sorted$"):
        jobs(submit=np.array([0.0, 2.0, 1.0]))


def test_head_slices_every_column_and_keeps_users_and_origin() -> None:
    table = HtcJobs(submit=np.array([1.0, 2.0, 3.0]), runtime=np.array([10.0, 20.0, 30.0]),
                    user=np.array([0, 1, 0]), input_bytes=np.array([4.0, 5.0, 6.0]),
                    output_bytes=np.array([7.0, 8.0, 9.0]), users=(3, 8), origin=1.5e9)
    two = table.head(2)
    assert len(two) == 2 and two.users == (3, 8) and two.origin == 1.5e9
    assert two.submit.tolist() == [1.0, 2.0] and two.runtime.tolist() == [10.0, 20.0]
    assert two.user.tolist() == [0, 1]
    assert two.input_bytes.tolist() == [4.0, 5.0] and two.output_bytes.tolist() == [7.0, 8.0]


# ---------------------------------------------------------------------------------------------- htc_view


#: (submit, run, status, user, allocated, requested) and (input bytes, output bytes), by row
ROWS = [
    (10, 100, 1, 7, 2, 4),     # 0 kept
    (NA, 50, 1, 7, 1, 1),      # 1 removed: submit unknown
    (5, -1, 1, 3, 1, 1),       # 2 removed: run time exactly -1
    (6, NA, 1, 3, 1, 1),       # 3 removed: run time unknown
    (7, 0, 1, 3, 1, 1),        # 4 kept: run time exactly 0
    (8, 30, 5, 3, 1, 1),       # 5 removed: status exactly 5
    (9, 40, 4, NA, 1, 5),      # 6 kept: status 4; unknown user
    (NA, -1, 5, 3, 1, 1),      # 7 removed once, for the first reason (submit unknown)
    (3, 20, 6, 7, 0, 3),       # 8 kept: status 6
    (3, 25, NA, 3, NA, NA),    # 9 kept: status unknown
    (2, 60, 1, 3, 1, 1),       # 10 removed: input bytes exactly -1
    (2, 61, 1, 3, 1, 1),       # 11 removed: output bytes unknown
    (4, 70, 0, 9, NA, 2),      # 12 kept: status 0 (failed); zero bytes both ways
    (8, -2, 5, 9, 1, 1),       # 13 removed once, for the run time (before the status)
    (11, -5, 1, 9, 1, 1),      # 14 removed once, for the run time (before the volumes)
    (12, 90, 5, 9, 1, 1),      # 15 removed once, for the status (before the volumes)
]
VOLUMES = [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0), (7.0, 8.0), (0.0, 9.0), (11.0, 12.0), (13.0, 14.0),
           (15.0, 16.0), (17.0, 18.0), (19.0, 0.0), (-1.0, 22.0), (23.0, None), (0.0, 0.0), (27.0, 28.0),
           (-1.0, 30.0), (31.0, None)]


def test_the_filter_removes_and_counts_by_reason_in_order_with_volumes_from_the_frame() -> None:
    frame = trace(ROWS, VOLUMES)
    got, report = htc_view(frame)
    # kept rows 0, 4, 6, 8, 9, 12; by submit (ties stable): 8 (3 s), 9 (3 s), 12 (4 s), 4 (7 s), 6 (9 s), 0 (10 s)
    assert got.submit.tolist() == [3.0, 3.0, 4.0, 7.0, 9.0, 10.0]
    assert got.runtime.tolist() == [20.0, 25.0, 70.0, 0.0, 40.0, 100.0]
    # user ids 7, 3, 9, 3, unknown (-1), 7: codes into (-1, 3, 7, 9)
    assert got.users == (-1, 3, 7, 9)
    assert got.user.tolist() == [2, 1, 3, 1, 0, 2]
    assert got.input_bytes.tolist() == [17.0, 19.0, 0.0, 0.0, 13.0, 1.0]
    assert got.output_bytes.tolist() == [18.0, 0.0, 0.0, 9.0, 14.0, 2.0]
    assert got.submit.dtype == np.float64 and got.runtime.dtype == np.float64 and got.user.dtype == np.int64
    assert got.input_bytes.dtype == np.float64 and got.output_bytes.dtype == np.float64
    assert report.read == 16 and report.kept == 6
    # rows 1 and 7; 2, 3, 13, 14; 5, 15; 10, 11
    assert report.removed == dict(zip(REASONS, [2, 4, 2, 2], strict=True))
    assert list(report.removed) == list(REASONS)
    assert report.kept_flagged == {UNKNOWN_USER: 1}
    assert got.origin == 0.0


def test_keeping_cancelled_jobs_keeps_status_5_for_its_run_time() -> None:
    got, report = htc_view(trace(ROWS, VOLUMES), drop_cancelled=False)
    # row 5 (8 s, 30 s) is back; 13 still goes for its run time, 7 for its submit time and 15 for its volume
    assert got.submit.tolist() == [3.0, 3.0, 4.0, 7.0, 8.0, 9.0, 10.0]
    assert got.runtime.tolist() == [20.0, 25.0, 70.0, 0.0, 30.0, 40.0, 100.0]
    assert got.input_bytes.tolist() == [17.0, 19.0, 0.0, 0.0, 11.0, 13.0, 1.0]
    assert got.output_bytes.tolist() == [18.0, 0.0, 0.0, 9.0, 12.0, 14.0, 2.0]
    assert report.removed == dict(zip(REASONS, [2, 4, 0, 3], strict=True))
    assert report.kept == 7 and report.read == 16


def test_a_cancelled_job_with_its_volumes_is_kept_when_asked() -> None:
    rows = [(1, 10, 5, 2, 1, 1), (2, 20, 1, 2, 1, 1), (3, 30, 5, 4, 1, 1)]
    got, report = htc_view(trace(rows, [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]), drop_cancelled=False)
    assert got.runtime.tolist() == [10.0, 20.0, 30.0] and got.users == (2, 4) and got.user.tolist() == [0, 0, 1]
    assert report.removed == dict(zip(REASONS, [0, 0, 0, 0], strict=True)) and report.kept == 3
    got, report = htc_view(trace(rows, [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]))
    assert got.runtime.tolist() == [20.0] and got.users == (2,)
    assert report.removed == dict(zip(REASONS, [0, 0, 2, 0], strict=True)) and report.kept == 1


def test_expanding_gives_one_task_per_processor_allocated_else_requested() -> None:
    frame = trace(ROWS, VOLUMES)
    got, report = htc_view(frame, parallel="expand", origin=1_000)
    # widths: row 0 allocated 2 (not the 4 requested); 4 allocated 1; 6 allocated 1 (not the 5 requested);
    # 8 allocated exactly 0 -> requested 3; 9 both unknown -> 1 task, flagged; 12 allocated unknown -> requested 2
    assert got.submit.tolist() == [3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 7.0, 9.0, 10.0, 10.0]
    assert got.runtime.tolist() == [20.0, 20.0, 20.0, 25.0, 70.0, 70.0, 0.0, 40.0, 100.0, 100.0]
    assert got.user.tolist() == [2, 2, 2, 1, 3, 3, 1, 0, 2, 2]
    # the tasks of one job share its bytes
    assert got.input_bytes.tolist() == [17.0, 17.0, 17.0, 19.0, 0.0, 0.0, 0.0, 13.0, 1.0, 1.0]
    assert got.output_bytes.tolist() == [18.0, 18.0, 18.0, 0.0, 0.0, 0.0, 9.0, 14.0, 2.0, 2.0]
    assert got.users == (-1, 3, 7, 9) and got.origin == 1000.0 and isinstance(got.origin, float)
    assert got.user.dtype == np.int64
    # kept counts tasks, not jobs
    assert report.read == 16 and report.kept == 10
    assert report.removed == dict(zip(REASONS, [2, 4, 2, 2], strict=True))
    assert report.kept_flagged == {UNKNOWN_USER: 1, UNKNOWN_PROCS: 1}


def test_expanding_a_job_of_no_processors_gives_one_task_and_is_not_flagged() -> None:
    rows = [(1, 10, 1, 2, 0, 0), (2, 20, 1, 2, 1, 0), (3, 30, 1, 2, NA, 1), (4, 40, 1, 2, 0, NA)]
    got, report = htc_view(trace(rows, [(1.0, 1.0)] * 4), parallel="expand")
    # 0 and 0 -> 0, raised to 1; 1; requested 1; allocated 0 and requested unknown -> unknown, 1 task, flagged
    assert got.runtime.tolist() == [10.0, 20.0, 30.0, 40.0]
    assert report.kept_flagged == {UNKNOWN_USER: 0, UNKNOWN_PROCS: 1}


def test_the_one_task_view_ignores_the_processor_counts() -> None:
    rows = [(1, 10, 1, 2, 4, 8), (2, 20, 1, 2, NA, NA)]
    got, report = htc_view(trace(rows, [(1.0, 1.0)] * 2))
    assert got.runtime.tolist() == [10.0, 20.0] and report.kept == 2
    assert report.kept_flagged == {UNKNOWN_USER: 0}


def test_ties_in_submit_time_keep_the_frames_order() -> None:
    # 40 jobs alternating at 0 s and 1 s: a sort that is not stable mixes their run times
    rows = [(i % 2, i + 1, 1, 1, 1, 1) for i in range(40)]
    got, _ = htc_view(trace(rows, [(float(i), 0.0) for i in range(40)]))
    assert got.runtime.tolist() == [float(i + 1) for i in range(0, 40, 2)] + [float(i + 1) for i in range(1, 40, 2)]
    assert got.input_bytes.tolist() == [float(i) for i in range(0, 40, 2)] + [float(i) for i in range(1, 40, 2)]
    tasks, _ = htc_view(trace([(i % 2, i + 1, 1, 1, 2, 2) for i in range(40)], [(float(i), 0.0) for i in range(40)]),
                        parallel="expand")
    assert tasks.runtime.tolist() == [float(i + 1) for i in range(0, 40, 2) for _ in (0, 1)] + [
        float(i + 1) for i in range(1, 40, 2) for _ in (0, 1)]


def test_volumes_are_drawn_for_every_row_before_the_filter() -> None:
    frame = trace(ROWS)
    got, report = htc_view(frame, seed=6)
    want_in, want_out = lognormal_volumes(16, 6, 28.0, 287.0, 1.0, 903.0)
    # the draws keep rows 10 and 11 (2 s); the kept rows in submit order: 10, 11, 8, 9, 12, 4, 6, 0
    order = [10, 11, 8, 9, 12, 4, 6, 0]
    assert got.submit.tolist() == [2.0, 2.0, 3.0, 3.0, 4.0, 7.0, 9.0, 10.0]
    np.testing.assert_allclose(got.input_bytes, want_in[order], rtol=1e-13, atol=0)
    np.testing.assert_allclose(got.output_bytes, want_out[order], rtol=1e-13, atol=0)
    # rows 1, 7; 2, 3, 13, 14; 5, 15; none
    assert report.removed == dict(zip(REASONS, [2, 4, 2, 0], strict=True))


def test_the_default_seed_is_0_and_the_default_model_is_used() -> None:
    frame = trace(ROWS[:1])
    got, _ = htc_view(frame)
    want_in, want_out = lognormal_volumes(1, 0, 28.0, 287.0, 1.0, 903.0)
    np.testing.assert_allclose(got.input_bytes, want_in, rtol=1e-13, atol=0)
    np.testing.assert_allclose(got.output_bytes, want_out, rtol=1e-13, atol=0)


def test_a_given_volume_model_and_seed_are_used() -> None:
    rows = [(i, 10, 1, 1, 1, 1) for i in range(5)]
    model = VolumeModel(mean_in_mb=3.0, mean_out_mb=0.0, sigma=0.5, max_mb=4.0)
    got, _ = htc_view(trace(rows), volumes=model, seed=12)
    want_in, want_out = lognormal_volumes(5, 12, 3.0, 0.0, 0.5, 4.0)
    np.testing.assert_allclose(got.input_bytes, want_in, rtol=1e-13, atol=0)
    assert got.output_bytes.tolist() == want_out.tolist() == [0.0] * 5
    assert got.input_bytes.max() <= 4e6


def test_one_volume_column_alone_is_not_used() -> None:
    rows = [(i, 10, 1, 1, 1, 1) for i in range(3)]
    frame = trace(rows)
    frame["input_bytes"] = pd.array([-1.0, -1.0, -1.0], dtype="Float64")  # would remove every job
    got, report = htc_view(frame, seed=2)
    want_in, _ = lognormal_volumes(3, 2, 28.0, 287.0, 1.0, 903.0)
    np.testing.assert_allclose(got.input_bytes, want_in, rtol=1e-13, atol=0)
    assert report.kept == 3
    frame = trace(rows)
    frame["output_bytes"] = pd.array([-1.0, -1.0, -1.0], dtype="Float64")
    got, report = htc_view(frame, seed=2)
    assert report.kept == 3 and report.removed["no data volume (or < 0)"] == 0


def test_an_empty_frame_gives_no_jobs() -> None:
    got, report = htc_view(trace([]), parallel="expand")
    assert len(got) == 0 and got.users == () and report.read == 0 and report.kept == 0
    assert report.removed == dict(zip(REASONS, [0, 0, 0, 0], strict=True))


def test_an_unknown_width_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"^parallel must be 'one' or 'expand', got 'many'$"):
        htc_view(trace(ROWS), parallel="many")  # type: ignore[arg-type]


def test_integer_byte_counts_become_float_bytes() -> None:
    # byte counts are whole numbers: columns of int64 (NumPy) or Int64 (pandas) still give float64 bytes
    rows = [(1, 10, 1, 1, 1, 1), (2, 20, 1, 1, 1, 1)]
    for dtype in ("int64", "Int64"):
        frame = trace(rows)
        frame["input_bytes"] = pd.Series([5, 0], dtype=dtype)
        frame["output_bytes"] = pd.Series([0, 7], dtype=dtype)
        got, report = htc_view(frame)
        assert got.input_bytes.dtype == np.float64 and got.output_bytes.dtype == np.float64
        assert got.input_bytes.tolist() == [5.0, 0.0] and got.output_bytes.tolist() == [0.0, 7.0]
        assert report.kept == 2


def test_volume_columns_of_python_objects_with_missing_values_remove_those_jobs() -> None:
    # object columns holding pd.NA (a frame built from lists): the missing volume removes the job
    rows = [(1, 10, 1, 1, 1, 1), (2, 20, 1, 1, 1, 1), (3, 30, 1, 1, 1, 1)]
    frame = trace(rows)
    frame["input_bytes"] = pd.Series([1.0, pd.NA, 3.0], dtype=object)
    frame["output_bytes"] = pd.Series([4.0, 5.0, pd.NA], dtype=object)
    got, report = htc_view(frame)
    assert got.runtime.tolist() == [10.0] and got.input_bytes.tolist() == [1.0] and got.output_bytes.tolist() == [4.0]
    assert report.removed == dict(zip(REASONS, [0, 0, 0, 2], strict=True))


def test_a_frame_of_plain_floats_with_nan_for_unknown_gives_the_same_jobs() -> None:
    ints = trace(ROWS, VOLUMES)
    floats = ints.astype("float64")  # NaN for unknown
    assert all(floats.dtypes == np.float64)
    for parallel in ("one", "expand"):
        want, want_report = htc_view(ints, parallel=parallel)
        got, got_report = htc_view(floats, parallel=parallel)
        for name in ("submit", "runtime", "user", "input_bytes", "output_bytes"):
            assert np.array_equal(getattr(got, name), getattr(want, name)), name
            assert getattr(got, name).dtype == getattr(want, name).dtype, name
        assert got.users == want.users and got_report == want_report
