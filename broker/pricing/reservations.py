"""Reserved instances: a purchase plan and how a run uses it (``SPEC.md`` §4, CoH-R, CoH paper §4.1).

A :class:`ReservationPlan` is how many reservations of each instance type and option were bought,
for which term, from which price book. It is what ``cloudbroker plan-reservations --json`` prints
under ``"plan"`` and what ``cloudbroker simulate --policy coh-r --reservations PLAN.json`` replays.

During a run, :class:`ReservedCapacity` applies CoH-R's rules to the world's VM starts: heavy
reservations are always on (started with the run and kept until it ends, billed every hour); when
the policy starts a VM of type ``k`` it takes an unused medium reservation of type ``k``, else a light
one, else it is on-demand. Medium and light VMs are released like on-demand ones (idle, ``m`` s
before their unit rolls over) and their reservation becomes free again. The upfront prices are
spread over the term: a run of ``H`` hours is charged ``upfront * H / term_hours`` of each.
A run without reservations gets :class:`OnDemandOnly`, the null object (every VM on demand,
nothing always on, no upfront share), so the world has no reservation branches.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from broker.pricing.book import (
    HEAVY,
    HOURS_PER_YEAR,
    LIGHT,
    MEDIUM,
    ON_DEMAND,
    RESERVED_OPTIONS,
    SPOT,
    Catalog,
    PriceBook,
)
from workloads.errors import InputError

#: Billing options as stored per VM slot (index into this tuple); spot VMs are the CoH world's with a market.
OPTIONS = (ON_DEMAND, LIGHT, MEDIUM, HEAVY, SPOT)
OD_CODE, LIGHT_CODE, MEDIUM_CODE, HEAVY_CODE, SPOT_CODE = range(5)
#: The options that are no reservation (unlimited, nothing to give back on release).
UNRESERVED = (OD_CODE, SPOT_CODE)
#: The most reservations a plan read or replayed may hold (every heavy one is a VM of the run from its start).
MAX_RESERVATIONS = 1_000_000


class PlanError(InputError):
    """A reservation plan that is malformed or does not fit the price book."""


@dataclass(frozen=True, slots=True)
class ReservationPlan:
    """Counts of reservations per ``(instance_type, option)`` for one term.

    Zero counts are dropped. ``price_book`` names the book whose prices the plan was made with.
    """

    term_years: int
    counts: Mapping[tuple[str, str], int] = field(default_factory=dict)
    price_book: str = "ec2-2013"

    def __post_init__(self) -> None:
        if self.term_years < 1:
            raise PlanError(f"term_years must be >= 1, got {self.term_years}")
        for (name, option), n in self.counts.items():
            if option not in RESERVED_OPTIONS:
                raise PlanError(f"{name}: option {option!r} is not one of {RESERVED_OPTIONS}")
            if int(n) != n or n < 0:
                raise PlanError(f"{name} {option}: count must be a non-negative integer, got {n!r}")
        object.__setattr__(self, "counts", {k: int(v) for k, v in sorted(self.counts.items()) if v})

    def count(self, instance_type: str, option: str) -> int:
        """Reservations of ``option`` for ``instance_type``."""
        return int(self.counts.get((instance_type, option), 0))

    @property
    def total(self) -> int:
        """Number of reservations of any kind."""
        return sum(self.counts.values())

    def only(self, options: Iterable[str]) -> ReservationPlan:
        """The same plan keeping only the given options."""
        keep = set(options)
        return ReservationPlan(self.term_years, {k: v for k, v in self.counts.items() if k[1] in keep},
                               self.price_book)

    def upfront(self, book: PriceBook) -> float:
        """Total upfront price of the plan ($)."""
        return sum(n * _offer(book, name, option, self.term_years).upfront for (name, option), n in self.counts.items())

    def check(self, book: PriceBook) -> None:
        """Raise :class:`PlanError` unless every counted offer exists in ``book`` for this term."""
        for name, option in self.counts:
            _offer(book, name, option, self.term_years)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``"plan"`` object of ``plan-reservations --json``)."""
        return {"term_years": self.term_years, "price_book": self.price_book,
                "reservations": [{"instance_type": name, "option": option, "count": n}
                                 for (name, option), n in self.counts.items()]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "plan") -> ReservationPlan:
        """Parse :meth:`to_dict` output; errors name ``source`` and the field."""
        if not isinstance(data, Mapping):
            raise PlanError(f"{source}: a plan must be a JSON object")
        term = data.get("term_years")
        if not isinstance(term, int) or isinstance(term, bool):
            raise PlanError(f"{source}: field 'term_years' must be an integer, got {term!r}")
        rows = data.get("reservations")
        if not isinstance(rows, list):
            raise PlanError(f"{source}: field 'reservations' must be a list")
        counts: dict[tuple[str, str], int] = {}
        for i, row in enumerate(rows):
            where = f"{source}: reservations[{i}]"
            if not isinstance(row, Mapping) or not {"instance_type", "option", "count"} <= set(row):
                raise PlanError(f"{where}: needs fields 'instance_type', 'option' and 'count'")
            count = row["count"]
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise PlanError(f"{where}: field 'count' must be a non-negative integer, got {count!r}")
            for name in ("instance_type", "option"):
                if not isinstance(row[name], str):
                    raise PlanError(f"{where}: field {name!r} must be a string (a name), got {row[name]!r}")
            key = (row["instance_type"], row["option"])
            if key in counts:
                raise PlanError(f"{where}: {key} listed twice")
            counts[key] = count
        _bounded(sum(counts.values()), source)
        book = data.get("price_book", "ec2-2013")
        if not isinstance(book, str):
            raise PlanError(f"{source}: field 'price_book' must be a string (a name), got {book!r}")
        try:
            return cls(term, counts, book)
        except PlanError as exc:
            raise PlanError(f"{source}: {exc}") from None


