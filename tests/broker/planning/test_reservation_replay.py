"""Validation by replay on real traces: a planned purchase, replayed with CoH-R, is never worse than all
on-demand CoH nor than the best plan restricted to a single reservation option."""

from __future__ import annotations

import logging

import pytest

from broker.coh.config import CohConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.planning.demand import replay_demand
from broker.planning.planner import Prices, plan_reservations
from broker.pricing.book import HEAVY, LIGHT, MEDIUM, load_price_book
from tests.conftest import trace_path
from workloads.cache import load_trace
from workloads.jobs import job_view

BOOK = load_price_book()
CATALOG = BOOK.catalog()
YEAR_S = 365 * 86400.0
log = logging.getLogger(__name__)


@pytest.mark.slow
@pytest.mark.parametrize(("filename", "span_s"), [
    ("KTH-SP2-1996-2.1-cln.swf.gz", None),  # the whole trace: 11 months
    ("SDSC-SP2-1998-4.2-cln.swf.gz", YEAR_S),  # its first year
])
def test_planned_purchase_beats_on_demand_and_single_option_plans(filename: str, span_s: float | None) -> None:
    swf = load_trace(trace_path(filename))
    jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=5, origin=swf.header.unix_start_time or 0)
    if span_s is not None:
        jobs = jobs.between(0.0, span_s)
    demand, coh = replay_demand(jobs, CATALOG)
    replayed, planned = {}, {}
    for label, options in {"all": (LIGHT, MEDIUM, HEAVY), "heavy": (HEAVY,), "medium": (MEDIUM,),
                           "light": (LIGHT,)}.items():
        report = plan_reservations(demand, Prices.from_book(BOOK, 1, options=options))
        assert report.plan.total > 0, f"{label}: a year of this demand should justify some reservation"
        config = SimulationConfig(CohConfig("coh-r"), reservations=report.plan)
        replayed[label] = simulate(jobs, CATALOG, config=config, book=BOOK).summary.cost
        planned[label] = report.planned_horizon_cost
    log.info("%s: on-demand %.2f, planned %s, replayed %s", filename, coh.summary.cost, planned, replayed)
    assert replayed["all"] < coh.summary.cost
    assert replayed["all"] <= min(replayed[k] for k in ("heavy", "medium", "light")) + 1e-6
