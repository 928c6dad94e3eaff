"""Billing: billing time units, exact and wall-clock charging, release deadlines (``SPEC.md`` §2).

A VM is charged per billing time unit (BTU, 3600 s) started; a partial unit is a full one.
*Exact* charging counts units from the instant the VM starts booting; *wall-clock* charging
counts them from the start of the wall-clock hour in which it started (cloud-cluster paper §3.1),
so a VM started at 10:50 and stopped at 11:05 pays two units. Idle VMs are released
``release_margin`` seconds before their current unit rolls over.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from workloads.errors import ConfigError

Charging = Literal["exact", "wall-clock"]
#: Fraction of a unit after a boundary within which a release still counts as on the boundary.
BOUNDARY_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Billing:
    """How VM time is charged.

    Parameters
    ----------
    charging : {"exact", "wall-clock"}
        Where billing units are counted from.
    btu : float
        Billing time unit in seconds.
    release_margin : float
        Seconds before a unit rolls over at which an idle VM is released (CoH: 10 s).
    clock_offset : float
        Wall-clock seconds past a unit boundary at simulation time 0 (the trace's
        ``UnixStartTime mod btu``); only wall-clock charging uses it.
    """

    charging: Charging = "exact"
    btu: float = 3600.0
    release_margin: float = 10.0
    clock_offset: float = 0.0

    def __post_init__(self) -> None:
        if self.charging not in ("exact", "wall-clock"):
            raise ConfigError(f"charging must be 'exact' or 'wall-clock', got {self.charging!r}")
        if not 0 <= self.release_margin < self.btu:
            raise ConfigError(f"release_margin must be in [0, btu), got {self.release_margin}")

    def anchor(self, start: float) -> float:
        """The instant billing units of a VM started at ``start`` are counted from (seconds)."""
        if self.charging == "exact":
            return start
        return math.floor((start + self.clock_offset) / self.btu) * self.btu - self.clock_offset

    def units(self, anchor: float, end: float) -> int:
        """Units billed for an instance anchored at ``anchor`` and stopped at ``end`` (at least one).

        A release on a unit boundary pays the units before it: ``end`` is taken as on the boundary
        when it lies within :data:`BOUNDARY_TOLERANCE` units after it, so ``anchor + k * btu``
        computed in floating point pays exactly ``k`` (periods are counted, never rounded up by an
        ulp).
        """
        return max(1, math.ceil((end - anchor) / self.btu - BOUNDARY_TOLERANCE))

    def units_until(self, anchor: float, end: float) -> int:
        """Units needed to cover ``[anchor, end]``; 0 when ``end <= anchor`` (IPP objective)."""
        return max(0, math.ceil((end - anchor) / self.btu))

    def deadline(self, anchor: float, after: float) -> float:
        """The first release deadline ``anchor + k * btu - margin`` (k >= 1) at or after ``after``.

        With ``release_margin = 0`` this is the end of the paid period running at ``after``.
        """
        k = max(1, math.ceil((after - anchor + self.release_margin) / self.btu))
        return anchor + k * self.btu - self.release_margin

    def time_to_rollover(self, anchor: float, now: float) -> float:
        """Seconds from ``now`` until the VM's current unit rolls over (CFH/FFH key)."""
        return self.btu - ((now - anchor) % self.btu)
