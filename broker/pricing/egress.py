"""Data-transfer pricing: per-month tiered egress (``SPEC.md`` §2, cloud-cluster paper §3.1, §6.1).

Providers bill data leaving the cloud per calendar month in tiers: the first GB free, the next
10 TB at one price, the next 40 TB at a lower one, and so on; data entering is free. The tiers are
data (a price book's ``[[egress]]`` rows, :class:`EgressTier`), never constants in code. A GB is
2**30 bytes, as the providers bill it. Months are UTC calendar months of the trace's clock
(``origin``: the Unix time of simulation time 0); a transfer counts in the month it completes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workloads.errors import InputError

GB = float(2**30)


@dataclass(frozen=True, slots=True)
class EgressTier:
    """``per_gb`` ($/GB) for the part of a month's egress up to ``up_to_gb`` (``inf``: no bound)."""

    up_to_gb: float
    per_gb: float


@dataclass(frozen=True, slots=True)
class EgressPrices:
    """Tiers of one month, by increasing bound; egress past the last bound is refused."""

    tiers: tuple[EgressTier, ...]

    def __post_init__(self) -> None:
        bounds = [t.up_to_gb for t in self.tiers]
        if any(b <= a for a, b in itertools.pairwise(bounds)):
            raise InputError(f"egress tier bounds must increase, got {bounds}")
        if any(t.per_gb < 0 or t.up_to_gb <= 0 for t in self.tiers):
            raise InputError("egress tiers need up_to_gb > 0 and per_gb >= 0")

    @classmethod
    def free(cls) -> EgressPrices:
        """No charge for data transfer."""
        return cls((EgressTier(float("inf"), 0.0),))

    def month_cost(self, gb: float) -> float:
        """The charge for ``gb`` GB sent out in one month ($)."""
        cost, lower = 0.0, 0.0
        for tier in self.tiers:
            part = min(gb, tier.up_to_gb) - lower
            if part <= 0:
                return cost
            cost += part * tier.per_gb
            lower = tier.up_to_gb
        if gb > lower:
            raise InputError(f"{gb} GB in a month is past the last egress tier ({lower} GB)")
        return cost


def month_index(t: np.ndarray, origin: float) -> np.ndarray:
    """The UTC calendar month of each simulation time ``t`` (s), as months since January 1970."""
    stamps = (np.asarray(t, dtype=np.float64) + origin).astype("datetime64[s]")
    return stamps.astype("datetime64[M]").astype(np.int64)


def monthly_bill(done_at: np.ndarray, nbytes: np.ndarray, prices: EgressPrices, *,
                 origin: float) -> tuple[dict[int, float], np.ndarray]:
    """Egress charges per month and per transfer.

    Parameters
    ----------
    done_at : array
        Completion time (s) of each transfer.
    nbytes : array
        Bytes of each transfer.
    prices : EgressPrices
        The tiers.
    origin : float
        Unix time of simulation time 0.

    Returns
    -------
    (dict, array)
        Months since January 1970 -> charge ($); and each transfer's share of its month's charge,
        in proportion to its bytes (the shares of a month add up to the month's charge).
    """
    months = month_index(done_at, origin)
    nbytes = np.asarray(nbytes, dtype=np.float64)
    share = np.zeros(len(nbytes))
    bill: dict[int, float] = {}
    for m in np.unique(months):
        sel = months == m
        total = float(nbytes[sel].sum())
        bill[int(m)] = prices.month_cost(total / GB)
        if total > 0:
            share[sel] = bill[int(m)] * nbytes[sel] / total
    return bill, share


def tiers_from_rows(rows: Sequence[dict[str, object]], *, source: str) -> EgressPrices:
    """Egress tiers from price-book rows ``{up_to_gb = .., per_gb = ..}`` (the last may omit the bound)."""
    tiers = []
    for i, row in enumerate(rows):
        where = f"{source}: egress[{i}]"
        per_gb = row.get("per_gb")
        if not isinstance(per_gb, int | float) or isinstance(per_gb, bool) or not 0 <= per_gb < math.inf:
            raise InputError(f"{where}: field 'per_gb' must be a finite number >= 0, got {per_gb!r}")
        last = i == len(rows) - 1
        bound = row.get("up_to_gb", math.inf if last else None)
        if (not isinstance(bound, int | float) or isinstance(bound, bool) or not bound > 0
                or (bound == math.inf and not last)):
            raise InputError(f"{where}: field 'up_to_gb' must be a number > 0 (only the last row may omit it), "
                             f"got {bound!r}")
        tiers.append(EgressTier(float(bound), float(per_gb)))
    try:
        return EgressPrices(tuple(tiers))
    except ValueError as e:
        raise InputError(f"{source}: egress: {e}") from e
