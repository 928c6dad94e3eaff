"""The bursty multi-user load: one user's draws step by step, the frame it makes, scaling by users.

Expected values are worked by hand in the comments (a scripted generator whose every draw is chosen)
or recomputed here with NumPy from the documented model (``workloads/bursty.py``). One user draws,
in this order, from its own generator: the rate multiplier ``exp(N(0, rate_sigma))`` on
``rate_median_per_h``, the run-time multiplier ``exp(N(0, runtime_user_sigma))`` on ``runtime_median_s``,
a quiet interval ``Exp(quiet_mean_h)`` times a uniform (it starts part-way into one); then, while
before the horizon of ``days``, a burst ``Exp(burst_mean_h)`` (cut at the horizon), a Poisson count at
the user's rate over it, that many uniform times in it (sorted), and the next quiet interval; finally
one ``N(0, runtime_sigma)`` per job for its run time ``round(median * exp(z))`` clipped to
``[1, runtime_max_s]``. Submit times are floored to whole seconds. User ``k`` (1-based id ``k``) draws
from child ``k - 1`` of ``SeedSequence(seed)``.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from tests.workloads.scripted import ScriptedDraws
from workloads import schema
from workloads.bursty import BurstyParams, _user, bursty_workload
from workloads.errors import ConfigError


class Scripted(ScriptedDraws):
    """Stands in for ``np.random.Generator`` with the draws this generator takes."""

    def normal(self, loc, scale, size=None):
        return self._next("normal", loc, scale, size)

    def exponential(self, scale):
        return self._next("exponential", scale)

    def random(self):
        return self._next("random")

    def poisson(self, lam):
        return self._next("poisson", lam)

    def uniform(self, low, high, size):
        return self._next("uniform", low, high, size)


def user_by_hand(seed: np.random.SeedSequence, uid: int, p: BurstyParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The documented model, written out with NumPy's generator (see the module docstring)."""
    rng = np.random.default_rng(seed)
    horizon = p.days * 24 * 60 * 60
    rate_per_s = p.rate_median_per_h * math.exp(rng.normal(0.0, p.rate_sigma)) / (60 * 60)
    median_s = p.runtime_median_s * math.exp(rng.normal(0.0, p.runtime_user_sigma))
    t = rng.exponential(p.quiet_mean_h * 60 * 60) * rng.random()
    submits: list[float] = []
    while t < horizon:
        end = min(t + rng.exponential(p.burst_mean_h * 60 * 60), horizon)
        count = rng.poisson(rate_per_s * (end - t))
        submits.extend(sorted(rng.uniform(t, end, count)))
        t = end + rng.exponential(p.quiet_mean_h * 60 * 60)
    submit = np.floor(np.array(submits, dtype=float))
    run = np.round(median_s * np.exp(rng.normal(0.0, p.runtime_sigma, len(submit))))
    run = np.minimum(np.maximum(run, 1.0), p.runtime_max_s)
    return submit, run, np.full(len(submit), float(uid))


def load_by_hand(n_users: int, seed: int, p: BurstyParams) -> pd.DataFrame:
    """The users' jobs together, by submit time (ties: lower user first, then the user's own order)."""
    parts = [user_by_hand(np.random.SeedSequence(seed, spawn_key=(k,)), k + 1, p) for k in range(n_users)]
    rows = sorted(((s, u, i, r) for sub, run, uid in parts for i, (s, r, u) in enumerate(zip(sub, run, uid,
                                                                                               strict=True))))
    return pd.DataFrame({"submit_time": [r[0] for r in rows], "run_time": [r[3] for r in rows],
                         "user_id": [r[1] for r in rows]})


# ---------------------------------------------------------------------------------------------- BurstyParams


def test_the_defaults() -> None:
    p = BurstyParams()
    assert (p.users, p.days, p.burst_mean_h, p.quiet_mean_h) == (10, 14.0, 3.0, 30.0)
    assert (p.rate_median_per_h, p.rate_sigma) == (30.0, 1.0)
    assert (p.runtime_median_s, p.runtime_user_sigma, p.runtime_sigma) == (1200.0, 0.8, 1.2)
    assert p.runtime_max_s == 259_200.0  # three days


def test_the_smallest_accepted_parameters() -> None:
    BurstyParams(users=1, days=1e-9, burst_mean_h=1e-9, quiet_mean_h=1e-9)


