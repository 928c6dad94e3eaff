"""One call from a job table to a result: build the policy, run the engine, summarize.

``simulate(jobs, config=SimulationConfig(policy="coh"), seed=1)`` is what the CLI, the notebooks
and the benchmarks call.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.billing import Billing, Charging
from broker.cloud import Catalog
from broker.coh import CohPolicy
from broker.engine import Engine, EngineConfig
from broker.metrics import RunResult, summarize
from broker.recorder import Recorder
from heuristics.registry import HEURISTICS, PAPER_TRIO
from workloads.jobs import JobTable


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """Everything that defines a run besides the jobs, the prices and the seed.

    ``policy`` is ``"coh"`` (the portfolio over ``heuristics``) or the name of one heuristic
    (for example ``"FCFS-SM"``). Times in seconds. ``lookahead`` defaults to boot time + tick.
    """

    policy: str = "coh"
    heuristics: tuple[str, ...] = PAPER_TRIO
    tick: float = 10.0
    boot_time: float = 120.0
    charging: Charging = "exact"
    release_margin: float = 10.0
    lookahead: float | None = None
    validate: bool = False

    def billing(self, origin: int = 0) -> Billing:
        """The billing model, wall-clock hours aligned with the trace origin (Unix time)."""
        return Billing(charging=self.charging, release_margin=self.release_margin,
                       clock_offset=float(origin % 3600))

    def engine(self, origin: int = 0) -> EngineConfig:
        """The engine settings."""
        return EngineConfig(tick=self.tick, boot_time=self.boot_time, billing=self.billing(origin),
                            validate=self.validate)


def build_policy(config: SimulationConfig, *, seed: int | None) -> CohPolicy:
    """The policy named by ``config.policy``."""
    lookahead = config.lookahead if config.lookahead is not None else config.boot_time + config.tick
    if config.policy == "coh":
        members = [HEURISTICS.get(name) for name in config.heuristics]
        return CohPolicy(members, lookahead=lookahead, seed=seed, name="coh")
    if config.policy in HEURISTICS:
        return CohPolicy([HEURISTICS.get(config.policy)], lookahead=lookahead, seed=seed, name=config.policy)
    raise ValueError(f"unknown policy {config.policy!r}: use 'coh' or a heuristic such as 'FCFS-SM'")


def simulate(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig = SimulationConfig(),
             seed: int | None = 0, recorder: Recorder | None = None) -> RunResult:
    """Replay ``jobs`` through the configured policy and summarize the run."""
    policy = build_policy(config, seed=seed)
    engine_config = config.engine(jobs.origin)
    record = Engine(jobs, catalog, policy, engine_config, recorder).run()
    return summarize(record, catalog, engine_config.billing, policy=policy.name)
