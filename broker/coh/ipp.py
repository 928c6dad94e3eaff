"""CoH's integer program (paper §3.2, formula 1; ``SPEC.md`` §3), built once, backend-neutral.

An :class:`IppInstance` is one tick's problem in billing units: for each new job its requirement,
for each candidate running VM its room for each job, its capacity rows, hourly price, the units it
already needs (``base``) and the units it would need to cover each job (``units``), and for each VM
type its capacity, price and the units a VM started now needs to cover each job. The linearization
of the ``ceil(max(...))`` terms uses one integer variable per VM::

    min  sum_j c_j (g_j - base_j) + sum_{t,k} c_k h_tk
    s.t. g_j  >= units[j, i] z_ji                 (running VM j covers job i)
         h_tk >= new_units[i] x_tki               (t-th new VM of type k covers job i)
         sum_{i in row} r_i z_ji <= head_jp       (2)  every capacity row p of VM j
         sum_{i in row} r_i x_tki <= cap_k y_tk   (3)  every capacity row of a new VM
         sum_j z_ji + sum_tk x_tki = 1            (4)
         x_tki <= y_tk                            (5)
         g_j in [base_j, max_i units[j, i]],  h_tk in [0, max_i new_units[i]]

and ``z_ji`` exists only where job i fits VM j alone (``room[j, i] >= r_i``). Capacity rows follow
the capacity rule (:mod:`heuristics.occupancy`). Under the tick rule a VM has one row, every job
against its free capacity now. Under the interval rule a row is an instant ``p`` at which two or
more of the new jobs would run on the VM: the jobs running then, against the capacity less the load
of the VM's own jobs at ``p``. The load only rises where a job starts, so the instants are the new
jobs' starts and the hosted jobs' future starts; a row whose jobs are a subset of another's, with no
less room, is left out, as are single-job rows (the room filter holds them).

Because every billed-unit count is a non-decreasing function of the latest departure, the optimum
of this model equals formula (1) exactly. Symmetry between identical new VMs can be broken by
``y_tk >= y_(t+1)k`` (``"order"``) or additionally by letting job i use only the first i new VMs
of a type (``"assign"``, the standard bin-packing reduction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from heuristics.fleet import Plan
from solvers.model import MipModel

Symmetry = Literal["none", "order", "assign"]
#: One VM's capacity rows: which jobs each row holds (``[rows, jobs]``) and the room the row leaves them.
Rows = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True, slots=True)
class CapacityRows:
    """The capacity rows of a set of running VMs, padded to a common number of rows.

    ``mask[j, p]`` are the jobs row ``p`` of VM ``j`` holds (``[vms, rows, jobs]``) and ``head[j, p]``
    the room it leaves them (``[vms, rows]``). A VM's real rows come first, in the order they were
    built; the padding after them holds no job and leaves ``inf``, so it never binds.
    """

    mask: np.ndarray
    head: np.ndarray

    @classmethod
    def empty(cls, n_vms: int, n_jobs: int) -> CapacityRows:
        """No row on any VM."""
        return cls(np.zeros((n_vms, 0, n_jobs), dtype=bool), np.zeros((n_vms, 0)))

    @classmethod
    def from_list(cls, rows: Sequence[Rows], n_jobs: int) -> CapacityRows:
        """The padded form of one ``(mask, head)`` per VM."""
        width = max((len(head) for _, head in rows), default=0)
        out = cls(np.zeros((len(rows), width, n_jobs), dtype=bool), np.full((len(rows), width), np.inf))
        for j, (mask, head) in enumerate(rows):
            out.mask[j, :len(head)], out.head[j, :len(head)] = mask, head
        return out

    def __len__(self) -> int:
        return len(self.mask)

    def counts(self) -> np.ndarray:
        """Number of real rows of each VM."""
        return np.isfinite(self.head).sum(axis=1)

    def of(self, j: int) -> Rows:
        """The real rows of VM ``j``."""
        n = int(np.isfinite(self.head[j]).sum())
        return self.mask[j, :n], self.head[j, :n]

    def take(self, vms: np.ndarray) -> CapacityRows:
        """The rows of the VMs ``vms`` (indices), in that order."""
        return CapacityRows(self.mask[vms], self.head[vms])

    def holding(self, r: np.ndarray, jobs: list[int]) -> np.ndarray:
        """For every VM, whether each of its rows has room for ``jobs`` (of requirements ``r``) together."""
        load = self.mask[:, :, jobs].astype(np.float64) @ r[jobs]
        return np.all(load <= self.head + 1e-9, axis=1)


@dataclass(frozen=True, slots=True)
class IppInstance:
    """One tick's IPP in billing units (see the module docstring); arrays indexed [vm, job].

    ``vm_room[j, i]`` is the room VM j has for job i alone; ``vm_rows`` the running VMs' capacity
    rows; ``type_rows`` the rows of a new VM (which jobs run at the same time on it), shared by every
    type.
    """

    r: np.ndarray
    vm_slot: np.ndarray
    vm_room: np.ndarray
    vm_rows: CapacityRows
    vm_hourly: np.ndarray
    vm_base: np.ndarray
    vm_units: np.ndarray
    type_capacity: np.ndarray
    type_hourly: np.ndarray
    new_units: np.ndarray
    type_rows: np.ndarray
    n_slots: int

    @property
    def n_jobs(self) -> int:
        """Number of new jobs M."""
        return len(self.r)

    def job_costs(self) -> np.ndarray:
        """Cost ($) of each job alone on each option: ``[jobs, running VMs + types]``, inf if no room."""
        fits = self.vm_room >= self.r[None, :]
        extra = np.maximum(self.vm_units - self.vm_base[:, None], 0) * self.vm_hourly[:, None]
        running = np.where(fits, extra, np.inf).T
        new = np.where(self.type_capacity[None, :] >= self.r[:, None],
                       self.new_units[:, None] * self.type_hourly[None, :], np.inf)
        return np.hstack([running, new])

    def vm_holds(self, j: int, jobs: list[int]) -> bool:
        """Whether running VM ``j`` (an index of ``vm_slot``) has room for ``jobs`` together."""
        if any(self.vm_room[j, i] < self.r[i] for i in jobs):
            return False
        return _rows_hold(self.vm_rows.mask[j], self.vm_rows.head[j], self.r, jobs)

    def vms_holding(self, jobs: list[int]) -> np.ndarray:
        """For every running VM, whether it has room for ``jobs`` together (:meth:`vm_holds` of all VMs at once)."""
        alone = np.all(self.vm_room[:, jobs] >= self.r[jobs], axis=1)
        return alone & self.vm_rows.holding(self.r, jobs)

    def type_holds(self, k: int, jobs: list[int]) -> bool:
        """Whether a new VM of type ``k`` has room for ``jobs`` together."""
        cap = float(self.type_capacity[k])
        if any(self.r[i] > cap for i in jobs):
            return False
        return _rows_hold(self.type_rows, np.full(len(self.type_rows), cap), self.r, jobs)

    def cost(self, plan: Plan) -> float:
        """The IPP objective ($) of a plan over this instance's slots (``inf`` if infeasible here)."""
        slot_to_vm = {int(s): j for j, s in enumerate(self.vm_slot.tolist())}
        latest: dict[int, int] = {}
        on: dict[int, list[int]] = {}
        for p, t in zip(plan.jobs.tolist(), plan.targets.tolist(), strict=True):
            if t < plan.n_slots and t not in slot_to_vm:
                return float("inf")
            u = int(self.vm_units[slot_to_vm[t], p]) if t < plan.n_slots else int(self.new_units[p])
            latest[t] = max(latest.get(t, 0), u)
            on.setdefault(t, []).append(p)
        total = 0.0
        for t, u in latest.items():
            if t < plan.n_slots:
                j = slot_to_vm[t]
                if not self.vm_holds(j, on[t]):
                    return float("inf")
                total += (max(u, int(self.vm_base[j])) - int(self.vm_base[j])) * float(self.vm_hourly[j])
            else:
                k = int(plan.new_types[t - plan.n_slots])
                if not self.type_holds(k, on[t]):
                    return float("inf")
                total += u * float(self.type_hourly[k])
        return total

    def lower_bound(self) -> float:
        """A valid bound ($): the dearest job's cheapest placement alone ("max single-job cost")."""
        costs = self.job_costs()
        return float(costs.min(axis=1).max()) if self.n_jobs else 0.0


