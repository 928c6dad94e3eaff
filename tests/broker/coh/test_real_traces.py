"""Validate-mode replays of 20,000-job slices of real traces, for every heuristic of the paper's
trio and for CoH over them (the engine's invariants are checked on every tick)."""

from __future__ import annotations

from functools import cache

import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.pricing.book import load_price_book
from heuristics.registry import PAPER_TRIO
from tests.conftest import trace_path
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view

CATALOG = load_price_book().catalog()
SLICES = {"LCG": "LCG-2005-1.swf.gz", "KTH": "KTH-SP2-1996-2.1-cln.swf.gz"}


@cache
def slice_of(name: str, n: int = 20_000) -> JobTable:
    swf = load_trace(trace_path(SLICES[name]))
    jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=7, origin=swf.header.unix_start_time or 0, source=name)
    return jobs.head(n)


@pytest.mark.slow
@pytest.mark.parametrize("policy", [*PAPER_TRIO, "coh"])
@pytest.mark.parametrize("trace", sorted(SLICES))
def test_validate_mode_on_real_slices(trace: str, policy: str) -> None:
    jobs = slice_of(trace)
    result = simulate(jobs, CATALOG, config=SimulationConfig(CohConfig(policy), EngineConfig(validate=True)), seed=3)
    s = result.summary
    assert s.jobs == 20_000 and len(result.jobs) == 20_000
    assert s.cost >= s.lower_bound > 0
    assert s.wait_max_s == 0, "with a look-ahead of boot + tick, no job waits"
    assert 0 < s.utilization <= 1


@pytest.mark.slow
@pytest.mark.parametrize("charging", ["exact", "wall-clock"])
def test_billed_time_covers_every_lease_on_kth(charging: str) -> None:
    jobs = slice_of("KTH", 5000)
    config = SimulationConfig(CohConfig("FCFS-SM"), EngineConfig(charging=charging, validate=True))
    result = simulate(jobs, CATALOG, config=config, seed=3)
    vms = result.instances
    assert (vms.units * 3600 >= vms.released_at - vms.hired_at).all()
