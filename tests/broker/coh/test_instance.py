"""The vectorized instance builder against the VM-by-VM one it replaced (``instance_reference``).

On real ticks of four traces, under both capacity rules, from one job to fifty: the same candidate
VMs, room, units, prices, rows (in the same order) and new-VM rows, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.instance import make_instance
from tests.broker.coh.instance_reference import reference_instance
from tests.broker.coh.ipp_cases import BILLING, CATALOG, captured

SMALL = [(1, 1), (2, 2), (3, 6)]
#: Only LCG has ticks of more than six jobs in its first 4,000.
CASES = [(trace, reqs, low, high)
         for trace, reqs, sizes in (("LCG-2005-1.swf.gz", "heterogeneous", [*SMALL, (7, 60)]),
                                    ("LCG-2005-1.swf.gz", "constant-10", [*SMALL, (7, 60)]),
                                    ("KTH-SP2-1996-2.1-cln.swf.gz", "constant-100", SMALL),
                                    ("LPC-EGEE-2004-1.2-cln.swf.gz", "heterogeneous", SMALL),
                                    ("SDSC-BLUE-2000-4.2-cln.swf.gz", "heterogeneous", SMALL))
         for low, high in sizes]


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("capacity", ["interval", "tick"])
@pytest.mark.parametrize(("trace", "reqs", "low", "high"), CASES)
def test_the_instance_equals_the_vm_by_vm_reference(trace: str, reqs: str, low: int, high: int,
                                                    capacity: str) -> None:
    cases = captured(trace, reqs, low, high, n_jobs=4000, every=5, capacity=capacity)[:15]
    assert cases, "the slice has ticks of this size"
    rows_seen = 0
    for paid in (False, True):
        for batch, fleet in cases:
            new = make_instance(batch, fleet, BILLING, CATALOG.hourly, paid=paid)
            ref = reference_instance(batch, fleet, BILLING, paid=paid)
            for name in ("vm_slot", "vm_room", "vm_hourly", "vm_base", "vm_units", "new_units", "type_rows"):
                assert same(getattr(new, name), getattr(ref, name)), name
            assert len(new.vm_rows) == len(ref.vm_rows)
            for j, (mask, head) in enumerate(ref.vm_rows):
                got_mask, got_head = new.vm_rows.of(j)
                assert same(got_mask, mask) and same(got_head, head), f"rows of VM {j}"
                rows_seen += len(head)
    if capacity == "tick" or high > 2:
        assert rows_seen > 0
