"""EASY backfilling against AccaSim 1.1.3 and a plain event-driven EASY, on KTH-SP2, in the same run.

Equal work: the jobs ``rigid_view`` keeps from KTH-SP2 (28,475 of 28,476 lines; width = allocated
processors, estimate = requested time), 100 one-core nodes. AccaSim gets exactly these jobs as a
temporary SWF (job number = our index + 1, requested = allocated = our width, requested time = our
estimate, actual run time, memory unknown) and replays them with ``EASYBackfilling(FirstFit())``;
its outputs go to the same temporary directory and its start times are read from its dispatching
record (``sched-*.swf``). AccaSim is timed twice: as a user runs it (the simulator reads and parses
the SWF as it goes and writes its dispatching record) and as the simulation alone: the jobs parsed
beforehand by its own parser (a reader hands over the parsed lines; the parse is timed apart), no
dispatching record (its writers fork processes that cost more CPU than the simulation; start times
are taken by an AdditionalData hook instead, and must equal the record's). AccaSim's own clock of
its simulation loop (the "Simulation time" of its statistics file) is reported too. Wall and CPU
times (AccaSim: with the processes it forks) are both given: other work shares the 2 cores. Ours
(the hybrid site with no cloud, ``broker.hybrid.world.replay``, EASY and conservative) and the plain
EASY below are timed best of ``--repeat``, EASY and the plain EASY before, between and after the
AccaSim runs.

The plain EASY is the least a correct event-driven EASY must do: Python lists, a heap of actual
completions, a queue in submission order; at each event time completions, then submissions, then
one pass (start the head while it fits; else shadow time and spare nodes from the running jobs'
estimated ends, and backfill later jobs that fit now and either end by the shadow time or use no
more than the spare nodes). Its spare nodes count every running job whose estimated end is the
shadow time; ``heuristics.backfill`` stops at the first job that makes room for the head and so may
count fewer (about 10 % of KTH's start times differ for that reason alone).

AccaSim's EASYBackfilling does not protect the head's reservation: it computes reserved nodes but
passes ``reserved_nodes=[]`` to its allocator, so every later job that fits now starts; the head is
not tried again before its (first) reservation time, even when its nodes are free earlier. Two
hand-made cases show this side by side; schedules on KTH differ accordingly.

    python benchmarks/accasim_easy.py [--trace PATH] [--nodes M] [--limit N] [--repeat K] [--accasim-runs K]
                                      [--no-accasim] [--profile]

``--nodes`` sizes the cluster for another trace (SDSC-BLUE: 1152, with ``--no-accasim``); the
hand-made cases keep 100 nodes.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import cProfile
import heapq
import io
import json
import math
import os
import platform
import pstats
import re
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from broker.hybrid.world import replay
from heuristics.backfill import Discipline
from workloads.cache import load_trace
from workloads.rigid import RigidJobs, rigid_view

DEFAULT_TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
NODES = 100

# Hand-made cases (submit, run time, estimate, nodes) on 100 one-core nodes.
CASES = {
    "A: a backfilled job delays the head": [
        (100, 200, 200, 90),    # 1 starts at once, estimated end 300
        (110, 1000, 1000, 100),  # 2 the head: needs all 100 nodes, reservation at 300
        (120, 900, 900, 10),    # 3 fits now but ends at 1020 > 300 and the head leaves no spare node
        (130, 50, 100, 5),      # 4 fits now and ends by 300 (a legal backfill)
    ],
    "B: the head waits for its reservation though its nodes are free": [
        (100, 100, 200, 90),    # 1 ends at 200, 100 s before its estimate
        (110, 100, 100, 100),   # 2 the head: reservation at 300, all nodes free at 200
        (150, 30, 40, 10),      # 3 a legal backfill (ends by 300)
    ],
}


# --------------------------------------------------------------------------- the plain EASY


def plain_easy(submit: list[float], runtime: list[float], estimate: list[float], nodes: list[int],
               m: int) -> list[float]:
    """Start times of a plain event-driven EASY (see the module docstring)."""
    n = len(submit)
    start = [math.nan] * n
    free = m
    queue: list[int] = []
    running: dict[int, float] = {}  # job -> estimated end
    ends: list[tuple[float, int]] = []  # (actual end, job)
    push, pop = heapq.heappush, heapq.heappop
    i = 0
    while i < n or ends:
        now = submit[i] if i < n and (not ends or submit[i] < ends[0][0]) else ends[0][0]
        while ends and ends[0][0] == now:
            j = pop(ends)[1]
            free += nodes[j]
            del running[j]
        while i < n and submit[i] == now:
            queue.append(i)
            i += 1
        if not queue:
            continue
        k = 0
        while k < len(queue) and nodes[queue[k]] <= free:
            j = queue[k]
            free -= nodes[j]
            start[j] = now
            running[j] = now + estimate[j]
            push(ends, (now + runtime[j], j))
            k += 1
        if k:
            del queue[:k]
        if not queue or free == 0:
            continue
        need = nodes[queue[0]]
        avail, shadow, extra = free, math.inf, 0
        for end, j in sorted((e if e > now else now, j) for j, e in running.items()):
            if end > shadow:
                break
            avail += nodes[j]
            if avail >= need:
                shadow, extra = end, avail - need  # jobs ending at the shadow time too add to extra
        waiting = [queue[0]]
        for j in queue[1:]:
            p = nodes[j]
            if p <= free:
                in_time = now + estimate[j] <= shadow
                if in_time or p <= extra:
                    free -= p
                    start[j] = now
                    running[j] = now + estimate[j]
                    push(ends, (now + runtime[j], j))
                    if not in_time:
                        extra -= p
                    continue
            waiting.append(j)
        queue = waiting
    return start


# --------------------------------------------------------------------------- AccaSim


def import_accasim() -> dict[str, Any]:
    """Import AccaSim 1.1.3 on Python 3.10+: it imports ``collections.Mapping`` (removed in 3.10)."""
    # its dispatching record writes times as local datetimes: make local time UTC, so they read back exactly
    os.environ["TZ"] = "UTC"
    time.tzset()
    if not hasattr(collections, "Mapping"):
        collections.Mapping = collections.abc.Mapping  # type: ignore[attr-defined]
    from accasim.base.additional_data import AdditionalData  # type: ignore[import-untyped]
    from accasim.base.allocator_class import FirstFit  # type: ignore[import-untyped]
    from accasim.base.scheduler_class import EASYBackfilling  # type: ignore[import-untyped]
    from accasim.base.simulator_class import Simulator  # type: ignore[import-untyped]
    from accasim.utils.reader_class import DefaultTweaker, DefaultWorkloadParser, Reader  # type: ignore[import-untyped]

    class Preparsed(Reader):
        """Hands over SWF lines parsed beforehand by AccaSim's own parser and tweaker."""

        def __init__(self, parsed: list[dict], job_factory: Any) -> None:
            super().__init__(job_factory)
            self._parsed = iter(parsed)

        def _read(self, current_time: int = 0) -> dict | None:
            d = next(self._parsed, None)
            if d is None:
                self.stop_submission()
            return d

    class StartRecorder(AdditionalData):
        """Takes each job's start time when AccaSim releases it (instead of its dispatching record)."""

        def __init__(self, event_manager: Any = None) -> None:
            super().__init__(event_manager)
            self.start: dict[str, int] = {}

        def exec_after_completion(self, removed_jobs: list) -> None:
            for job in removed_jobs:
                self.start[job.id] = job.start_time

        def exec_before_dispatching(self, job_dict: dict, queued_jobs: list) -> None:
            pass

        def exec_after_dispatching(self, job_dict: dict, to_dispatch_jobs: list, rejected_jobs: list) -> None:
            pass

        def exec_before_submission(self, *args: Any, **kwargs: Any) -> None:
            pass

        def exec_after_submission(self, *args: Any, **kwargs: Any) -> None:
            pass

        def exec_before_completion(self, *args: Any, **kwargs: Any) -> None:
            pass

        def stop(self) -> None:
            pass

    return {"FirstFit": FirstFit, "EASYBackfilling": EASYBackfilling, "Simulator": Simulator,
            "DefaultTweaker": DefaultTweaker, "DefaultWorkloadParser": DefaultWorkloadParser,
            "Preparsed": Preparsed, "StartRecorder": StartRecorder}