@pytest.mark.parametrize(("bad", "message"), [
    ({"users": 0}, "users must be a finite number >= 1, got 0"),
    ({"users": -3}, "users must be a finite number >= 1, got -3"),
    ({"users": 1.5}, "users must be a whole number, got 1.5"),
    ({"days": 0.0}, "days must be a finite number > 0, got 0.0"),
    ({"days": -1.0}, "days must be a finite number > 0, got -1.0"),
    ({"days": float("inf")}, "days must be a finite number > 0, got inf"),
    ({"burst_mean_h": 0.0}, "burst_mean_h must be a finite number > 0, got 0.0"),
    ({"quiet_mean_h": 0.0}, "quiet_mean_h must be a finite number > 0, got 0.0"),
    ({"burst_mean_h": -2.0}, "burst_mean_h must be a finite number > 0, got -2.0"),
    ({"quiet_mean_h": float("nan")}, "quiet_mean_h must be a finite number > 0, got nan"),
    ({"rate_median_per_h": -1.0}, "rate_median_per_h must be a finite number >= 0, got -1.0"),
    ({"rate_median_per_h": float("nan")}, "rate_median_per_h must be a finite number >= 0, got nan"),
    ({"rate_sigma": -0.5}, "rate_sigma must be a finite number >= 0, got -0.5"),
    ({"runtime_median_s": 0.0}, "runtime_median_s must be a finite number > 0, got 0.0"),
    ({"runtime_median_s": -5.0}, "runtime_median_s must be a finite number > 0, got -5.0"),
    ({"runtime_user_sigma": -1e-9}, "runtime_user_sigma must be a finite number >= 0, got -1e-09"),
    ({"runtime_sigma": -1.0}, "runtime_sigma must be a finite number >= 0, got -1.0"),
    ({"runtime_max_s": 0.5}, "runtime_max_s must be a finite number >= 1, got 0.5"),
    ({"runtime_max_s": 100.5}, "runtime_max_s must be a whole number, got 100.5"),
])
def test_each_parameter_out_of_range_is_refused_by_name(bad: dict, message: str) -> None:
    # every escape here was NumPy's or pandas' own error, or (a negative median) every run time silently 1 s
    with pytest.raises(ConfigError, match="^BurstyParams." + re.escape(message) + "$"):
        BurstyParams(**bad)


def test_the_least_accepted_spreads_rate_and_longest_run() -> None:
    # a rate of 0 (no job), spreads of 0 and a longest run of exactly 1 s are allowed
    p = BurstyParams(users=1, days=1.0, rate_median_per_h=0.0, rate_sigma=0.0, runtime_user_sigma=0.0,
                     runtime_sigma=0.0, runtime_max_s=1.0)
    assert len(bursty_workload(1, seed=3, params=p)) == 0


# ---------------------------------------------------------------------------------------------- _user, scripted

P = BurstyParams(users=1, days=1.0, burst_mean_h=2.0, quiet_mean_h=10.0, rate_median_per_h=36.0, rate_sigma=0.5,
                 runtime_median_s=300.0, runtime_user_sigma=0.3, runtime_sigma=0.7, runtime_max_s=5000.0)


def test_one_user_step_by_step() -> None:
    # horizon 1 day = 86,400 s; quiet mean 10 h = 36,000 s; burst mean 2 h = 7,200 s
    draws = [
        math.log(2.0),          # rate: 36 / h * 2 = 72 / h = 0.02 / s
        math.log(1.0),          # user median: 300 s * 1
        20_000.0, 0.5,          # first quiet interval 20,000 s, half gone: first burst at 10,000 s
        5_000.0,                # burst 10,000 - 15,000 s
        3,                      # Poisson(0.02 * 5,000 = 100) -> 3 jobs
        np.array([14_000.7, 10_000.2, 12_000.5]),
        60_000.0,               # quiet: next burst at 75,000 s
        20_000.0,               # burst 75,000 - 95,000 s, cut at 86,400 s
        2,                      # Poisson(0.02 * 11,400 = 228) -> 2 jobs
        np.array([80_000.9, 76_000.1]),
        0.0,                    # quiet 0: t = 86,400 s exactly, the horizon: no more bursts
        np.log([2.0, 1.006, 100.0, 0.001, 0.334]),  # run times 300 s times these
    ]
    rng = Scripted(draws)
    submit, run, uid = _user(rng, 7, P)  # type: ignore[arg-type]
    assert rng.draws == []
    assert rng.calls == [
        ("normal", 0.0, 0.5, None), ("normal", 0.0, 0.3, None), ("exponential", 36_000.0), ("random",),
        ("exponential", 7_200.0), ("poisson", pytest.approx(100.0)), ("uniform", 10_000.0, 15_000.0, 3),
        ("exponential", 36_000.0),
        ("exponential", 7_200.0), ("poisson", pytest.approx(228.0)), ("uniform", 75_000.0, 86_400.0, 2),
        ("exponential", 36_000.0),
        ("normal", 0.0, 0.7, 5),
    ]
    # sorted within each burst, floored to whole seconds
    assert submit.tolist() == [10_000.0, 12_000.0, 14_000.0, 76_000.0, 80_000.0]
    # 600; 301.8 -> 302 (rounded, not floored); 30,000 -> 5,000 (the max); 0.3 -> 0 -> 1 (the min); 100.2 -> 100
    assert run.tolist() == [600.0, 302.0, 5000.0, 1.0, 100.0]
    assert uid.tolist() == [7.0] * 5 and uid.dtype == np.float64


