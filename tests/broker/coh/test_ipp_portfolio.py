"""The integer program inside CoH's portfolio: exact path vs solver optimum, warm starts,
winners recorded, deterministic runs repeat exactly, and the IPP never makes a tick dearer."""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, IppConfig, SimulationConfig
from broker.coh.exact import solve_exact
from broker.coh.instance import make_instance
from broker.coh.ipp import build_model
from broker.coh.ipp_member import IppMember
from broker.coh.objective import plan_cost
from broker.coh.simulate import simulate
from broker.sim.recorder import MemoryRecorder
from solvers.base import Limit, Status, get_solver, list_solvers
from tests.broker.coh.ipp_cases import BILLING, CATALOG, captured
from tests.conftest import trace_path, without_timing
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view


@pytest.mark.parametrize("backend", list_solvers())
@pytest.mark.parametrize("n", [1, 2])
def test_exact_path_matches_the_solver_optimum(backend: str, n: int) -> None:
    solver = get_solver(backend)
    for batch, fleet in captured("LCG-2005-1.swf.gz", "heterogeneous", n, n, n_jobs=3000, every=3)[:8]:
        inst = make_instance(batch, fleet, BILLING, CATALOG.hourly)
        _, exact_cost = solve_exact(inst)
        result = solver.solve(build_model(inst).model, limit=Limit.wall(30))
        assert result.status is Status.OPTIMAL
        assert result.objective == pytest.approx(exact_cost)


@pytest.mark.parametrize("backend", list_solvers())
def test_ipp_member_never_worse_than_its_warm_start(backend: str) -> None:
    member = IppMember(get_solver(backend), Limit.wall(2), billing=BILLING, hourly=CATALOG.hourly)
    from tests.broker.coh.ipp_cases import all_heuristic_plans

    for batch, fleet in captured("LCG-2005-1.swf.gz", "heterogeneous", 3, 10)[:6]:
        incumbent = min(all_heuristic_plans(batch, fleet, ["FCFS-SM", "FCFS-LD", "FCFS-CFH"]),
                        key=lambda p: plan_cost(p, batch, fleet, BILLING, CATALOG.hourly))
        plan = member.plan(batch, fleet, np.random.default_rng(0), incumbent=incumbent)
        assert member.last is not None and member.last.status.has_solution
        incumbent_cost = plan_cost(incumbent, batch, fleet, BILLING, CATALOG.hourly)
        if plan is None:  # the heuristics' plan meets the lower bound: proven optimal, no solver call
            assert member.last.path == "bound" and incumbent_cost == pytest.approx(member.last.bound)
            continue
        assert plan_cost(plan, batch, fleet, BILLING, CATALOG.hourly) <= incumbent_cost + 1e-9


def lcg_slice(n: int, reqs: str = "heterogeneous"):
    swf = load_trace(trace_path("LCG-2005-1.swf.gz"))
    jobs, _ = job_view(swf.frame, reqs=reqs, seed=2, origin=swf.header.unix_start_time or 0)
    return jobs.head(n)


@pytest.mark.parametrize("backend", list_solvers())
def test_portfolio_with_ipp_records_and_is_deterministic(backend: str) -> None:
    jobs = lcg_slice(700)
    # at most two jobs without the solver, so that the backend decides every larger tick
    config = SimulationConfig(engine=EngineConfig(validate=True),
                              ipp=IppConfig(backend, time_limit=0.05, deterministic=True, exact_jobs=2))
    runs = []
    for _ in range(2):
        recorder = MemoryRecorder()
        result = simulate(jobs, CATALOG, config=config, seed=5, recorder=recorder)
        runs.append((result, recorder.frame("portfolio")))
    (a, ticks_a), (b, ticks_b) = runs
    assert without_timing(a.summary.to_dict()) == without_timing(b.summary.to_dict())
    assert ticks_a.winner.tolist() == ticks_b.winner.tolist()
    stats = a.summary.policy_stats
    assert stats["ipp_wins"] + stats["heuristic_wins"] == stats["portfolio_ticks"]
    assert stats["ipp_calls"] == len(ticks_a) and stats["ipp_optimal_ticks"] > 0
    assert {"ipp_status", "ipp_bound", "ipp_gap", "ipp_wall_s", "cost[IPP]"} <= set(ticks_a.columns)
    heuristic_costs = ticks_a[["cost[FCFS-SM]", "cost[FCFS-LD]", "cost[FCFS-CFH]"]]
    ran = heuristic_costs.notna().all(axis=1)
    assert (ticks_a.loc[~ran, "ipp_path"] == "exact").all(), "only exact IPP ticks skip the heuristics"
    assert (ticks_a.loc[~ran, "jobs"] <= 2).all() and ran.any()
    chosen = ticks_a[ran].apply(lambda row: row[f"cost[{row.winner}]"], axis=1)
    assert (chosen <= heuristic_costs[ran].min(axis=1) + 1e-9).all(), "the IPP never makes a tick dearer"
    assert ticks_a.drop(columns="ipp_wall_s").equals(ticks_b.drop(columns="ipp_wall_s"))


