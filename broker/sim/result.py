"""The result of a run, the same shape for every world: a summary dataclass, one row per job, one per instance.

The same names mean the same things in every world: ``cost`` is always money ($), CPU-seconds are
``cloud_cpu_s``, times end in ``_s`` (seconds) and are on the trace's clock, ``submit`` / ``start``
/ ``end`` / ``wait`` are a job's times and ``instance_id`` the instance it ran on (-1: none, e.g. a
job that ran on the local cluster). The per-instance table of a world that rents instances starts
with the ledger's columns (:data:`broker.sim.ledger.COLUMNS`); the hybrid site's are its cloud
leases. The CLI writes any result the same way (``--json``, ``--out``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import pandas as pd


class Summary(Protocol):
    """A world's headline figures: a frozen dataclass with :meth:`to_dict`."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        ...


S = TypeVar("S", bound=Summary, covariant=True)


@dataclass(frozen=True, slots=True)
class Result(Generic[S]):
    """A finished run: ``summary`` (the world's summary dataclass), ``jobs`` and ``instances`` tables."""

    summary: S
    jobs: pd.DataFrame
    instances: pd.DataFrame


class SummaryMixin:
    """``to_dict`` for summary dataclasses."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return asdict(self)  # type: ignore[call-overload]


def wait_figures(wait: np.ndarray) -> tuple[float, float, float]:
    """Mean, 95th percentile and maximum of the waits (s); zeros for no job."""
    if not len(wait):
        return 0.0, 0.0, 0.0
    return float(wait.mean()), float(np.percentile(wait, 95)), float(wait.max())
