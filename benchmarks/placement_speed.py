"""CoH placement speed in one run: the interval rule against the tick rule, and FCFS-LD against the reference.

Prints three ratios (issue 32's targets in brackets):

* the CoH trio (FCFS-SM, FCFS-LD, FCFS-CFH, heterogeneous requirements) on the whole of LCG-2005-1
  under the interval capacity rule, over the same trio under the tick rule [at most 1.5x];
* FCFS-LD with Constant-100 requirements under the interval rule, over the independent focused
  replay of the same model (``../shared/reference/refcoh.py``, run as it is, its own simulation time
  read from its ``--json`` line) on SDSC-BLUE-2000 [at most 3x] and on LCG-2005-1 [at most 1.5x].

Each pair runs back to back, ``--repeat`` times alternating its sides; the best time of each side is
kept (the machine's other load only slows a run down). The replay's own time is the
:func:`broker.simulate` call, the job table already built, as the reference times its ``simulate``
with the trace already read. Costs are printed beside the times: the same model gives the same
placement, so the FCFS-LD costs agree with the reference's (to 0.1 %: its price book is its own).

    python benchmarks/placement_speed.py [--repeat 2] [--only trio,sdsc,lcg]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from broker import CohConfig, EngineConfig, SimulationConfig, load_price_book, simulate
from heuristics.registry import PAPER_TRIO
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRACES = SHARED / "traces"
REFERENCE = SHARED / "reference" / "refcoh.py"


def jobs_of(name: str, reqs: str) -> JobTable:
    """The job table of a shared trace."""
    swf = load_trace(TRACES / f"{name}.swf.gz")
    jobs, _ = job_view(swf.frame, reqs=reqs, seed=1, origin=swf.header.unix_start_time or 0)
    return jobs


def replay(jobs: JobTable, policy: str, capacity: str) -> tuple[float, float]:
    """Wall time (s) and cost ($) of one replay."""
    config = SimulationConfig(CohConfig(policy, heuristics=PAPER_TRIO), EngineConfig(capacity=capacity))  # type: ignore[arg-type]
    catalog = load_price_book().catalog()
    started = time.perf_counter()
    cost = simulate(jobs, catalog, config=config, seed=1).summary.cost
    return time.perf_counter() - started, cost


def reference(name: str) -> tuple[float, float]:
    """The reference's own simulation time (s) and cost ($) of FCFS-LD on a shared trace."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ref.json"
        subprocess.run([sys.executable, str(REFERENCE), "--trace", str(TRACES / f"{name}.swf.gz"), "--vm", "LD",
                        "--no-verify", "--json", str(out)], check=True, capture_output=True)
        line = json.loads(out.read_text().splitlines()[-1])
    return float(line["wall_s"]), float(line["cost"])


def best(repeat: int, sides: list[Callable[[], tuple[float, float]]]) -> list[tuple[float, float]]:
    """Each side's best time (and its cost), the sides run alternately ``repeat`` times."""
    runs: list[list[tuple[float, float]]] = [[] for _ in sides]
    for _ in range(repeat):
        for k, side in enumerate(sides):
            runs[k].append(side())
    return [min(r) for r in runs]


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=_at_least_one, default=2)
    parser.add_argument("--only", default="trio,sdsc,lcg")
    args = parser.parse_args()
    only, rows = set(args.only.split(",")), {}
    if not only <= {"trio", "sdsc", "lcg"}:
        parser.error(f"--only takes trio, sdsc and lcg, got {args.only!r}")
    if "trio" in only:
        jobs = jobs_of("LCG-2005-1", "heterogeneous")
        (tick_s, tick_cost), (interval_s, interval_cost) = best(
            args.repeat, [lambda: replay(jobs, "coh", "tick"), lambda: replay(jobs, "coh", "interval")])
        ratio = interval_s / tick_s
        print(f"LCG-2005-1, CoH trio, {len(jobs):,} jobs: tick rule {tick_s:.2f} s (${tick_cost:,.2f}), interval rule "
              f"{interval_s:.2f} s (${interval_cost:,.2f}): {ratio:.2f}x  [target <= 1.5x]", flush=True)
        rows["trio"] = {"tick_s": tick_s, "interval_s": interval_s, "ratio": ratio}
    for key, name, target in (("sdsc", "SDSC-BLUE-2000-4.2-cln", 3.0), ("lcg", "LCG-2005-1", 1.5)):
        if key not in only:
            continue
        jobs = jobs_of(name, "constant-100")
        (ref_s, ref_cost), (ours_s, ours_cost) = best(
            args.repeat, [lambda name=name: reference(name), lambda jobs=jobs: replay(jobs, "FCFS-LD", "interval")])
        ratio = ours_s / ref_s
        print(f"{name}, FCFS-LD Constant-100, {len(jobs):,} jobs: reference {ref_s:.2f} s (${ref_cost:,.2f}), "
              f"cloudbroker {ours_s:.2f} s (${ours_cost:,.2f}): {ratio:.2f}x  [target <= {target:g}x]", flush=True)
        rows[key] = {"reference_s": ref_s, "ours_s": ours_s, "ratio": ratio, "cost_gap": ours_cost / ref_cost - 1}
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
