"""Named heuristics: the 6 x 11 = 66 CoH combinations ``{job}-{vm}`` (``SPEC.md`` §3).

A :class:`Registry` maps names to objects and refuses duplicates. :data:`HEURISTICS` holds every
combination of :data:`~heuristics.rules.JOB_ORDERS` and :data:`~heuristics.rules.VM_RULES`, each
a :class:`Heuristic` whose :meth:`Heuristic.plan` is a pure function of (batch, fleet, rng).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from heuristics.fastpack import pack
from heuristics.fleet import Batch, Fleet, Plan
from heuristics.rules import JOB_ORDERS, VM_RULES, JobOrder, VmRule
from workloads.errors import UnknownName

T = TypeVar("T")


class Registry(Generic[T]):
    """A name -> object mapping that refuses to register a name twice."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name``; a name already taken raises ``KeyError``."""
        if name in self._items:
            raise KeyError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def get(self, name: str) -> T:
        """The item called ``name``; an unknown name raises ``KeyError`` listing close names."""
        try:
            return self._items[name]
        except KeyError:
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(self._items)}") from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True, slots=True)
class Heuristic:
    """A job order and a VM rule combined by the packing loop; Cost-Efficient VM types."""

    name: str
    job_order: JobOrder
    vm_rule: VmRule

    @property
    def needs_stats(self) -> bool:
        """Whether the VM rule reads arrival/departure statistics that a fleet shows only when asked for them."""
        return self.vm_rule.needs_stats

    def plan(self, batch: Batch, fleet: Fleet, rng: np.random.Generator) -> Plan:
        """Place the batch: :func:`heuristics.packing.pack`'s plan, made by :func:`heuristics.fastpack.pack`."""
        return pack(batch, fleet, self.job_order, self.vm_rule, rng=rng)


def _build() -> Registry[Heuristic]:
    registry: Registry[Heuristic] = Registry("heuristic")
    for job_name, order in JOB_ORDERS.items():
        for vm_name, rule in VM_RULES.items():
            name = f"{job_name}-{vm_name}"
            registry.register(name, Heuristic(name, order, rule))
    return registry


HEURISTICS: Registry[Heuristic] = _build()

#: The paper's choices (CoH §5.1): FCFS-SM for heterogeneous requirements, FCFS-LD and FCFS-CFH
#: for constant ones; CoH's default portfolio runs all three.
PAPER_TRIO: tuple[str, ...] = ("FCFS-SM", "FCFS-LD", "FCFS-CFH")
