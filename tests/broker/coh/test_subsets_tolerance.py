"""The subset DP's capacity tolerance, placed exactly on its edge (issue 19).

A load is within a capacity when it exceeds it by at most 1e-9 (sums of requirements are not exact in
floating point; :meth:`broker.coh.ipp.CapacityRows.holding` uses the same rule). Two requirements
are chosen so that their float sum is exactly ``capacity + 1e-9``: held, while a strict comparison
would refuse the pair (both mutants survived every earlier case, all a whole unit or more away).
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.ipp import CapacityRows
from broker.coh.subsets import solve_subsets
from tests.broker.coh.small_cases import no_vms, one_vm

EDGE = 100.0 + 1e-9
#: 50 and EDGE - 50 add up, in floating point, to exactly EDGE.
PAIR = np.array([50.0, EDGE - 50.0])


def test_the_pair_sums_exactly_to_the_edge() -> None:
    assert PAIR.sum() == EDGE and PAIR[0] + PAIR[1] == EDGE and EDGE > 100.0


def test_a_running_vm_row_holds_a_load_exactly_at_the_tolerance() -> None:
    # The running VM ($0.01 an hour, one unit) has room 100 for each job and one row over both
    # leaving 100: the pair loads it with exactly 100 + 1e-9, held, so both go there for $0.01.
    # Refused, one would need a new small VM: $0.01 + $0.065.
    rows = CapacityRows.from_list([(np.ones((1, 2), bool), np.array([100.0]))], 2)
    plan, cost = solve_subsets(one_vm(2, r=PAIR, vm_rows=rows, vm_hourly=np.array([0.01])))
    assert cost == pytest.approx(0.01) and plan.targets.tolist() == [3, 3] and plan.new_types.tolist() == []


def test_a_new_vm_holds_a_load_exactly_at_the_tolerance() -> None:
    # No running VM; the two jobs run at once. One small VM (capacity 100, $0.065) holds both at
    # exactly 100 + 1e-9; refused, two small VMs ($0.13) would be the cheapest.
    plan, cost = solve_subsets(no_vms(2, r=PAIR))
    assert cost == pytest.approx(0.065) and plan.targets.tolist() == [5, 5] and plan.new_types.tolist() == [0]
