"""Contract suite over every registered policy of every world (CoH, hybrid site, cloud cluster, elastic pool, spot).

Each policy, on a small workload of its world, under ``validate=True`` (the world's own invariants,
checked as it runs):

- determinism: the same seed gives the same result (summary, jobs and instances tables);
- conservation: every job submitted ends, once, after it was submitted;
- a bad parameter is a clear ``ValueError`` / ``KeyError``, never a run.

The suite earns its place by failing on a wrong model: deliberate mutations (a policy that drops a
job, a world that releases a busy instance) are caught by the same checks.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.cloudcluster.bill import ClusterResult
from broker.cloudcluster.policies import CLUSTER_POLICIES, ClusterPolicy, Delay
from broker.cloudcluster.simulate import simulate_cluster
from broker.cloudcluster.terms import CloudTerms
from broker.cloudcluster.world import ClusterWorld
from broker.cloudcluster.world import run as run_cluster
from broker.coh.config import COH_POLICIES, CohConfig, EngineConfig, IppConfig, SimulationConfig
from broker.coh.policies import build_policy
from broker.coh.policy import batch_of
from broker.coh.simulate import simulate
from broker.coh.world import CohWorld
from broker.coh.world import run as run_coh
from broker.elastic.episode import Action, run_episode
from broker.elastic.sarsa import SarsaConfig
from broker.elastic.simulate import ELASTIC_POLICIES, run_elastic
from broker.elastic.world import ElasticWorld, PoolConfig
from broker.hybrid.policies import (
    LEASING_POLICIES,
    Constant,
    EpsilonGreedy,
    QLearning,
    RandomCap,
    Sampled,
    Step,
    run_leasing,
)
from broker.hybrid.world import HybridWorld
from broker.pricing.book import HEAVY, LIGHT, MEDIUM, load_price_book
from broker.pricing.reservations import ReservationPlan
from broker.pricing.spot import SpotMarket, load_timeline
from broker.sim.result import Result
from broker.sim.validate import InvariantError
from broker.spot.policies import SPOT_POLICIES
from broker.spot.simulate import run_spot
from broker.spot.world import SpotJob
from heuristics.fleet import Plan
from tests.conftest import P3_ZONES_DIR
from workloads.cores import CoreJobs
from workloads.htc import HtcJobs
from workloads.jobs import JobTable, job_view
from workloads.lublin import default_workload
from workloads.rigid import RigidJobs

BOOK = load_price_book()
CATALOG = BOOK.catalog()


def same(a: Result[Any], b: Result[Any]) -> bool:
    return (a.summary.to_dict() == b.summary.to_dict() or _without_walls(a) == _without_walls(b)) and \
        a.jobs.equals(b.jobs) and a.instances.equals(b.instances)


def _without_walls(r: Result[Any]) -> dict[str, Any]:
    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not k.endswith("wall_s")}
        return v
    return strip(r.summary.to_dict())


def conserved(jobs: pd.DataFrame, n: int) -> None:
    """Every one of ``n`` jobs started once, after its submission, and ended after it started."""
    assert len(jobs) == n
    assert jobs["start"].notna().all(), f"{int(jobs['start'].isna().sum())} job(s) never started"
    assert (jobs["start"] >= jobs["submit"] - 1e-6).all() and (jobs["end"] >= jobs["start"]).all()


# -- the CoH world -------------------------------------------------------------------------------------------

def coh_jobs() -> JobTable:
    jobs, _ = job_view(default_workload(seed=3, n_jobs=150), reqs="heterogeneous", seed=3)
    return jobs


PLANS = {"coh-r": ReservationPlan(1, {("large", HEAVY): 1, ("large", MEDIUM): 1, ("small", LIGHT): 1}),
         "coh-onetype": ReservationPlan(1, {("large", HEAVY): 2})}


def coh_config(name: str, **engine: Any) -> SimulationConfig:
    spec = COH_POLICIES.get(name)
    ipp = IppConfig("cpsat", time_limit=0.05, deterministic=True) if spec.needs_ipp else None
    return SimulationConfig(CohConfig(name), EngineConfig(validate=True, **engine), ipp, PLANS.get(name))


@pytest.mark.parametrize("name", COH_POLICIES.names())
def test_coh_policy_contract(name: str) -> None:
    jobs = coh_jobs()
    runs = [simulate(jobs, CATALOG, config=coh_config(name), seed=5, book=BOOK) for _ in range(2)]
    assert same(*runs)
    conserved(runs[0].jobs, len(jobs))
    assert (runs[0].jobs["instance_id"].isin(runs[0].instances["instance_id"])).all()
    assert runs[0].summary.cost == pytest.approx(float(runs[0].instances["cost"].sum())
                                                 + runs[0].summary.upfront_amortized)


@pytest.mark.parametrize("name", ["coh", "ipp", "coh-r", "FCFS-SM"])
def test_coh_policy_refuses_bad_parameters(name: str) -> None:
    with pytest.raises(KeyError, match="NOPE"):
        CohConfig(name, heuristics=("FCFS-SM", "NOPE"))
    with pytest.raises(ValueError, match="lookahead"):
        CohConfig(name, lookahead=-1.0)
    with pytest.raises(ValueError, match="time_limit"):
        IppConfig("cpsat", time_limit=math.nan)
    with pytest.raises(ValueError, match="tick"):
        EngineConfig(tick=0.0)
    with pytest.raises(KeyError, match="unknown CoH policy"):
        CohConfig("coh-x")


def test_a_coh_policy_that_drops_a_job_is_caught() -> None:
    jobs = coh_jobs()
    config = coh_config("FCFS-SM")
    policy = build_policy(config, seed=1, billing=config.engine.billing(), catalog=CATALOG)
    drop = int(jobs.job_id[40])

    class Dropping:
        name, lookahead = "dropping", policy.lookahead

        def decide(self, now: float, batch: Any, sim: Any) -> Plan:
            keep = np.flatnonzero(jobs.job_id[batch.index] != drop)  # job 40 is never offered, never placed
            index = batch.index[keep]
            plan = policy.decide(now, batch_of(index, jobs.arrival, jobs.runtime, jobs.r, jobs.user), sim)
            return Plan(jobs=keep[plan.jobs], targets=plan.targets, new_types=plan.new_types, n_slots=plan.n_slots)

        def stats(self) -> dict[str, Any]:
            return {}

    world = CohWorld(jobs, CATALOG, config.engine, lookahead=policy.lookahead)
    with pytest.raises(InvariantError, match="never placed"):
        run_coh(world, Dropping())  # type: ignore[arg-type]


def test_a_coh_world_that_releases_a_busy_vm_is_caught() -> None:
    class Releasing(CohWorld):
        def _deadline(self, now: float, payload: tuple[int, int]) -> None:
            slot, vm_id = payload
            if self.pool.vm_id[slot] == vm_id and self.pool.n_jobs[slot]:
                self.pool.n_jobs[slot] = 0  # forget the jobs it hosts, and release it
            super()._deadline(now, payload)

    config = coh_config("FCFS-SM")
    jobs = JobTable.from_arrays(arrival=np.array([1000.0]), runtime=np.array([5000.0]), r=np.array([50.0]))
    policy = build_policy(config, seed=1, billing=config.engine.billing(), catalog=CATALOG)
    with pytest.raises(InvariantError):
        run_coh(Releasing(jobs, CATALOG, config.engine, lookahead=policy.lookahead), policy)


# -- the hybrid site ---------------------------------------------------------------------------------------

def rigid_jobs(n: int = 300, m: int = 16, seed: int = 4) -> RigidJobs:
    rng = np.random.default_rng(seed)
    runtime = rng.integers(0, 20_000, n).astype(float)
    return RigidJobs(submit=np.sort(rng.integers(0, 3 * 86400, n)).astype(float), runtime=runtime,
                     estimate=runtime + rng.integers(0, 3000, n), nodes=rng.integers(1, m + 1, n))


LEASING_PARAMS = {"constant": {"v": 5.0}, "random": {"seed": 3}, "qlearning": {}, "egreedy": {"seed": 3, "k": 2},
                  "sampled": {"seed": 3, "k": 2}}


@pytest.mark.parametrize("name", LEASING_POLICIES.names())
@pytest.mark.parametrize("discipline", ["easy", "conservative"])
def test_leasing_policy_contract(name: str, discipline: str) -> None:
    jobs, m = rigid_jobs(), 16
    runs = [run_leasing(jobs, m, LEASING_POLICIES.get(name)(m, **LEASING_PARAMS[name]), step=21600.0,
                        discipline=discipline, validate=True) for _ in range(2)]  # type: ignore[arg-type]
    assert same(*runs)
    conserved(runs[0].jobs, len(jobs))
    twt = float(runs[0].jobs["wait"].sum())
    assert runs[0].summary.twt_s == pytest.approx(twt)
    assert runs[0].summary.cloud_cpu_s == pytest.approx(float(runs[0].instances["cloud_cpu_s"].sum()))


@pytest.mark.parametrize(("make", "match"), [
    (lambda: Constant(-1.0), "V >= 0"), (lambda: RandomCap(-1), "m >= 0"), (lambda: QLearning(-2), "m >= 0"),
    (lambda: EpsilonGreedy(16, k=-1), "k >= 0"), (lambda: QLearning(16, alpha=2.0), "alpha"),
    (lambda: EpsilonGreedy(16, gamma=1.0), "gamma"), (lambda: EpsilonGreedy(16, epsilon=-0.1), "epsilon"),
    (lambda: Sampled(16, k=0), "k >= 1"), (lambda: QLearning(16, references="days"), "references"),
    (lambda: QLearning(16, reward="rank"), "reward"),
])
def test_leasing_policy_refuses_bad_parameters(make: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_run_leasing_refuses_a_step_of_zero() -> None:
    with pytest.raises(ValueError, match="step"):
        run_leasing(rigid_jobs(), 16, Constant(0.0), step=0.0)


def test_a_leasing_policy_that_drops_a_job_is_caught() -> None:
    class Dropping:
        name = "dropping"

        def step(self, site: HybridWorld, until: float) -> Step:
            site.run(until, 0.0)
            if len(site.cluster.queue) > 1:
                site.cluster.take(site.cluster.queue[-1])  # gone: neither run here nor in the cloud
            return Step(site, 0.0, 1)

    with pytest.raises(InvariantError, match="submitted"):
        run_leasing(rigid_jobs(), 16, Dropping(), step=3600.0, validate=True)


def test_a_hybrid_world_that_overfills_the_cluster_is_caught() -> None:
    class Greedy(HybridWorld):
        def _pass(self) -> None:
            queue = self.cluster.queue
            while queue:  # start everything waiting, whatever the nodes
                job = queue[0]
                self.cluster.queue.remove(job)
                self.cluster._launch(job, self.now)
                self._started(job, self.now + self._runtime[job], 0)
            super()._pass()

    world = Greedy(rigid_jobs(), 16, validate=True)
    with pytest.raises(InvariantError, match="local nodes"):
        world.run(math.inf, 0.0)


# -- the cloud cluster ---------------------------------------------------------------------------------------

def htc_jobs(n: int = 250, seed: int = 6) -> HtcJobs:
    rng = np.random.default_rng(seed)
    return HtcJobs(submit=np.sort(rng.integers(0, 5 * 3600, n)).astype(float),
                   runtime=rng.choice([0.0, 60.0, 900.0, 3600.0, 5000.0], n), user=rng.integers(0, 3, n),
                   input_bytes=rng.integers(0, 50, n) * 1e6, output_bytes=rng.integers(0, 200, n) * 1e6, origin=1800.0)


@pytest.mark.parametrize("name", CLUSTER_POLICIES.names())
@pytest.mark.parametrize("boot", [0.0, 300.0])
def test_cluster_policy_contract(name: str, boot: float) -> None:
    jobs, terms = htc_jobs(), CloudTerms(boot=boot, charging="wall-clock" if boot else "exact")
    runs: list[ClusterResult] = [simulate_cluster(jobs, CLUSTER_POLICIES.get(name)(), terms, seed=9, validate=True)
                                 for _ in range(2)]
    assert same(*runs) and runs[0].users.equals(runs[1].users)
    conserved(runs[0].jobs, len(jobs))
    assert runs[0].users["cost"].sum() == pytest.approx(runs[0].summary.cost)


@pytest.mark.parametrize(("name", "params"), [
    ("cap", {"n": 0}), ("keepalive-fixed", {"p": 1.5}), ("keepalive-idle", {"p": -0.1}),
    ("keepalive-load", {"window": 0.0}), ("delay", {"seconds": -1.0}), ("burst", {"ratio": -1.0}),
    ("next-hour", {"seconds": 3600.0}), ("idle-timeout", {"seconds": -5.0}),
])
def test_cluster_policy_refuses_bad_parameters(name: str, params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        CLUSTER_POLICIES.get(name)(**params)


def test_a_cluster_world_that_drops_a_job_is_caught() -> None:
    class Forgetful(ClusterWorld):
        def _on_arrival(self, t: float, j: int) -> None:
            if j == 10:  # job 10 is neither served nor queued
                self.kernel.schedule(float(self.jobs.submit[j + 1]), 2, j + 1)
                if self._validator is not None:
                    self._validator.at_arrival()
                return
            super()._on_arrival(t, j)

    world = Forgetful(htc_jobs(), ClusterPolicy(), CloudTerms(), validate=True)
    with pytest.raises(InvariantError, match="submitted"):
        run_cluster(world, np.random.default_rng(0))


def test_a_cluster_world_that_releases_a_busy_instance_is_caught() -> None:
    class Eager(ClusterWorld):
        def _assign(self, t: float, j: int, inst: int) -> None:
            super()._assign(t, j, inst)
            if self.jobs.runtime[j] > 3600:  # a long job: its instance goes at the end of the period anyway
                i = self.instances
                self.kernel.schedule(self.billing.deadline(i.anchor[inst], t), 4, (inst, i.version[inst]))

    world = Eager(htc_jobs(), ClusterPolicy(), CloudTerms(), validate=True)
    with pytest.raises(InvariantError, match="while running job"):
        run_cluster(world, np.random.default_rng(0))


def test_the_checks_pass_on_correct_worlds_that_delay() -> None:
    # the suite's checks do not fail a legal run with delays and a cap (no false alarm)
    result = simulate_cluster(htc_jobs(), ClusterPolicy(cap=3, start=(Delay(600.0),)), CloudTerms(), validate=True)
    conserved(result.jobs, 250)


# -- the elastic pool ----------------------------------------------------------------------------------------

def core_jobs(n: int = 400, seed: int = 6) -> CoreJobs:
    rng = np.random.default_rng(seed)
    runtime = np.where(rng.random(n) < 0.7, rng.integers(0, 900, n), rng.integers(900, 30_000, n)).astype(float)
    return CoreJobs(submit=np.sort(rng.integers(0, 2 * 86400, n)).astype(float), runtime=runtime,
                    group=rng.integers(0, 3, n), native_wait=np.full(n, np.nan), groups=(1, 2, 3))


# every policy on both pools, but the threshold autoscaler, which sizes elastic pools only (its refusal is below)
ELASTIC_CASES = [(name, elastic) for name in ELASTIC_POLICIES.names() for elastic in (False, True)
                 if elastic or name != "threshold"]


@pytest.mark.parametrize(("name", "elastic"), ELASTIC_CASES)
def test_elastic_policy_contract(name: str, elastic: bool) -> None:
    jobs = core_jobs()
    pool = PoolConfig(8, elastic=elastic, min_cores=4, max_cores=20, hold_s=900.0)
    config = SarsaConfig(pretrain=100, retrain_every=50)
    runs = [run_elastic(jobs, pool, name, seed=3, sarsa=config, trim=0, validate=True) for _ in range(2)]
    assert same(*runs)
    conserved(runs[0].jobs, len(jobs))
    periods = runs[0].instances
    assert runs[0].summary.core_hours == pytest.approx(float(periods["core_s"].sum()) / 3600)
    assert runs[0].summary.decisions == len(jobs)


@pytest.mark.parametrize(("make", "match"), [
    (lambda: ELASTIC_POLICIES.get("threshold")(3, False), "elastic pool"),
    (lambda: ELASTIC_POLICIES.get("sarsa")(3, False, config=SarsaConfig(epsilon=2.0)), "epsilon"),
    (lambda: ELASTIC_POLICIES.get("nope"), "unknown elastic policy"),
])
def test_elastic_policy_refuses_bad_parameters(make: Any, match: str) -> None:
    with pytest.raises((ValueError, KeyError), match=match):
        make()


def test_an_elastic_policy_that_drops_a_job_is_caught() -> None:
    world = ElasticWorld(core_jobs(), PoolConfig(8), validate=True)

    def dropping(decision: Any, w: ElasticWorld) -> Action:
        if len(decision.queued) > 1:
            w.queue.remove(int(decision.queued[-1]))  # gone: neither run nor waiting
        return Action(int(decision.queued[0]))

    with pytest.raises(InvariantError, match="submitted"):
        run_episode(world, 0.5, dropping)


def test_an_elastic_world_that_overfills_its_pool_is_caught() -> None:
    class Greedy(ElasticWorld):
        def _decision(self, t: float) -> Any:
            decision = super()._decision(t)
            if decision is None and self.queue.count:  # a dispatch with no core free
                from broker.elastic.world import Decision

                return Decision(t, self.queue.jobs(), len(self.running), self.size, self.size, self.size, False, 0.0)
            return decision

        def act(self, action: Action) -> None:
            self._pending = None
            self.queue.remove(action.job)
            self._dispatch(self.now, action.job)
            self._check = True
            assert self._validator is not None
            self._validator.at_event(self.now)

    world = Greedy(core_jobs(), PoolConfig(4), validate=True)
    with pytest.raises(InvariantError, match="jobs run on a pool of 4 cores"):
        run_episode(world, 0.5, lambda d, w: Action(int(d.queued[0])))


# -- jobs with deadlines on spot ------------------------------------------------------------------------------

SPOT_JOB = SpotJob(12 * 3600.0, 16 * 3600.0, 720.0)


@pytest.mark.parametrize("name", SPOT_POLICIES.names())
def test_spot_policy_contract(name: str) -> None:
    market = SpotMarket(tuple(load_timeline(P3_ZONES_DIR / f"{z}_v100_1.json") for z in ("us-east-1a", "us-east-1c")))
    runs = [run_spot(market, [SPOT_JOB], name, start=3000, validate=True) for _ in range(2)]
    assert runs[0].cost == runs[1].cost
    pd.testing.assert_frame_equal(runs[0].jobs, runs[1].jobs)
    assert runs[0].deadline_misses == 0 and runs[0].jobs["done_h"].iloc[0] <= 16
    best = run_spot(market, [SPOT_JOB], "omniscient", start=3000).cost
    assert runs[0].cost >= best * (1 - 1e-12)
