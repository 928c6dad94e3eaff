"""Hand-worked runs of the tick engine with CoH / single heuristics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.pricing.book import load_price_book
from broker.sim.validate import InvariantError
from workloads.jobs import JobTable

CATALOG = load_price_book().catalog()
LARGE = 0.26


def jobs(arrival, runtime, r, origin: int = 0) -> JobTable:
    return JobTable.from_arrays(arrival=np.asarray(arrival, float), runtime=np.asarray(runtime, float),
                                r=np.asarray(r, float), origin=origin)


def run(table: JobTable, *, policy: str = "FCFS-SM", heuristics: tuple[str, ...] | None = None,
        lookahead: float | None = None, **engine):
    coh = CohConfig(policy, lookahead=lookahead, **({"heuristics": heuristics} if heuristics else {}))
    config = SimulationConfig(coh, EngineConfig(validate=True, **engine))
    return simulate(table, CATALOG, config=config, seed=1)


def test_one_job_one_hour_boot_billed_no_wait() -> None:
    res = run(jobs([1000], [1000], [50]))
    vm = res.instances.iloc[0]
    # planned at the tick 130 s ahead (boot 120 + tick 10): started 870, ready 990
    assert (vm.hired_at, vm.ready_at) == (870.0, 990.0)
    assert vm.released_at == 870 + 3600 - 10
    assert vm.units == 1 and vm.instance_type == "large"
    assert res.summary.cost == pytest.approx(LARGE)
    assert res.summary.wait_max_s == 0
    assert res.jobs.start.iloc[0] == 1000 and res.jobs.end.iloc[0] == 2000
    assert res.summary.lower_bound == pytest.approx(50 * 1000 / 410 * LARGE / 3600)


def test_busy_at_deadline_pays_a_second_unit() -> None:
    res = run(jobs([1000], [3595], [50]))  # ends 4595, after the deadline 4460
    vm = res.instances.iloc[0]
    assert vm.released_at == 870 + 2 * 3600 - 10 and vm.units == 2
    assert res.summary.cost == pytest.approx(2 * LARGE)


@pytest.mark.parametrize(("runtime", "units"), [(1000, 1), (2595, 2)])
def test_wall_clock_charging_counts_from_the_hour(runtime: float, units: int) -> None:
    # started at 870 s: wall-clock units run from 0; the first deadline is 3590
    res = run(jobs([1000], [runtime], [50]), charging="wall-clock")
    vm = res.instances.iloc[0]
    assert vm.anchor == 0 and vm.units == units
    assert vm.released_at == units * 3600 - 10


def test_wall_clock_hours_follow_the_trace_origin() -> None:
    # Unix origin 1800 s past an hour: sim time 0 is half-way through a wall-clock hour
    res = run(jobs([1000], [100], [50], origin=7 * 3600 + 1800), charging="wall-clock")
    assert res.instances.iloc[0].anchor == -1800
    assert res.instances.iloc[0].released_at == 1800 - 10


def test_without_lookahead_jobs_wait_for_the_boot() -> None:
    res = run(jobs([1000], [100], [50]), lookahead=0.0)
    assert res.jobs.start.iloc[0] == 1120 and res.summary.wait_max_s == 120


def test_packing_shares_vms() -> None:
    res = run(jobs([1000, 1000, 1000], [500, 500, 500], [200, 200, 200]))
    assert len(res.instances) == 2
    assert res.instances.jobs_hosted.tolist() == [2, 1]


def test_idle_vm_is_reused_before_release() -> None:
    res = run(jobs([1000, 2500], [100, 100], [300, 300]))
    assert len(res.instances) == 1 and res.instances.iloc[0].jobs_hosted == 2


def test_departure_before_tick_at_the_same_instant() -> None:
    # job 1 departs at 2000; job 2 (arrival 2130) is planned by the tick at 2000: it takes the freed room
    res = run(jobs([1000, 2130], [1000, 100], [400, 400]))
    assert len(res.instances) == 1


def test_release_when_idle_exactly_at_deadline() -> None:
    res = run(jobs([1000], [3460], [50]))  # departs 4460 = the first deadline
    assert res.instances.iloc[0].released_at == 4460 and res.instances.iloc[0].units == 1


def test_ticks_are_skipped_when_nothing_can_change() -> None:
    res = run(jobs([0, 10 * 86400], [100, 100], [10, 10]))
    assert res.summary.ticks == 2
    assert res.summary.events < 10


def test_cost_at_least_lower_bound_and_deterministic() -> None:
    rng = np.random.default_rng(5)
    table = jobs(np.floor(np.cumsum(rng.exponential(60, 300))), rng.exponential(2000, 300) + 1,
                 10 * rng.integers(1, 11, 300))
    a = run(table, policy="coh", heuristics=("FCFS-SM", "FCFS-LD", "FCFS-CFH", "LJF-Rnd"))
    b = run(table, policy="coh", heuristics=("FCFS-SM", "FCFS-LD", "FCFS-CFH", "LJF-Rnd"))
    assert a.summary == b.summary
    assert a.summary.cost >= a.summary.lower_bound
    assert a.summary.cost == pytest.approx(float((a.instances.units * a.instances.hourly).sum()))


def test_portfolio_never_worse_per_tick_than_its_members_on_one_batch() -> None:
    # a single tick: CoH's choice is the cheapest member's plan, so its cost is the minimum
    table = jobs([1000] * 12, [300, 5000, 7000, 100, 2000, 3000, 9000, 50, 60, 4000, 100, 8000],
                 [100, 30, 70, 100, 20, 90, 60, 100, 40, 50, 80, 10])
    members = ("FCFS-SM", "FCFS-LD", "FCFS-CFH", "LJF-SM", "LTJF-LD")
    coh = run(table, policy="coh", heuristics=members).summary.cost
    alone = [run(table, policy=m).summary.cost for m in members]
    assert coh == pytest.approx(min(alone))


def test_job_larger_than_any_vm_is_refused() -> None:
    with pytest.raises(ValueError, match="requires r=500"):
        run(jobs([0], [10], [500]))


def test_validator_catches_an_overfull_plan() -> None:
    from broker.coh.portfolio import CohPolicy
    from broker.coh.world import CohWorld
    from broker.coh.world import run as run_world
    from heuristics.fleet import Plan

    class Cheater:
        name, needs_stats = "cheater", False

        def plan(self, batch, fleet, rng):
            return Plan(jobs=np.arange(len(batch)), targets=np.full(len(batch), len(fleet)),
                        new_types=np.array([1]), n_slots=len(fleet))

    policy = CohPolicy([Cheater()], lookahead=130, seed=0)
    world = CohWorld(jobs([0, 0], [10, 10], [300, 300]), CATALOG, EngineConfig(validate=True), lookahead=130)
    with pytest.raises((InvariantError, RuntimeError), match="over capacity"):
        run_world(world, policy)


def test_billed_time_covers_use() -> None:
    rng = np.random.default_rng(9)
    res = run(jobs(np.sort(np.floor(rng.uniform(0, 20_000, 200))), rng.uniform(1, 9000, 200),
                   10 * rng.integers(1, 11, 200)))
    billed = res.instances.units * 3600
    assert (billed >= res.instances.released_at - res.instances.hired_at).all()
    assert math.isclose(res.summary.utilization * (res.instances.capacity * billed).sum(),
                        float((res.jobs.r * res.jobs.runtime).sum()))


def test_vm_lifecycle_states() -> None:
    from broker.coh.pool import Pool
    from broker.pricing.billing import Billing

    pool = Pool(CATALOG, Billing(), boot_time=120.0)
    slot = pool.start(1, now=0.0)
    assert pool.state(slot, 60.0) == "booting"
    assert pool.state(slot, 120.0) == "idle"
    pool.add(slot, job=0, r=50.0, arrival=130.0, departure=500.0, runtime=370.0)
    assert pool.state(slot, 200.0) == "running"
    pool.remove(slot, job=0, r=50.0)
    assert pool.state(slot, 500.0) == "idle"
    record = pool.release(slot, 3590.0)
    assert pool.state(slot, 3590.0) == "released"
    assert (record.units, record.cost, record.jobs_hosted) == (1, 0.26, 1)
    assert pool.start(0, now=4000.0) == slot, "released slots are reused"


def test_a_paused_world_copies_and_both_copies_run_on_alike() -> None:
    from broker.coh.policies import build_policy
    from broker.coh.world import CohWorld
    from broker.coh.world import run as run_world

    rng = np.random.default_rng(8)
    table = jobs(np.sort(np.floor(rng.uniform(0, 30_000, 120))), rng.uniform(10, 9000, 120),
                 10 * rng.integers(1, 30, 120))
    config = SimulationConfig(CohConfig("coh"), EngineConfig(validate=True))

    def fresh() -> tuple[CohWorld, object]:
        policy = build_policy(config, seed=4, billing=config.engine.billing(), catalog=CATALOG)
        return CohWorld(table, CATALOG, config.engine, lookahead=policy.lookahead), policy

    whole = run_world(*fresh())  # type: ignore[arg-type]
    world, policy = fresh()
    for _ in range(25):  # pause at the 25th decision with jobs to place
        decision = world.advance()
        assert decision is not None and len(decision.batch) > 0
        world.act(policy.decide(decision.now, decision.batch, world))  # type: ignore[attr-defined]
    twin = world.copy()
    assert twin.now == world.now and twin.kernel is not world.kernel and twin.pool is not world.pool
    import copy as copying
    twin_policy = copying.deepcopy(policy)
    a, b = run_world(world, policy), run_world(twin, twin_policy)  # type: ignore[arg-type]
    for rec in (a, b):
        np.testing.assert_array_equal(rec.job_start, whole.job_start)
        np.testing.assert_array_equal(rec.job_vm, whole.job_vm)
        assert rec.ledger == whole.ledger and rec.events == whole.events and rec.ticks == whole.ticks


def test_act_and_advance_must_alternate() -> None:
    from broker.coh.policies import build_policy
    from broker.coh.world import CohWorld

    config = SimulationConfig(CohConfig("FCFS-SM"))
    policy = build_policy(config, seed=1, billing=config.engine.billing(), catalog=CATALOG)
    world = CohWorld(jobs([1000], [100], [50]), CATALOG, config.engine, lookahead=policy.lookahead)
    with pytest.raises(RuntimeError, match="call advance first"):
        world.act(None)
    assert world.advance() is not None
    with pytest.raises(RuntimeError, match="call act first"):
        world.advance()
