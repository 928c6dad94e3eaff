"""The LAL-like workload's values (:mod:`workloads.lal`): each draw's parameters and bounds with scripted draws,
the bursts' sizes by hand, the trace against the documented model written out, the parameters' edges."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.workloads.scripted import ScriptedDraws
from workloads import schema
from workloads.errors import ConfigError
from workloads.lal import LAL_SHARES, LalParams, _bursts, batch_runtimes, interactive_runtimes, lal_workload


class Scripted(ScriptedDraws):
    """Stands in for ``np.random.Generator`` with the draws this generator takes."""

    def random(self, size=None):
        return self._next("random", size)

    def uniform(self, low, high, size=None):
        return self._next("uniform", low, high, size)

    def normal(self, loc, scale, size=None):
        return self._next("normal", loc, scale, size)

    def pareto(self, a):
        return self._next("pareto", a)


def test_interactive_quick_jobs_are_uniform_draws_and_the_others_normal_redrawn_outside_10_900() -> None:
    rng = Scripted([np.array([0.3, 0.1, 0.5, 0.29]),          # 0.3 is not quick (< 0.3 is)
                    np.array([7.0, 2.5, 9.0, 4.0]),           # uniform [0, 10): kept where quick
                    np.array([9.99, 900.0]),                  # normal for jobs 0 and 2: both out of [10, 900)
                    np.array([10.0, 899.5])])                 # redrawn: both in
    out = interactive_runtimes(4, rng)
    assert out.dtype == np.float64 and out.tolist() == [10.0, 2.5, 899.5, 4.0]
    assert rng.calls == [("random", 4), ("uniform", 0.0, 10.0, 4), ("normal", 222.0, 53.0, 2),
                         ("normal", 222.0, 53.0, 2)]
    assert rng.draws == []


def test_interactive_redraws_only_the_rejected_jobs() -> None:
    rng = Scripted([np.array([0.9, 0.9]), np.array([1.0, 1.0]), np.array([300.0, 1000.0]), np.array([150.0])])
    assert interactive_runtimes(2, rng).tolist() == [300.0, 150.0]
    assert rng.calls[-1] == ("normal", 222.0, 53.0, 1) and rng.draws == []


def test_batch_is_lognormal_with_table_1s_median_and_mean_redrawn_below_900() -> None:
    sigma = math.sqrt(2.0 * math.log(34927.0 / 15615.0))  # mean = median x exp(sigma^2 / 2)
    assert sigma == pytest.approx(1.26888, abs=1e-5)
    rng = Scripted([np.log(np.array([899.0, 900.5, 20000.0])), np.log(np.array([1000.0]))])
    out = batch_runtimes(3, rng)
    assert out.tolist() == pytest.approx([1000.0, 900.5, 20000.0], rel=1e-12)
    (name, mu, s, size), (_, mu2, s2, size2) = rng.calls
    assert name == "normal" and mu == mu2 == math.log(15615.0) and s == s2 == pytest.approx(1.26888, abs=1e-5)
    assert (size, size2) == (3, 1) and rng.draws == []


def test_bursts_are_the_ceil_of_one_plus_a_pareto_and_the_last_is_cut_short() -> None:
    rng = Scripted([0.5, 2.0])  # ceil(1.5) = 2, ceil(3.0) = 3: 5 jobs, no further draw
    sizes = _bursts(5, 1.5, rng)
    assert sizes.dtype == np.int64 and sizes.tolist() == [2, 3] and rng.calls == [("pareto", 1.5)] * 2
    rng = Scripted([0.2, 10.0])  # ceil(1.2) = 2, then 11 cut to the 3 jobs left
    assert _bursts(5, 1.0, rng).tolist() == [2, 3] and rng.draws == []
    rng = Scripted([0.0, 0.0, 0.0])  # a Pareto of 0: bursts of one job
    assert _bursts(3, 1.0, rng).tolist() == [1, 1, 1]


def test_a_burst_of_an_infinite_draw_is_the_jobs_left() -> None:
    # a tiny tail index draws Pareto values that overflow to inf: the burst takes the jobs left
    assert _bursts(4, 1.0, Scripted([0.5, float("inf")])).tolist() == [2, 2]
    frame = lal_workload(LalParams(interactive=3, batch=0, burst_alpha=1e-9), seed=7)
    assert len(frame) == 3 and frame["group_id"].nunique() == 1


def lal_by_hand(p: LalParams, seed: int) -> pd.DataFrame:
    """The documented model written out job by job with NumPy's generators (see the module docstring)."""
    class_rng, run_rng, time_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    bursts: list[tuple[int, bool]] = []
    for interactive, count in ((True, p.interactive), (False, p.batch)):
        left = count
        while left > 0:
            size = min(math.ceil(1.0 + class_rng.pareto(p.burst_alpha)), left)
            bursts.append((size, interactive))
            left -= size
    groups = class_rng.choice(7, size=len(bursts), p=list(LAL_SHARES))
    kinds = [k for size, k in bursts for _ in range(size)]
    n_inter = sum(kinds)
    inter = interactive_runtimes(n_inter, run_rng)
    batch = batch_runtimes(len(kinds) - n_inter, run_rng)
    it_i, it_b = iter(inter), iter(batch)
    runtime = [round(float(next(it_i) if k else next(it_b))) for k in kinds]
    span = sum(runtime) / (p.load * p.cores)
    starts = time_rng.uniform(0.0, span, len(bursts))
    gaps = time_rng.exponential(p.gap_mean_s, len(kinds)) if p.gap_mean_s > 0 else np.zeros(len(kinds))
    jobs = []  # (submit, run time, group)
    j = 0
    for b, (size, _k) in enumerate(bursts):
        offset = 0.0
        for i in range(size):
            if i:
                offset += gaps[j]
            jobs.append((math.floor(starts[b] + offset), runtime[j], groups[b] + 1))
            j += 1
    jobs.sort(key=lambda job: job[0])  # stable: ties keep the bursts' order
    n = len(jobs)
    columns: dict[str, object] = {name: np.full(n, -1.0) for name in schema.COLUMN_NAMES}
    columns.update(job_id=np.arange(1.0, n + 1), submit_time=np.array([s for s, _, _ in jobs], dtype=float),
                   run_time=np.array([r for _, r, _ in jobs], dtype=float), allocated_procs=np.ones(n),
                   requested_procs=np.ones(n), status=np.ones(n),
                   group_id=np.array([g for _, _, g in jobs], dtype=float))
    return schema.from_float_columns(columns)