def _cpu_with_children() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def write_swf(jobs: RigidJobs, path: Path) -> None:
    """The jobs as SWF lines AccaSim reads: integer times, requested = allocated = width."""
    cols = [jobs.submit, jobs.runtime, jobs.estimate]
    if not all(np.array_equal(c, np.round(c)) for c in cols):
        raise ValueError("AccaSim reads integer times; this job list has fractional ones")
    with path.open("w") as f:
        f.write("; jobs kept by workloads.rigid.rigid_view (benchmarks/accasim_easy.py)\n")
        for i, (s, r, e, p) in enumerate(zip(*(c.astype(np.int64).tolist() for c in cols),
                                                 jobs.nodes.tolist(), strict=True)):
            f.write(f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {e} -1 1 1 1 -1 1 -1 -1 -1\n")


def accasim_parse(acc: dict[str, Any], swf: Path) -> list[dict]:
    """Parse and tweak the SWF lines as AccaSim's DefaultReader does."""
    parser, tweaker = acc["DefaultWorkloadParser"](), acc["DefaultTweaker"](0, None, {})
    parsed = []
    with swf.open() as f:
        for line in f:
            d = parser.parse_line(line[:-1])
            if d:
                parsed.append(tweaker.tweak_function(d))
    return parsed


def accasim_run(acc: dict[str, Any], swf: Path, sys_config: Path, out: Path, n: int,
                parsed: list[dict] | None = None) -> tuple[float, float, np.ndarray, str]:
    """Run AccaSim EASY-FF; wall and CPU time, start times by job index, its statistics file.

    Without ``parsed``, as a user runs it: it reads ``swf`` as it goes and writes its dispatching
    record, whose start times are returned. With ``parsed`` (``accasim_parse``), the simulation
    alone: the jobs come parsed, no dispatching record is written (start times are taken by an
    AdditionalData hook as jobs end). The CPU time is this process's (threads included) and that of
    the processes AccaSim's output writers fork (one per 10,000 finished jobs, which formats them).
    """
    record = parsed is None
    t, c = time.perf_counter(), _cpu_with_children()
    sim = acc["Simulator"](str(swf), str(sys_config), acc["EASYBackfilling"](acc["FirstFit"]()),
                           additional_data=[] if record else [acc["StartRecorder"]],
                           scheduling_output=record, RESULTS_FOLDER_PATH=str(out), LOG_LEVEL="WARNING")
    if parsed is not None:
        sim.reader = acc["Preparsed"](parsed, sim.job_factory)
    files = sim.start_simulation()
    wall, cpu = time.perf_counter() - t, _cpu_with_children() - c
    start = np.full(n, np.nan)
    if record:
        with Path(files["sched-"]).open() as f:
            for line in f:  # {job_id};{user};{queue_time}__{nodes}__{start};{end};...
                head, _, rest = line.split("__")
                when = datetime.strptime(rest.split(";")[0], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
                start[int(head.split(";")[0]) - 1] = when.timestamp()
    else:
        for job_id, t0 in sim.mapper.additional_data[0].start.items():
            start[int(job_id) - 1] = t0
    stats = Path(files["stats-"]).read_text()
    for f in files.values():
        Path(f).unlink()
    return wall, cpu, start, stats


# --------------------------------------------------------------------------- measuring


def best_of(repeat: int, fn, *args):  # type: ignore[no-untyped-def]
    """Best wall and best CPU time (this process) of ``repeat`` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        result = fn(*args)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), result


def agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    d = np.abs(a - b)
    return {"identical": float(np.mean(d == 0)), "mean_abs": float(d.mean()), "median_abs": float(np.median(d)),
            "max_abs": float(d.max()), "earlier": float(np.mean(b < a)), "later": float(np.mean(b > a))}


def lists(jobs: RigidJobs) -> tuple[list[float], list[float], list[float], list[int]]:
    return jobs.submit.tolist(), jobs.runtime.tolist(), jobs.estimate.tolist(), jobs.nodes.tolist()


def rigid(rows: list[tuple[int, int, int, int]]) -> RigidJobs:
    a = np.array(rows, dtype=np.float64)
    return RigidJobs(submit=a[:, 0], runtime=a[:, 1], estimate=a[:, 2], nodes=a[:, 3].astype(np.int64))


def system_config(tmp: Path, nodes: int) -> Path:
    """AccaSim's system configuration: ``nodes`` one-core nodes."""
    path = tmp / f"sys_config_{nodes}.json"
    path.write_text(json.dumps({"groups": {"node": {"core": 1}}, "resources": {"node": nodes}}))
    return path


def show_cases(acc: dict[str, Any] | None, sys_config: Path, tmp: Path) -> None:
    for title, rows in CASES.items():
        jobs = rigid(rows)
        ours = replay(jobs, NODES, "easy")[0].start
        plain = plain_easy(*lists(jobs), NODES)
        acc_start = None
        if acc is not None:
            swf = tmp / "case.swf"
            write_swf(jobs, swf)
            acc_start = accasim_run(acc, swf, sys_config, tmp / "out", len(jobs))[2]
        print(f"\n{title} (100 nodes)")
        print("| job | submit | nodes | estimate | run time | start: ours | start: plain EASY | start: AccaSim |")
        print("|---|---|---|---|---|---|---|---|")
        for i, (s, r, e, p) in enumerate(rows):
            acc_s = f"{acc_start[i]:.0f}" if acc_start is not None else "-"
            flag = " **" if acc_start is not None and acc_start[i] != ours[i] else ""
            print(f"| {i + 1} | {s} | {p} | {e} | {r} | {ours[i]:.0f} | {plain[i]:.0f} | {acc_s}{flag} |")


def profile_ours(jobs: RigidJobs, nodes: int, discipline: Discipline) -> None:
    prof = cProfile.Profile()
    prof.runcall(replay, jobs, nodes, discipline)
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(12)
    print(f"\ncProfile of replay(jobs, {nodes}, {discipline!r}), by own time:")
    print("\n".join(out.getvalue().splitlines()[:30]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", default=str(DEFAULT_TRACE))
    parser.add_argument("--nodes", type=int, default=NODES, help="nodes of the cluster (one core each)")
    parser.add_argument("--limit", type=int, default=None, help="first N jobs only")
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours and the plain EASY (best is kept)")
    parser.add_argument("--accasim-runs", type=int, default=1, help="runs of each AccaSim variant (best is kept)")
    parser.add_argument("--no-accasim", action="store_true", help="ours and the plain EASY only")
    parser.add_argument("--profile", action="store_true", help="cProfile our EASY and conservative replays")
    args = parser.parse_args()

    load = os.getloadavg()
    swf_trace = load_trace(args.trace)
    nodes = args.nodes
    jobs, report = rigid_view(swf_trace.frame, nodes=nodes)
    if args.limit:
        jobs = RigidJobs(jobs.submit[:args.limit], jobs.runtime[:args.limit], jobs.estimate[:args.limit],
                         jobs.nodes[:args.limit])
    n = len(jobs)
    print(f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    print(f"{Path(args.trace).name}: {n:,} jobs on {nodes} nodes ({report.read:,} read, "
          f"removed {({k: v for k, v in report.removed.items() if v})})")

    plain_t = best_of(args.repeat, plain_easy, *lists(jobs), nodes)
    easy_t = best_of(args.repeat, replay, jobs, nodes, "easy")
    cons_t = best_of(args.repeat, replay, jobs, nodes, "conservative")
    rounds = 1

    def again() -> None:
        """The load changes while AccaSim runs: time the fast ones again and keep the best."""
        nonlocal plain_t, easy_t, rounds
        p, e = best_of(args.repeat, plain_easy, *lists(jobs), nodes), best_of(args.repeat, replay, jobs, nodes, "easy")
        plain_t = (min(plain_t[0], p[0]), min(plain_t[1], p[1]), plain_t[2])
        easy_t = (min(easy_t[0], e[0]), min(easy_t[1], e[1]), easy_t[2])
        rounds += 1
    plain_start, easy, cons = np.array(plain_t[2]), easy_t[2][0], cons_t[2][0]
    wait = {"plain EASY": plain_start - jobs.submit, "ours EASY": easy.start - jobs.submit,
            "ours conservative": cons.start - jobs.submit}
    # (wall, CPU) in s; CPU is None where only a wall time exists
    timing: dict[str, tuple[float, float | None]] = {"ours conservative": cons_t[:2]}

    acc = None if args.no_accasim else import_accasim()
    with tempfile.TemporaryDirectory(prefix="accasim-easy-") as tmpdir:
        tmp = Path(tmpdir)
        sys_config = system_config(tmp, nodes)
        if acc is not None:
            swf = tmp / "kth-rigid.swf"
            write_swf(jobs, swf)
            runs = [accasim_run(acc, swf, sys_config, tmp / "out", n) for _ in range(args.accasim_runs)]
            file_run = min(runs, key=lambda r: r[0])
            again()
            parse_s = best_of(1, accasim_parse, acc, swf)[0]
            runs = [accasim_run(acc, swf, sys_config, tmp / "out", n, accasim_parse(acc, swf))
                    for _ in range(args.accasim_runs)]
            sim_run = min(runs, key=lambda r: r[0])
            clock_s = float(re.search(r"Simulation time: ([0-9.]+)", sim_run[3]).group(1))  # type: ignore[union-attr]
            acc_start = file_run[2]
            missing = int(np.isnan(acc_start).sum())
            if missing or not np.array_equal(acc_start, sim_run[2]):
                print(f"WARNING: AccaSim started {n - missing:,} of {n:,} jobs; its record and its hook "
                      f"{'agree' if np.array_equal(acc_start, sim_run[2], equal_nan=True) else 'DIFFER'}")
            wait["AccaSim EASY-FF"] = acc_start - jobs.submit
            timing["AccaSim, reading the SWF"] = file_run[:2]
            timing["AccaSim, simulation alone"] = sim_run[:2]
            timing["AccaSim, simulation alone, its own clock"] = (clock_s, None)
            print("AccaSim's statistics file (reading the SWF): " + "; ".join(file_run[3].strip().splitlines()))
            print("AccaSim's statistics file (simulation alone): " + "; ".join(sim_run[3].strip().splitlines()))
            print(f"AccaSim's own parse of the SWF (outside the second timing): {parse_s:.2f} s")
            again()
        timing = {"plain EASY": plain_t[:2], "ours EASY": easy_t[:2], **timing}
        (plain_s, plain_cpu), (easy_s, easy_cpu) = plain_t[:2], easy_t[:2]
        print(f"\nTimes (plain and ours EASY best of {rounds} x {args.repeat}: before, between and after AccaSim; ours "
              f"conservative best of {args.repeat}; AccaSim best of {args.accasim_runs}); CPU = this process "
              f"(AccaSim: and the processes its writers fork):")
        print("| run | wall (s) | CPU (s) | jobs/s (wall) | wall x plain EASY | ours EASY faster by: wall | CPU |")
        print("|---|---|---|---|---|---|---|")
        for label, (w, c) in timing.items():
            cpu = f"{c:.3f}" if c is not None else "-"
            by_cpu = f"{c / easy_cpu:.1f}x" if c is not None else "-"
            print(f"| {label} | {w:.3f} | {cpu} | {n / w:,.0f} | {w / plain_s:.2f} | {w / easy_s:.1f}x | {by_cpu} |")
        print("\nSchedules (waits in s):")
        print("| schedule | mean wait | median wait | max wait |")
        print("|---|---|---|---|")
        for label, w in wait.items():
            print(f"| {label} | {np.mean(w):,.0f} | {np.median(w):,.0f} | {np.max(w):,.0f} |")
        pairs = [("ours EASY", "plain EASY", easy.start, plain_start),
                 ("ours EASY", "ours conservative", easy.start, cons.start)]
        if acc is not None:
            pairs += [("ours EASY", "AccaSim EASY-FF", easy.start, wait["AccaSim EASY-FF"] + jobs.submit),
                      ("ours conservative", "AccaSim EASY-FF", cons.start, wait["AccaSim EASY-FF"] + jobs.submit)]
        print("\n| a | b | identical starts | mean abs diff (s) | median abs diff (s) | max abs diff (s) "
              "| b earlier | b later |")
        print("|---|---|---|---|---|---|---|---|")
        for a_label, b_label, a, b in pairs:
            g = agreement(a, b)
            print(f"| {a_label} | {b_label} | {g['identical']:.2%} | {g['mean_abs']:,.0f} | {g['median_abs']:,.0f} "
                  f"| {g['max_abs']:,.0f} | {g['earlier']:.2%} | {g['later']:.2%} |")
        if acc is not None:
            longest = float(np.max(wait["ours EASY"]))
            print(f"\nAccaSim jobs waiting longer than the longest wait of ours EASY ({longest:,.0f} s): "
                  f"{int(np.sum(wait['AccaSim EASY-FF'] > longest)):,}")
            print(f"Target: ours EASY at least 30x faster than AccaSim: {clock_s / easy_s:.0f}x against "
                  f"AccaSim's own clock of its simulation loop (simulation alone), "
                  f"{sim_run[0] / easy_s:.0f}x against its wall time ({sim_run[1] / easy_cpu:.0f}x in CPU), "
                  f"{file_run[0] / easy_s:.0f}x as a user runs it ({file_run[1] / easy_cpu:.0f}x in CPU)")
        print(f"Target: ours EASY within 2x of the plain EASY: {easy_s / plain_s:.2f}x wall, "
              f"{easy_cpu / plain_cpu:.2f}x CPU")
        show_cases(acc, system_config(tmp, NODES), tmp)
    if args.profile:
        profile_ours(jobs, nodes, "easy")
        profile_ours(jobs, nodes, "conservative")
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")


if __name__ == "__main__":
    main()
