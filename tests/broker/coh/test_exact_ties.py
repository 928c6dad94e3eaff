"""The exact path for one or two jobs (``broker.coh.exact``) on its refusals and tie rules (issue 19).

The module's rule: ties go to the first option (running VMs by slot, then types), separate before
together. Every case below is a tie or a refusal worked out by hand; the tie over 15 running VMs
needs more than 16 options, where NumPy's default sort stops keeping equal costs in order.
"""

from __future__ import annotations

import numpy as np
import pytest

from broker.coh.exact import solve_exact
from broker.coh.ipp import CapacityRows, IppInstance
from tests.broker.coh.small_cases import no_vms, one_vm

INF = np.inf
#: Job costs ($, one unit each) on 15 running VMs, inf where the job has no room: 0.5 first at VM 11,
#: then at VM 13; among 17 options NumPy's default argsort puts 13 before 11.
PATTERN = [INF, 1.0, INF, 2.0, 2.0, 2.0, 1.0, 2.0, 1.0, INF, 2.0, 0.5, INF, 0.5, INF]


def fifteen_vms(spread: int) -> IppInstance:
    """Two jobs of 10; job ``spread`` costs PATTERN over VMs 0-14 (slots 0-14), the other job fits
    only VM 0 ($1). New types of capacity 5 hold neither job; no VM holds both."""
    n = len(PATTERN)
    hourly = np.array([1.0 if not np.isfinite(c) else c for c in PATTERN])
    room = np.zeros((n, 2))
    room[:, spread] = np.where(np.isfinite(PATTERN), 100.0, 0.0)
    room[0, 1 - spread] = 100.0
    return no_vms(2, vm_slot=np.arange(n), vm_room=room, vm_rows=CapacityRows.empty(n, 2), vm_hourly=hourly,
                  vm_base=np.zeros(n, np.int64), vm_units=np.ones((n, 2), np.int64),
                  type_capacity=np.array([5.0, 5.0]))


def test_only_one_or_two_jobs_are_taken() -> None:
    for m in (0, 3):
        with pytest.raises(ValueError, match=rf"^solve_exact handles 1\.\.2 jobs, got {m}$"):
            solve_exact(no_vms(m))


@pytest.mark.parametrize("spread", [0, 1])
def test_of_equally_cheap_vms_among_seventeen_options_the_first_is_taken(spread: int) -> None:
    # The spread job's cheapest options are VMs 11 and 13 ($0.5 each): VM 11; the other job on VM 0.
    plan, cost = solve_exact(fifteen_vms(spread))
    expected = [11, 0] if spread == 0 else [0, 11]
    assert cost == 1.5 and plan.targets.tolist() == expected and plan.new_types.tolist() == []
    assert plan.new_types.dtype == np.int64 and plan.targets.dtype == np.int64


def test_separate_before_together_at_equal_cost() -> None:
    # VM 0 ($1 an hour) holds both jobs for one unit: together $1. VM 1 and VM 2 ($0.5) take job 0 and
    # job 1 for one unit each (ten for the other job): separate $0.5 + $0.5 = $1. Equal: separate.
    inst = one_vm(2, vm_slot=np.array([4, 6, 8]), vm_room=np.full((3, 2), 100.0), vm_rows=CapacityRows.empty(3, 2),
                  vm_hourly=np.array([1.0, 0.5, 0.5]), vm_base=np.zeros(3, np.int64),
                  vm_units=np.array([[1, 1], [1, 10], [10, 1]]), type_capacity=np.array([5.0, 5.0]))
    plan, cost = solve_exact(inst)
    assert cost == 1.0 and plan.targets.tolist() == [6, 8]


def test_two_jobs_without_any_option_are_refused_in_words() -> None:
    # r 500 each: no room on the VM (100), no type large enough (100, 410).
    with pytest.raises(ValueError, match=r"^no feasible placement for the jobs$"):
        solve_exact(one_vm(2, r=np.array([500.0, 500.0])))


def test_one_job_on_a_running_vm_has_an_empty_integer_type_list() -> None:
    # One job of 10 at $0.01 an hour on the running VM (slot 3) against $0.065 on a new small VM.
    plan, cost = solve_exact(one_vm(1, vm_hourly=np.array([0.01])))
    assert cost == 0.01 and plan.targets.tolist() == [3]
    assert plan.new_types.tolist() == [] and plan.new_types.dtype == np.int64
