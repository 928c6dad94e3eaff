"""Cell functions for the sweep tests, in their own module so Dask and Ray workers import it cheaply."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np


def coh_cost(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """A short real replay: a 200-job Lublin workload through ``config["policy"]``; its cost."""
    from broker.coh.config import CohConfig, SimulationConfig
    from broker.coh.simulate import simulate
    from broker.pricing.book import load_price_book
    from workloads.jobs import job_view
    from workloads.lublin import default_workload

    jobs, _ = job_view(default_workload(seed=seed, n_jobs=200), reqs="heterogeneous", seed=seed)
    config_ = SimulationConfig(CohConfig(config["policy"]))
    result = simulate(jobs, load_price_book().catalog(), config=config_, seed=seed)
    return {"policy": config["policy"], "cost": result.summary.cost, "vms": result.summary.instances_by_type}


def echo_seed(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """The seed the cell received and a first draw of its stream."""
    return {"i": config["i"], "seed": seed, "draw": float(np.random.default_rng(seed).random())}


def pid(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """The process the cell ran in."""
    return {"pid": os.getpid()}


def slow(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """``echo_seed`` after sleeping ``config["sleep_s"]``."""
    time.sleep(config["sleep_s"])
    return echo_seed(config, seed)


def recorded(markers: str, config: dict[str, Any], seed: int) -> dict[str, Any]:
    """``slow``, leaving a marker file ``<i>.<pid>.<ns>`` in ``markers`` for each computation."""
    (Path(markers) / f"{config['i']}.{os.getpid()}.{time.monotonic_ns()}").touch()
    return slow(config, seed)


def fails_on(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """Raises for the cell whose ``i`` is ``config["bad"]``."""
    if config["i"] == config["bad"]:
        raise RuntimeError(f"cell {config['i']} is broken")
    return echo_seed(config, seed)


def not_json(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """Returns a value JSON cannot encode."""
    return {"value": {1, 2}}