def test_the_run_time_median_and_the_horizon_scale_by_their_parameters() -> None:
    # rate 36 / h * e^0 = 0.01 / s; median 300 s * e^0 = 300 s; days 0.5: horizon 43,200 s;
    # start 1,000 s * 0.25 = 250 s; burst to 250 + 1,000 = 1,250 s: Poisson(0.01 * 1,000 = 10) -> 1 job;
    # quiet 42,000 s: t = 43,250 s, past the horizon
    p = BurstyParams(days=0.5, burst_mean_h=2.0, quiet_mean_h=10.0, rate_median_per_h=36.0, runtime_median_s=300.0,
                     runtime_max_s=1e6)
    rng = Scripted([0.0, 0.0, 1_000.0, 0.25, 1_000.0, 1, np.array([999.99]), 42_000.0, np.array([0.0])])
    submit, run, uid = _user(rng, 1, p)  # type: ignore[arg-type]
    assert rng.draws == []
    assert rng.calls[5] == ("poisson", pytest.approx(10.0)) and rng.calls[6] == ("uniform", 250.0, 1250.0, 1)
    assert rng.calls[-1] == ("normal", 0.0, 1.2, 1)
    assert submit.tolist() == [999.0] and run.tolist() == [300.0] and uid.tolist() == [1.0]


def test_a_user_whose_first_quiet_interval_outlasts_the_horizon_submits_nothing() -> None:
    # 172,800 s * 0.5 = 86,400 s: the first burst would start exactly at the horizon
    rng = Scripted([0.1, 0.2, 172_800.0, 0.5, np.empty(0)])
    submit, run, uid = _user(rng, 3, P)  # type: ignore[arg-type]
    assert rng.draws == [] and rng.calls[-1] == ("normal", 0.0, 0.7, 0)
    assert submit.shape == (0,) and run.shape == (0,) and uid.shape == (0,)


def test_a_burst_just_before_the_horizon_is_drawn() -> None:
    # start 86,399 s: a burst cut at 86,400 s (1 s long), Poisson(0.02 * 1) -> 1 job at 86,399.5 s -> 86,399 s
    rng = Scripted([math.log(2.0), 0.0, 86_399.0, 1.0, 50.0, 1, np.array([86_399.5]), 10.0, np.array([0.0])])
    submit, run, _ = _user(rng, 1, P)  # type: ignore[arg-type]
    assert rng.calls[4:7] == [("exponential", 7200.0), ("poisson", pytest.approx(0.02)),
                              ("uniform", 86_399.0, 86_400.0, 1)]
    assert submit.tolist() == [86_399.0] and run.tolist() == [300.0]


# ---------------------------------------------------------------------------------------------- _user, seeded


