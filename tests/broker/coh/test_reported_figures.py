"""Every reported figure of a CoH run asserted against values worked out by hand (issue 19's third example).

Twenty jobs, each a whole large VM (r = 410, 100 s), 5,000 s apart so that no VM is reused
(a VM started at tick t is released at t + 3,590 s). Without a look-ahead a job is decided at the
first 10 s tick at or after its arrival and waits for that tick plus the 120 s boot: a job arriving
``d`` seconds past a multiple of 10 waits ``120 + (10 - d) % 10``. Sixteen jobs arrive on the grid
(wait 120) and four at d = 7, 5, 3, 1 (waits 123, 125, 127, 129). Sorted, the waits are sixteen
120s, then 123, 125, 127, 129: the mean is (16 * 120 + 504) / 20 = 121.2 s; NumPy's default (linear)
95th percentile sits at rank 0.95 * 19 = 18.05, between 127 and 129: 127.1 s (the 90th would be
125.2, at rank 17.1); the maximum is 129 s. Each VM is billed one hour ($0.26): $5.20. Used capacity
is 20 * 410 * 100; billed 20 * 410 * 3,600 (utilization 100 / 3,600); leased 20 * 410 * 3,590
(utilization_leased 100 / 3,590).
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.pricing.book import load_price_book
from workloads.jobs import JobTable

OFFSETS = [0] * 16 + [7, 5, 3, 1]


@pytest.mark.parametrize("capacity", ["interval", "tick"])
def test_every_figure_of_a_run_with_known_waits(capacity: str) -> None:
    arrival = np.array([5000.0 * (i + 1) + d for i, d in enumerate(OFFSETS)])
    jobs = JobTable.from_arrays(arrival=arrival, runtime=np.full(20, 100.0), r=np.full(20, 410.0), origin=0)
    config = SimulationConfig(CohConfig("FCFS-LD", lookahead=0.0),
                              EngineConfig(validate=True, capacity=capacity))  # type: ignore[arg-type]
    res = simulate(jobs, load_price_book().catalog(), config=config, seed=1)
    s = res.summary
    waits = sorted(res.jobs["wait"].tolist())
    assert waits == [120.0] * 16 + [123.0, 125.0, 127.0, 129.0]
    assert s.wait_mean_s == pytest.approx(121.2)
    assert s.wait_p95_s == pytest.approx(127.1)
    assert s.wait_max_s == 129.0
    assert s.cost == pytest.approx(20 * 0.26)
    assert s.instances == 20 and s.instance_hours == pytest.approx(20.0)
    assert s.utilization == pytest.approx(100 / 3600)
    assert s.utilization_leased == pytest.approx(100 / 3590)
    assert s.lower_bound == pytest.approx(20 * 100 / 3600 * 0.26)  # 410 units for 100 s, at 0.26 per 410-unit hour
    assert s.cost_over_lb == pytest.approx(36.0)
