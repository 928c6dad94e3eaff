"""The instance ledger: one record per released instance and what it was charged (``SPEC.md`` §2).

Every world that rents instances (the CoH fleet, the cloud cluster) closes an instance here when it
releases it; the units are counted by :meth:`broker.pricing.billing.Billing.units` from the
instance's anchor, so no world restates billing. The records become the result's per-instance
table (:meth:`Ledger.frame`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from broker.pricing.billing import Billing
from broker.pricing.book import ON_DEMAND

#: The ledger's columns, in order (the per-instance table of every world starts with these).
COLUMNS = ("instance_id", "instance_type", "hired_at", "ready_at", "released_at", "anchor", "units", "hourly",
           "cost", "jobs_hosted", "busy_capacity_s", "capacity", "option")


@dataclass(frozen=True, slots=True)
class InstanceRecord:
    """A released instance: times in seconds, ``units`` billing units at ``hourly`` $ per unit.

    ``busy_capacity_s`` is the sum over its jobs of requirement x run time (capacity-unit seconds);
    ``option`` is the billing option it ran under (on-demand, or the reservation it took).
    """

    instance_id: int
    instance_type: str
    hired_at: float
    ready_at: float
    released_at: float
    anchor: float
    units: int
    hourly: float
    cost: float
    jobs_hosted: int
    busy_capacity_s: float
    capacity: float
    option: str = ON_DEMAND


class Ledger:
    """The records of the instances released so far, billed by one :class:`Billing`."""

    __slots__ = ("billing", "records")

    def __init__(self, billing: Billing) -> None:
        self.billing = billing
        self.records: list[InstanceRecord] = []

    def __len__(self) -> int:
        return len(self.records)

    def close(self, instance_id: int, instance_type: str, *, hired_at: float, ready_at: float, released_at: float,
              anchor: float, hourly: float, jobs_hosted: int, busy_capacity_s: float, capacity: float,
              option: str = ON_DEMAND) -> InstanceRecord:
        """Bill an instance released at ``released_at`` and add its record."""
        units = self.billing.units(anchor, released_at)
        record = InstanceRecord(instance_id, instance_type, hired_at, ready_at, released_at, anchor, units, hourly,
                                units * hourly, jobs_hosted, busy_capacity_s, capacity, option)
        self.records.append(record)
        return record

    def copy(self) -> Ledger:
        """An independent ledger with the same records (records are immutable)."""
        twin = Ledger(self.billing)
        twin.records = list(self.records)
        return twin

    def frame(self) -> pd.DataFrame:
        """One row per instance, by id, with ``billed_hours`` and ``utilization`` (busy over billed capacity-time)."""
        records = self.records
        frame = pd.DataFrame({c: [getattr(r, c) for r in records] for c in COLUMNS}, columns=list(COLUMNS))
        frame["billed_hours"] = frame["units"] * self.billing.btu / 3600.0
        billed = frame["capacity"] * frame["units"] * self.billing.btu
        frame["utilization"] = frame["busy_capacity_s"] / billed.where(billed > 0)
        return frame.sort_values("instance_id", ignore_index=True)
