"""One heuristic's replay through the engine against a plain event-driven replay of it, in the same run.

Replays whole traces whose ticks hold a job or two (KTH-SP2, SDSC-BLUE by default) with FCFS-LD and
Constant-100 requirements (also FCFS-SM with Heterogeneous ones) through ``broker.coh.simulate``,
and through ``plain_coh.plain_replay`` (``benchmarks/plain_coh.py``: lists and one heap, nothing of
the engine), best of ``--repeat`` each, the two run alternately so that both see the machine
in the same state; checks that both cost the same to the cent and prints the
wall times, microseconds per decision tick and the ratio.

    python benchmarks/heuristic_replay.py [--traces KTH-SP2-1996-2.1-cln,SDSC-BLUE-2000-4.2-cln] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path

from plain_coh import plain_replay

from broker import CohConfig, SimulationConfig, load_price_book, simulate
from workloads.cache import load_trace
from workloads.jobs import job_view

TRACE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TRACES = ("KTH-SP2-1996-2.1-cln", "SDSC-BLUE-2000-4.2-cln")
RUNS = (("LD", "constant-100"), ("SM", "heterogeneous"))


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - started, out


def best_of_interleaved(repeat: int, first, second):  # type: ignore[no-untyped-def]
    """Each of two zero-argument calls ``repeat`` times, alternately (both see the machine as it is
    then): the best time of each and their last results."""
    a_times, b_times, a_out, b_out = [], [], None, None
    for _ in range(repeat):
        t, a_out = timed(first)
        a_times.append(t)
        t, b_out = timed(second)
        b_times.append(t)
    return min(a_times), a_out, min(b_times), b_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", default=",".join(TRACES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    catalog = load_price_book().catalog()
    rows = []
    for name in args.traces.split(","):
        swf = load_trace(TRACE_DIR / f"{name}.swf.gz")
        for rule, reqs in RUNS:
            jobs, _ = job_view(swf.frame, reqs=reqs, seed=1, origin=swf.header.unix_start_time or 0)
            config = SimulationConfig(CohConfig(f"FCFS-{rule}"))
            lists = (jobs.arrival.tolist(), jobs.runtime.tolist(), jobs.r.tolist(), catalog.capacity.tolist(),
                     catalog.hourly.tolist())
            engine_s, result, plain_s, (cost, ticks) = best_of_interleaved(
                args.repeat, partial(simulate, jobs, catalog, config=config, seed=1),
                partial(plain_replay, *lists, rule))
            assert round(cost, 2) == round(result.summary.cost, 2) and ticks == result.summary.ticks, (cost, ticks)
            ratio = engine_s / plain_s
            print(f"{name:<24} FCFS-{rule} {reqs:<13} {len(jobs):>7,} jobs {ticks:>7,} ticks  engine {engine_s:6.2f} s "
                  f"({1e6 * engine_s / ticks:5.1f} us/tick)  plain {plain_s:5.2f} s "
                  f"({1e6 * plain_s / ticks:4.1f} us/tick)  {ratio:4.2f}x  cost ${cost:,.2f}")
            rows.append({"trace": name, "policy": f"FCFS-{rule}", "reqs": reqs, "jobs": len(jobs), "ticks": ticks,
                         "engine_s": engine_s, "plain_s": plain_s, "ratio": ratio, "cost": result.summary.cost})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
