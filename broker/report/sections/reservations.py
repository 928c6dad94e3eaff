"""Reserved instances planned on CoH's demand, and CoH-R replayed on the plan: the savings a site would see.

The plan is ``plan-reservations``' per-type cover (1-year term, every reservation option) of the
demand the CoH section replayed (with its integer program when that ran); CoH-R then replays the
trace with the plan, and its cost is set against CoH's on demand.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.planning.demand import Demand
from broker.planning.planner import PlanReport, Prices, plan_reservations
from broker.pricing.book import load_price_book
from broker.report import figures
from broker.report.budget import Budget, estimate, limit_flag
from broker.report.model import Figure, ReportInput, Section
from broker.report.sections.coh import IPP_FLAGS, REQS, broker_jobs, cli_seeds

PLAN_FILE = "reservation_plan.json"


def run(inp: ReportInput, budget: Budget) -> Section:
    """The reservation section (needs the CoH section's demand; CoH-R's replay was planned in its share)."""
    section = Section("reservations", "Reserved instances")
    if "coh_demand" not in inp.shared:
        section.status, section.why = "skipped", "the CoH replay its plan is made on did not run"
        return section
    demand, on_demand_cost, ipp = inp.shared["coh_demand"]
    every = broker_jobs(inp)
    n = inp.shared["coh_jobs_run"]
    jobs, limit = every.head(n), limit_flag(n, len(every))
    book = load_price_book()
    prices = Prices.from_book(book, 1)
    report = plan_reservations(demand, prices, mode="per-type")
    payload = {**report.to_dict(), "demand": {"source": f"CoH replay of {inp.label}", "intervals": len(demand)}}
    section.files[PLAN_FILE] = json.dumps(payload, sort_keys=True, indent=2)
    replay = "--replay-solver cpsat " if ipp is not None else ""
    section.commands.append(("the plan", f"cloudbroker plan-reservations --trace {inp.trace_cli} --reqs {REQS} "
                                         f"--seed {inp.seed}{limit} {replay}--json"))
    section.numbers = {"plan": report.plan.to_dict(), "term_years": 1, "expected_cost_per_term": report.expected_cost,
                       "on_demand_cost_per_term": report.on_demand_cost, "predicted_savings": report.savings,
                       "predicted_savings_fraction": _fraction(report.savings, report.on_demand_cost),
                       "demand_from": "CoH + IPP" if ipp is not None else "CoH (trio)", "jobs": n}
    if ipp is not None:  # plan-reservations' default demand: CoH over the trio, without the integer program
        trio = plan_reservations(inp.shared["coh_trio_demand"][0], prices, mode="per-type")
        section.numbers["trio_plan"] = trio.plan.to_dict()
        section.commands.append(("the plan on plan-reservations' default demand (CoH without its integer program)",
                                 f"cloudbroker plan-reservations --trace {inp.trace_cli} --reqs {REQS} "
                                 f"--seed {inp.seed}{limit} --json"))
    section.tables["reservation_lines"] = pd.DataFrame(report.lines)
    section.figures.append(_figure(demand, report))
    if report.plan.counts:
        budget.start("CoH-R replayed on the plan", estimate("coh_r", n))
        _, policy_seed = cli_seeds(inp.seed)
        config = SimulationConfig(CohConfig("coh-r"), EngineConfig(), ipp, report.plan)
        s = simulate(jobs, book.catalog(), config=config, seed=policy_seed, book=book).summary
        section.numbers.update(coh_r_cost=s.cost, coh_on_demand_cost=on_demand_cost,
                               replayed_savings_fraction=_fraction(on_demand_cost - s.cost, on_demand_cost),
                               coh_r_wait_mean_s=s.wait_mean_s, upfront_amortized=s.upfront_amortized)
        solver = f" {IPP_FLAGS}" if ipp is not None else ""
        section.commands.append(("CoH-R on the plan", f"cloudbroker simulate --trace {inp.trace_cli} --reqs {REQS} "
                                                      f"--seed {inp.seed}{limit} --policy coh-r --reservations "
                                                      f"{PLAN_FILE}{solver} --json"))
    section.summary, section.recommendation = _texts(section.numbers, report)
    section.summary += " " + why_not_plan_reservations(section.numbers, ipp is not None, section.commands[0][1])
    return section


def why_not_plan_reservations(n: dict[str, Any], ipp: bool, command: str) -> str:
    """Why ``plan-reservations`` with its defaults may reserve otherwise, and the command that gives this plan."""
    if not ipp:
        return (f"The plan is made on the demand of the CoH replay above (CoH over the trio), as "
                f"plan-reservations makes it by default; the same numbers: {command}.")
    same = n.get("trio_plan") == n["plan"]
    return ("The plan is made on the demand of the replay the CoH section recommends, CoH with its integer "
            "program; plan-reservations by default replays CoH without it, whose demand "
            + ("gives the same plan here" if same else f"gives another plan ({_bought(n['trio_plan'])})")
            + f". The same numbers as this section: {command} (--replay-solver cpsat adds the integer program).")


def _bought(plan: dict[str, Any]) -> str:
    """A plan's reservations in words (``plan`` as :meth:`ReservationPlan.to_dict` gives it)."""
    return ", ".join(f"{r['count']} {r['instance_type']} {r['option'].removeprefix('reserved-')}"
                     for r in sorted(plan["reservations"], key=lambda r: (r["instance_type"], r["option"]))) or "none"


def _fraction(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def _figure(demand: Demand, report: PlanReport) -> Figure:
    fig, ax = figures.new()
    hours = np.arange(len(demand)) * demand.interval_s / 3600.0 / 24.0
    counts = dict(report.plan.counts)
    for k, name in enumerate(demand.types):
        line, = ax.plot(hours, demand.counts[:, k], lw=0.6, label=f"{name} VMs billed")
        reserved = sum(c for (vm_type, _), c in counts.items() if vm_type == name)
        if reserved:
            ax.axhline(reserved, color=line.get_color(), ls="--", lw=1.0, label=f"{name} reserved ({reserved})")
    ax.set(xlabel="day", ylabel="VMs", title="CoH's demand per hour and the reserved instances")
    ax.legend(loc="upper right", fontsize=7)
    return Figure("reservations_demand.svg", "VMs CoH bills in each hour, by type, and the instances the plan reserves "
                                             "(dashed).", figures.svg(fig))


def _texts(n: dict[str, object], report: PlanReport) -> tuple[str, str]:
    if not report.plan.counts:
        return ("The demand never holds steady enough for a reservation to pay.",
                "Stay on demand: no reservation breaks even on this demand.")
    bought = ", ".join(f"{c} {vm_type} {option.removeprefix('reserved-')}"
                       for (vm_type, option), c in sorted(report.plan.counts.items()))
    predicted = n["predicted_savings_fraction"]
    summary = f"Reserve {bought} (1-year term): predicted {predicted:.1%} below all on demand." if isinstance(
        predicted, float) else f"Reserve {bought} (1-year term)."
    replayed = n.get("replayed_savings_fraction")
    if isinstance(replayed, float):
        summary += f" Replayed with CoH-R: ${n['coh_r_cost']:,.2f} against ${n['coh_on_demand_cost']:,.2f} on demand."
        advice = (f"Buy the plan: CoH-R saves {replayed:.1%} when it is replayed on the trace." if replayed > 0 else
                  f"Do not buy it yet: replayed, CoH-R costs {-replayed:.1%} more than CoH on demand.")
        return summary, advice
    return summary, "Buy the plan if the coming year's demand looks like the trace's (not replayed: budget)."
