"""The seam between the CoH world and its policies: one hook, ``decide``.

The world (:mod:`broker.coh.world`) knows nothing about any one policy. At each decision tick it
hands the policy the jobs it may place (a :class:`~heuristics.fleet.Batch`: arrived or within the
policy's look-ahead, not yet placed) and a read-only view of the run (:class:`SimulationView`);
the policy answers with a :class:`~heuristics.fleet.Plan` (possibly for only some of the jobs:
the rest wait for a later tick). Idle VMs go at their billing deadline; the reservations decide
which stay (heavy ones, until the run drains), not the policy.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from broker.pricing.billing import Billing
from broker.pricing.book import Catalog
from broker.sim.recorder import Recorder
from heuristics.fleet import Batch, Fleet, Plan


class SimulationView(Protocol):
    """What a policy may read of the run (the world implements it)."""

    catalog: Catalog
    billing: Billing
    boot_time: float
    recorder: Recorder

    @property
    def now(self) -> float:
        """The current time (s)."""
        ...

    def fleet(self, *, stats: bool) -> Fleet:
        """The leased VMs now; ``stats`` adds the hosted-job arrival/departure statistics."""
        ...

    def vm_idle(self, slot: int) -> bool:
        """Whether the VM in ``slot`` hosts no job (placed or running)."""
        ...


class Policy(Protocol):
    """A provisioning and placement policy of the CoH world."""

    name: str
    #: Seconds ahead of its arrival at which a job is handed to the policy (a perfect predictor).
    lookahead: float

    def decide(self, now: float, batch: Batch, sim: SimulationView) -> Plan | None:
        """Place (some of) the batch; jobs left out are offered again at the next tick."""
        ...

    def stats(self) -> dict[str, Any]:
        """Summary figures of the policy's own (e.g. portfolio win counts) for the run result."""
        ...


def batch_of(index: np.ndarray, arrival: np.ndarray, runtime: np.ndarray, r: np.ndarray,
             user: np.ndarray) -> Batch:
    """The batch of the jobs at positions ``index`` of the run's job arrays."""
    return Batch(index=index, arrival=arrival[index], runtime=runtime[index], r=r[index], user=user[index])
