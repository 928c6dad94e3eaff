"""CoH on on-demand instances against its heuristics and the lower bound, with its integer program if the budget allows.

Each run is the one ``cloudbroker simulate`` makes with the same trace and seed (the same job view
and policy seed, :func:`cli_seeds`), so every number comes with the command that reproduces it.
The CoH replay's demand (VMs billed per hour and type) is left for the reservation section.
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
from broker.report.budget import Budget, estimate
from broker.report.model import Figure, ReportInput, Section
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


def run(inp: ReportInput, budget: Budget) -> Section:
    """The CoH section: each heuristic of the trio alone, CoH over them, and CoH with its integer program."""
    section = Section("coh", "CoH on on-demand instances")
    jobs = broker_jobs(inp)
    n = len(jobs)
    if not budget.allow("CoH over the trio", estimate("coh_trio", n)):
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    _, policy_seed = cli_seeds(inp.seed)
    catalog = load_price_book().catalog()
    rows: list[dict[str, Any]] = []
    simulate_cmd = f"cloudbroker simulate --trace {inp.trace_arg} --reqs {REQS} --seed {inp.seed} --json"
    demand, result = replay_demand(jobs, catalog, config=SimulationConfig(CohConfig("coh")), seed=policy_seed,
                                   source=inp.label)
    rows.append(_row("CoH (trio)", result))
    inp.shared["coh_demand"] = (demand, result.summary.cost, None)
    section.commands.append(("CoH (trio)", f"{simulate_cmd} --policy coh"))
    if budget.allow("CoH with its integer program (CP-SAT)", estimate("coh_ipp", n)):
        demand, result = replay_demand(jobs, catalog, config=SimulationConfig(CohConfig("coh"), ipp=IPP),
                                       seed=policy_seed, source=inp.label)
        rows.append(_row("CoH + IPP", result))
        inp.shared["coh_demand"] = (demand, result.summary.cost, IPP)
        section.commands.append(("CoH + IPP", f"{simulate_cmd} --policy coh {IPP_FLAGS}"))
    else:
        section.skipped_parts.append(budget.skipped[-1])
    for name in PAPER_TRIO:
        if not budget.allow(f"{name} alone", estimate("coh_heuristic", n)):
            section.skipped_parts.append(budget.skipped[-1])
            continue
        rows.append(_row(name, simulate(jobs, catalog, config=SimulationConfig(CohConfig(name)), seed=policy_seed)))
        section.commands.append((name, f"{simulate_cmd} --policy {name}"))
    table = pd.DataFrame(rows)
    section.tables["coh_policies"] = table
    section.numbers = {"jobs": n, "requirements": REQS, "policies": {r["policy"]: _numbers(r) for r in rows}}
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
    summary = (f"{best['policy']} costs ${best['cost']:,.2f}, {best['cost_over_lb']:.3f} times the lower bound "
               f"${best['lower_bound']:,.2f}; jobs wait {best['wait_mean_s']:.0f} s on average "
               f"({best['wait_p95_s']:.0f} s at the 95th percentile) for a VM to boot.")
    if heuristics.empty:
        return summary, f"Run {best['policy']} (the heuristics alone were left out to stay in the budget)."
    single = heuristics.iloc[int(np.argmin(heuristics["cost"].to_numpy(float)))]
    saving = 1.0 - best["cost"] / single["cost"]
    if best["policy"] == single["policy"]:
        return summary, f"Run {best['policy']}: the portfolio does not beat it here."
    return summary, (f"Run {best['policy']}: {saving:.1%} below the best single heuristic, {single['policy']} "
                     f"(${single['cost']:,.2f}).")
