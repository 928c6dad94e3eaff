"""CoH on on-demand instances against its heuristics and the lower bound, with its integer program if the budget allows.

Each run is the one ``cloudbroker simulate`` makes with the same trace and seed (the same job view
and policy seed, :func:`cli_seeds`), so every number comes with the command that reproduces it.
The CoH replay's demand (VMs billed per hour and type) is left for the reservation section, and the
replay itself for the spot section, which sets it against the same replay with spot VMs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from broker.coh.config import CohConfig, IppConfig, SimulationConfig
from broker.coh.metrics import RunResult
from broker.coh.simulate import simulate
from broker.planning.demand import replay_demand
from broker.pricing.book import load_price_book
from broker.report import figures
from broker.report.budget import LEAST_JOBS, Budget, estimate, in_seconds, limit_flag, sliced
from broker.report.model import Figure, ReportInput, Section
from broker.report.units import dollars, hours
from heuristics.registry import PAPER_TRIO
from workloads.jobs import JobTable, job_view

#: The requirement model of the CoH runs (the paper's Heterogeneous VM requirements).
REQS = "heterogeneous"
#: The integer program's limit in the report: one deterministic second, as ``plan-reservations --replay-solver``.
IPP = IppConfig(solver="cpsat", time_limit=1.0, deterministic=True)
IPP_FLAGS = "--solver cpsat --time-limit 1 --deterministic"


def cli_seeds(seed: int) -> tuple[np.random.SeedSequence, int]:
    """The requirement seed and the policy seed ``simulate --seed`` and ``plan-reservations --seed`` derive."""
    workload_seed, policy_seed = np.random.SeedSequence(seed).spawn(2)
    _, requirement_seed = workload_seed.spawn(2)
    return requirement_seed, int(policy_seed.generate_state(1)[0])


def broker_jobs(inp: ReportInput) -> JobTable:
    """The broker's job view of the trace, as ``simulate --trace ... --seed`` builds it (cached on the input)."""
    if "coh_jobs" not in inp.shared:
        requirement_seed, _ = cli_seeds(inp.seed)
        inp.shared["coh_jobs"], _ = job_view(inp.frame, reqs=REQS, seed=requirement_seed, origin=inp.origin,
                                             source=inp.label)
    jobs: JobTable = inp.shared["coh_jobs"]
    return jobs


def cost(m: int, *, ipp: bool = True, spot: bool = False) -> float:
    """Estimated seconds of the section's parts on ``m`` jobs, with CoH-R's replay of the reservation section.

    With ``spot`` also CoH's replay with spot VMs of the spot section.
    """
    return (estimate("coh_trio", m) + (estimate("coh_ipp", m) if ipp else 0.0)
            + estimate("coh_heuristic", m, runs=len(PAPER_TRIO)) + estimate("coh_r", m)
            + (estimate("coh_spot", m) if spot else 0.0))


