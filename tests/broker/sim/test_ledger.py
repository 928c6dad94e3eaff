"""The instance ledger: units from the billing model, cost, copies, and the per-instance table, by hand."""

from __future__ import annotations

import math

import pytest

from broker.pricing.billing import Billing
from broker.pricing.book import HEAVY
from broker.sim.ledger import COLUMNS, InstanceRecord, Ledger


def close(ledger: Ledger, instance_id: int, released_at: float, *, anchor: float = 0.0, hourly: float = 0.1,
          busy: float = 0.0, capacity: float = 1.0, **kw) -> InstanceRecord:
    return ledger.close(instance_id, "m1.small", hired_at=anchor, ready_at=anchor + 120.0, released_at=released_at,
                        anchor=anchor, hourly=hourly, jobs_hosted=kw.pop("jobs_hosted", 1), busy_capacity_s=busy,
                        capacity=capacity, **kw)


def test_close_bills_whole_units_from_the_anchor() -> None:
    ledger = Ledger(Billing())
    assert len(ledger) == 0
    one = close(ledger, 0, 100.0 + 3600.0, anchor=100.0, hourly=0.25)  # exactly one unit
    three = close(ledger, 1, 2 * 3600.0 + 0.5, hourly=0.25)  # half a second into a third unit
    assert (one.units, one.hourly, one.cost) == (1, 0.25, 0.25) and (three.units, three.cost) == (3, 0.75)
    assert one.option == "on-demand" and close(ledger, 2, 60.0, option=HEAVY).option == HEAVY
    assert len(ledger) == 3 and ledger.records == [one, three, ledger.records[2]]
    assert (one.instance_id, one.instance_type, one.hired_at, one.ready_at, one.released_at, one.anchor) == (
        0, "m1.small", 100.0, 220.0, 3700.0, 100.0)


def test_close_with_wall_clock_billing_counts_from_the_given_anchor() -> None:
    ledger = Ledger(Billing(charging="wall-clock"))
    # started at 0:50, anchored at the hour, stopped at 1:05: two units
    record = close(ledger, 0, 3900.0, anchor=0.0)
    assert record.units == 2 and record.cost == pytest.approx(0.2)


def test_a_copy_has_the_records_and_then_its_own() -> None:
    ledger = Ledger(Billing())
    first = close(ledger, 0, 3600.0)
    twin = ledger.copy()
    assert twin.records == [first] and twin.billing is ledger.billing
    close(twin, 1, 3600.0)
    close(ledger, 2, 7200.0)
    assert [r.instance_id for r in ledger.records] == [0, 2]
    assert [r.instance_id for r in twin.records] == [0, 1]


def test_frame_has_the_columns_billed_hours_and_utilization_by_instance_id() -> None:
    ledger = Ledger(Billing())
    # instance 1: 3 units, capacity 2, busy 2 x 5400 capacity-seconds: utilization 10800 / (2 x 3 x 3600) = 0.5
    close(ledger, 1, 3 * 3600.0, busy=10800.0, capacity=2.0, jobs_hosted=3)
    # instance 0: 1 unit, capacity 1, busy 900 s: 900 / 3600 = 0.25
    close(ledger, 0, 1800.0, busy=900.0)
    # instances 2 and 3: no capacity billed: utilization undefined (NaN), never a division by zero (inf)
    close(ledger, 2, 600.0, capacity=0.0)
    close(ledger, 3, 600.0, capacity=0.0, busy=10.0)
    # instance 4: a small capacity is still billed: 0.18 / (1e-4 x 3600) = 0.5
    close(ledger, 4, 600.0, capacity=1e-4, busy=0.18)
    frame = ledger.frame()
    assert list(frame.columns) == [*COLUMNS, "billed_hours", "utilization"]
    assert frame["instance_id"].tolist() == [0, 1, 2, 3, 4] and frame.index.tolist() == [0, 1, 2, 3, 4]
    assert frame["units"].tolist() == [1, 3, 1, 1, 1] and frame["jobs_hosted"].tolist() == [1, 3, 1, 1, 1]
    assert frame["billed_hours"].tolist() == [1.0, 3.0, 1.0, 1.0, 1.0]
    util = frame["utilization"].tolist()
    assert util[:2] == [0.25, 0.5] and math.isnan(util[2]) and math.isnan(util[3])
    assert util[4] == pytest.approx(0.5)
    assert frame["cost"].tolist() == pytest.approx([0.1, 0.3, 0.1, 0.1, 0.1])


def test_frame_of_a_two_hour_btu_counts_billed_hours() -> None:
    ledger = Ledger(Billing(btu=7200.0))
    close(ledger, 0, 7300.0, busy=3600.0)  # two units of 2 h: 4 billed hours, busy 1 h of them
    frame = ledger.frame()
    assert frame["units"].tolist() == [2] and frame["billed_hours"].tolist() == [4.0]
    assert frame["utilization"].tolist() == [0.25]


def test_frame_of_an_empty_ledger_has_the_columns_and_no_row() -> None:
    frame = Ledger(Billing()).frame()
    assert list(frame.columns) == [*COLUMNS, "billed_hours", "utilization"] and len(frame) == 0
