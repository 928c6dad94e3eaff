"""Exact solution of IPP instances of a few jobs by dynamic programming over subsets of the jobs.

A plan of the integer program (:mod:`broker.coh.ipp`) splits the tick's jobs into *blocks*, each on
one target: a running VM (each at most once) or a new VM of some type. What a block costs depends on
the block and its target only: on running VM ``j`` the units it adds beyond those already needed,
``(max(base_j, max_{i in B} units[j, i]) - base_j) * hourly_j``, if the VM has room for the block
(every capacity row); on a new VM of type ``k`` ``max_{i in B} new_units[i] * hourly_k``, if the
type holds the block. The optimum of the integer program is therefore the cheapest split, found
exactly by two dynamic programs over the ``2^m`` subsets of the ``m`` jobs:

- over the running VMs, one at a time: ``g_v[S]``, the least cost of placing the jobs ``S`` on the
  first ``v`` VMs, is ``min(g_{v-1}[S], min_{B in S} g_{v-1}[S - B] + c_v[B])``;
- over new VMs, which are unlimited: ``N[T] = min_{B in T, B holds T's first job} cnew[B] + N[T - B]``;

and the answer is ``min_S g[S] + N[all - S]``: ``O(VMs * 3^m)``. Only a few VMs can matter: a block
``B`` shares the tick with at most ``m - |B|`` other blocks, so one of its ``m - |B| + 1`` cheapest
VMs is free in any plan, and a VM that is among them for no block is left out.

Ties are settled the same way every time: of the optimal splits, the one with the lowest subset
(bit mask) of jobs on running VMs; then from the last candidate VM back, a VM is left unused when
that costs no more, and otherwise takes the lowest block that keeps the optimum; on new VMs, the
lowest block holding the first job left, on the first of the cheapest types. This replaces a solver call on the small
ticks that make up most of a trace (BENCHMARKS.md), with the same optimum (tested against CP-SAT).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from broker.coh.ipp import IppInstance
from heuristics.fleet import Plan

#: The largest batch solved this way (``3^m`` grows fast: 531,441 pairs at 12 jobs).
MAX_SUBSET_JOBS = 12


@dataclass(frozen=True, slots=True)
class _Subsets:
    """Index tables of the subsets of ``m`` jobs (subset ``S`` is the bit mask of its jobs)."""

    member: np.ndarray  # [2^m, m]: whether job i is in subset S
    whole: np.ndarray  # subset S of each pair (S, B), B a non-empty subset of S; sorted by S, then B
    part: np.ndarray  # B of each pair
    rest: np.ndarray  # S - B of each pair
    first: np.ndarray  # where the pairs of S = 1, 2, ... start
    by_part: np.ndarray  # the pairs by B (then S)
    part_first: np.ndarray  # where the pairs of B start in by_part
    part_count: np.ndarray  # how many pairs each B has
    levels: tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]  # new-VM pairs by |T|


@cache
def _subsets(m: int) -> _Subsets:
    n = 1 << m
    member = ((np.arange(n)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
    whole, part = [], []
    for s in range(1, n):
        b = s
        subs = []
        while b:
            subs.append(b)
            b = (b - 1) & s
        whole += [s] * len(subs)
        part += sorted(subs)
    whole_a, part_a = np.array(whole, dtype=np.int64), np.array(part, dtype=np.int64)
    first = np.flatnonzero(np.r_[True, whole_a[1:] != whole_a[:-1]])
    low = whole_a & -whole_a
    with_low = (part_a & low) != 0
    size = member.sum(axis=1)
    levels = []
    for c in range(1, m + 1):
        pick = with_low & (size[whole_a] == c)
        w, p = whole_a[pick], part_a[pick]
        levels.append((w, p, w ^ p, np.flatnonzero(np.r_[True, w[1:] != w[:-1]])))
    by_part = np.argsort(part_a, kind="stable")
    part_count = np.bincount(part_a, minlength=n)
    part_first = np.r_[0, np.cumsum(part_count)[:-1]]
    return _Subsets(member, whole_a, part_a, whole_a ^ part_a, first, by_part, part_first, part_count,
                    tuple(levels))


def solve_subsets(inst: IppInstance) -> tuple[Plan, float]:
    """The optimal plan and its cost ($) for an instance of 1 to :data:`MAX_SUBSET_JOBS` jobs."""
    m = inst.n_jobs
    if not 0 < m <= MAX_SUBSET_JOBS:
        raise ValueError(f"solve_subsets handles 1..{MAX_SUBSET_JOBS} jobs, got {m}")
    sub = _subsets(m)
    on_vm = _running_costs(inst, sub.member)
    new, new_type = _new_costs(inst, sub.member)
    split, split_part = _new_splits(new, sub)
    vms = _candidates(on_vm, sub.member)
    g = _running_dp(on_vm[vms], sub)
    total = g[-1] + split[(1 << m) - 1 ^ np.arange(1 << m)]
    s = int(np.argmin(total))
    if not np.isfinite(total[s]):
        raise ValueError("no feasible placement for the jobs")
    blocks = _running_blocks(g, on_vm[vms], sub, s)
    targets = np.full(m, -1, dtype=np.int64)
    for v, b in blocks:
        targets[sub.member[b]] = int(inst.vm_slot[vms[v]])
    new_types: list[int] = []
    t = (1 << m) - 1 ^ s
    while t:
        b = int(split_part[t])
        targets[sub.member[b]] = -2 - len(new_types)
        new_types.append(int(new_type[b]))
        t ^= b
    return _numbered(targets, new_types, inst.n_slots), float(total[s])


def _running_costs(inst: IppInstance, member: np.ndarray) -> np.ndarray:
    """``[vms, 2^m]``: what each block costs on each running VM (``inf`` where it has no room); block 0 costs 0.

    A block costs its dearest job's units beyond the base, and fits where each job fits alone and
    every row has room for the jobs of the block it holds; each is built a job at a time, block
    ``B + {i}`` from block ``B`` (``O(vms * 2^m)`` per row).
    """
    single = np.maximum(inst.vm_units - inst.vm_base[:, None], 0) * inst.vm_hourly[:, None]
    cost = _by_job(single, np.maximum, 0.0)
    ok = _by_job(inst.vm_room >= inst.r[None, :], np.logical_and, True)
    rows = inst.vm_rows
    for p in range(rows.mask.shape[1]):
        vms = np.flatnonzero(np.isfinite(rows.head[:, p]))
        load = _by_job(rows.mask[vms, p, :] * inst.r[None, :], np.add, 0.0)
        ok[vms] &= load <= rows.head[vms, p, None] + 1e-9
    return np.where(ok, cost, np.inf)


def _by_job(per_job: np.ndarray, combine: np.ufunc, empty: float | bool) -> np.ndarray:
    """``[rows, 2^m]``: ``combine`` of ``per_job[:, i]`` over the jobs ``i`` of each block (``empty`` for none)."""
    n, m = per_job.shape
    out = np.empty((n, 1 << m), dtype=per_job.dtype)
    out[:, 0] = empty
    for i in range(m):
        combine(out[:, :1 << i], per_job[:, i:i + 1], out=out[:, 1 << i:2 << i])
    return out


def _new_costs(inst: IppInstance, member: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What each block costs on one new VM of the cheapest type that holds it, and that type."""
    weights = member * inst.r[None, :]
    cap = inst.type_capacity[:, None]
    ok = ~(member[None, :, :] & (inst.r[None, None, :] > inst.type_capacity[:, None, None])).any(axis=2)
    if len(inst.type_rows):
        load = inst.type_rows.astype(np.float64) @ weights.T  # [rows, 2^m]
        ok &= np.all(load[None, :, :] <= cap[:, :, None] + 1e-9, axis=1)
    top = np.where(member, inst.new_units[None, :], 0).max(axis=1)
    cost = np.where(ok, top[None, :] * inst.type_hourly[:, None], np.inf)
    return cost.min(axis=0), cost.argmin(axis=0)


