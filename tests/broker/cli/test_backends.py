"""The CLI's backends: a Dask LocalCluster and a local Ray runtime give the results the sequential run gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from joblib import parallel_config

from broker.cli.backends import joblib_backend
from broker.sweep import Cell, cells, run_sweep
from tests.broker.sweep_cells import coh_cost, echo_seed
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def grid() -> list[Cell]:
    return cells([{"policy": p} for p in ("coh", "FCFS-CFH", "FCFS-SM")], name="coh-cost", root_seed=2024, repeats=2)


@pytest.fixture(scope="module")
def reference(grid: list[Cell]) -> list[dict]:
    with parallel_config(backend="sequential"):
        return run_sweep(coh_cost, grid)


def stored_keys(store: Path) -> set[str]:
    return {p.stem for p in store.glob("*.json")}


def test_dask_local_cluster_matches_sequential(grid, reference, tmp_path):
    from distributed import Client, LocalCluster

    assert len({r["cost"] for r in reference}) > 1  # the cells differ: the comparison means something
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        with pytest.raises(ValueError, match="needs a distributed cluster"), joblib_backend("dask"):
            pass  # no client yet, no address
        with joblib_backend("dask", cluster.scheduler_address):
            assert run_sweep(coh_cost, grid) == reference
        with Client(cluster), joblib_backend("dask"):
            assert run_sweep(coh_cost, grid, store=tmp_path) == reference
    assert stored_keys(tmp_path) == {c.key for c in grid}


def test_ray_local_matches_sequential(grid, reference, tmp_path):
    import ray
    from ray.job_config import JobConfig

    assert not ray.is_initialized()
    with pytest.raises(ValueError, match="needs a Ray cluster"), joblib_backend("ray"):
        pass
    # Ray's workers get the driver's working directory on their path, not its sys.path: name the checkout.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             job_config=JobConfig(code_search_path=[str(REPO_ROOT)]))
    try:
        with joblib_backend("ray"):
            assert run_sweep(coh_cost, grid, store=tmp_path) == reference
    finally:
        ray.shutdown()
    assert stored_keys(tmp_path) == {c.key for c in grid}


def test_bad_backend_arguments():
    grid = cells([{"i": 0}], name="args", root_seed=1)
    with pytest.raises(ValueError, match="unknown backend"), joblib_backend("spark"):
        run_sweep(echo_seed, grid)
    with pytest.raises(ValueError, match="--scheduler is for"), joblib_backend("loky", "tcp://127.0.0.1:8786"):
        run_sweep(echo_seed, grid)
