"""Exact solution of small IPP instances (one or two new jobs) without a solver call.

Most ticks of a real trace carry one or two new jobs (LCG: 65 % of the ticks that place jobs).
With one job the optimum is its cheapest option (a running VM with room, or a new VM of some
type). With two, it is the cheaper of: each job on its own option (two different running VMs, or
any new VMs), or both together on one running VM or one new VM that holds both (under the
interval capacity rule, two jobs that never run at the same time need room only for each alone).
Cost O(VMs). Ties go to the first option in the order: running VMs by slot, then types by index;
separate before together.
"""

from __future__ import annotations

import numpy as np

from broker.coh.ipp import IppInstance
from heuristics.fleet import Plan

MAX_JOBS = 2


def solve_exact(inst: IppInstance) -> tuple[Plan, float]:
    """The optimal plan and its cost ($) for an instance of at most two jobs."""
    if inst.n_jobs == 0 or inst.n_jobs > MAX_JOBS:
        raise ValueError(f"solve_exact handles 1..{MAX_JOBS} jobs, got {inst.n_jobs}")
    costs = inst.job_costs()
    if inst.n_jobs == 1:
        best = int(np.argmin(costs[0]))
        return _plan(inst, [best]), float(costs[0, best])
    return _two_jobs(inst, costs)


def _two_jobs(inst: IppInstance, costs: np.ndarray) -> tuple[Plan, float]:
    n_vm = len(inst.vm_slot)
    candidates: list[tuple[float, list[int], bool]] = []
    a, b = np.argsort(costs[0], kind="stable")[:2], np.argsort(costs[1], kind="stable")[:2]
    pairs = [(int(a[0]), int(b[0]))]
    if a[0] == b[0] and a[0] < n_vm:
        pairs = [(int(a[0]), int(b[1])), (int(a[1]), int(b[0]))] if len(a) > 1 else []
    candidates += [(float(costs[0, p] + costs[1, q]), [p, q], False) for p, q in pairs]
    candidates += _together(inst)
    cost, options, together = min(candidates, key=lambda c: c[0])
    if not np.isfinite(cost):
        raise ValueError("no feasible placement for the jobs")
    return _plan(inst, options, together=together), cost


def _together(inst: IppInstance) -> list[tuple[float, list[int], bool]]:
    out = []
    running = np.flatnonzero(inst.vms_holding([0, 1]))
    if len(running):
        top = np.maximum(inst.vm_units[running].max(axis=1), inst.vm_base[running])
        extra = (top - inst.vm_base[running]) * inst.vm_hourly[running]
        j = int(running[np.argmin(extra)])
        out.append((float(extra.min()), [j, j], True))
    for k in range(len(inst.type_capacity)):
        if inst.type_holds(k, [0, 1]):
            option = len(inst.vm_slot) + k
            out.append((float(inst.new_units.max() * inst.type_hourly[k]), [option, option], True))
    return out


def _plan(inst: IppInstance, options: list[int], *, together: bool = False) -> Plan:
    n_vm = len(inst.vm_slot)
    targets: list[int] = []
    new_types: list[int] = []
    for p, option in enumerate(options):
        if option < n_vm:
            targets.append(int(inst.vm_slot[option]))
        elif together and p > 0:
            targets.append(targets[0])
        else:
            targets.append(inst.n_slots + len(new_types))
            new_types.append(option - n_vm)
    return Plan(jobs=np.arange(len(options)), targets=np.array(targets, dtype=np.int64),
                new_types=np.array(new_types, dtype=np.int64), n_slots=inst.n_slots)
