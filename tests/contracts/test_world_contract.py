"""Contract suite over every world on the kernel: the :class:`broker.sim.world.World` protocol.

Each world (the CoH fleet, the hybrid site, the cloud cluster, the elastic pool on a slice of the
KTH log; jobs with deadlines on two real spot zones), validating its invariants as it runs, driven by a
simple policy of its own kind:

- it declares the protocol (an instance of it, with the protocol among its bases);
- advancing until ``None`` and acting on every decision gives the result of the world's own run
  function, field by field;
- a copy at a paused decision point is independent: driving the copy to its end leaves the
  original's state as it was, and the copy and the original, driven on with the same actions,
  both end with the result of a run never copied;
- past the end, ``advance`` stays ``None``; ``act`` with no decision pending, and ``advance`` with
  one pending, raise.

The suite earns its place by failing on a broken copy (a world that shares its queue, a column or
its start log with its copy is caught below).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import types
from array import array
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.cloudcluster.policies import ClusterPolicy, FixedKeepAlive
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.world import ClusterWorld
from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.policies import build_policy
from broker.coh.spot import SpotCohWorld
from broker.coh.world import CohWorld
from broker.coh.world import run as run_coh
from broker.elastic.episode import run_episode
from broker.elastic.rules import RulePolicy
from broker.elastic.world import Action, ElasticWorld, PoolConfig
from broker.hybrid.world import HybridWorld, Lease, replay
from broker.pricing.book import load_price_book
from broker.pricing.spot import SpotMarket, load_timeline
from broker.pricing.spot_offer import SpotOffer
from broker.sim.world import World
from broker.spot.policies import UniformProgress
from broker.spot.simulate import run_spot
from broker.spot.world import ON_DEMAND, SpotJob, SpotWorld
from tests.conftest import P3_ZONES_DIR, SPOT_DIR, trace_path
from workloads.cache import load_trace
from workloads.cores import cores_view
from workloads.htc import htc_view
from workloads.jobs import job_view
from workloads.rigid import rigid_view

CATALOG = load_price_book().catalog()
N_JOBS = 400


@cache
def kth() -> Any:
    return load_trace(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))


#: A driver: the action for a decision of a world (a fresh one per run; deep-copied with a copy of its world).
Driver = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Case:
    """A world on a small input: how to build it, a simple policy for it, its own run function, any action."""

    build: Callable[[], World[Any, Any, Any]]
    driver: Callable[[], Driver]
    own_run: Callable[[], Any]
    action: Any


# -- the CoH fleet: FCFS-SM on 400 jobs, heterogeneous requirements ---------------------------------------

COH_CONFIG = SimulationConfig(CohConfig("FCFS-SM"), EngineConfig(validate=True))


@cache
def coh_jobs() -> Any:
    swf = kth()
    jobs, _ = job_view(swf.frame, reqs="heterogeneous", seed=1, origin=swf.header.unix_start_time or 0)
    return jobs.head(N_JOBS)


def coh_policy() -> Any:
    return build_policy(COH_CONFIG, seed=1, billing=COH_CONFIG.engine.billing(coh_jobs().origin), catalog=CATALOG)


def coh_world() -> CohWorld:
    return CohWorld(coh_jobs(), CATALOG, COH_CONFIG.engine, lookahead=coh_policy().lookahead)


class CohDriver:
    def __init__(self) -> None:
        self.policy = coh_policy()

    def __call__(self, world: CohWorld, d: Any) -> Any:
        return self.policy.decide(d.now, d.batch, world)


def coh_own_run() -> Any:
    return replace(run_coh(coh_world(), coh_policy()), policy_stats={})  # the policy's statistics are run's own


# -- the CoH fleet with spot VMs: the same, on the r5.16xlarge preemption trace, checkpoints every 600 s --------

@cache
def r5_offer() -> SpotOffer:
    return SpotOffer.from_market(SpotMarket((load_timeline(SPOT_DIR / "skypilot-spot-traces" / "preemption" / "1-node"
                                                           / "aws-04-19-2023" / "us-east-1b_intel_64.json"),)))


def coh_spot_world() -> SpotCohWorld:
    return SpotCohWorld(coh_jobs(), CATALOG, COH_CONFIG.engine, offer=r5_offer(), checkpoint_s=600.0,
                        restart_overhead_s=60.0, lookahead=coh_policy().lookahead)


def coh_spot_own_run() -> Any:
    return replace(run_coh(coh_spot_world(), coh_policy()), policy_stats={})


# -- the hybrid site: EASY on 100 nodes, a cap of 10 cloud nodes, hourly steps ----------------------------

@cache
def rigid_jobs() -> Any:
    jobs, _ = rigid_view(kth().frame, nodes=100)
    return jobs.head(N_JOBS)


class HybridDriver:
    def __call__(self, world: HybridWorld, d: Any) -> Lease:
        return Lease(d.now + 3600.0, 10.0)


# -- the cloud cluster: keep-alive with probability 0.5, at most 20 instances, 2-minute boots --------------

CLUSTER_POLICY, CLUSTER_TERMS = ClusterPolicy(cap=20, keepalive=FixedKeepAlive(0.5)), CloudTerms(boot=120.0)


@cache
def htc_jobs() -> Any:
    swf = kth()
    jobs, _ = htc_view(swf.frame, origin=swf.header.unix_start_time or 0, seed=2)
    return jobs.head(N_JOBS)


class ClusterDriver:
    def __init__(self) -> None:
        self.rng, self.rule = np.random.default_rng(3), CLUSTER_POLICY.keepalive

    def __call__(self, world: ClusterWorld, d: Any) -> bool:
        assert self.rule is not None
        return self.rule.keep(d.now, world, self.rng)


# -- the elastic pool: shortest job first and the threshold autoscaler, 8 to 16 cores ---------------------

POOL = PoolConfig(8, elastic=True, min_cores=4, max_cores=16, hold_s=900.0)


@cache
def core_jobs() -> Any:
    jobs, _ = cores_view(kth().frame, parallel="one")
    return jobs.head(N_JOBS)


class ElasticDriver:
    def __init__(self) -> None:
        self.policy = RulePolicy("sjf", sizing=True)

    def __call__(self, world: ElasticWorld, d: Any) -> Action:
        return self.policy.decide(d, world)


def elastic_own_run() -> Any:
    world = ElasticWorld(core_jobs(), POOL, validate=True)
    run_episode(world, 0.5, RulePolicy("sjf", sizing=True).decide)
    return world.result()


# -- jobs with deadlines on spot: Uniform Progress, two jobs, two real p3.2xlarge zones, 12 h of work by 16 h --

SPOT_JOBS = (SpotJob(12 * 3600.0, 16 * 3600.0, 720.0), SpotJob(6 * 3600.0, 16 * 3600.0, 720.0, checkpoint=False))


@cache
def spot_market() -> SpotMarket:
    return SpotMarket(tuple(load_timeline(P3_ZONES_DIR / f"{z}_v100_1.json") for z in ("us-east-1f", "us-east-2a")))


class SpotDriver:
    def __init__(self) -> None:
        self.policy = UniformProgress()

    def __call__(self, world: SpotWorld, d: Any) -> Any:
        return self.policy.decide(d, world)


CASES = {
    "coh": Case(coh_world, CohDriver, coh_own_run, None),
    "coh-spot": Case(coh_spot_world, CohDriver, coh_spot_own_run, None),
    "hybrid": Case(lambda: HybridWorld(rigid_jobs(), 100, validate=True), HybridDriver,
                   lambda: replay(rigid_jobs(), 100, cap=10.0)[0], Lease(math.inf, 0.0)),
    "cluster": Case(lambda: ClusterWorld(htc_jobs(), CLUSTER_POLICY, CLUSTER_TERMS, validate=True), ClusterDriver,
                    lambda: simulate_cluster(htc_jobs(), CLUSTER_POLICY, CLUSTER_TERMS, seed=3), True),
    "elastic": Case(lambda: ElasticWorld(core_jobs(), POOL, validate=True), ElasticDriver, elastic_own_run,
                    Action(0)),
    "spot": Case(lambda: SpotWorld(spot_market(), SPOT_JOBS, start=5000, validate=True), SpotDriver,
                 lambda: run_spot(spot_market(), SPOT_JOBS, "uniform-progress", start=5000, validate=True),
                 (ON_DEMAND, ON_DEMAND)),
}


# -- driving and comparing ----------------------------------------------------------------------------------

#: More decisions than any whole run here takes: a world still deciding after these never ends.
MAX_DECISIONS = 20_000


def finish(world: World[Any, Any, Any], driver: Driver, decision: Any = None) -> Any:
    """Act on ``decision`` (when given) and on every later one; the world's result."""
    for _ in range(MAX_DECISIONS):
        if decision is None and (decision := world.advance()) is None:
            return world.result()
        world.act(driver(world, decision))
        decision = None
    raise AssertionError(f"the world still decides after {MAX_DECISIONS} decisions")


