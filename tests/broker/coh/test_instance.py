"""The vectorized instance builder against the VM-by-VM one it replaced (``instance_reference``).

On real ticks of four traces, under both capacity rules, from one job to fifty: the same candidate
VMs, room, units, prices, rows (in the same order) and new-VM rows, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.instance import make_instance
from broker.coh.intervals import IntervalTable
from tests.broker.coh.instance_reference import reference_instance
from tests.broker.coh.ipp_cases import BILLING, CATALOG, captured
from tests.broker.coh.small_cases import HOURLY, batch, fleet

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
        for jobs, vms in cases:
            new = make_instance(jobs, vms, BILLING, CATALOG.hourly, paid=paid)
            ref = reference_instance(jobs, vms, BILLING, paid=paid)
            for name in ("vm_slot", "vm_room", "vm_hourly", "vm_base", "vm_units", "new_units", "type_rows"):
                assert same(getattr(new, name), getattr(ref, name)), name
            assert len(new.vm_rows) == len(ref.vm_rows)
            for j, (mask, head) in enumerate(ref.vm_rows):
                got_mask, got_head = new.vm_rows.of(j)
                assert same(got_mask, mask) and same(got_head, head), f"rows of VM {j}"
                rows_seen += len(head)
    if capacity == "tick" or high > 2:
        assert rows_seen > 0


# --- hand-worked cases of the tick rule and the reduction of identical VMs -----------------------------------------
# Every expected value is worked out by hand in the comment beside it, or by the VM-by-VM builder of
# tests/broker/coh/instance_reference.py, never by a second run of the code under test. Fleets and batches are the
# small hand-made ones of tests/broker/coh/small_cases.py.


# --- make_instance ---------------------------------------------------------------------------------


def test_the_tick_rule_on_an_empty_batch_has_no_candidate_vm() -> None:
    inst = make_instance(batch([], [], []), fleet([400.0, 300.0], [410.0, 410.0], [1, 1], [0.26, 0.26]), BILLING,
                         HOURLY)
    assert inst.vm_slot.tolist() == [] and inst.vm_slot.dtype == np.int64
    assert inst.vm_room.shape == (0, 0) and inst.vm_rows.mask.shape == (0, 1, 0)


def test_the_tick_rule_gives_exactly_one_row_per_vm() -> None:
    # Free 400 and 300, jobs of 300 and 400: both VMs are candidates (300 >= 300), one row each
    # holding both jobs against the free capacity.
    f = fleet([400.0, 300.0], [410.0, 410.0], [1, 1], [0.26, 0.26])
    inst = make_instance(batch([1000.0, 1000.0], [100.0, 100.0], [300.0, 400.0]), f, BILLING, HOURLY)
    assert inst.vm_rows.mask.shape == (2, 1, 2) and inst.vm_rows.mask.all()
    assert inst.vm_rows.head.tolist() == [[400.0], [300.0]]


def test_a_hosted_job_starting_during_the_new_jobs_sets_their_row() -> None:
    # A small VM (type 0, capacity 100) hosts A [0, 5000) r 10 and B [1500, 5000) r 50. Two new jobs
    # [1000, 3000) r 30 each: each has room 100 - (10 + 50) = 40 >= 30 over its run. Rows at the
    # jobs' start 1000 (load 10, head 90) and at B's start 1500 (load 60, head 40); the first holds
    # the same jobs with more room, so only the second is kept.
    table = IntervalTable(1)
    table.add(0, 0, 0.0, 5000.0, 10.0)
    table.add(0, 1, 1500.0, 5000.0, 50.0)
    f = fleet([40.0], [100.0], [0], [0.065], occupancy=table.occupancy(1))
    jobs = batch([1000.0, 1000.0], [2000.0, 2000.0], [30.0, 30.0])
    inst = make_instance(jobs, f, BILLING, HOURLY)
    assert inst.vm_slot.tolist() == [0] and inst.vm_room.tolist() == [[40.0, 40.0]]
    mask, head = inst.vm_rows.of(0)
    assert mask.tolist() == [[True, True]] and head.tolist() == [40.0]
    ref = reference_instance(jobs, f, BILLING)  # the VM-by-VM oracle agrees
    assert ref.vm_rows[0][0].tolist() == [[True, True]] and ref.vm_rows[0][1].tolist() == [40.0]


def test_identical_vms_past_the_batch_size_are_dropped_unless_kept_or_not_reduced() -> None:
    # Tick rule: three identical large VMs (free 400, $0.26) and one job of 100: one VM per job is
    # enough (slot 0); reduce=False keeps all three; keep=[2] keeps slot 2 as well; with max_vms=1
    # the kept slot wins over the equally cheap slot 0.
    f = fleet([400.0] * 3, [410.0] * 3, [1] * 3, [0.26] * 3)
    jobs = batch([1000.0], [100.0], [100.0])
    assert make_instance(jobs, f, BILLING, HOURLY).vm_slot.tolist() == [0]
    assert make_instance(jobs, f, BILLING, HOURLY, reduce=False).vm_slot.tolist() == [0, 1, 2]
    assert make_instance(jobs, f, BILLING, HOURLY, keep=np.array([2])).vm_slot.tolist() == [0, 2]
    assert make_instance(jobs, f, BILLING, HOURLY, keep=np.array([2]), max_vms=1).vm_slot.tolist() == [2]