def test_batches_at_the_threshold_skip_the_ipp_when_not_chunked() -> None:
    jobs = lcg_slice(400)
    config = SimulationConfig(ipp=IppConfig("cpsat", time_limit=0.05, deterministic=True, max_jobs=3, chunk_jobs=0))
    stats = simulate(jobs, CATALOG, config=config, seed=1).summary.policy_stats
    assert stats["ipp_status"].get("skipped (too many jobs)", 0) > 0
    assert stats["ipp_calls"] == stats["ipp_exact_ticks"], "below 3 jobs only the exact path runs"


def test_heuristics_run_on_every_tick_when_ties_go_to_them() -> None:
    jobs = lcg_slice(300)
    config = SimulationConfig(CohConfig(ipp_wins_ties=False), ipp=IppConfig("cpsat", time_limit=0.05,
                                                                            deterministic=True))
    recorder = MemoryRecorder()
    simulate(jobs, CATALOG, config=config, seed=1, recorder=recorder)
    ticks = recorder.frame("portfolio")
    assert ticks[["cost[FCFS-SM]", "cost[FCFS-LD]", "cost[FCFS-CFH]"]].notna().all().all()


def test_a_solver_failing_on_the_warm_start_is_retried_without_it() -> None:
    from solvers.base import error_result

    class CrashesOnStart:
        name = "cbc"

        def __init__(self) -> None:
            self.inner, self.starts = get_solver("cbc"), []

        def solve(self, model, *, limit, start=None):  # type: ignore[no-untyped-def]
            self.starts.append(start is not None)
            if start is not None:
                return error_result("cbc", limit, 0.0, "cbc: process crashed (signal 11)")
            return self.inner.solve(model, limit=limit)

    from tests.broker.coh.ipp_cases import all_heuristic_plans

    solver = CrashesOnStart()
    member = IppMember(solver, Limit.wall(2), billing=BILLING, hourly=CATALOG.hourly)  # type: ignore[arg-type]
    batch, fleet = next((b, f) for b, f in captured("LCG-2005-1.swf.gz", "heterogeneous", 3, 10)
                        if not member._incumbent_proven(make_instance(b, f, BILLING, CATALOG.hourly, paid=True),
                                                        all_heuristic_plans(b, f, ["FCFS-SM"])[0]))
    incumbent = all_heuristic_plans(batch, fleet, ["FCFS-SM"])[0]
    plan = member.plan(batch, fleet, np.random.default_rng(0), incumbent=incumbent)
    assert solver.starts == [True, False] and member.retries == 1
    assert plan is not None and member.last is not None and member.last.status.has_solution


def egee_burst() -> JobTable:
    """LPC-EGEE's jobs around its first bursts: ticks of 322, 80, 63 and 72 jobs."""
    swf = load_trace(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=1, origin=0)
    return jobs.between(float(jobs.arrival[44_500]), float(jobs.arrival[46_300]))


def test_large_batches_are_planned_in_chunks_and_never_cost_more_than_the_heuristics() -> None:
    jobs = egee_burst()
    config = SimulationConfig(engine=EngineConfig(validate=True),
                              ipp=IppConfig("cpsat", time_limit=0.5, deterministic=True, chunk_jobs=20))
    recorder = MemoryRecorder()
    result = simulate(jobs, CATALOG, config=config, seed=1, recorder=recorder)
    stats = result.summary.policy_stats
    ticks = recorder.frame("portfolio")
    big = ticks[ticks.jobs >= 50]
    assert len(big) >= 4 and stats["ipp_chunked_ticks"] == len(big)
    heuristics = big[["cost[FCFS-SM]", "cost[FCFS-LD]", "cost[FCFS-CFH]"]].min(axis=1)
    assert (big["cost[IPP]"] <= heuristics + 1e-9).sum() >= 3, "the chunks' plan beats the heuristics' on bursts"
    won = big[big.winner == "IPP"]
    assert (won["cost[IPP]"] <= heuristics[won.index] + 1e-9).all()
    assert (big[big.winner != "IPP"]["cost[IPP]"] > heuristics[big.winner != "IPP"] - 1e-9).all()
    # without chunks the IPP skips them, and the run costs more
    plain = simulate(jobs, CATALOG, config=SimulationConfig(ipp=IppConfig("cpsat", time_limit=0.5, deterministic=True,
                                                                          chunk_jobs=0)), seed=1)
    assert plain.summary.policy_stats["ipp_chunked_ticks"] == 0
    assert result.summary.cost < plain.summary.cost