@pytest.mark.parametrize("seed", [0, 1, 17])
def test_one_user_matches_the_model_written_out(seed: int) -> None:
    p = BurstyParams(days=3.0, burst_mean_h=2.0, quiet_mean_h=7.0, rate_median_per_h=20.0, rate_sigma=0.6,
                     runtime_median_s=50.0, runtime_user_sigma=0.9, runtime_sigma=2.5, runtime_max_s=2000.0)
    child = np.random.SeedSequence(seed, spawn_key=(2,))
    submit, run, uid = _user(np.random.default_rng(child), 3, p)
    want_submit, want_run, want_uid = user_by_hand(child, 3, p)
    assert len(submit) > 10
    assert np.array_equal(submit, want_submit) and np.array_equal(uid, want_uid)
    np.testing.assert_allclose(run, want_run, rtol=1e-12, atol=0)
    # sigma 2.5 on a 50 s median: both clips are reached
    assert run.min() == 1.0 and run.max() == 2000.0


# ---------------------------------------------------------------------------------------------- bursty_workload


def check_frame(frame: pd.DataFrame, want: pd.DataFrame) -> None:
    n = len(want)
    assert list(frame.columns) == list(schema.COLUMN_NAMES)
    assert {name: str(t) for name, t in frame.dtypes.items()} == schema.DTYPES
    assert frame.index.tolist() == list(range(n))
    assert frame["job_id"].tolist() == list(range(1, n + 1))
    assert frame["submit_time"].tolist() == want["submit_time"].tolist()
    assert frame["run_time"].tolist() == want["run_time"].tolist()
    assert frame["user_id"].tolist() == want["user_id"].tolist()
    for name in ("allocated_procs", "requested_procs", "status"):
        assert frame[name].tolist() == [1] * n, name
    unknown = [c for c in schema.COLUMN_NAMES
               if c not in {"job_id", "submit_time", "run_time", "allocated_procs", "requested_procs", "status",
                            "user_id"}]
    assert len(unknown) == 11 and frame[unknown].isna().all().all()


def test_the_load_is_its_users_jobs_by_submit_time() -> None:
    p = BurstyParams(users=4, days=2.0, rate_median_per_h=10.0, runtime_median_s=100.0)
    frame = bursty_workload(seed=3, params=p)
    want = load_by_hand(4, 3, p)
    assert len(frame) > 20 and sorted(frame["user_id"].unique()) == [1, 2, 3, 4]
    check_frame(frame, want)


def test_ties_in_submit_time_keep_the_lower_user_first() -> None:
    # 3 users at ~10 jobs a second for 432 s: many jobs share a whole second, across and within users
    p = BurstyParams(users=3, days=0.005, burst_mean_h=10.0, quiet_mean_h=0.001, rate_median_per_h=36_000.0,
                     rate_sigma=0.1)
    frame = bursty_workload(seed=5, params=p)
    want = load_by_hand(3, 5, p)
    assert frame["submit_time"].duplicated().sum() > 1000
    check_frame(frame, want)
    same = frame.groupby("submit_time")["user_id"]
    assert (same.apply(lambda u: u.is_monotonic_increasing)).all()


def test_the_default_load_is_ten_users_of_the_default_parameters_and_seed_0() -> None:
    frame = bursty_workload()
    check_frame(frame, load_by_hand(10, 0, BurstyParams()))
    assert frame.equals(bursty_workload(1.0, seed=0, params=BurstyParams()))


@pytest.mark.parametrize(("scale", "users"), [(0.01, 1), (0.04, 1), (0.05, 1), (0.06, 1), (0.26, 3), (1.25, 12),
                                               (2, 20), (3.0, 30)])
def test_the_scale_multiplies_the_users_rounded_at_least_one(scale: float, users: int) -> None:
    # round(10 * scale): 0.1 -> 0, raised to 1; 0.4 -> 0 -> 1; 0.5 -> 0 -> 1 (to even); 0.6 -> 1; 2.6 -> 3;
    # 12.5 -> 12 (to even); 20; 30
    # every user submits: 10 jobs an hour, bursts of 1 h between quiet intervals of 0.01 h, for 3 h
    p = BurstyParams(days=0.125, burst_mean_h=1.0, quiet_mean_h=0.01, rate_median_per_h=10.0, rate_sigma=0.1)
    frame = bursty_workload(scale, seed=2, params=p)
    assert sorted(frame["user_id"].unique()) == list(range(1, users + 1))


def test_one_user_of_scale_half_with_two_users() -> None:
    # round(2 * 0.75) = round(1.5) = 2 users; round(2 * 0.5) = 1 user
    p = BurstyParams(users=2, days=1.0, rate_median_per_h=20.0)
    assert sorted(bursty_workload(0.75, seed=1, params=p)["user_id"].unique()) == [1, 2]
    frame = bursty_workload(0.5, seed=1, params=p)
    check_frame(frame, load_by_hand(1, 1, p))


