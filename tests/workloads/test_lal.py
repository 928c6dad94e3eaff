"""The LAL-like workload (:mod:`workloads.lal`): the paper's Table 1 shape, its load, its seed, its refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workloads.cores import cores_view
from workloads.errors import ConfigError
from workloads.lal import LAL_SHARES, LalParams, batch_runtimes, interactive_runtimes, lal_workload


@pytest.fixture(scope="module")
def lal() -> pd.DataFrame:
    return lal_workload(seed=3)


def test_the_class_mix_is_table_1s(lal: pd.DataFrame) -> None:
    runtime = lal["run_time"].to_numpy(dtype=float)
    assert len(lal) == 9500 and int((runtime < 900).sum()) == 4480


def test_the_run_times_have_table_1s_statistics(lal: pd.DataFrame) -> None:
    runtime = lal["run_time"].to_numpy(dtype=float)
    inter, batch = runtime[runtime < 900], runtime[runtime >= 900]
    # Table 1: interactive mean 160, median 190, std 108; batch mean 34,927, median 15,615 (std 78,755)
    assert inter.mean() == pytest.approx(160, rel=0.05) and np.median(inter) == pytest.approx(190, rel=0.05)
    assert inter.std() == pytest.approx(108, rel=0.08)
    assert batch.mean() == pytest.approx(34927, rel=0.15) and np.median(batch) == pytest.approx(15615, rel=0.08)
    assert inter.min() >= 0 and batch.min() >= 900


def test_the_load_on_81_cores_is_056(lal: pd.DataFrame) -> None:
    submit = lal["submit_time"].to_numpy(dtype=float)
    work = lal["run_time"].to_numpy(dtype=float).sum()
    # the bursts' starts span work / (0.56 x 81); the last burst's tail adds a few minutes at most
    assert work / (81 * (submit.max() - submit.min())) == pytest.approx(0.56, rel=0.02)
    assert np.all(np.diff(submit) >= 0) and submit.min() >= 0


def test_the_groups_follow_the_papers_shares(lal: pd.DataFrame) -> None:
    groups = lal["group_id"].to_numpy(dtype=np.int64)
    assert set(groups) <= set(range(1, len(LAL_SHARES) + 1))
    assert np.isin(groups, np.arange(1, 8)).all() and len(set(groups)) >= 4  # one VO a burst: heavy-tailed bursts


def test_every_job_is_one_core_and_the_view_keeps_them_all(lal: pd.DataFrame) -> None:
    jobs, report = cores_view(lal)
    assert len(jobs) == 9500 and sum(report.removed.values()) == 0
    assert (lal["allocated_procs"] == 1).all()


def test_same_seed_same_workload_another_seed_another() -> None:
    small = LalParams(interactive=40, batch=60)
    pd.testing.assert_frame_equal(lal_workload(small, seed=5), lal_workload(small, seed=5))
    assert not lal_workload(small, seed=5).equals(lal_workload(small, seed=6))


def test_bursts_of_one_job_without_gaps() -> None:
    frame = lal_workload(LalParams(interactive=3, batch=0, gap_mean_s=0), seed=1)
    assert len(frame) == 3 and (frame["run_time"] < 900).all()
    assert frame["submit_time"].nunique() <= 3


def test_the_run_time_draws_stay_in_their_class() -> None:
    rng = np.random.default_rng(0)
    inter, batch = interactive_runtimes(5000, rng), batch_runtimes(5000, rng)
    assert inter.min() >= 0 and inter.max() < 900 and batch.min() >= 900
    assert np.mean(inter < 10) == pytest.approx(0.3, abs=0.03)  # the quick jobs


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"interactive": 0, "batch": 0}, "at least one job"),
    ({"interactive": -1}, "job counts >= 0"),
    ({"load": 0.0}, r"the load must lie in \(0, 10\]"),
    ({"load": float("nan")}, r"the load must lie in \(0, 10\]"),
    ({"cores": 0}, "cores must be >= 1"),
    ({"burst_alpha": 0.0}, "tail index must be a finite number > 0"),
    ({"burst_alpha": float("inf")}, "tail index must be a finite number > 0"),
    ({"gap_mean_s": -1.0}, "mean gap must be a finite number >= 0"),
])
def test_bad_parameters_are_refused(kwargs, match) -> None:
    with pytest.raises(ConfigError, match=match):
        LalParams(**kwargs)
