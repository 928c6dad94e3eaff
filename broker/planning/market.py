"""The spot market as the planner's fourth option (issue 36; ``docs/worlds/planning.md``, "The three-way mix").

Above the reservations, a VM-hour of type ``k`` is spot while the market is open and on-demand
while it is closed, as :class:`~broker.coh.spot.SpotCohWorld` runs it. Its expected price is

``m_k = c_k * (a * r * (1 + loss) + (1 - a))``

- ``a``: the share of the timeline's ticks with the market open (:attr:`SpotOffer.available`);
- ``r``: the mean spot / on-demand price ratio over the open ticks (1 if it never opens);
- ``loss``: the spot hours preemptions waste per useful spot hour (:func:`expected_loss`).

**The loss.** Closes come as a Poisson process of rate ``lam``, the timeline's closes (open to
closed, the timeline read as a loop) per open hour. A job of run ``x`` hours started on spot is
preempted at most once: a close preempts every spot VM, so the job is placed again while the market
is closed, on an on-demand VM. It is preempted with probability ``1 - exp(-lam x)`` and then loses
its run so far; from scratch the expected loss is ``g(x) = (1 - exp(-lam x)) / lam - x exp(-lam x)``
(the mean of ``T`` over ``T < x``, ``T`` the time to the close, times its probability). With a
checkpoint every ``C`` h the loss is the run since the last checkpoint, ``T mod C``, plus the
restart overhead ``o``: for ``x = n C + s``, ``g(C) (1 - exp(-lam n C)) / (1 - exp(-lam C)) +
exp(-lam n C) g(s) + o (1 - exp(-lam x))``. ``loss`` is the jobs' expected losses over their runs,
summed: ``sum_j E[lost_j] / sum_j x_j`` (each job weighted by its run, not by the VM share it holds).
The notice is not counted (a preempted VM's last ``notice_s`` are billed and, for a job whose run
is lost, wasted as well).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from broker.pricing.spot_offer import SpotOffer
from workloads.errors import ConfigError


@dataclass(frozen=True, slots=True)
class MarketPrice:
    """The market's expected price of an unreserved VM-hour as a factor of on-demand (module docstring)."""

    name: str
    open_share: float
    ratio: float
    closes_per_open_hour: float
    loss: float

    @property
    def factor(self) -> float:
        """``a * r * (1 + loss) + (1 - a)``: the expected price of an unreserved VM-hour over on-demand."""
        return self.open_share * self.ratio * (1.0 + self.loss) + (1.0 - self.open_share)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, the factor included."""
        return {"market": self.name, "open_share": self.open_share, "ratio": self.ratio,
                "closes_per_open_hour": self.closes_per_open_hour, "loss": self.loss, "factor": self.factor}


def closes_per_open_hour(offer: SpotOffer) -> float:
    """The timeline's closes (an open tick followed by a closed one, read as a loop) per open hour (0: never open)."""
    is_open = offer.caps > 0
    hours = float(is_open.sum()) * offer.gap_s / 3600.0
    closes = int(np.sum(is_open & ~np.roll(is_open, -1)))
    return closes / hours if hours else 0.0


def _lost_from_scratch(rate: float, x: np.ndarray) -> np.ndarray:
    """``g(x)``: expected run lost (h) of a job of ``x`` h restarting from scratch, closes at ``rate`` per hour."""
    survive = np.exp(-rate * x)
    return -np.expm1(-rate * x) / rate - x * survive


def expected_loss(runtimes_h: np.ndarray, rate: float, *, checkpoint_h: float | None = None,
                  overhead_h: float = 0.0) -> float:
    """Spot hours lost per spot hour run: jobs of ``runtimes_h``, closes at ``rate`` per hour (module docstring)."""
    x = np.asarray(runtimes_h, dtype=float)
    if np.any(x < 0) or not np.all(np.isfinite(x)) or not (math.isfinite(rate) and rate >= 0):
        raise ConfigError("expected_loss needs finite runtimes >= 0 and a close rate >= 0")
    if rate == 0 or not x.sum():
        return 0.0
    if checkpoint_h is None:
        lost = _lost_from_scratch(rate, x)
    else:
        n = np.floor(x / checkpoint_h)
        whole = float(_lost_from_scratch(rate, np.asarray(checkpoint_h)))
        lost = (whole * -np.expm1(-rate * n * checkpoint_h) / -math.expm1(-rate * checkpoint_h)
                + np.exp(-rate * n * checkpoint_h) * _lost_from_scratch(rate, x - n * checkpoint_h)
                + overhead_h * -np.expm1(-rate * x))
    return float(lost.sum() / x.sum())


def market_price(offer: SpotOffer, runtimes_s: np.ndarray, *, checkpoint_s: float | None = None,
                 restart_overhead_s: float = 0.0) -> MarketPrice:
    """The market's expected price factor for jobs of ``runtimes_s`` (module docstring)."""
    is_open = offer.caps > 0
    ratio = float(offer.ratios[is_open].mean()) if is_open.any() else 1.0
    rate = closes_per_open_hour(offer)
    loss = expected_loss(np.asarray(runtimes_s, dtype=float) / 3600.0, rate,
                         checkpoint_h=None if checkpoint_s is None else checkpoint_s / 3600.0,
                         overhead_h=restart_overhead_s / 3600.0)
    return MarketPrice(offer.name, offer.available, ratio, rate, loss)
