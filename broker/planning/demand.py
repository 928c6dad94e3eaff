"""Resource demand: how many VMs of each type a workload needs per interval (``SPEC.md`` §4).

The reservation planner works on demand, not on jobs. :func:`demand_from_run` derives it from a
replay: the demand of type ``k`` in interval ``t`` is the number of billing units of type-``k`` VMs
that start in ``t`` (hourly intervals and hourly units: the number of VMs of type ``k`` billed for
that hour). Summed over intervals this is exactly the VM-hours the replay paid for, so the
all-on-demand cost of the demand equals the replay's cost. For intervals longer than a unit the
count is divided by the units per interval and rounded up (a mean number of VMs).

A demand read from a file (:func:`broker.cli.files.read_demand`) has the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from broker.coh.config import SimulationConfig
from broker.coh.metrics import RunResult, summarize
from broker.coh.simulate import replay
from broker.pricing.book import Catalog
from broker.sim.ledger import InstanceRecord
from broker.sim.recorder import Recorder
from workloads.errors import ConfigError
from workloads.jobs import JobTable


@dataclass(frozen=True, slots=True)
class Demand:
    """``counts[t, k]``: VMs of type ``types[k]`` needed in interval ``t`` of ``interval_s`` seconds.

    ``start`` is the simulation time (s) of interval 0; ``source`` says where the demand came from.
    """

    counts: np.ndarray
    types: tuple[str, ...]
    interval_s: float = 3600.0
    start: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts)
        if counts.ndim != 2 or counts.shape[1] != len(self.types):
            raise ConfigError(f"demand counts must be (intervals, {len(self.types)} types), got {counts.shape}")
        if len(counts) and (counts.min() < 0 or not np.issubdtype(counts.dtype, np.integer)):
            raise ConfigError("demand counts must be non-negative integers")
        if self.interval_s <= 0:
            raise ConfigError(f"interval_s must be > 0, got {self.interval_s}")
        object.__setattr__(self, "counts", counts.astype(np.int64))

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def hours(self) -> float:
        """Span of the demand in hours."""
        return len(self) * self.interval_s / 3600.0

    def column(self, name: str) -> np.ndarray:
        """The series of one type (zeros for a type the demand does not list)."""
        if name not in self.types:
            return np.zeros(len(self), dtype=np.int64)
        return self.counts[:, self.types.index(name)]

    def window(self, first: int, stop: int) -> Demand:
        """Intervals ``[first, stop)``."""
        return Demand(self.counts[first:stop], self.types, self.interval_s,
                      self.start + first * self.interval_s, self.source)

    def last_days(self, days: float, *, before: int | None = None) -> Demand:
        """The ``days`` days of demand that end at interval ``before`` (default: the end)."""
        stop = len(self) if before is None else before
        n = max(1, round(days * 86400.0 / self.interval_s))
        return self.window(max(0, stop - n), stop)

    def scaled(self, factor: float) -> Demand:
        """Every count times ``factor``, rounded up (demand growth)."""
        if not 0 <= factor < math.inf:
            raise ConfigError(f"growth factor must be a finite number >= 0, got {factor}")
        scaled = np.ceil(self.counts * factor - 1e-9)
        if len(scaled) and scaled.max() > 2**53:
            raise ConfigError(f"growth x{factor:g} makes {scaled.max():.3g} instances in an interval; at most 2**53")
        return Demand(scaled.astype(np.int64), self.types, self.interval_s, self.start, f"{self.source} x{factor:g}")

    def capacity(self, capacities: Mapping[str, float]) -> np.ndarray:
        """Capacity units needed per interval: count x capacity summed over the types in ``capacities``."""
        return sum((self.column(name) * cap for name, cap in capacities.items()), np.zeros(len(self)))

    def frame(self) -> pd.DataFrame:
        """One row per interval: its start (s) and one column per type."""
        frame = pd.DataFrame(self.counts, columns=list(self.types))
        frame.insert(0, "start_s", self.start + np.arange(len(self)) * self.interval_s)
        return frame


def distribution(values: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The empirical ``Pr(D = i)``: distinct levels ascending and their probabilities."""
    arr = np.asarray(values, dtype=np.int64)
    if arr.size == 0:
        return np.zeros(1, dtype=np.int64), np.ones(1)
    levels, counts = np.unique(arr, return_counts=True)
    return levels, counts / counts.sum()


def demand_from_run(ledger: list[InstanceRecord], catalog: Catalog, *, began: float, ended: float,
                    btu: float = 3600.0, interval_s: float = 3600.0, source: str = "") -> Demand:
    """The demand of a replay: billing units started per interval and type (module docstring)."""
    n = max(1, math.ceil((ended - began) / interval_s))
    counts = np.zeros((n, len(catalog)), dtype=np.int64)
    if ledger:
        units = np.array([v.units for v in ledger], dtype=np.int64)
        anchor = np.repeat([v.anchor for v in ledger], units)
        k = np.repeat([catalog.names.index(v.instance_type) for v in ledger], units)
        offset = np.arange(units.sum()) - np.repeat(np.cumsum(units) - units, units)
        slot = np.floor((anchor + offset * btu - began) / interval_s).astype(np.int64)
        np.add.at(counts, (np.clip(slot, 0, n - 1), k), 1)
    per = max(1, round(interval_s / btu))
    if per > 1:
        counts = np.ceil(counts / per - 1e-9).astype(np.int64)
    return Demand(counts, catalog.names, interval_s, began, source)


def replay_demand(jobs: JobTable, catalog: Catalog, *, config: SimulationConfig | None = None, seed: int | None = 0,
                  recorder: Recorder | None = None, interval_s: float = 3600.0,
                  source: str = "") -> tuple[Demand, RunResult]:
    """The demand of a CoH replay (:func:`demand_from_run`) and the replay's result (default: CoH over the trio)."""
    config = config if config is not None else SimulationConfig()
    record, name = replay(jobs, catalog, config=config, seed=seed, recorder=recorder)
    billing = config.engine.billing(jobs.origin)
    demand = demand_from_run(record.ledger, catalog, began=record.began, ended=record.ended, btu=billing.btu,
                             interval_s=interval_s, source=source)
    return demand, summarize(record, catalog, billing, policy=name)
