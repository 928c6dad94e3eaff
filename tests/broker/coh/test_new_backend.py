"""A backend added by one module and one registry line runs CoH end to end (nothing in ``broker/coh``
names it): the configuration asks it for its limit and its options, and the same seed gives the same run."""

from __future__ import annotations

from broker.coh.config import EngineConfig, IppConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.sim.recorder import MemoryRecorder
from solvers.base import Limit
from tests.broker.coh.ipp_cases import CATALOG
from tests.conftest import trace_path, without_timing
from workloads.cache import load_trace
from workloads.jobs import job_view


def test_the_configuration_asks_each_backend_for_its_limit(toy_solver: str) -> None:
    race = IppConfig(f"{toy_solver},cpsat,cbc", time_limit=2.0, deterministic=True)
    assert [race.limit(name) for name in race.solvers] == [Limit(work=20.0), Limit(work=2.0), Limit(work=2000.0)]
    assert race.limit() == Limit(work=20.0)
    wall = IppConfig(f"{toy_solver},cpsat,cbc", time_limit=2.0, threads=3)
    assert {wall.limit(name) for name in wall.solvers} == {Limit.wall(2.0, threads=3)}


def test_a_new_backend_runs_coh_end_to_end_and_repeats_exactly(toy_solver: str) -> None:
    swf = load_trace(trace_path("LCG-2005-1.swf.gz"))
    jobs = job_view(swf.frame, reqs="heterogeneous", seed=2, origin=swf.header.unix_start_time or 0)[0].head(300)
    # at most two jobs without the solver, so that the toy decides every larger tick
    config = SimulationConfig(engine=EngineConfig(validate=True),
                              ipp=IppConfig(toy_solver, time_limit=1.0, deterministic=True, exact_jobs=2))
    runs = []
    for _ in range(2):
        recorder = MemoryRecorder()
        result = simulate(jobs, CATALOG, config=config, seed=5, recorder=recorder)
        runs.append((result.summary.to_dict(), recorder.frame("portfolio")))
    (a, ticks_a), (b, ticks_b) = runs
    assert without_timing(a) == without_timing(b)
    assert ticks_a.drop(columns="ipp_wall_s").equals(ticks_b.drop(columns="ipp_wall_s"))
    stats = a["policy_stats"]
    assert (stats["ipp"]["solver"], stats["ipp"]["limit"]) == (toy_solver, "work 10")
    assert (ticks_a.ipp_path == toy_solver).sum() > 0, "the toy solved some ticks"