def _bounded(total: int, source: str) -> None:
    """Refuse a plan of more than :data:`MAX_RESERVATIONS` reservations before anything is made for them."""
    if total > MAX_RESERVATIONS:
        raise PlanError(f"{source}: {total:,} reservations; a plan holds at most {MAX_RESERVATIONS:,} (every heavy "
                        "one is a VM of the run from its start)")


def _offer(book: PriceBook, name: str, option: str, term: int) -> Any:
    offer = book.offer(name, option, term)
    if offer is None:
        raise PlanError(f"price book {book.name!r} has no {option} offer for {name!r} with a {term}-year term")
    return offer


class ReservedCapacity:
    """The reservations of a run and which of them are in use (see the module docstring)."""

    def __init__(self, plan: ReservationPlan, book: PriceBook, catalog: Catalog) -> None:
        _bounded(plan.total, "the plan")
        plan.check(book)
        self.plan, self.catalog = plan, catalog
        k = len(catalog)
        self.limit = np.zeros((k, len(OPTIONS)), dtype=np.int64)
        self.rate = np.zeros((k, len(OPTIONS)))
        self.rate[:, OD_CODE] = catalog.hourly
        self.upfront_total = plan.upfront(book)
        for t, name in enumerate(catalog.names):
            for code in (LIGHT_CODE, MEDIUM_CODE, HEAVY_CODE):
                self.limit[t, code] = plan.count(name, OPTIONS[code])
                offer = book.offer(name, OPTIONS[code], plan.term_years)
                self.rate[t, code] = offer.hourly if offer is not None else np.nan
        self.in_use = np.zeros_like(self.limit)
        self.term_hours = float(plan.term_years * HOURS_PER_YEAR)

    def heavy(self) -> list[int]:
        """Instance-type indices of the heavy reservations, one entry per reservation."""
        return [t for t in range(len(self.catalog)) for _ in range(int(self.limit[t, HEAVY_CODE]))]

    def acquire(self, vm_type: int, *, heavy: bool = False) -> tuple[int, float]:
        """The option code and $/unit of a VM of ``vm_type`` starting now (CoH-R's order)."""
        order = (HEAVY_CODE,) if heavy else (MEDIUM_CODE, LIGHT_CODE)
        for code in order:
            if self.in_use[vm_type, code] < self.limit[vm_type, code]:
                self.in_use[vm_type, code] += 1
                return code, float(self.rate[vm_type, code])
        if heavy:
            raise RuntimeError(f"no heavy reservation of type {self.catalog.names[vm_type]} left")
        return OD_CODE, float(self.rate[vm_type, OD_CODE])

    def release(self, vm_type: int, code: int) -> None:
        """A VM holding option ``code`` of ``vm_type`` was released."""
        if code not in UNRESERVED:
            if self.in_use[vm_type, code] <= 0:
                raise RuntimeError(f"released a {OPTIONS[code]} {self.catalog.names[vm_type]} VM that was not in use")
            self.in_use[vm_type, code] -= 1

    def always_on(self, code: int) -> bool:
        """Whether a VM holding option ``code`` stays leased until the run drains (heavy reservations)."""
        return code == HEAVY_CODE

    def upfront_share(self, horizon_s: float) -> float:
        """The part of the upfront prices a run of ``horizon_s`` seconds carries ($)."""
        return self.upfront_total * max(0.0, horizon_s) / 3600.0 / self.term_hours

    def copy(self) -> ReservedCapacity:
        """An independent copy (the reservations in use are the only state that changes)."""
        twin = copy.copy(self)
        twin.in_use = self.in_use.copy()
        return twin


class OnDemandOnly(ReservedCapacity):
    """No reservations: every VM on demand at the catalog's price (the null object of a plain CoH run)."""

    def __init__(self, catalog: Catalog) -> None:
        self.plan, self.catalog = ReservationPlan(1), catalog
        self.limit = np.zeros((len(catalog), len(OPTIONS)), dtype=np.int64)
        self.rate = np.zeros((len(catalog), len(OPTIONS)))
        self.rate[:, OD_CODE] = catalog.hourly
        self.in_use = np.zeros_like(self.limit)
        self.upfront_total, self.term_hours = 0.0, float(HOURS_PER_YEAR)