def run(inp: ReportInput, budget: Budget) -> Section:
    """The CoH section: each heuristic of the trio alone, CoH over them, and CoH with its integer program.

    Its share of the budget also holds CoH-R's replay in the reservation section and, with a spot market,
    CoH's replay with spot VMs in the spot section, on the same jobs.
    """
    section = Section("coh", "CoH on on-demand instances")
    every = broker_jobs(inp)
    if not len(every):
        section.status, section.why = "not applicable", "no job of the trace is left to run"
        return section
    least, spot = min(LEAST_JOBS, len(every)), inp.spot is not None
    with_ipp, share = cost(least, spot=spot) <= budget.share_left, budget.share_left
    n = budget.slice("CoH on on-demand instances", lambda m: cost(m, ipp=with_ipp, spot=spot), len(every),
                     least=LEAST_JOBS)
    if n is None:
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    if not with_ipp:
        section.skipped_parts.append(f"CoH's integer program: needs about {in_seconds(cost(least, spot=spot))} with "
                                     f"the rest on "
                                     f"{least:,} jobs, {in_seconds(share)} of the budget left")
    jobs = every.head(n)
    inp.shared["coh_jobs_run"] = n
    if n < len(every):
        section.skipped_parts.append(sliced(n, len(every)))
    _, policy_seed = cli_seeds(inp.seed)
    catalog = load_price_book().catalog()
    rows: list[dict[str, Any]] = []
    simulate_cmd = (f"cloudbroker simulate --trace {inp.trace_cli} --reqs {REQS} --seed {inp.seed}"
                    f"{limit_flag(n, len(every))} --json")
    budget.start("CoH over the trio", estimate("coh_trio", n))
    demand, result = replay_demand(jobs, catalog, config=SimulationConfig(CohConfig("coh")), seed=policy_seed,
                                   source=inp.label)
    rows.append(_row("CoH (trio)", result))
    inp.shared["coh_demand"] = inp.shared["coh_trio_demand"] = (demand, result.summary.cost, None)
    inp.shared["coh_trio_result"] = result
    section.commands.append(("CoH (trio)", f"{simulate_cmd} --policy coh"))
    if with_ipp:
        budget.start("CoH with its integer program (CP-SAT)", estimate("coh_ipp", n))
        demand, result = replay_demand(jobs, catalog, config=SimulationConfig(CohConfig("coh"), ipp=IPP),
                                       seed=policy_seed, source=inp.label)
        rows.append(_row("CoH + IPP", result))
        inp.shared["coh_demand"] = (demand, result.summary.cost, IPP)
        section.commands.append(("CoH + IPP", f"{simulate_cmd} --policy coh {IPP_FLAGS}"))
    for name in PAPER_TRIO:
        budget.start(f"{name} alone", estimate("coh_heuristic", n))
        rows.append(_row(name, simulate(jobs, catalog, config=SimulationConfig(CohConfig(name)), seed=policy_seed)))
        section.commands.append((name, f"{simulate_cmd} --policy {name}"))
    table = pd.DataFrame(rows)
    section.tables["coh_policies"] = table
    section.numbers = {"jobs": n, "jobs_in_trace": len(every), "requirements": REQS,
                       "policies": {r["policy"]: _numbers(r) for r in rows}}
    section.figures.append(_figure(table))
    section.summary, section.recommendation = _texts(table)
    return section


def _row(name: str, result: RunResult) -> dict[str, Any]:
    s = result.summary
    return {"policy": name, "cost": s.cost, "lower_bound": s.lower_bound, "cost_over_lb": s.cost_over_lb,
            "wait_mean_s": s.wait_mean_s, "wait_p95_s": s.wait_p95_s, "utilization": s.utilization,
            "instances": s.instances, "instance_hours": s.instance_hours}


def _numbers(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "policy"}


def _figure(table: pd.DataFrame) -> Figure:
    fig, ax = figures.new()
    order = table.sort_values("cost", ascending=False)
    bars = ax.barh(order["policy"], order["cost_over_lb"], color=["tab:blue" if p.startswith("CoH") else "tab:gray"
                                                                  for p in order["policy"]])
    ax.axvline(1.0, color="k", lw=0.8, ls="--")
    for bar, cost in zip(bars, order["cost"], strict=True):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f"  ${cost:,.2f}", va="center", fontsize=8)
    ax.set(xlabel="cost / lower bound (1 = the lower bound)", title="cost of each policy on on-demand instances")
    ax.set_xlim(0, float(order["cost_over_lb"].max()) * 1.25)
    caption = ("Cost of each policy over its lower bound LB (every job on a perfectly packed VM, no waste); the "
               "figure at each bar's end is the policy's cost.")
    return Figure("coh_costs.svg", caption, figures.svg(fig))


def _texts(table: pd.DataFrame) -> tuple[str, str]:
    best = table.iloc[int(np.argmin(table["cost"].to_numpy(float)))]
    heuristics = table[~table["policy"].str.startswith("CoH")]
    summary = (f"{best['policy']} costs {dollars(best['cost'])}, {best['cost_over_lb']:.3f} times the lower bound "
               f"{dollars(best['lower_bound'])}; jobs wait {hours(best['wait_mean_s'])} on average "
               f"({hours(best['wait_p95_s'])} at the 95th percentile) for a VM to boot.")
    if heuristics.empty:
        return summary, f"Run {best['policy']} (the heuristics alone were left out to stay in the budget)."
    single = heuristics.iloc[int(np.argmin(heuristics["cost"].to_numpy(float)))]
    saving = 1.0 - best["cost"] / single["cost"]
    if best["policy"] == single["policy"]:
        return summary, f"Run {best['policy']}: the portfolio does not beat it here."
    return summary, (f"Run {best['policy']}: {saving:.1%} below the best single heuristic, {single['policy']} "
                     f"(${single['cost']:,.2f}).")