@pytest.mark.parametrize(("params", "seed"), [
    (LalParams(interactive=30, batch=20), 4),
    (LalParams(interactive=40, batch=0, gap_mean_s=0.0, burst_alpha=0.5), 2),  # many ties
    (LalParams(interactive=5, batch=25, load=0.9, cores=7, gap_mean_s=500.0), 11),
    (LalParams(interactive=30, batch=10, load=10.0, cores=100_000, gap_mean_s=0.5), 3),  # bursts on top of each other
])
def test_the_trace_is_the_documented_model_job_by_job(params: LalParams, seed: int) -> None:
    pd.testing.assert_frame_equal(lal_workload(params, seed=seed), lal_by_hand(params, seed))


def test_the_default_seed_is_0() -> None:
    small = LalParams(interactive=10, batch=10)
    pd.testing.assert_frame_equal(lal_workload(small), lal_workload(small, seed=0))


def test_the_columns_a_lal_job_lacks_are_unknown_and_the_rest_as_given() -> None:
    frame = lal_workload(LalParams(interactive=6, batch=4), seed=1)
    assert list(frame.columns) == list(schema.COLUMN_NAMES)
    for name in ("wait_time", "avg_cpu_time", "used_memory", "requested_time", "requested_memory", "user_id",
                 "executable", "queue", "partition", "preceding_job", "think_time"):
        assert frame[name].isna().all(), name
    assert frame["job_id"].tolist() == list(range(1, 11))
    assert (frame["allocated_procs"] == 1).all() and (frame["requested_procs"] == 1).all()
    assert (frame["status"] == 1).all()
    assert frame["group_id"].between(1, 7).all() and frame["submit_time"].notna().all()


@pytest.mark.parametrize("kwargs", [
    {"interactive": 0, "batch": 5}, {"interactive": 1, "batch": 0}, {"interactive": 0, "batch": 1},
    {"load": 10.0}, {"cores": 1}, {"gap_mean_s": 0.0}, {"burst_alpha": 1e-9},
])
def test_the_parameters_edges_are_accepted(kwargs) -> None:
    assert LalParams(**kwargs) is not None


@pytest.mark.parametrize("kwargs", [{"load": 10.5}, {"batch": -1}, {"cores": -3}, {"gap_mean_s": float("inf")}])
def test_just_past_the_edges_is_refused(kwargs) -> None:
    with pytest.raises(ConfigError):
        LalParams(**kwargs)


def test_one_job_is_a_workload() -> None:
    frame = lal_workload(LalParams(interactive=0, batch=1), seed=0)
    run = float(frame["run_time"].iloc[0])
    _c, _r, time_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(0).spawn(3))
    # the span is the work over load x cores: 0.56 x 81 cores; the one burst starts uniform in it
    assert len(frame) == 1 and run >= 900
    assert frame["submit_time"].iloc[0] == math.floor(time_rng.uniform(0.0, run / (0.56 * 81)))
