"""CoH against each of its members run alone over the same jobs (LCG slices, the generated workload).

    python experiments/coh_members.py [--jobs 20000] [--work 2] [--seeds 1]

Members: FCFS-SM, FCFS-LD, FCFS-CFH, and the IPP alone (CP-SAT, deterministic work limit, FCFS-SM
only as fallback when it has no plan). Portfolios: CoH over the trio, CoH over the trio + IPP, with
the paper's scoring or with the units already paid counted as sunk (``paid_scoring``), and with
ties between the IPP's and the best heuristic's plan going to either.
Prints one Markdown row per (workload, policy) with cost, cost/LB and the IPP's win share.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from joblib import Parallel, delayed

from broker import CohConfig, IppConfig, SimulationConfig, load_price_book, simulate
from workloads.cache import load_trace
from workloads.jobs import JobTable, job_view
from workloads.lublin import default_workload

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"


def workloads(n_jobs: int, seed: int) -> dict[str, JobTable]:
    swf = load_trace(TRACES / "LCG-2005-1.swf.gz")
    lcg, _ = job_view(swf.frame, reqs="heterogeneous", seed=seed, origin=swf.header.unix_start_time or 0)
    lcg_c, _ = job_view(swf.frame, reqs="constant-10", seed=seed, origin=swf.header.unix_start_time or 0)
    mid = len(lcg) // 2
    gen, _ = job_view(default_workload(seed=seed, n_jobs=n_jobs), reqs="heterogeneous", seed=seed)
    middle = JobTable(job_id=lcg.job_id[mid:mid + n_jobs], arrival=lcg.arrival[mid:mid + n_jobs],
                      runtime=lcg.runtime[mid:mid + n_jobs], r=lcg.r[mid:mid + n_jobs], user=lcg.user[mid:mid + n_jobs],
                      origin=lcg.origin, source="LCG middle")
    return {"LCG first (het.)": lcg.head(n_jobs), "LCG middle (het.)": middle,
            "LCG first (const-10)": lcg_c.head(n_jobs), "Lublin (het.)": gen}


def policies(work: float) -> dict[str, SimulationConfig]:
    ipp = IppConfig("cpsat", time_limit=work, deterministic=True)
    return {
        "FCFS-SM": SimulationConfig(CohConfig("FCFS-SM")),
        "FCFS-LD": SimulationConfig(CohConfig("FCFS-LD")),
        "FCFS-CFH": SimulationConfig(CohConfig("FCFS-CFH")),
        "IPP alone": SimulationConfig(CohConfig("ipp"), ipp=ipp),
        "CoH trio, paper scoring": SimulationConfig(CohConfig("coh", paid_scoring=False)),
        "CoH trio, paid scoring": SimulationConfig(CohConfig("coh")),
        "CoH trio + IPP, paper scoring, ties to heuristics": SimulationConfig(
            CohConfig("coh", paid_scoring=False, ipp_wins_ties=False), ipp=ipp),
        "CoH trio + IPP, paid scoring, ties to heuristics": SimulationConfig(CohConfig("coh", ipp_wins_ties=False),
                                                                             ipp=ipp),
        "CoH trio + IPP, paid scoring, ties to IPP (default)": SimulationConfig(CohConfig("coh"), ipp=ipp),
    }


def run(jobs: JobTable, config: SimulationConfig, seed: int) -> dict:
    s = simulate(jobs, load_price_book().catalog(), config=config, seed=seed).summary
    return {"cost": s.cost, "cost_over_lb": s.cost_over_lb, "utilization": s.utilization,
            "ipp_wins": s.policy_stats.get("ipp_wins"), "ticks": s.policy_stats.get("portfolio_ticks")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--work", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib workers")
    args = parser.parse_args()
    loads, pols = workloads(args.jobs, args.seed), policies(args.work)
    cells = [(w, p) for w in loads for p in pols]
    results = Parallel(n_jobs=args.n_jobs)(delayed(run)(loads[w], pols[p], args.seed) for w, p in cells)
    print("| workload | policy | cost ($) | cost / LB | utilization | IPP wins / ticks |")
    print("|---|---|---|---|---|---|")
    for (w, p), r in zip(cells, results, strict=True):
        wins = "" if r["ipp_wins"] is None else f"{r['ipp_wins']:,} / {r['ticks']:,}"
        print(f"| {w} | {p} | {r['cost']:,.2f} | {r['cost_over_lb']:.3f} | {r['utilization']:.1%} | {wins} |")


if __name__ == "__main__":
    main()
