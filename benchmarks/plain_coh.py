"""A plain event-driven replay of one CoH heuristic, the baseline of ``benchmarks/heuristic_replay.py``.

The least a correct replay of one heuristic must do, written for the benchmark without any of the
engine's code: Python lists and one heap of events (a job's departure, a decision tick, a VM's
billing deadline; at one instant in that order). Jobs are handed to the heuristic 130 s (boot time
plus one tick) before they arrive, at ticks on the 10 s grid, and placed first come, first served
on the VM the rule picks among those with room for the job over its own run (the interval capacity
rule: the most its jobs hold at any instant of the job's run, plus the job, within the VM's
capacity); when none has room, a new VM of the most cost-efficient type that holds the job. A VM
is billed per hour started from its boot, and released idle 10 s before an hour rolls over.

VM rules: ``LD`` (the latest departure of the jobs a VM hosts, VMs hosting none last) and ``SM``
(the least room left over the job's run). Ties go to the lowest slot; VMs started at a tick come
after the others at that tick, and a new VM takes the lowest free slot, as in the engine, so the
replay places every job where the engine does and its cost is the engine's to the cent.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right, insort

DEPARTURE, TICK, DEADLINE = 0, 1, 2
EMPTY = 1e300


def plain_replay(arrival: list[float], runtime: list[float], r: list[float], capacity: list[float],
                 hourly: list[float], rule: str = "LD", *, tick: float = 10.0, boot: float = 120.0,
                 btu: float = 3600.0, margin: float = 10.0) -> tuple[float, int]:
    """Cost ($) and decision ticks of one heuristic over jobs sorted by arrival."""
    if rule not in ("LD", "SM"):
        raise ValueError(f"plain_replay knows the VM rules LD and SM, not {rule!r}")
    order = sorted(range(len(capacity)), key=lambda k: (-capacity[k] / hourly[k], -capacity[k], k))
    lookahead = tick + boot
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    cap: list[float] = []  # per slot: capacity, -1 when free
    kind: list[int] = []
    ready: list[float] = []
    anchor: list[float] = []
    latest: list[float] = []  # the latest departure of the jobs a slot hosts (LD's key is its negative)
    jobs: list[list[tuple[float, float, float, int]]] = []  # per slot: (start, end, r, job)
    alive: list[int] = []  # slots holding a VM, in slot order
    spare: list[int] = []
    where = [0] * len(arrival)
    seen: list[int] = []  # the VMs alive when the tick began
    opened: list[int] = []  # VMs started at this tick: the heuristic sees them after the others
    cost = 0.0
    ticks = 0
    nxt = 0
    last_tick = -math.inf

    def push(t: float, k: int, payload: int) -> None:
        nonlocal seq
        heapq.heappush(heap, (t, k, seq, payload))
        seq += 1

    def request(t: float) -> None:
        push(max(math.ceil(t / tick) * tick, last_tick + tick), TICK, -1)

    def room(slot: int, s: float, e: float) -> float:
        """Capacity less the most the slot's jobs hold at any instant of [s, e)."""
        load, later = 0.0, False
        for a, b, rr, _ in jobs[slot]:
            if a <= s:
                if s < b:
                    load += rr
            elif a < e:
                later = True
        if not later:  # the load only falls after s
            return cap[slot] - load
        peak = load
        changes = sorted([(a, rr) for a, _, rr, _ in jobs[slot] if s < a < e]
                         + [(b, -rr) for _, b, rr, _ in jobs[slot] if s < b < e])
        for _, d in changes:
            load += d
            peak = max(peak, load)
        return cap[slot] - peak

    def start_vm(k: int, now: float) -> int:
        if spare:
            slot = heapq.heappop(spare)
            cap[slot], kind[slot], ready[slot], anchor[slot], latest[slot] = capacity[k], k, now + boot, now, -EMPTY
        else:
            slot = len(cap)
            for column, value in ((cap, capacity[k]), (kind, k), (ready, now + boot), (anchor, now),
                                  (latest, -EMPTY), (jobs, [])):
                column.append(value)  # type: ignore[attr-defined]
        insort(alive, slot)
        push(now + btu - margin, DEADLINE, slot)
        opened.append(slot)
        return slot

    def place(i: int, now: float) -> None:
        a, need = max(arrival[i], now), r[i]
        best, best_key = -1, math.inf
        for slot in seen + opened:
            s = max(a, ready[slot])
            if rule == "LD":
                key = -latest[slot]
                if key < best_key and room(slot, s, s + runtime[i]) >= need:
                    best, best_key = slot, key
            else:
                left = room(slot, s, s + runtime[i])
                if need <= left < best_key:
                    best, best_key = slot, left
        if best < 0:
            best = start_vm(next(k for k in order if capacity[k] >= need), now)
        s = max(a, ready[best])
        jobs[best].append((s, s + runtime[i], need, i))
        latest[best] = max(latest[best], s + runtime[i])
        where[i] = best
        push(s + runtime[i], DEPARTURE, i)

    if arrival:
        request(arrival[0] - lookahead)
    while heap:
        now, what, _, payload = heapq.heappop(heap)
        if what == DEPARTURE:
            slot = where[payload]
            jobs[slot] = [j for j in jobs[slot] if j[3] != payload]
            latest[slot] = max((b for _, b, _, _ in jobs[slot]), default=-EMPTY)
        elif what == TICK:
            last_tick = now
            ticks += 1
            opened.clear()
            seen = alive[:]
            end = bisect_right(arrival, now + lookahead, lo=nxt)
            for i in range(nxt, end):
                place(i, now)
            nxt = end
            if nxt < len(arrival):
                request(arrival[nxt] - lookahead)
        else:
            if jobs[payload]:
                push(now + btu, DEADLINE, payload)
            else:
                units = max(1, math.ceil((now - anchor[payload]) / btu - 1e-9))
                cost += units * hourly[kind[payload]]
                cap[payload] = -1.0
                alive.remove(payload)
                heapq.heappush(spare, payload)
    return cost, ticks
