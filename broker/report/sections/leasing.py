"""A site with its own cluster of M nodes that leases cloud nodes: every constant cap V, and the learned policy.

The runs are ``cloudbroker leasing``'s (EASY backfilling, daily policy steps): constant caps V from 0
to M (what a site would configure), and Q-learning choosing V each day. Each is normalised as the
paper does, by the V = 0 run's total wait and the unbounded run's cloud use: ``balance = wait
improvement % - cloud cost %``. The learner is worth what it gains over the best constant cap.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from broker.hybrid.metrics import normalized
from broker.hybrid.policies import LEASING_POLICIES, run_constant, run_leasing
from broker.report import figures
from broker.report.budget import LEAST_JOBS, Budget, estimate, in_seconds, limit_flag, sliced
from broker.report.model import Figure, ReportInput, Section
from workloads.rigid import rigid_view

DAY = 86400.0
#: The caps tried, as fractions of the site's nodes M.
CAP_FRACTIONS = (0.0, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)


def caps(m: int) -> list[int]:
    """The constant caps V of the curve for an M-node site (0 and M always among them)."""
    return sorted({round(f * m) for f in CAP_FRACTIONS})


def cost(n: int, caps: int, *, learner: bool = True) -> float:
    """Estimated seconds of the section on ``n`` jobs: ``caps`` constant caps, the two references, the learner."""
    return estimate("leasing_constant", n, runs=caps + 2) + (estimate("leasing_qlearning", n) if learner else 0.0)


def run(inp: ReportInput, budget: Budget) -> Section:
    """The leasing section."""
    section = Section("leasing", "A site that leases cloud nodes")
    m = inp.nodes
    every, _ = rigid_view(inp.frame, nodes=m)
    values = caps(m)
    if not len(every):
        section.status, section.why = "not applicable", "no job of the trace fits the site's nodes"
        return section
    least = min(LEAST_JOBS, len(every))
    learner, share = cost(least, len(values)) <= budget.share_left, budget.share_left
    n = budget.slice("constant caps V" + (" and Q-learning" if learner else ""),
                     lambda k: cost(k, len(values), learner=learner), len(every), least=LEAST_JOBS)
    if n is None:
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    if not learner:
        section.skipped_parts.append(f"Q-learning: needs about {in_seconds(cost(least, len(values)))} with the caps "
                                     f"on {least:,} jobs, {in_seconds(share)} of the budget left")
    jobs = every.head(n)
    if n < len(every):
        section.skipped_parts.append(sliced(n, len(every)))
    budget.start("constant caps V", estimate("leasing_constant", n, runs=len(values) + 2))
    local, unbounded = run_constant(jobs, m, 0), run_constant(jobs, m, math.inf)
    ref = (local.summary.twt_s, unbounded.summary.cloud_cpu_s)
    command = f"cloudbroker leasing --trace {inp.trace_cli} --nodes {m}{limit_flag(n, len(every))}"
    rows = []
    for v in values:
        s = run_leasing(jobs, m, LEASING_POLICIES.get("constant")(m, v=float(v)), step=DAY).summary
        rows.append(_row(f"constant V = {v}", v, s, ref))
        section.commands.append((f"constant V = {v}", f"{command} --policy constant:{v} --json"))
    if learner:
        budget.start("Q-learning", estimate("leasing_qlearning", n))
        s = run_leasing(jobs, m, LEASING_POLICIES.get("qlearning")(m), step=DAY).summary
        rows.append(_row("Q-learning", None, s, ref))
        section.commands.append(("Q-learning", f"{command} --policy qlearning --json"))
    table = pd.DataFrame(rows).astype({"v": "Int64"})
    section.tables["leasing_policies"] = table
    section.numbers = {"nodes": m, "jobs": n, "jobs_in_trace": len(every), "twt_local_only_s": ref[0],
                       "cloud_cpu_unbounded_s": ref[1],
                       "policies": {r["policy"]: {k: v for k, v in r.items() if k != "policy"} for r in rows}}
    section.figures.append(_figure(table))
    section.summary, section.recommendation = _texts(table, m)
    return section


def _row(name: str, v: int | None, s: Any, ref: tuple[float, float]) -> dict[str, Any]:
    figures_ = normalized(s.twt_s, s.cloud_cpu_s, *ref)
    return {"policy": name, "v": v, "twt_s": s.twt_s, "cloud_cpu_s": s.cloud_cpu_s, "wait_mean_s": s.wait_mean_s,
            "twt_imp_pct": figures_.get("twt_imp_pct"), "cost_pct": figures_.get("cost_pct"),
            "balance": figures_.get("balance"), "cap_mean": sum(s.caps) / len(s.caps) if s.caps else None}


def _figure(table: pd.DataFrame) -> Figure:
    fig, ax = figures.new()
    constant = table[table["v"].notna()].astype({"v": float})
    ax.plot(constant["v"], constant["twt_imp_pct"], "o-", label="wait improvement %")
    ax.plot(constant["v"], constant["cost_pct"], "s-", label="cloud cost %")
    ax.plot(constant["v"], constant["balance"], "^-", label="balance")
    learned = table[table["v"].isna()]
    if not learned.empty and learned["balance"].notna().all():
        ax.axhline(float(learned["balance"].iloc[0]), color="tab:red", ls="--", label="Q-learning's balance")
    ax.set(xlabel="constant cap V (cloud nodes)", ylabel="%", title="leasing: the constant caps and the learner")
    ax.legend(fontsize=7)
    return Figure("leasing_caps.svg", "Wait improvement over the site alone, cloud use against leasing without a "
                                      "cap, and their difference (the balance), for each constant cap V; the "
                                      "dashed line is Q-learning's balance.", figures.svg(fig))


def _texts(table: pd.DataFrame, m: int) -> tuple[str, str]:
    defined = table[table["balance"].notna()]
    if defined.empty:
        return ("The balances are undefined: the site alone never waits, or leasing never uses a node.",
                "Do not lease: the site runs its jobs without waiting.")
    constant = defined[defined["v"].notna()]
    best = constant.iloc[int(np.argmax(constant["balance"].to_numpy(float)))]
    summary = (f"The best constant cap is V = {int(best['v'])} of M = {m}: waits {best['twt_imp_pct']:.1f} % shorter "
               f"for {best['cost_pct']:.1f} % of the cloud use of an unbounded lease (balance {best['balance']:.1f}).")
    learned = defined[defined["v"].isna()]
    if learned.empty:
        return summary, f"Lease with a constant cap of {int(best['v'])} nodes (the learner was left out: budget)."
    q = float(learned["balance"].iloc[0])
    if q > best["balance"]:
        return summary, (f"Q-learning's balance {q:.1f} beats the best constant cap by {q - best['balance']:.1f} "
                         f"points: let it choose the daily cap.")
    return summary, (f"Keep a constant cap of {int(best['v'])} nodes: Q-learning's balance {q:.1f} is "
                     f"{best['balance'] - q:.1f} points below it, so the learner loses to a fixed rule here.")