def _new_splits(new: np.ndarray, sub: _Subsets) -> tuple[np.ndarray, np.ndarray]:
    """``N[T]``, the cheapest split of the jobs ``T`` over new VMs, and its block holding T's first job."""
    best = np.full(len(new), np.inf)
    best[0] = 0.0
    part = np.zeros(len(new), dtype=np.int64)
    for whole, blocks, rest, first in sub.levels:
        cand = new[blocks] + best[rest]
        seg = np.minimum.reduceat(cand, first)
        owner = whole[first]
        best[owner] = seg
        hit = cand == np.repeat(seg, np.diff(np.r_[first, len(cand)]))
        pick = first + _first_true(hit, first)
        part[owner] = blocks[pick]
    return best, part


def _first_true(hit: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Offset, within each segment starting at ``first``, of its first ``True``."""
    index = np.where(hit, np.arange(len(hit)), len(hit))
    return np.minimum.reduceat(index, first) - first


def _candidates(on_vm: np.ndarray, member: np.ndarray) -> np.ndarray:
    """The running VMs among the ``m - |B| + 1`` cheapest for some block ``B`` (module docstring), by index."""
    blocks = np.flatnonzero(np.isfinite(on_vm[:, 1:]).any(axis=0)) + 1  # blocks some VM has room for
    if not len(blocks):
        return np.zeros(0, dtype=np.int64)
    costs = on_vm[:, blocks]
    order = np.argsort(costs, axis=0, kind="stable")
    depth = member.shape[1] - member[blocks].sum(axis=1) + 1
    top = np.arange(len(on_vm))[:, None] < depth[None, :]
    finite = np.isfinite(np.take_along_axis(costs, order, axis=0))
    return np.unique(order[top & finite])


def _running_dp(on_vm: np.ndarray, sub: _Subsets) -> np.ndarray:
    """``g[v][S]`` for ``v = 0..len(on_vm)``: least cost of the jobs ``S`` on the first ``v`` candidate VMs.

    A VM with room for few blocks is stepped over the pairs ``(S, B)`` of those blocks only.
    """
    g = np.full((len(on_vm) + 1, len(sub.member)), np.inf)
    g[0, 0] = 0.0
    for v, cost in enumerate(on_vm):
        g[v + 1] = g[v]
        blocks = np.flatnonzero(np.isfinite(cost[1:])) + 1
        counts = sub.part_count[blocks]
        total = int(counts.sum())
        if 2 * total > len(sub.part):
            g[v + 1, 1:] = np.minimum(g[v, 1:], np.minimum.reduceat(g[v][sub.rest] + cost[sub.part], sub.first))
        elif total:
            offset = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            pairs = sub.by_part[np.repeat(sub.part_first[blocks], counts) + offset]
            np.minimum.at(g[v + 1], sub.whole[pairs], g[v][sub.rest[pairs]] + cost[sub.part[pairs]])
    return g


def _running_blocks(g: np.ndarray, on_vm: np.ndarray, sub: _Subsets, s: int) -> list[tuple[int, int]]:
    """The (candidate VM, block) pairs of the running part ``s`` of the best plan, by the tie rule."""
    blocks = []
    for v in range(len(on_vm), 0, -1):
        if s == 0:
            break
        if g[v - 1, s] == g[v, s]:
            continue
        lo = sub.first[s - 1]
        hi = sub.first[s] if s < len(sub.first) else len(sub.part)
        parts = sub.part[lo:hi]
        cand = g[v - 1][sub.rest[lo:hi]] + on_vm[v - 1][parts]
        b = int(parts[np.flatnonzero(cand == g[v, s])[0]])
        blocks.append((v - 1, b))
        s ^= b
    return blocks


def _numbered(targets: np.ndarray, new_types: list[int], n_slots: int) -> Plan:
    """The plan; new VMs (``targets`` ``-2 - k`` for the k-th) numbered as the jobs first use them."""
    order: dict[int, int] = {}
    types: list[int] = []
    out = targets.copy()
    for i, t in enumerate(targets.tolist()):
        if t <= -2:
            if t not in order:
                order[t] = len(types)
                types.append(new_types[-2 - t])
            out[i] = n_slots + order[t]
    return Plan(jobs=np.arange(len(targets)), targets=out, new_types=np.array(types, dtype=np.int64),
                n_slots=n_slots)
