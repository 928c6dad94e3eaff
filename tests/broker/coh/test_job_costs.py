"""Each job's cost in a CoH run's jobs table (:func:`broker.coh.metrics.job_costs`), hand-worked.

The set-up of ``test_spot_world``: FCFS-SM, jobs handed 130 s before they arrive, a VM boots 120 s
and an idle one goes at start + 3590 s; a large VM costs 0.26 $/h on demand, 0.026 $/h spot.
"""

from __future__ import annotations

import pytest

from tests.broker.coh.test_spot_world import OD_LARGE, SPOT_LARGE, spot_run, table

NO_RULES = {"spot_return": False, "expected_cost": False}


def test_a_vms_bill_is_shared_by_requirement_times_seconds_a_cut_run_paying_for_its_vm() -> None:
    # A (2000 s, r 50) runs on spot VM 0 from 200 and is cut at 1120 by the close: VM 0's whole bill is A's.
    # A runs again on VM 1 (on demand) 1240-3240 and B (100 s, r 50) joins it 1500-1600: VM 1's bill is shared
    # 50 * 2000 : 50 * 100 = 20 : 1.
    _, result = spot_run(table([200, 1500], [2000, 100], [50, 50]), **NO_RULES)
    assert result.instances["option"].tolist() == ["spot", "on-demand"]
    assert result.jobs["cost"].tolist() == pytest.approx([SPOT_LARGE + OD_LARGE * 20 / 21, OD_LARGE / 21])
    assert result.jobs["cost"].sum() == pytest.approx(result.instances["cost"].sum())


def test_a_vms_idle_time_is_paid_in_proportion_to_its_jobs_work() -> None:
    # no close in the run (the market stays open: every VM is spot, one VM): A (600 s, r 100) and B (300 s,
    # r 50) share one spot VM's started hour 600 * 100 : 300 * 50 = 4 : 1, its idle time included
    _, result = spot_run(table([200, 300], [600, 300], [100, 50]), counts=[1], **NO_RULES)
    assert result.instances["option"].tolist() == ["spot"]
    assert result.jobs["cost"].tolist() == pytest.approx([SPOT_LARGE * 4 / 5, SPOT_LARGE / 5])
