"""The interval rule's capacity rows on a VM with many candidate instants: kept in time order, padded
with rows that never bind (issue 19: ``capacity_rows`` sorted with NumPy's default, unstable from 17
elements, and padded with ``nan`` instead of ``inf``, survived every earlier case, all under 17 rows).

Expected rows are worked out by hand in the comments and checked against the VM-by-VM reference
builder (:mod:`tests.broker.coh.instance_reference`), written independently of the code under test.
"""

from __future__ import annotations

import numpy as np

from broker.coh.instance import make_instance
from broker.coh.intervals import IntervalTable
from tests.broker.coh.instance_reference import reference_instance
from tests.broker.coh.ipp_cases import BILLING
from tests.broker.coh.small_cases import HOURLY, batch, fleet

#: Twenty new jobs of 150, job i over [1000 + 100 i, 1150 + 100 i): each overlaps only the next.
JOBS = batch([1000.0 + 100.0 * i for i in range(20)], [150.0] * 20, [150.0] * 20)


def two_large_vms() -> IntervalTable:
    # Slot 0 hosts a job [0, 100000) of 10 (room 400 for any new job); slot 1 a job [0, 1500) of 300,
    # so new jobs 0-4, which overlap it, find room 110 < 150 there and do not fit it alone.
    table = IntervalTable(2)
    table.add(0, 0, 0.0, 100000.0, 10.0)
    table.add(1, 1, 0.0, 1500.0, 300.0)
    return table


def test_twenty_rows_stay_in_time_order_and_the_shorter_vm_is_padded_with_rows_that_never_bind() -> None:
    f = fleet([400.0, 110.0], [410.0, 410.0], [1, 1], [0.26, 0.26], occupancy=two_large_vms().occupancy(2))
    inst = make_instance(JOBS, f, BILLING, HOURLY)
    assert inst.vm_slot.tolist() == [0, 1] and inst.n_slots == 2
    # Slot 0: at each start 1000 + 100 i (i >= 1) jobs i - 1 and i run (job 0 alone at 1000 makes no
    # row); no row implies another, so 19 rows, the k-th over jobs k and k + 1, each with room 400.
    mask, head = inst.vm_rows.of(0)
    assert [np.flatnonzero(row).tolist() for row in mask] == [[k, k + 1] for k in range(19)]
    assert head.tolist() == [400.0] * 19
    # Slot 1: only jobs 5-19 fit (job 5 alone at 1500, where the hosted job has ended): 14 rows, the
    # k-th over jobs k + 5 and k + 6 with the whole 410, then 5 padding rows holding nothing, room inf.
    assert inst.vm_rows.mask.shape == (2, 19, 20)
    assert [np.flatnonzero(row).tolist() for row in inst.vm_rows.mask[1]] == (
        [[k + 5, k + 6] for k in range(14)] + [[]] * 5)
    assert inst.vm_rows.head[1].tolist() == [410.0] * 14 + [np.inf] * 5
    assert inst.vm_room[1, :5].tolist() == [110.0] * 5 and inst.vm_room[1, 5:].tolist() == [410.0] * 15
    ref = reference_instance(JOBS, f, BILLING)
    for v in (0, 1):
        ref_mask, ref_head = ref.vm_rows[v]
        mask, head = inst.vm_rows.of(v)
        assert mask.tolist() == ref_mask.tolist() and head.tolist() == ref_head.tolist()


def test_padding_rows_hold_any_load() -> None:
    # A padding row of slot 1 holds nothing and has room inf: every job set, however large, passes it.
    f = fleet([400.0, 110.0], [410.0, 410.0], [1, 1], [0.26, 0.26], occupancy=two_large_vms().occupancy(2))
    rows = make_instance(JOBS, f, BILLING, HOURLY).vm_rows
    padding = rows.take(np.array([1]))
    padding.mask[0, :14] = False  # only the five padding rows are left to check
    assert padding.holding(np.full(20, 1e6), list(range(20))).tolist() == [True]
