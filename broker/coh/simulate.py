"""One call from a job table to a result: build the policy, run the engine, summarize.

``simulate(jobs, config=SimulationConfig(policy="coh"), seed=1)`` is what the CLI, the notebooks
and the benchmarks call.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.coh.ipp import Symmetry
from broker.coh.ipp_member import IppMember
from broker.coh.metrics import RunResult, summarize
from broker.coh.portfolio import CohPolicy
from broker.coh.world import CohWorld, EngineConfig, RunRecord, run
from broker.planning.demand import Demand, demand_from_run
from broker.pricing.billing import Billing, Charging
from broker.pricing.book import HEAVY, Catalog, PriceBook, load_price_book
from broker.pricing.reservations import ReservationPlan, ReservedCapacity
from broker.sim.recorder import Recorder
from heuristics.registry import HEURISTICS, PAPER_TRIO
from solvers.base import Limit, get_solver
from workloads.jobs import JobTable

#: Policies that replay with reserved instances.
RESERVED_POLICIES = ("coh-r", "coh-onetype")


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """Everything that defines a run besides the jobs, the prices and the seed.

    ``policy`` is ``"coh"`` (the portfolio over ``heuristics``, plus the integer program when
    ``solver`` is ``"cbc"`` or ``"cpsat"``), ``"ipp"`` (the integer program alone, with the first
    heuristic as the fallback when it has no plan or the batch is too large) or the name of one
    heuristic (for example ``"FCFS-SM"``); ``"coh-r"`` is CoH over ``reservations`` (CoH-R, SPEC §4) and
    ``"coh-onetype"`` the same with a plan of heavy reservations only. Times in seconds.
    ``lookahead`` defaults to boot time + tick. The IPP runs under ``time_limit`` wall-clock seconds,
    or with ``deterministic`` under a work limit: CP-SAT deterministic seconds = ``time_limit`` with one
    worker, CBC nodes = ``1000 * time_limit`` with one thread. ``presolve`` applies to CP-SAT (on by
    default: turning it off made whole deterministic replays 6-7x slower, BENCHMARKS.md).
    """

    policy: str = "coh"
    heuristics: tuple[str, ...] = PAPER_TRIO
    tick: float = 10.0
    boot_time: float = 120.0
    charging: Charging = "exact"
    release_margin: float = 10.0
    lookahead: float | None = None
    validate: bool = False
    solver: str | None = None
    time_limit: float = 2.0
    deterministic: bool = False
    threads: int = 2
    ipp_max_jobs: int = 50
    ipp_max_vms: int | None = None
    warm_start: bool = True
    fast_path: bool = True
    symmetry: Symmetry = "order"
    presolve: bool = True
    paid_scoring: bool = True
    ipp_wins_ties: bool = True
    reservations: ReservationPlan | None = None

    def __post_init__(self) -> None:
        reserved = self.policy in RESERVED_POLICIES
        if reserved != (self.reservations is not None):
            raise ValueError(f"policy {self.policy!r}: reservations are "
                             f"{'required' if reserved else 'only for ' + ' / '.join(RESERVED_POLICIES)}")
        if self.policy == "coh-onetype" and self.reservations is not None:
            other = sorted({o for _, o in self.reservations.counts} - {HEAVY})
            if other:
                raise ValueError(f"coh-onetype uses heavy reservations only; the plan also has {other} "
                                 f"(plan with heavy reservations only, or use coh-r)")

    def limit(self) -> Limit:
        """The solver limit this configuration asks for."""
        if not self.deterministic:
            return Limit.wall(self.time_limit, threads=self.threads)
        work = self.time_limit if self.solver == "cpsat" else float(max(1, round(1000 * self.time_limit)))
        return Limit.deterministic(work)

    def billing(self, origin: int = 0) -> Billing:
        """The billing model, wall-clock hours aligned with the trace origin (Unix time)."""
        return Billing(charging=self.charging, release_margin=self.release_margin,
                       clock_offset=float(origin % 3600))

    def engine(self, origin: int = 0) -> EngineConfig:
        """The engine settings."""
        return EngineConfig(tick=self.tick, boot_time=self.boot_time, billing=self.billing(origin),
                            validate=self.validate)


def build_policy(config: SimulationConfig, *, seed: int | None, billing: Billing | None = None,
                 catalog: Catalog | None = None) -> CohPolicy:
    """The policy named by ``config.policy`` (``billing`` and ``catalog`` are needed for the IPP)."""
    lookahead = config.lookahead if config.lookahead is not None else config.boot_time + config.tick
    if config.policy in ("coh", *RESERVED_POLICIES):
        members = [HEURISTICS.get(name) for name in config.heuristics]
        return CohPolicy(members, lookahead=lookahead, seed=seed, name=config.policy,
                         ipp=_ipp(config, billing, catalog),
                         paid=config.paid_scoring, ipp_wins_ties=config.ipp_wins_ties)
    if config.policy == "ipp":
        if config.solver is None:
            raise ValueError("policy 'ipp' needs a solver ('cbc' or 'cpsat')")
        fallback = [HEURISTICS.get(config.heuristics[0])]
        return CohPolicy(fallback, lookahead=lookahead, seed=seed, name="ipp", ipp=_ipp(config, billing, catalog),
                         paid=config.paid_scoring, prefer_ipp=True)
    if config.policy in HEURISTICS:
        return CohPolicy([HEURISTICS.get(config.policy)], lookahead=lookahead, seed=seed, name=config.policy)
    raise ValueError(f"unknown policy {config.policy!r}: use 'coh', 'ipp', 'coh-r', 'coh-onetype' "
                     f"or a heuristic such as 'FCFS-SM'")


def _ipp(config: SimulationConfig, billing: Billing | None, catalog: Catalog | None) -> IppMember | None:
    if config.solver is None:
        return None
    if billing is None or catalog is None:
        raise ValueError("the IPP member needs the billing model and the catalog")
    options = {"presolve": config.presolve} if config.solver == "cpsat" else {}
    return IppMember(get_solver(config.solver, **options), config.limit(), billing=billing, hourly=catalog.hourly,
                     max_jobs=config.ipp_max_jobs, max_vms=config.ipp_max_vms, warm_start=config.warm_start,
                     fast_path=config.fast_path, symmetry=config.symmetry, paid=config.paid_scoring)


def simulate(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig = SimulationConfig(),
             seed: int | None = 0, recorder: Recorder | None = None, book: PriceBook | None = None) -> RunResult:
    """Replay ``jobs`` through the configured policy and summarize the run.

    ``book`` gives the reserved prices of ``config.reservations`` (default: the book the plan names).
    """
    record, engine_config, name = replay(jobs, catalog, config=config, seed=seed, recorder=recorder, book=book)
    return summarize(record, catalog, engine_config.billing, policy=name)


def replay(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig = SimulationConfig(),
           seed: int | None = 0, recorder: Recorder | None = None,
           book: PriceBook | None = None) -> tuple[RunRecord, EngineConfig, str]:
    """Run the engine; returns the raw record, the engine settings and the policy's name."""
    engine_config = config.engine(jobs.origin)
    policy = build_policy(config, seed=seed, billing=engine_config.billing, catalog=catalog)
    reserved = None
    if config.reservations is not None:
        book = book if book is not None else load_price_book(config.reservations.price_book)
        reserved = ReservedCapacity(config.reservations, book, catalog)
    world = CohWorld(jobs, catalog, engine_config, lookahead=policy.lookahead, recorder=recorder,
                     reservations=reserved)
    return run(world, policy), engine_config, policy.name


def replay_demand(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig = SimulationConfig(),
                  seed: int | None = 0, recorder: Recorder | None = None, interval_s: float = 3600.0,
                  source: str = "") -> tuple[Demand, RunResult]:
    """The demand of a replay (:func:`broker.demand.demand_from_run`) and the replay's result."""
    record, engine_config, name = replay(jobs, catalog, config=config, seed=seed, recorder=recorder)
    demand = demand_from_run(record.ledger, catalog, began=record.began, ended=record.ended,
                             btu=engine_config.billing.btu, interval_s=interval_s, source=source)
    return demand, summarize(record, catalog, engine_config.billing, policy=name)