def _rows_hold(mask: np.ndarray, head: np.ndarray, r: np.ndarray, jobs: list[int]) -> bool:
    if not len(mask):
        return True
    load = mask[:, jobs].astype(np.float64) @ r[jobs]
    return bool(np.all(load <= head + 1e-9))


def essential_rows(mask: np.ndarray, head: np.ndarray) -> Rows:
    """The rows of ``(mask, head)`` that hold two or more jobs and that no other row implies.

    Row p is implied by row q when p's jobs are among q's and q leaves no more room; of two equal
    rows the first stays.
    """
    keep = essential(mask[None], head[None], np.ones((1, len(mask)), dtype=bool))[0]
    return mask[keep], head[keep]


def essential(mask: np.ndarray, head: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """:func:`essential_rows` of many VMs at once: which rows to keep, ``[vms, rows]``.

    ``mask`` is ``[vms, rows, jobs]``, ``head`` ``[vms, rows]``; rows not ``valid`` are neither kept
    nor imply another.
    """
    many = valid & (mask.sum(axis=2) >= 2)
    if mask.shape[1] < 2:
        return many
    bits = np.packbits(mask, axis=2)
    inside = ~(bits[:, :, None, :] & ~bits[:, None, :, :]).any(axis=3)  # inside[v, p, q]: p's jobs are among q's
    implies = inside & (head[:, None, :] <= head[:, :, None]) & many[:, None, :]  # implies[v, p, q]: q implies p
    same = implies & implies.transpose(0, 2, 1)
    n = mask.shape[1]
    earlier = np.arange(n)[None, :] < np.arange(n)[:, None]
    implies[:, np.arange(n), np.arange(n)] = False
    return many & ~(implies & (~same | earlier)).any(axis=2)


@dataclass(slots=True)
class IppModel:
    """The MILP of an instance plus the index maps to decode and encode plans."""

    instance: IppInstance
    model: MipModel
    z: dict[tuple[int, int], int]
    x: dict[tuple[int, int, int], int]
    y: dict[tuple[int, int], int]
    g: dict[int, int]
    h: dict[tuple[int, int], int]

    def decode(self, values: np.ndarray) -> Plan:
        """The plan of a solution: jobs in index order; new VMs numbered as they are first used."""
        inst = self.instance
        targets = np.full(inst.n_jobs, -1, dtype=np.int64)
        for (j, i), v in self.z.items():
            if values[v] > 0.5:
                targets[i] = int(inst.vm_slot[j])
        new_index: dict[tuple[int, int], int] = {}
        new_types: list[int] = []
        for (t, k, i), v in sorted(self.x.items(), key=lambda kv: kv[0][2]):
            if values[v] > 0.5:
                if (t, k) not in new_index:
                    new_index[(t, k)] = len(new_types)
                    new_types.append(k)
                targets[i] = inst.n_slots + new_index[(t, k)]
        if np.any(targets < 0):
            raise ValueError("solution leaves a job unassigned")
        return Plan(jobs=np.arange(inst.n_jobs), targets=targets, new_types=np.array(new_types, dtype=np.int64),
                    n_slots=inst.n_slots)

    def encode(self, plan: Plan) -> np.ndarray | None:
        """A full assignment of the model's variables for ``plan`` (a warm start); None if it does not fit.

        The assignment satisfies every row by construction (tested); backends check a start again
        before they rely on it.
        """
        inst, values = self.instance, np.zeros(self.model.n_vars)
        slot_to_vm = {int(s): j for j, s in enumerate(inst.vm_slot.tolist())}
        counters: dict[int, int] = {}
        new_vm: dict[int, tuple[int, int]] = {}
        for p, target in sorted(zip(plan.jobs.tolist(), plan.targets.tolist(), strict=True)):
            if target < plan.n_slots:
                key = (slot_to_vm.get(target, -1), p)
                if key not in self.z:
                    return None
                values[self.z[key]] = 1
                values[self.g[key[0]]] = max(values[self.g[key[0]]], inst.vm_units[key])
                continue
            if target not in new_vm:
                k = int(plan.new_types[target - plan.n_slots])
                new_vm[target] = (counters.get(k, 0), k)
                counters[k] = counters.get(k, 0) + 1
            t, k = new_vm[target]
            if (t, k, p) not in self.x:
                return None
            values[self.x[(t, k, p)]] = values[self.y[(t, k)]] = 1
            values[self.h[(t, k)]] = max(values[self.h[(t, k)]], inst.new_units[p])
        for j, v in self.g.items():
            values[v] = max(values[v], inst.vm_base[j])
        return values


def build_model(inst: IppInstance, *, symmetry: Symmetry = "order") -> IppModel:
    """Build the MILP of ``inst`` (see the module docstring)."""
    model = MipModel(name="coh-ipp")
    z, g = _running_vms(model, inst)
    x, y, h = _new_vms(model, inst, symmetry)
    for i in range(inst.n_jobs):
        idx = [v for (j, ii), v in z.items() if ii == i] + [v for (t, k, ii), v in x.items() if ii == i]
        model.add_row(idx, [1.0] * len(idx), "==", 1.0, f"assign[{i}]")
    model.obj_constant = -float(np.dot(inst.vm_base, inst.vm_hourly))
    return IppModel(inst, model, z, x, y, g, h)


def _running_vms(model: MipModel, inst: IppInstance) -> tuple[dict[tuple[int, int], int], dict[int, int]]:
    z: dict[tuple[int, int], int] = {}
    g: dict[int, int] = {}
    for j in range(len(inst.vm_slot)):
        jobs = [i for i in range(inst.n_jobs) if inst.r[i] <= inst.vm_room[j, i]]
        if not jobs:
            continue
        base = int(inst.vm_base[j])
        top = max(base, int(inst.vm_units[j, jobs].max()))
        g[j] = model.add_var(f"g[{j}]", base, top, cost=float(inst.vm_hourly[j]))
        for i in jobs:
            z[(j, i)] = model.add_var(f"z[{j},{i}]")
            if inst.vm_units[j, i] > base:
                model.add_row([g[j], z[(j, i)]], [1.0, -float(inst.vm_units[j, i])], ">=", 0.0, f"cover[{j},{i}]")
        mask, head = inst.vm_rows.of(j)
        for p, row in enumerate(mask):
            held = [i for i in jobs if row[i]]
            if held:
                model.add_row([z[(j, i)] for i in held], [float(inst.r[i]) for i in held], "<=", float(head[p]),
                              f"cap[{j}]" if len(mask) == 1 else f"cap[{j},{p}]")
    return z, g


def _new_vms(
    model: MipModel, inst: IppInstance, symmetry: Symmetry
) -> tuple[dict[tuple[int, int, int], int], dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    x: dict[tuple[int, int, int], int] = {}
    y: dict[tuple[int, int], int] = {}
    h: dict[tuple[int, int], int] = {}
    for k in range(len(inst.type_capacity)):
        jobs = [i for i in range(inst.n_jobs) if inst.r[i] <= inst.type_capacity[k]]
        for t in range(len(jobs)):
            members = jobs[t:] if symmetry == "assign" else jobs
            y[(t, k)] = model.add_var(f"y[{t},{k}]")
            h[(t, k)] = model.add_var(f"h[{t},{k}]", 0, int(inst.new_units[members].max()),
                                      cost=float(inst.type_hourly[k]))
            for i in members:
                x[(t, k, i)] = v = model.add_var(f"x[{t},{k},{i}]")
                model.add_row([h[(t, k)], v], [1.0, -float(inst.new_units[i])], ">=", 0.0, f"hcover[{t},{k},{i}]")
                model.add_row([v, y[(t, k)]], [1.0, -1.0], "<=", 0.0, f"use[{t},{k},{i}]")
            for p, row in enumerate(inst.type_rows):
                held = [i for i in members if row[i]]
                if held and (len(held) > 1 or len(inst.type_rows) == 1):
                    model.add_row([x[(t, k, i)] for i in held] + [y[(t, k)]],
                                  [float(inst.r[i]) for i in held] + [-float(inst.type_capacity[k])], "<=", 0.0,
                                  f"newcap[{t},{k}]" if len(inst.type_rows) == 1 else f"newcap[{t},{k},{p}]")
            if symmetry != "none" and t > 0:
                model.add_row([y[(t - 1, k)], y[(t, k)]], [1.0, -1.0], ">=", 0.0, f"order[{t},{k}]")
    return x, y, h
