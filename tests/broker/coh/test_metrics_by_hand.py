"""Every field of a CoH run's summary and job table on runs small enough to work out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.pricing.book import HOURS_PER_YEAR, load_price_book
from broker.pricing.reservations import ReservationPlan
from workloads.jobs import JobTable

CATALOG = load_price_book().catalog()
LIGHT_LARGE_HOURLY, LIGHT_LARGE_UPFRONT = 0.156, 276.0  # the book's 1-year light reservation of a large VM
ON_DEMAND_LARGE = 0.26


def test_two_vms_one_reserved_one_on_demand() -> None:
    # Two jobs of 300 units (a large VM each: 410 units, 300 + 300 do not fit one) arrive at 1,000 for 100 s.
    # Decided at the tick 130 s ahead (870): two large VMs start, one on the plan's light reservation, one on
    # demand; both idle after 1,100 and released 10 s before their first hour ends, at 870 + 3,590 = 4,460.
    # The run spans 870 .. 4,460 = 3,590 s: its share of the light reservation's upfront price is
    # 276 x 3,590 / (3,600 x 8,760).
    jobs = JobTable.from_arrays(arrival=np.array([1000.0, 1000.0]), runtime=np.array([100.0, 100.0]),
                                r=np.array([300.0, 300.0]), origin=0)
    config = SimulationConfig(CohConfig("coh-r"), EngineConfig(validate=True),
                              reservations=ReservationPlan(1, {("large", "reserved-light"): 1}))
    res = simulate(jobs, CATALOG, config=config, seed=1)
    s = res.summary
    upfront = LIGHT_LARGE_UPFRONT * 3590 / (3600 * HOURS_PER_YEAR)
    assert s.policy == "coh-r" and s.jobs == 2
    assert s.upfront_amortized == pytest.approx(upfront, rel=1e-12)
    assert s.cost == round(ON_DEMAND_LARGE + LIGHT_LARGE_HOURLY + upfront, 10)  # the summary's cost: to 1e-10 $
    assert s.cost_by_option == pytest.approx({"on-demand": ON_DEMAND_LARGE, "reserved-light": LIGHT_LARGE_HOURLY})
    assert s.instances == 2 and s.instances_by_type == {"large": 2}
    assert s.instance_hours == 2.0 and s.instance_hours_by_type == {"large": 2.0}
    lower = 2 * 300 * 100 / 410 * ON_DEMAND_LARGE / 3600  # the work on an ideal large VM paid by the second
    assert s.lower_bound == pytest.approx(lower, rel=1e-12)
    assert s.cost_over_lb == pytest.approx((ON_DEMAND_LARGE + LIGHT_LARGE_HOURLY + upfront) / lower, rel=1e-12)
    assert s.utilization == pytest.approx(2 * 300 * 100 / (2 * 410 * 3600), rel=1e-12)
    assert s.utilization_leased == pytest.approx(2 * 300 * 100 / (2 * 410 * 3590), rel=1e-12)
    assert (s.wait_mean_s, s.wait_p95_s, s.wait_max_s) == (0.0, 0.0, 0.0)
    assert s.policy_stats["portfolio_ticks"] == 1
    assert list(res.jobs.columns) == ["job_id", "submit", "runtime", "r", "user", "start", "end", "wait",
                                      "instance_id", "cost"]
    # each job alone on its VM pays that VM's bill (the reservation's upfront share is the summary's alone)
    assert sorted(res.jobs["cost"].tolist()) == pytest.approx(sorted([ON_DEMAND_LARGE, LIGHT_LARGE_HOURLY]))
    assert res.jobs["submit"].tolist() == [1000.0, 1000.0] and res.jobs["user"].tolist() == [-1, -1]
    assert res.jobs["start"].tolist() == [1000.0, 1000.0] and res.jobs["end"].tolist() == [1100.0, 1100.0]
    assert sorted(res.jobs["instance_id"].tolist()) == [0, 1]
    assert res.jobs["job_id"].tolist() == [1, 2]  # from_arrays numbers jobs from 1, as SWF does


def test_a_run_without_jobs_has_no_ratio_to_a_zero_bound() -> None:
    empty = JobTable.from_arrays(arrival=np.zeros(0), runtime=np.zeros(0), r=np.zeros(0), origin=0)
    s = simulate(empty, CATALOG, config=SimulationConfig(CohConfig("FCFS-LD")), seed=1).summary
    assert (s.jobs, s.cost, s.lower_bound, s.instances, s.instance_hours) == (0, 0.0, 0.0, 0, 0.0)
    assert math.isnan(s.cost_over_lb) and math.isnan(s.utilization) and math.isnan(s.utilization_leased)
    assert s.instances_by_type == {} and s.cost_by_option == {}
