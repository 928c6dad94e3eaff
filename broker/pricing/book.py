"""The cloud model: instance types and price books (``SPEC.md`` §2, CoH paper Table 5).

A price book is data: instance types (name, capacity in capacity units) and billing offers per
type (on-demand and reserved options with an hourly price in $/h and an upfront price in $) and,
optionally, per-month tiered egress prices (``[[egress]]`` rows, :mod:`broker.pricing.egress`).
The CoH world works with :class:`Catalog`, the on-demand view of a price book as arrays, with the
VM types ordered as in the book.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from broker.pricing.egress import EgressPrices, tiers_from_rows
from workloads.errors import InputError
from workloads.jobs import WHOLE_LIMIT
from workloads.pricebooks import DEFAULT_PRICE_BOOK, read_price_book_data

ON_DEMAND = "on-demand"
LIGHT, MEDIUM, HEAVY = "reserved-light", "reserved-medium", "reserved-heavy"
#: A spot VM in the CoH world (priced by a market, :mod:`broker.pricing.spot_offer`, not by the book).
SPOT = "spot"
#: Reserved options in the order CoH-R fills demand after the always-on heavy ones (SPEC §4).
RESERVED_OPTIONS = (LIGHT, MEDIUM, HEAVY)
#: Hours in a reservation year (365 days; EC2 terms count 8760 h a year).
HOURS_PER_YEAR = 8760


def load_price_book(name_or_path: str | Path = DEFAULT_PRICE_BOOK) -> PriceBook:
    """Load and validate a price book by bundled name (``ec2-2013``, ``ec2-2013-cluster``) or by path."""
    data, label = read_price_book_data(name_or_path)
    return PriceBook.from_dict(data, source=label)


class PriceBookError(InputError):
    """A price book that is malformed; the message names the file, entry and field."""


@dataclass(frozen=True, slots=True)
class InstanceType:
    """A VM configuration: ``capacity`` in capacity units (CoH: small 100, large 410)."""

    name: str
    capacity: float


@dataclass(frozen=True, slots=True)
class Offer:
    """One billing option of one instance type.

    ``hourly`` is charged per billing unit started ($/h); ``upfront`` once per reservation ($).
    ``term_years`` is ``None`` for on-demand. A heavy reservation pays ``hourly`` for every hour of
    its term, running or not; light and medium ones only for the units their VM runs.
    """

    instance_type: str
    option: str
    hourly: float
    upfront: float = 0.0
    term_years: int | None = None

    @property
    def term_hours(self) -> float:
        """Hours in the term (``inf`` for on-demand)."""
        return float("inf") if self.term_years is None else float(self.term_years * HOURS_PER_YEAR)

    @property
    def upfront_per_hour(self) -> float:
        """The upfront price spread over every hour of the term ($/h)."""
        return 0.0 if self.term_years is None else self.upfront / self.term_hours

    @property
    def always_billed(self) -> bool:
        """Whether every hour of the term is billed (heavy utilization)."""
        return self.option == HEAVY


@dataclass(frozen=True, slots=True)
class PriceBook:
    """Instance types and their offers, as read from a price-book file."""

    name: str
    source: str
    types: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    egress: EgressPrices = field(default_factory=EgressPrices.free)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str) -> PriceBook:
        """Validate parsed TOML content; errors name ``source``, the entry and the field."""
        types = tuple(
            InstanceType(name=_field(t, "name", str, source, f"instance_types[{i}]"),
                         capacity=_whole(t, "capacity", source, f"instance_types[{i}]"))
            for i, t in enumerate(_list(data, "instance_types", source))
        )
        names = {t.name for t in types}
        if len(names) != len(types):
            raise PriceBookError(f"{source}: instance_types: duplicate names")
        offers = tuple(_offer(o, source, f"offers[{i}]", names) for i, o in enumerate(_list(data, "offers", source)))
        keys = [(o.instance_type, o.option, o.term_years) for o in offers]
        for i, key in enumerate(keys):
            if key in keys[:i]:
                raise PriceBookError(f"{source}: offers[{i}]: a second offer for {key[0]!r} {key[1]!r} "
                                     f"term_years={key[2]}")
        egress = EgressPrices.free()
        if "egress" in data:
            try:
                egress = tiers_from_rows(_list(data, "egress", source), source=source)
            except ValueError as e:
                raise PriceBookError(str(e)) from e
        book = cls(name=str(data.get("name", source)), source=source, types=types, offers=offers, egress=egress)
        missing = [t.name for t in types if book.offer(t.name, ON_DEMAND) is None]
        if missing:
            raise PriceBookError(f"{source}: no on-demand offer for instance type(s) {missing}")
        return book

    def offer(self, instance_type: str, option: str, term_years: int | None = None) -> Offer | None:
        """The offer of ``option`` for ``instance_type`` (and ``term_years`` for a reservation), if any."""
        return next((o for o in self.offers if o.instance_type == instance_type and o.option == option
                     and (option == ON_DEMAND or term_years is None or o.term_years == term_years)), None)

    def terms(self) -> tuple[int, ...]:
        """Reservation terms (years) the book offers, ascending."""
        return tuple(sorted({o.term_years for o in self.offers if o.term_years is not None}))

    def reserved(self, term_years: int) -> tuple[Offer, ...]:
        """The reserved offers of one term, in book order."""
        return tuple(o for o in self.offers if o.option != ON_DEMAND and o.term_years == term_years)

    def catalog(self) -> Catalog:
        """The on-demand catalog the CoH world and the heuristics use."""
        hourly = [self.offer(t.name, ON_DEMAND) for t in self.types]
        return Catalog(
            names=tuple(t.name for t in self.types),
            capacity=np.array([t.capacity for t in self.types], dtype=np.float64),
            hourly=np.array([o.hourly if o else np.nan for o in hourly], dtype=np.float64),
        )


@dataclass(frozen=True, slots=True)
class Catalog:
    """VM types as arrays: ``capacity`` (whole capacity units) and on-demand ``hourly`` ($/h)."""

    names: tuple[str, ...]
    capacity: np.ndarray
    hourly: np.ndarray

    def __post_init__(self) -> None:
        capacity = np.asarray(self.capacity, dtype=np.float64)
        if len(capacity) and not (np.all(np.mod(capacity, 1) == 0) and np.all(capacity > 0)
                                  and np.all(capacity < WHOLE_LIMIT)):
            raise PriceBookError(f"instance type capacities must be whole numbers of capacity units in "
                                 f"[1, 2**53), got {capacity.tolist()}")

    def __len__(self) -> int:
        return len(self.names)

    def efficiency_order(self) -> np.ndarray:
        """Type indices by decreasing capacity per dollar (ties: larger capacity, then book order)."""
        ratio = self.capacity / self.hourly
        return np.lexsort((np.arange(len(self)), -self.capacity, -ratio))

    def most_cost_efficient(self) -> int:
        """The type with the largest capacity/cost (CoH's Cost-Efficient VM-type rule)."""
        return int(self.efficiency_order()[0])

    def cost_efficient_for(self, r: float) -> int:
        """The most cost-efficient type whose capacity holds a job of requirement ``r``."""
        for k in self.efficiency_order():
            if self.capacity[k] >= r:
                return int(k)
        raise ValueError(f"no instance type holds a job of requirement {r} (largest: {self.capacity.max()})")


def _list(data: dict[str, Any], key: str, source: str) -> list[dict[str, Any]]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise PriceBookError(f"{source}: field {key!r} must be a non-empty list of tables")
    return value


def _field(entry: dict[str, Any], key: str, kind: type, source: str, where: str) -> Any:
    if key not in entry:
        raise PriceBookError(f"{source}: {where}: missing field {key!r}")
    value = entry[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind):
        raise PriceBookError(f"{source}: {where}: field {key!r} must be {kind.__name__}, got {value!r}")
    return value


def _positive(entry: dict[str, Any], key: str, source: str, where: str, *, allow_zero: bool = False) -> float:
    value = float(_field(entry, key, float, source, where))
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise PriceBookError(f"{source}: {where}: field {key!r} must be a finite number "
                             f"{'>= 0' if allow_zero else '> 0'}, got {value}")
    return value


def _whole(entry: dict[str, Any], key: str, source: str, where: str) -> float:
    """A capacity: a whole number of capacity units, so that sums of capacities and requirements are exact."""
    value = _positive(entry, key, source, where)
    if not value.is_integer() or value >= WHOLE_LIMIT:
        raise PriceBookError(f"{source}: {where}: field {key!r} must be a whole number of capacity units below "
                             f"2**53, got {value} (scale the book's units and the requirements alike: e.g. 0.5 vCPU "
                             f"-> 500 milli-vCPU)")
    return value


def _offer(entry: dict[str, Any], source: str, where: str, names: set[str]) -> Offer:
    type_name = _field(entry, "instance_type", str, source, where)
    if type_name not in names:
        raise PriceBookError(f"{source}: {where}: field 'instance_type': unknown type {type_name!r}")
    option = _field(entry, "option", str, source, where)
    if option not in (ON_DEMAND, *RESERVED_OPTIONS):
        options = (ON_DEMAND, *RESERVED_OPTIONS)
        raise PriceBookError(f"{source}: {where}: field 'option': {option!r} is not one of {options}")
    term = entry.get("term_years")
    if option != ON_DEMAND and not isinstance(term, int):
        raise PriceBookError(f"{source}: {where}: field 'term_years' is required for {option}")
    return Offer(
        instance_type=type_name,
        option=option,
        hourly=_positive(entry, "hourly", source, where, allow_zero=option != ON_DEMAND),  # on demand is never free
        upfront=_positive(entry, "upfront", source, where, allow_zero=True) if "upfront" in entry else 0.0,
        term_years=term,
    )
