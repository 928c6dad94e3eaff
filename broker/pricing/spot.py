"""The spot market as data: availability timelines per zone, prices per tick, notice, billing.

A *timeline* is what a trace file of Wu et al., "Can't Be Late" (NSDI 2024; ``../shared/spot``)
holds: ``{"metadata": {"gap_seconds": G}, "data": [n0, n1, ...], "prices": [...]?}``, one whole
number a tick of ``G`` seconds, the spot instances that could be had then (1 = a launch succeeded
in a 1-node availability trace; 0-16 in a 16-node trace; in a preemption trace, a launched
instance runs until the value drops). The simulator published with the paper stores the opposite
convention (1 = the launch *failed*): :func:`load_timeline` reads either, named by ``convention``.

Syntax is refused with one line naming the file and the field (not JSON, no ``data``, an empty
``data``, a gap that is not a positive whole number of seconds, a value that is not a whole number
>= 0, ``prices`` of another length or not positive). Where a zone has no timeline, a seeded
two-state chain from an AWS Spot Instance Advisor interruption bucket stands in
(:func:`hazard_timeline`); a market with given mean open and closed spells is another such chain
(:func:`markov_timeline`, in a trace file's form by :func:`timeline_document`). Where a timeline has
no prices, spot costs a fixed price (the paper's 0.9731 $/h, or on-demand less the advisor's
savings, :func:`advisor_entry`).

A run longer than a timeline reads it again from its start: :meth:`SpotMarket.window` says how
many times (``repeats``), and every result carries that count.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from broker.pricing.billing import Billing
from workloads.errors import ConfigError, InputError, UnknownName

Convention = Literal["available", "failed"]
CONVENTIONS = ("available", "failed")
#: The paper's prices (p3.2xlarge, us-east-1, $/h).
PAPER_ON_DEMAND = 3.06
PAPER_SPOT = 0.9731
#: Seconds of warning before a preemption, per cloud.
NOTICE_S = {"aws": 120.0, "gcp": 30.0, "azure": 30.0}
#: Monthly interruption rate at the middle of each Spot Instance Advisor bucket (r: 0 = <5 %, ... 4 = >20 %).
ADVISOR_MONTHLY_RATE = (0.025, 0.075, 0.125, 0.175, 0.25)
MONTH_S = 30 * 86400.0
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Timeline:
    """One zone's spot capacity per tick.

    Parameters
    ----------
    name : str
        The zone (the file's stem, e.g. ``us-east-1a_v100_1``).
    gap_s : int
        Tick length (s).
    counts : numpy.ndarray
        Spot instances that can run at each tick (read-only, int64, >= 0).
    prices : numpy.ndarray or None
        Spot price at each tick ($/h), when the source has one.
    """

    name: str
    gap_s: int
    counts: np.ndarray
    prices: np.ndarray | None = None

    def __len__(self) -> int:
        """Ticks in the timeline."""
        return len(self.counts)

    @property
    def available(self) -> float:
        """Fraction of ticks with at least one instance to be had."""
        return float(np.mean(self.counts > 0))


def _refuse(path: Path, what: str) -> InputError:
    return InputError(f"{path}: {what}")


def _whole(path: Path, name: str, values: Sequence[object]) -> np.ndarray:
    """``values`` as int64, refusing the first that is not a whole number >= 0 (bools too)."""
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0 or v != int(v):
            raise _refuse(path, f"{name}[{i}] must be a whole number >= 0, got {v!r}")
    return np.asarray(values, dtype=np.int64)


def _gap(path: Path, meta: object) -> int:
    if not isinstance(meta, dict) or "gap_seconds" not in meta:
        raise _refuse(path, "metadata.gap_seconds is missing")
    gap = meta["gap_seconds"]
    if isinstance(gap, bool) or not isinstance(gap, int | float) or not math.isfinite(gap) or gap <= 0 \
            or gap != int(gap):
        raise _refuse(path, f"metadata.gap_seconds must be a whole number of seconds > 0, got {gap!r}")
    return int(gap)


def _prices(path: Path, raw: object, n: int) -> np.ndarray | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != n:
        got = len(raw) if isinstance(raw, list) else type(raw).__name__
        raise _refuse(path, f"prices must be a list of {n} prices (one a tick, as data), got {got}")
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p) or p <= 0:
            raise _refuse(path, f"prices[{i}] must be a price > 0 ($/h), got {p!r}")
    prices = np.asarray(raw, dtype=float)
    prices.flags.writeable = False
    return prices


def parse_timeline(path: Path, doc: object, *, convention: str = "available") -> Timeline:
    """A :class:`Timeline` from a parsed trace file (see the module docstring for what is refused)."""
    if convention not in CONVENTIONS:
        raise UnknownName(f"unknown availability convention {convention!r}: use one of {', '.join(CONVENTIONS)}")
    if not isinstance(doc, dict):
        raise _refuse(path, f"expected a JSON object with metadata and data, got {type(doc).__name__}")
    gap = _gap(path, doc.get("metadata"))
    raw = doc.get("data")
    if not isinstance(raw, list):
        raise _refuse(path, "data is missing or not a list")
    if not raw:
        raise _refuse(path, "data is empty")
    counts = _whole(path, "data", raw)
    if convention == "failed":
        if counts.max() > 1:
            raise _refuse(path, "the 'failed' convention (1 = the launch failed) takes 0 and 1 only")
        counts = 1 - counts
    counts.flags.writeable = False
    return Timeline(path.stem, gap, counts, _prices(path, doc.get("prices"), len(counts)))


def load_timeline(path: str | Path, *, convention: str = "available") -> Timeline:
    """Read one trace file (one zone); refuses bad syntax with the file and field named."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from exc
    return parse_timeline(path, doc, convention=convention)


def hazard_timeline(name: str, bucket: int, *, gap_s: int, ticks: int, seed: int,
                    mean_outage_s: float = 3600.0) -> Timeline:
    """A seeded stand-in timeline from an advisor interruption bucket (where no measured one exists).

    A two-state chain per tick: an available zone becomes unavailable with the per-tick hazard of the
    bucket's monthly rate (:data:`ADVISOR_MONTHLY_RATE`), an unavailable one comes back with
    probability ``gap_s / mean_outage_s``. It starts available. O(ticks).
    """
    if bucket not in range(len(ADVISOR_MONTHLY_RATE)):
        raise ConfigError(f"an advisor interruption bucket is 0-4, got {bucket!r}")
    if gap_s <= 0 or ticks <= 0 or not mean_outage_s >= gap_s:
        raise ConfigError(f"a hazard timeline needs gap_s > 0, ticks > 0 and mean_outage_s >= gap_s, got "
                          f"{gap_s}, {ticks}, {mean_outage_s}")
    rate = ADVISOR_MONTHLY_RATE[bucket]
    return _two_state(name, gap_s, ticks, 1.0 - (1.0 - rate) ** (gap_s / MONTH_S), gap_s / mean_outage_s, seed)


def markov_timeline(name: str, *, gap_s: int, ticks: int, mean_open_s: float, mean_closed_s: float,
                    seed: int) -> Timeline:
    """A seeded two-state market: open spells of mean ``mean_open_s``, closed spells of mean ``mean_closed_s``.

    Per tick an open market closes with probability ``gap_s / mean_open_s`` and a closed one opens
    with ``gap_s / mean_closed_s`` (geometric spells of those means, in whole ticks); it starts open.
    Counts are 1 (open, no cap, as a 1-node trace) and 0. O(ticks).
    """
    if gap_s <= 0 or ticks <= 0 or not (mean_open_s >= gap_s and mean_closed_s >= gap_s):
        raise ConfigError(f"a Markov timeline needs gap_s > 0, ticks > 0 and mean spells >= gap_s, got {gap_s}, "
                          f"{ticks}, {mean_open_s}, {mean_closed_s}")
    return _two_state(name, gap_s, ticks, gap_s / mean_open_s, gap_s / mean_closed_s, seed)


def _two_state(name: str, gap_s: int, ticks: int, p_close: float, p_open: float, seed: int) -> Timeline:
    """A market that starts open and, per tick, closes with ``p_close`` or opens with ``p_open`` (counts 1 / 0)."""
    draws = np.random.default_rng(seed).random(ticks)
    counts = np.empty(ticks, dtype=np.int64)
    up = True
    for i, u in enumerate(draws.tolist()):
        counts[i] = up
        up = (u >= p_close) if up else (u < p_open)
    counts.flags.writeable = False
    return Timeline(name, gap_s, counts)


def timeline_document(timeline: Timeline) -> dict[str, object]:
    """The trace-file form of ``timeline`` (what :func:`parse_timeline` reads back), ready for ``json.dump``."""
    doc: dict[str, object] = {"metadata": {"gap_seconds": timeline.gap_s}, "data": timeline.counts.tolist()}
    if timeline.prices is not None:
        doc["prices"] = timeline.prices.tolist()
    return doc


def advisor_entry(doc: dict[str, object], region: str, instance_type: str, os: str = "Linux") -> tuple[float, int]:
    """(savings as a fraction of on-demand, interruption bucket) of a type from the advisor's data."""
    try:
        entry = doc["spot_advisor"][region][os][instance_type]  # type: ignore[index]
        savings, bucket = float(entry["s"]) / 100.0, int(entry["r"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UnknownName(f"the spot advisor has no {instance_type} ({os}) in {region}") from exc
    if not 0 <= savings < 1 or bucket not in range(len(ADVISOR_MONTHLY_RATE)):
        raise InputError(f"advisor entry {region}/{os}/{instance_type} is out of range: s={savings}, r={bucket}")
    return savings, bucket


@dataclass(frozen=True, slots=True)
class SpotBilling:
    """How instance time is charged: ``"second"`` (exact) or ``"hour"`` (per started hour).

    ``interrupted_hour_free``: under hourly billing, the partial hour in which the provider
    preempts a spot instance is not charged (AWS's rule for spot before per-second billing).
    """

    unit: Literal["second", "hour"] = "second"
    interrupted_hour_free: bool = False

    def __post_init__(self) -> None:
        if self.unit not in ("second", "hour"):
            raise ConfigError(f"spot billing is per 'second' or 'hour', got {self.unit!r}")

    def hours(self, held_s: float, *, interrupted: bool) -> float:
        """Hours charged for ``held_s`` seconds held (whole hours under hourly billing)."""
        if self.unit == "second":
            return held_s / 3600.0
        if interrupted and self.interrupted_hour_free:
            return float(math.floor(held_s / 3600.0 + 1e-9))
        return float(Billing(btu=3600.0, release_margin=0.0).units(0.0, held_s))


@dataclass(frozen=True, slots=True)
class Window:
    """The market over one run: per zone, the counts and prices of ticks ``0 .. ticks-1`` from a start.

    ``counts[z, k]`` and ``prices[z, k]`` ($/h) are read-only; ``repeats`` is how many times a zone's
    timeline was read again from its start to cover the run (summed over zones).
    """

    counts: np.ndarray
    prices: np.ndarray
    repeats: int


@dataclass(frozen=True, slots=True)
class SpotMarket:
    """Spot capacity in several zones (failure domains) of one instance type, and its prices.

    Parameters
    ----------
    zones : tuple of Timeline
        One timeline per zone, all on the same tick.
    on_demand : float
        On-demand price ($/h); always available.
    spot_price : float
        Spot price ($/h) for zones whose timeline has no prices.
    notice_s : float
        Warning before a preemption (s): AWS 120, GCP 30.
    billing : SpotBilling
        Charging of every instance, spot and on-demand.
    """

    zones: tuple[Timeline, ...]
    on_demand: float = PAPER_ON_DEMAND
    spot_price: float = PAPER_SPOT
    notice_s: float = NOTICE_S["aws"]
    billing: SpotBilling = field(default_factory=SpotBilling)

    def __post_init__(self) -> None:
        if not self.zones:
            raise ConfigError("a spot market needs at least one zone")
        gaps = {z.gap_s for z in self.zones}
        if len(gaps) > 1:
            raise ConfigError(f"every zone must have the same tick, got gaps of {sorted(gaps)} s")
        for name, value in (("on-demand price", self.on_demand), ("spot price", self.spot_price)):
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"the {name} must be > 0 $/h, got {value}")
        if not (math.isfinite(self.notice_s) and self.notice_s >= 0):
            raise ConfigError(f"the notice period must be >= 0 s, got {self.notice_s}")

    @property
    def gap_s(self) -> int:
        """The tick (s)."""
        return self.zones[0].gap_s

    @property
    def names(self) -> tuple[str, ...]:
        """The zones' names."""
        return tuple(z.name for z in self.zones)

    def window(self, start: int, ticks: int) -> Window:
        """Counts and prices of ``ticks`` ticks from tick ``start`` in every zone (repeating a short timeline)."""
        if start < 0 or ticks <= 0:
            raise ConfigError(f"a market window needs start >= 0 and ticks > 0, got {start}, {ticks}")
        counts = np.empty((len(self.zones), ticks), dtype=np.int64)
        prices = np.empty((len(self.zones), ticks), dtype=float)
        repeats = 0
        for z, zone in enumerate(self.zones):
            index = (start + np.arange(ticks)) % len(zone)
            repeats += (start + ticks - 1) // len(zone)
            counts[z] = zone.counts[index]
            prices[z] = self.spot_price if zone.prices is None else zone.prices[index]
        counts.flags.writeable = False
        prices.flags.writeable = False
        if repeats:
            log.info("%d ticks from tick %d: the zones' timelines are read again from their start %d time(s)",
                     ticks, start, repeats)
        return Window(counts, prices, repeats)
