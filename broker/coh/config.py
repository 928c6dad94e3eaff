"""What defines a CoH run besides the jobs, the prices and the seed: nested frozen dataclasses, checked once.

- :class:`EngineConfig`: the world (tick, boot time, billing, validation);
- :class:`CohConfig`: the policy (a name of :data:`COH_POLICIES`: the portfolio ``coh``, the integer
  program alone ``ipp``, CoH-R ``coh-r`` / ``coh-onetype``, or one heuristic such as ``FCFS-SM``), its
  members and how plans are scored;
- :class:`IppConfig`: CoH's integer program as a member of the portfolio (solver and limits);
- the reservations bought (:class:`~broker.pricing.reservations.ReservationPlan`, CoH-R only).

:meth:`SimulationConfig.to_dict` is the whole configuration as JSON (``summary.json`` writes it).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, get_args

from broker.coh.ipp import Symmetry
from broker.coh.subsets import MAX_SUBSET_JOBS
from broker.pricing.billing import Billing, Charging
from broker.pricing.book import HEAVY
from broker.pricing.reservations import ReservationPlan
from heuristics.occupancy import CAPACITY_RULES, CapacityRule
from heuristics.registry import HEURISTICS, PAPER_TRIO, Registry
from solvers.base import Limit, get_backend, list_solvers
from workloads.errors import ConfigError


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """A named CoH policy: what its configuration must give, and where its builder is.

    ``builder`` is ``"module:function"`` (imported when the policy is built, as solver backends are),
    a function of ``(config, seed, billing, catalog)`` returning the policy
    (:mod:`broker.coh.policies`).
    """

    builder: str
    reserved: bool = False
    heavy_only: bool = False
    needs_ipp: bool = False
    takes_ipp: bool = True

    def build(self) -> Callable[..., Any]:
        """The builder function."""
        module, name = self.builder.split(":")
        builder: Callable[..., Any] = getattr(importlib.import_module(module), name)
        return builder


def _policies() -> Registry[PolicySpec]:
    reg: Registry[PolicySpec] = Registry("CoH policy")
    reg.register("coh", PolicySpec("broker.coh.policies:portfolio"))
    reg.register("ipp", PolicySpec("broker.coh.policies:ipp_alone", needs_ipp=True))
    reg.register("coh-r", PolicySpec("broker.coh.policies:portfolio", reserved=True))
    reg.register("coh-onetype", PolicySpec("broker.coh.policies:portfolio", reserved=True, heavy_only=True))
    for name in HEURISTICS:
        reg.register(name, PolicySpec("broker.coh.policies:heuristic", takes_ipp=False))
    return reg


#: Every CoH policy by name: the portfolio, the IPP alone, CoH-R, CoH-oneType and the 66 heuristics.
COH_POLICIES = _policies()


def _finite(name: str, value: float, *, low: float, strict: bool, unit: str = "s") -> None:
    ok = math.isfinite(value) and (value > low if strict else value >= low)
    if not ok:
        raise ConfigError(f"{name} must be a finite number {'>' if strict else '>='} {low:g} {unit}, got {value}")


#: The shortest decision tick (s): finer decisions change nothing a billing second shows, and a grid of
#: 1e-300 s overflows (a job's grid point is its arrival / tick).
MIN_TICK = 0.001
#: The longest decision tick (s): a day; a longer one only holds every job back (and at 1e300 s the
#: grid swallows every time of the trace).
MAX_TICK = 86_400.0


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """The CoH world: decision ``tick`` and VM ``boot_time`` (s), billing, ``validate`` (check invariants).

    ``capacity`` is the capacity rule (:mod:`heuristics.occupancy`): ``"interval"`` holds a job's
    requirement on its VM over its own run, ``"tick"`` (the rule before issue 16, kept to reproduce
    the earlier figures) from the decision tick that placed it until it departs. The tick lies in
    [:data:`MIN_TICK`, :data:`MAX_TICK`]: the work of a run is its events (the engine skips empty
    ticks), not the grid's span, so a ten-year trace runs at any tick.
    """

    tick: float = 10.0
    boot_time: float = 120.0
    charging: Charging = "exact"
    release_margin: float = 10.0
    validate: bool = False
    capacity: CapacityRule = "interval"

    def __post_init__(self) -> None:
        if not MIN_TICK <= self.tick <= MAX_TICK:  # NaN too
            raise ConfigError(f"tick must be a number of seconds in [{MIN_TICK:g}, {MAX_TICK:g}], got {self.tick}")
        _finite("boot_time", self.boot_time, low=0, strict=False)
        if self.charging not in get_args(Charging):
            raise ConfigError(f"charging must be one of {', '.join(get_args(Charging))}, got {self.charging!r}")
        Billing(self.charging, release_margin=self.release_margin)  # checks the margin
        if self.capacity not in CAPACITY_RULES:
            raise ConfigError(f"capacity must be one of {', '.join(CAPACITY_RULES)}, got {self.capacity!r}")

    def billing(self, origin: int | float = 0) -> Billing:
        """The billing model, wall-clock hours aligned with the trace origin (Unix time)."""
        return Billing(charging=self.charging, release_margin=self.release_margin, clock_offset=float(origin % 3600))


#: Batches of up to this many jobs are solved exactly without a solver (BENCHMARKS.md: the subset
#: dynamic program beats CP-SAT up to its twelve jobs on LCG's ticks).
DEFAULT_EXACT_JOBS = 12
#: Batches of ``max_jobs`` jobs or more are planned this many at a time (BENCHMARKS.md: chunks of 20
#: came within 0.6-6.6 % of the best known plan at 50-100 jobs in half the limit).
DEFAULT_CHUNK_JOBS = 20
#: A race is run in workers on ticks of at least this many jobs (BENCHMARKS.md: from 13 jobs on LCG's
#: ticks, side by side is as fast as one after the other or faster, under wall and work limits).
DEFAULT_RACE_JOBS = 13


@dataclass(frozen=True, slots=True)
class IppConfig:
    """CoH's integer program (paper §3.2) as a portfolio member.

    ``solver`` names a backend, or several separated by commas (``"cbc,cpsat"``) that race on each
    tick a solver decides (:mod:`solvers.race`: the cheapest plan wins, a proven optimum first, then
    the backend listed first). Each runs under ``time_limit`` wall-clock seconds with ``threads``
    workers (shared out between the entrants of a race run side by side), or with ``deterministic``
    under a work limit on one thread that each backend reads from ``time_limit`` in its own unit
    (:meth:`limit`; CP-SAT deterministic seconds = ``time_limit``, CBC nodes = ``1000 * time_limit``):
    the same seed, the same run, however the race is run.
    A race runs in ``workers`` joblib workers on ticks of at least ``race_jobs`` jobs, and in this
    process on smaller ones (BENCHMARKS.md: below that, a round trip to the workers costs more than
    running the backends one after the other).

    It solves batches of fewer than ``max_jobs`` jobs over at most ``max_vms`` candidate running
    VMs (all by default), warm-started from the best heuristic plan; larger batches are planned
    ``chunk_jobs`` jobs at a time (0: left to the heuristics, the rule before issue 17).
    ``fast_path`` solves batches of up to ``exact_jobs`` jobs exactly without a solver (one or two
    by enumeration, more by dynamic programming over subsets of the jobs; ``exact_jobs=2`` is the
    rule before issue 17, which reproduces the earlier figures) and skips ticks the heuristics
    already solve to the bound; ``presolve`` goes to the backends that take it (CP-SAT; off made whole
    deterministic replays 6-7x slower, BENCHMARKS.md).
    """

    solver: str
    time_limit: float = 2.0
    deterministic: bool = False
    threads: int = 2
    max_jobs: int = 50
    max_vms: int | None = None
    warm_start: bool = True
    fast_path: bool = True
    exact_jobs: int = DEFAULT_EXACT_JOBS
    chunk_jobs: int = DEFAULT_CHUNK_JOBS
    workers: int = 1
    race_jobs: int = DEFAULT_RACE_JOBS
    symmetry: Symmetry = "order"
    presolve: bool = True

    def __post_init__(self) -> None:
        names = self.solvers
        unknown = [n for n in names if n not in list_solvers()]
        if not names or unknown or len(set(names)) < len(names):
            raise ConfigError(f"solver must name one or more of {', '.join(list_solvers())} (comma separated, each "
                              f"once), got {self.solver!r}")
        _finite("time_limit", self.time_limit, low=0, strict=True)
        if self.threads < 1 or self.max_jobs < 0 or (self.max_vms is not None and self.max_vms < 1):
            raise ConfigError(f"the IPP needs threads >= 1, max_jobs >= 0 and max_vms >= 1, got {self.threads}, "
                             f"{self.max_jobs}, {self.max_vms}")
        if not 0 <= self.exact_jobs <= MAX_SUBSET_JOBS:
            raise ConfigError(f"exact_jobs must be an integer in 0..{MAX_SUBSET_JOBS}, got {self.exact_jobs}")
        if self.chunk_jobs < 0 or self.workers < 1 or self.race_jobs < 0:
            raise ConfigError(f"the IPP needs chunk_jobs >= 0, workers >= 1 and race_jobs >= 0, got "
                              f"{self.chunk_jobs}, {self.workers}, {self.race_jobs}")
        if 0 < self.max_jobs <= self.chunk_jobs:
            raise ConfigError(f"chunk_jobs ({self.chunk_jobs}) must be below max_jobs ({self.max_jobs}): a chunk is "
                              f"a batch the IPP solves (0 leaves larger batches to the heuristics)")
        if self.symmetry not in get_args(Symmetry):
            raise ConfigError(f"symmetry must be one of {', '.join(get_args(Symmetry))}, got {self.symmetry!r}")

    @property
    def solvers(self) -> tuple[str, ...]:
        """The backends, in the order that breaks ties."""
        return tuple(name.strip() for name in self.solver.split(","))

    def limit(self, solver: str | None = None) -> Limit:
        """The limit of backend ``solver`` (the first one by default).

        A wall limit is the same for every backend; a deterministic one is the backend's own reading
        of ``time_limit`` (:meth:`solvers.base.Backend.deterministic_limit`).
        """
        name = self.solvers[0] if solver is None else solver
        if not self.deterministic:
            return Limit.wall(self.time_limit, threads=self.threads)
        return get_backend(name).deterministic_limit(self.time_limit)


@dataclass(frozen=True, slots=True)
class CohConfig:
    """The policy: ``policy`` (module docstring), the portfolio's ``heuristics``, how plans are scored.

    ``lookahead`` (s) defaults to boot time + tick (every VM a job needs is ready by its arrival);
    ``paid_scoring`` counts the billing units already paid as sunk; ``ipp_wins_ties`` applies the
    IPP's plan when it ties with the best heuristic's (EXPERIMENTS.md).
    """

    policy: str = "coh"
    heuristics: tuple[str, ...] = PAPER_TRIO
    lookahead: float | None = None
    paid_scoring: bool = True
    ipp_wins_ties: bool = True

    def __post_init__(self) -> None:
        COH_POLICIES.get(self.policy)  # names the known ones on a miss
        if not self.heuristics:
            raise ConfigError("a portfolio needs at least one heuristic")
        for name in self.heuristics:
            HEURISTICS.get(name)
        if self.lookahead is not None:
            _finite("lookahead", self.lookahead, low=0, strict=False)


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """Everything that defines a CoH run besides the jobs, the prices and the seed (module docstring)."""

    coh: CohConfig = field(default_factory=CohConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    ipp: IppConfig | None = None
    reservations: ReservationPlan | None = None

    def __post_init__(self) -> None:
        spec = COH_POLICIES.get(self.coh.policy)
        if spec.reserved != (self.reservations is not None):
            raise ConfigError(f"policy {self.coh.policy!r}: reservations are "
                             f"{'required' if spec.reserved else 'only for coh-r and coh-onetype'}")
        if spec.heavy_only and self.reservations is not None:
            other = sorted({o for _, o in self.reservations.counts} - {HEAVY})
            if other:
                raise ConfigError(f"{self.coh.policy} uses heavy reservations only; the plan also has {other} "
                                 f"(make it with plan-reservations --options reserved-heavy, or use coh-r)")
        if spec.needs_ipp and self.ipp is None:
            raise ConfigError(f"policy {self.coh.policy!r} needs the integer program: give ipp=IppConfig(solver) "
                             f"with a solver of {', '.join(list_solvers())}")
        if self.ipp is not None and not spec.takes_ipp:
            raise ConfigError(f"policy {self.coh.policy!r} is one heuristic: the integer program joins 'coh', 'ipp', "
                             f"'coh-r' or 'coh-onetype'")

    @property
    def lookahead(self) -> float:
        """Seconds ahead of its arrival at which a job is planned (boot time + tick unless set)."""
        la = self.coh.lookahead
        return la if la is not None else self.engine.boot_time + self.engine.tick

    def to_dict(self) -> dict[str, Any]:
        """The whole configuration as JSON-ready values."""
        out = asdict(self)
        out["coh"]["heuristics"] = list(self.coh.heuristics)
        out["reservations"] = self.reservations.to_dict() if self.reservations is not None else None
        return out
