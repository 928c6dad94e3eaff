"""A spot offer for a fleet's instance types from one market timeline (issue 36; ``docs/worlds/coh-spot.md``).

The CoH world rents many VMs of a price book's types; the spot market (:class:`~broker.pricing.spot.SpotMarket`,
one zone) says, per tick of its timeline, whether spot VMs can be had and at what price:

- **State.** A count of 0 closes the market (no spot VM can be launched, and every running one is
  preempted); a count of 1 (the 1-node traces) opens it with no cap; a count ``n > 1`` opens it with
  at most ``n`` spot VMs running at once (:meth:`SpotOffer.cap`).
- **Price.** A spot VM of a book type costs that type's on-demand price times the market's spot /
  on-demand ratio at the tick it starts: the file's price over the market's on-demand price when the
  file has prices, else the market's fixed spot price over its on-demand price
  (:meth:`SpotOffer.ratio_at`).
- **Time.** Tick ``k`` of the timeline covers ``[k * gap, (k + 1) * gap)`` of the trace's time (its
  time 0 is tick 0); a run longer than the timeline reads it again from its start, and before time 0
  (the look-ahead of the first jobs) from its end.
- **Hazard.** The market's closes per hour seen so far: the ticks ``1..k`` at which it went from open
  to closed, over the ``k + 1`` ticks ``0..k`` seen by tick ``k`` (:meth:`SpotOffer.hazard`); no look-ahead,
  and 0 before time 0 (nothing seen yet).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from broker.pricing.spot import PAPER_ON_DEMAND, PAPER_SPOT, SpotMarket
from workloads.errors import ConfigError

#: On-demand list price of r5.16xlarge in us-east-1 ($/h): the preemption trace's (r5.16xlarge) spot
#: prices are read against it.
R5_16XLARGE_ON_DEMAND = 4.032
#: The spot price as a fraction of on-demand where a timeline has no prices: the paper's p3.2xlarge
#: (0.9731 / 3.06 $/h).
PAPER_SPOT_FRACTION = PAPER_SPOT / PAPER_ON_DEMAND


@dataclass(frozen=True, slots=True)
class SpotOffer:
    """Per tick of one timeline: the cap on running spot VMs and the spot / on-demand price ratio.

    Parameters
    ----------
    name : str
        The zone.
    gap_s : int
        Tick length (s).
    caps : numpy.ndarray
        Spot VMs that may run at each tick: 0 (closed), ``inf`` (open, no cap) or a count > 1.
    ratios : numpy.ndarray
        Spot price over on-demand price at each tick.
    notice_s : float
        Warning before a preemption (s).
    """

    name: str
    gap_s: int
    caps: np.ndarray
    ratios: np.ndarray
    notice_s: float
    changes: tuple[int, ...] = field(init=False, repr=False)
    closes: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.caps) != len(self.ratios) or not len(self.caps):
            raise ConfigError(f"a spot offer needs as many ratios as caps (> 0), got {len(self.ratios)}, "
                              f"{len(self.caps)}")
        if not (math.isfinite(self.notice_s) and self.notice_s >= 0):
            raise ConfigError(f"the notice period must be >= 0 s, got {self.notice_s}")
        # the ticks whose cap differs from the tick before (the last one before tick 0)
        object.__setattr__(self, "changes", tuple(np.flatnonzero(self.caps != np.roll(self.caps, 1)).tolist()))
        # closes[i]: the closes at ticks 1..i of one reading (the close at its tick 0 is counted apart)
        closed = self.caps == 0
        object.__setattr__(self, "closes", _frozen(np.cumsum(np.r_[False, closed[1:] & ~closed[:-1]])))

    @classmethod
    def from_market(cls, market: SpotMarket, *, notice_s: float | None = None) -> SpotOffer:
        """The offer of a one-zone market (its notice unless ``notice_s`` is given)."""
        if len(market.zones) != 1:
            raise ConfigError(f"the CoH world takes a market of one zone, got {len(market.zones)}")
        zone = market.zones[0]
        counts = zone.counts.astype(float)
        caps = np.where(counts == 1, math.inf, counts)
        prices = zone.prices if zone.prices is not None else np.full(len(zone), market.spot_price)
        return cls(zone.name, zone.gap_s, _frozen(caps), _frozen(prices / market.on_demand),
                   market.notice_s if notice_s is None else notice_s)

    def tick(self, t: float) -> int:
        """The absolute tick (of the repeated timeline) at time ``t`` (s)."""
        return math.floor(t / self.gap_s)

    def cap(self, t: float) -> float:
        """Spot VMs that may run at ``t``: 0, ``inf`` or a count."""
        return float(self.caps[self.tick(t) % len(self.caps)])

    def ratio_at(self, t: float) -> float:
        """Spot over on-demand price at ``t``."""
        return float(self.ratios[self.tick(t) % len(self.ratios)])

    def next_change(self, t: float) -> float:
        """The first tick boundary after ``t`` at which the cap changes (``inf`` if it never does). O(log ticks)."""
        changes = self.changes
        if not changes:
            return math.inf
        n = self.tick(t)
        base, index = n - n % len(self.caps), n % len(self.caps)
        pos = bisect_right(changes, index)
        k = base + changes[pos] if pos < len(changes) else base + len(self.caps) + changes[0]
        return float(k * self.gap_s)

    def repeats(self, start: float, end: float) -> int:
        """How many times the timeline was read again from its start between ``start`` and ``end`` (s)."""
        if not end >= start:
            return 0
        n = len(self.caps)
        return self.tick(end) // n - self.tick(start) // n

    def closes_through(self, k: int) -> int:
        """How many times the market closed (open at tick ``j - 1``, closed at ``j``) at ticks ``1..k``."""
        if k < 1:
            return 0
        n = len(self.caps)
        reads, index = divmod(k, n)
        wrap = int(self.caps[-1] > 0 and self.caps[0] == 0)  # a close where a reading starts again
        return int(reads * (self.closes[-1] + wrap) + self.closes[index])

    def hazard(self, t: float) -> float:
        """Closes per hour seen by ``t`` (s): :meth:`closes_through` the tick of ``t`` over its ticks so far.

        The ticks ``0..k`` seen by tick ``k`` last ``(k + 1) * gap_s`` seconds; before time 0 nothing
        has been seen and the hazard is 0.
        """
        k = self.tick(t)
        if k < 0:
            return 0.0
        return self.closes_through(k) * 3600.0 / ((k + 1) * self.gap_s)

    @property
    def available(self) -> float:
        """Fraction of ticks with the market open."""
        return float(np.mean(self.caps > 0))


def _frozen(values: np.ndarray) -> np.ndarray:
    out = np.array(values, dtype=float)
    out.flags.writeable = False
    return out
