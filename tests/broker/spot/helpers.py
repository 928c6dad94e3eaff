"""Small hand-built markets for the spot tests: 100 s ticks, on-demand 3.6 $/h (0.001 $/s), spot 0.36 $/h."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from broker.pricing.spot import SpotBilling, SpotMarket, Timeline
from broker.spot.world import Decision, SpotWorld

OD, SPOT = 3.6, 0.36


def market(*zones: Sequence[int], prices: Sequence[Sequence[float] | None] | None = None, notice_s: float = 0.0,
           billing: SpotBilling | None = None, gap: int = 100) -> SpotMarket:
    """A market of the given zones' counts per tick."""
    prices = prices or [None] * len(zones)
    timelines = tuple(Timeline(f"z{i}", gap, np.array(c), None if p is None else np.array(p, dtype=float))
                      for i, (c, p) in enumerate(zip(zones, prices, strict=True)))
    return SpotMarket(timelines, on_demand=OD, spot_price=SPOT, notice_s=notice_s, billing=billing or SpotBilling())


class Script:
    """A policy that plays a fixed choice per tick for every job (the last one past the script's end)."""

    def __init__(self, choices: Sequence[int]) -> None:
        self.choices = list(choices)

    def decide(self, decision: Decision, world: SpotWorld) -> tuple[int, ...]:
        k = min(decision.tick, len(self.choices) - 1)
        return tuple(self.choices[k] for _ in decision.jobs)