@pytest.mark.parametrize("scale", [0, 0.0, -1, float("nan"), float("inf")])
def test_a_scale_not_above_zero_is_refused(scale: float) -> None:
    with pytest.raises(ConfigError, match=rf"^scale must be a finite number > 0, got {scale}$"):
        bursty_workload(scale)


def test_scale_1_users_are_exactly_the_first_users_of_scale_2() -> None:
    p = BurstyParams(users=3, days=2.0)
    small, big = bursty_workload(1, seed=9, params=p), bursty_workload(2, seed=9, params=p)
    assert sorted(big["user_id"].unique()) == [1, 2, 3, 4, 5, 6]
    for uid in (1, 2, 3):
        mine = small[small["user_id"] == uid]
        theirs = big[big["user_id"] == uid]
        assert mine["submit_time"].tolist() == theirs["submit_time"].tolist()
        assert mine["run_time"].tolist() == theirs["run_time"].tolist()
    assert len(big) > len(small) > 0
    other = bursty_workload(1, seed=10, params=p)
    assert other["submit_time"].tolist() != small["submit_time"].tolist()


def test_a_large_load_has_the_documented_rates_and_run_times() -> None:
    # 60 users, 40 days: bursts of mean 1 h between quiet intervals of mean 9 h, so a user is in a burst a
    # tenth of the time; rate 3 / h with a small spread (sigma 0.1, mean multiplier e^0.005): about
    # 3 * 1.005 * 960 h * 0.1 = 289 jobs a user, 17,400 in all (the sum over 60 users varies by a few %).
    # Run times: log(run) = log(1200) + z_user (sigma 0.8) + z_job (sigma 1.2): within a user the log spread
    # is 1.2; the mean of log(run) is log(1200) = 7.09 to within 3 standard errors (0.8 / sqrt(60) = 0.10).
    p = BurstyParams(users=60, days=40.0, burst_mean_h=1.0, quiet_mean_h=9.0, rate_median_per_h=3.0,
                     rate_sigma=0.1)
    frame = bursty_workload(seed=1, params=p)
    per_user = frame.groupby("user_id").size()
    assert len(per_user) == 60
    assert per_user.mean() == pytest.approx(3 * math.exp(0.005) * 960 * 0.1, rel=0.08)
    log_run = np.log(frame["run_time"].astype(float))
    assert log_run.mean() == pytest.approx(math.log(1200.0), abs=0.3)
    within = log_run.groupby(frame["user_id"]).transform("mean")
    assert float(np.sqrt(((log_run - within) ** 2).mean())) == pytest.approx(1.2, rel=0.03)
    assert (frame["run_time"] >= 1).all() and (frame["run_time"] <= 3 * 86400).all()
    assert frame["submit_time"].is_monotonic_increasing and frame["submit_time"].max() < 40 * 86400


def test_rates_spread_over_users_by_rate_sigma() -> None:
    # rate multiplier exp(N(0, 1)): with bursts and quiet intervals short next to 100 days, a user's job
    # count is near rate * horizon / 10, so log(count) spreads over users with standard deviation about 1
    p = BurstyParams(users=80, days=100.0, burst_mean_h=1.0, quiet_mean_h=9.0, rate_median_per_h=2.0,
                     rate_sigma=1.0, runtime_sigma=0.0, runtime_user_sigma=0.0)
    frame = bursty_workload(seed=2, params=p)
    counts = frame.groupby("user_id").size()
    assert len(counts) == 80  # median 2 / h * 2,400 h / 10 = 480 jobs a user
    assert float(np.log(counts).std()) == pytest.approx(1.0, rel=0.2)
    assert float(np.median(counts)) == pytest.approx(480, rel=0.3)
    # no spread in run times: every job runs the 1200 s median
    assert (frame["run_time"] == 1200).all()


def test_a_load_with_no_jobs_is_an_empty_frame_of_the_schema() -> None:
    # one user, 86.4 s long, quiet intervals of mean 1,000 h: the first burst starts after the horizon
    frame = bursty_workload(seed=0, params=BurstyParams(users=1, days=0.001, quiet_mean_h=1000.0))
    assert len(frame) == 0
    check_frame(frame, pd.DataFrame({"submit_time": [], "run_time": [], "user_id": []}))
