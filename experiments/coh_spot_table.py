"""Spot in CoH on long traces (issue 36, Build item 5): on-demand CoH, with spot, CoH-R with spot, the mix.

    python experiments/coh_spot_table.py --store results/coh-spot [--traces KTH-SP2-1996-2.1-cln,...]
                                         [--markets r5,us-west-2b] [--jobs 2]

Per (trace, market), through the commands a user runs (seed 0, the trio, heterogeneous requirements,
the EC2 2013 book, 1-year term, the spot rules off, their default):

- ``plan-reservations --trace T --spot M --json``: the demand replay (on-demand CoH), the
  reserved-only plan replayed (CoH-R), the plan made with the market's expected price replayed with
  spot, and the mix (the cheaper of that and the reserved base with spot);
- ``simulate --trace T --policy coh --spot M --json``: CoH with spot;
- ``simulate --trace T --policy coh-r --reservations PLAN --spot M --json``: CoH-R on the
  reserved-only plan, with spot.

Every command's JSON is stored under ``--store`` as one file per cell (an interrupted run resumes);
the table (markdown) is printed from the store.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from joblib import Parallel, delayed

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SPOT = SHARED / "spot" / "skypilot-spot-traces"
MARKETS = {"r5": SPOT / "preemption" / "1-node" / "aws-04-19-2023" / "us-east-1b_intel_64.json",
           "us-west-2b": SPOT / "availability" / "1-node" / "aws-02-15-2023" / "us-west-2b_v100_1.json"}
TRACES = ("KTH-SP2-1996-2.1-cln", "SDSC-BLUE-2000-4.2-cln", "LCG-2005-1")
CLI = [sys.executable, "-c", "from broker.cli import main; main()"]


def run_json(args: list[str], out: Path) -> dict:
    """The JSON of one command, read from ``out`` if an earlier run stored it."""
    if not out.exists():
        done = subprocess.run([*CLI, *args, "--json"], check=True, capture_output=True, text=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(done.stdout)
        tmp.replace(out)
    return json.loads(out.read_text())


def cell(store: Path, trace: str, market: str) -> None:
    """Every command of one (trace, market)."""
    t, m = str(SHARED / "traces" / f"{trace}.swf.gz"), str(MARKETS[market])
    plan = run_json(["plan-reservations", "--trace", t, "--spot", m], store / f"{trace}.{market}.plan.json")
    run_json(["simulate", "--trace", t, "--policy", "coh", "--spot", m], store / f"{trace}.{market}.coh.json")
    reserved = store / f"{trace}.{market}.reserved-plan.json"
    if not reserved.exists():
        reserved.write_text(json.dumps(plan["reserved_only"]["plan"]))
    run_json(["simulate", "--trace", t, "--policy", "coh-r", "--reservations", str(reserved), "--spot", m],
             store / f"{trace}.{market}.coh-r.json")


def rows(store: Path, trace: str, market: str) -> list[str]:
    """The table's rows of one (trace, market)."""
    plan = json.loads((store / f"{trace}.{market}.plan.json").read_text())
    coh = json.loads((store / f"{trace}.{market}.coh.json").read_text())
    coh_r = json.loads((store / f"{trace}.{market}.coh-r.json").read_text())
    lb = coh["lower_bound"]
    replays = plan["replays"]
    runs = [("on-demand CoH", replays["on_demand"]), ("CoH-R (reserved-only plan)", replays["reserved_only"]),
            ("CoH with spot", _of(coh)), ("CoH-R with spot (reserved base)", _of(coh_r)),
            ("market-priced plan with spot", replays["market_priced"]), (f"the planner's mix ({plan['mix_chosen']})",
                                                                        replays["mix"])]
    return [f"| {trace} | {market} | {name} | {r['cost']:,.2f} | {r['cost'] / lb:.3f} | "
            f"{r['cost'] / replays['on_demand']['cost']:.3f} | {r['cost_by_option'].get('spot', 0.0):,.2f} | "
            f"{r['preemptions']:,} | {r['restarts']:,} | {r['lost_s'] / 3600:,.1f} | {r['wait_mean_s']:,.1f} |"
            for name, r in runs]


def _of(result: dict) -> dict:
    """A simulate JSON's figures in the planner replays' keys."""
    s = result
    return {"cost": s["cost"], "cost_by_option": s["cost_by_option"], "preemptions": s.get("preemptions", 0),
            "restarts": s.get("restarts", 0), "lost_s": s.get("lost_s", 0.0), "wait_mean_s": s["wait_mean_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--traces", default=",".join(TRACES))
    parser.add_argument("--markets", default=",".join(MARKETS))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    traces, markets = args.traces.split(","), args.markets.split(",")
    unknown = sorted(set(markets) - set(MARKETS))
    if unknown:
        parser.error(f"unknown market(s) {', '.join(unknown)}; known: {', '.join(MARKETS)}")
    args.store.mkdir(parents=True, exist_ok=True)
    Parallel(n_jobs=args.jobs)(delayed(cell)(args.store, t, m) for t in traces for m in markets)
    print("| trace | market | run | cost ($) | / LB | / on-demand | spot part ($) | preemptions | restarts "
          "| lost (h) | mean wait (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for t in traces:
        for m in markets:
            print("\n".join(rows(args.store, t, m)))


if __name__ == "__main__":
    main()