def paused(case: Case, at: int) -> tuple[World[Any, Any, Any], Driver, Any]:
    """A world paused at its ``at``-th decision (pending), its driver, the decision."""
    world, driver = case.build(), case.driver()
    for _ in range(at - 1):
        decision = world.advance()
        assert decision is not None
        world.act(driver(world, decision))
    decision = world.advance()
    assert decision is not None
    return world, driver, decision


def decisions(case: Case) -> int:
    """How many decisions a whole run takes."""
    world, driver, n = case.build(), case.driver(), 0
    while (decision := world.advance()) is not None:
        world.act(driver(world, decision))
        n += 1
    return n


def assert_same(a: Any, b: Any, where: str = "result") -> None:
    """``a`` and ``b`` are equal field by field: dataclasses, frames, arrays, containers, numbers (nan = nan)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=where)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where, strict=True)
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{where}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), f"{where}: nan != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def state_of(value: Any, seen: set[int] | None = None) -> Any:
    """Everything ``value`` holds, down to numbers and bytes, as plain comparable values (each object once)."""
    seen = set() if seen is None else seen
    if isinstance(value, int | float | str | bytes | type(None)):
        return repr(value) if isinstance(value, float) else value
    if id(value) in seen:
        return "<seen>"
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, array | memoryview):
        return (type(value).__name__, value.tobytes())
    if isinstance(value, list | tuple):
        return [state_of(v, seen) for v in value]
    if isinstance(value, dict):
        return [(state_of(k, seen), state_of(v, seen)) for k, v in value.items()]
    if isinstance(value, set | frozenset):
        return sorted(repr(v) for v in value)
    if isinstance(value, types.MethodType | types.FunctionType):
        return value.__qualname__  # code: what it is bound to is walked where it is held
    names = [*getattr(value, "__dict__", {}), *(n for k in type(value).__mro__ for n in vars(k).get("__slots__", ()))]
    return {n: state_of(getattr(value, n), seen) for n in dict.fromkeys(names) if hasattr(value, n)}


# -- the contract ----------------------------------------------------------------------------------------------

@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


def test_every_world_declares_the_protocol(case: Case) -> None:
    world = case.build()
    assert isinstance(world, World) and World in type(world).__mro__


def test_advancing_to_the_end_gives_the_worlds_own_run(case: Case) -> None:
    assert_same(finish(case.build(), case.driver()), case.own_run())


def test_a_copy_at_a_decision_is_independent_and_runs_on_alike(case: Case) -> None:
    whole = finish(case.build(), case.driver())
    world, driver, decision = paused(case, max(1, decisions(case) // 3))
    before = state_of(world)
    twin, twin_driver = world.copy(), copy.deepcopy(driver)
    assert type(twin) is type(world) and twin is not world
    assert_same(finish(twin, twin_driver, decision), whole)
    assert state_of(world) == before, "driving the copy changed the original"
    assert_same(finish(world, driver, decision), whole)


def test_past_the_end_advance_stays_none_and_act_refuses(case: Case) -> None:
    world, driver = case.build(), case.driver()
    with pytest.raises(RuntimeError, match="no decision is pending"):
        world.act(case.action)
    done = finish(world, driver)
    assert world.advance() is None and world.advance() is None
    with pytest.raises(RuntimeError, match="no decision is pending"):
        world.act(case.action)
    assert_same(world.result(), done)


def test_advancing_past_a_pending_decision_refuses(case: Case) -> None:
    world = case.build()
    assert world.advance() is not None
    with pytest.raises(RuntimeError, match="not acted on"):
        world.advance()


# -- the suite fails on a broken copy -----------------------------------------------------------------------

@pytest.mark.parametrize(("name", "shared"), [("coh", "_cols"), ("hybrid", "log"), ("hybrid", "cluster"),
                                              ("cluster", "instances"), ("cluster", "begin"), ("elastic", "queue"),
                                              ("spot", "base"), ("spot", "running")])
def test_a_copy_that_shares_part_of_its_state_is_caught(name: str, shared: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    world_type = type(case.build())
    monkeypatch.setattr(world_type, "_shared", (*getattr(world_type, "_shared", ()), shared), raising=False)
    monkeypatch.setattr("broker.sim.copying._LAYOUTS", {})
    with pytest.raises((AssertionError, RuntimeError)):  # a check fails, or the world refuses a state it cannot be in
        test_a_copy_at_a_decision_is_independent_and_runs_on_alike(case)
