"""A pool of cores for the trace's jobs: the site's fixed pool, the threshold autoscaler and SARSA sizing it.

``cloudbroker elastic``'s runs on the trace's jobs, each processor a one-core job (``--parallel
expand``): a rigid pool of the site's M cores run first come first served, an elastic pool sized
by the threshold autoscaler, and one sized by SARSA with an echo state network, with the paper's
reward as written and with the wait reward (issue 34: each decision charged the W its step costs
the waiting jobs and the idle cores it holds; the pool without a ceiling). The figures are
the responsiveness of interactive jobs (run time under 15 minutes): their mean ``W`` =
run / (run + wait) (1 for a job that starts at once; higher is better) and the share that wait over
two minutes, beside the cores paid for. The recommendation is the run with the highest ``W``.
A long trace is cut to its first jobs to stay in the budget (``--limit-jobs``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from broker.elastic.episode import Reward
from broker.elastic.simulate import run_elastic
from broker.elastic.world import PoolConfig
from broker.report import figures
from broker.report.budget import Budget, estimate
from broker.report.model import Figure, ReportInput, Section
from workloads.cores import cores_view

#: The most core-jobs the pool is run on. SARSA's cost grows faster than the jobs (its queue grows on a busy site:
#: 9 s for KTH-SP2's first 20,000 core-jobs, 31 s for 50,000), so no run is longer than 50,000.
MOST = 50_000
#: The fewest: the figures leave out 500 at each end.
LEAST = 5_000
#: (mode, policy, reward) of each run; the label is "policy (mode)", "sarsa-wait (elastic)" for the wait reward.
RUNS: tuple[tuple[str, str, Reward], ...] = (
    ("rigid", "fcfs", "paper"), ("elastic", "threshold", "paper"), ("elastic", "sarsa", "paper"),
    ("elastic", "sarsa", "wait"))
#: The runs without the wait learner (today's section).
PAPER_RUNS = RUNS[:3]
SHOWN = ("w_interactive_mean", "share_interactive_wait_over_120s", "wait_interactive_mean_s", "w_batch_mean",
         "utilization", "mean_cores", "core_hours")


def _cost(n: int, runs: tuple[tuple[str, str, Reward], ...] = RUNS) -> float:
    learners = sum(policy == "sarsa" for _, policy, _ in runs)
    return estimate("elastic_rule", n, runs=len(runs) - learners) + estimate("elastic_sarsa", n, runs=learners)


def _fitting(runs: tuple[tuple[str, str, Reward], ...], budget: Budget,
             least: int) -> tuple[tuple[tuple[str, str, Reward], ...], bool]:
    """``runs``, or without the wait learner when even the smallest slice of all of them does not fit.

    The section then runs as before issue 34 rather than not at all; the second value says whether
    the wait learner was left out.
    """
    if _cost(least, runs) <= budget.share_left:
        return runs, False
    kept = tuple(r for r in runs if r[2] != "wait")
    return kept, len(kept) < len(runs)


def label(mode: str, policy: str, reward: str) -> str:
    """How a run is named: ``policy (mode)``, ``sarsa-wait (elastic)`` for the wait reward."""
    return f"{policy}{'-wait' if reward == 'wait' else ''} ({mode})"


def run(inp: ReportInput, budget: Budget, runs: tuple[tuple[str, str, Reward], ...] = RUNS) -> Section:
    """The elastic section (``runs``: which of :data:`RUNS`)."""
    section = Section("elastic", "An elastic pool of cores")
    every, _ = cores_view(inp.frame, parallel="expand", origin=float(inp.origin))
    if len(every) < LEAST:
        section.status, section.why = "not applicable", f"{len(every):,} core-jobs, fewer than {LEAST:,}"
        return section
    runs, dropped = _fitting(runs, budget, min(len(every), LEAST))
    if dropped:
        section.skipped_parts.append(f"SARSA on the wait reward: its run does not fit the budget left "
                                     f"({budget.share_left:.0f} s) beside the others'")
    n = budget.slice("the elastic pool", lambda k: _cost(k, runs), min(len(every), MOST), least=LEAST)
    if n is None:
        section.status, section.why = "skipped", budget.skipped[-1]
        return section
    jobs = every.head(n)
    m = inp.nodes
    trim = 500  # jobs left out of the figures at each end; every run holds at least 5,000
    floor = max(1, min(30, m // 4))
    rows: list[dict[str, Any]] = []
    for mode, policy, reward in runs:
        name = label(mode, policy, reward)
        budget.start(name, estimate("elastic_sarsa" if policy == "sarsa" else "elastic_rule", n))
        wait = reward == "wait"
        pool = PoolConfig(m, elastic=mode == "elastic", min_cores=floor, no_ceiling=wait and mode == "elastic")
        s = run_elastic(jobs, pool, policy, seed=inp.seed, trim=trim, reward=reward).summary.to_dict()
        rows.append({"run": name, **{k: s.get(k) for k in SHOWN}})
        extra = " --reward wait --max-cores none" if wait else ""
        section.commands.append((name, f"cloudbroker elastic --trace {inp.trace_cli} --mode {mode} "
                                       f"--policy {policy} --cores {m} --min-cores {floor} "
                                       f"--limit-jobs {n} --trim {trim} --seed {inp.seed}{extra} --json"))
    table = pd.DataFrame(rows)
    section.tables["elastic_runs"] = table
    section.numbers = {"core_jobs": n, "core_jobs_in_trace": len(every), "cores": m, "min_cores": floor,
                       "runs": {r["run"]: {k: v for k, v in r.items() if k != "run"} for r in rows}}
    if n < len(every):
        why = f"at most {MOST:,}: SARSA's cost grows faster than the jobs" if n == MOST else "the budget"
        section.skipped_parts.append(f"the elastic pool ran the first {n:,} of {len(every):,} core-jobs ({why})")
    section.figures.append(_figure(table))
    section.summary, section.recommendation = _texts(table)
    return section


#: How the page names each run.
NAMES = {"fcfs (rigid)": "the site's fixed pool", "threshold (elastic)": "the threshold autoscaler",
         "sarsa (elastic)": "SARSA", "sarsa-wait (elastic)": "SARSA on the wait reward"}


def _figure(table: pd.DataFrame) -> Figure:
    fig, (resp, cost) = figures.new(2)
    resp.bar(table["run"], table["w_interactive_mean"].astype(float), color="tab:blue")
    resp.set(ylabel="mean W of interactive jobs", title="responsiveness (higher is better)")
    cost.bar(table["run"], table["core_hours"].astype(float), color="tab:gray")
    cost.set(ylabel="core-hours paid", title="cores paid for (lower is better)")
    for ax in (resp, cost):
        ax.tick_params(axis="x", labelsize=7, rotation=15)
    return Figure("elastic_runs.svg", "Interactive jobs' mean responsiveness W = run / (run + wait) (1: no wait) and "
                                      "the core-hours each pool paid for.", figures.svg(fig))


def _against_rule(w: pd.Series, hours: pd.Series, run: str, name: str) -> str:
    """``name`` against the threshold autoscaler: the W it gains or loses and the core-hours it pays."""
    gain, rule_h = w[run] - w["threshold (elastic)"], hours["threshold (elastic)"]
    more = hours[run] / rule_h - 1 if rule_h else 0.0
    paid = f"{abs(more):.0%} {'more' if more > 0 else 'fewer'} core-hours" if more else "the same core-hours"
    verb = "gains" if gain > 0 else "loses" if gain < 0 else "is level"
    return f"{name} {verb} {abs(gain):.3f} in W for {paid}" if gain else f"{name} is level in W for {paid}"


def best_run(table: pd.DataFrame) -> str:
    """The run with the highest mean ``W`` of interactive jobs; a tie goes to the fewer core-hours, then the first."""
    w = table["w_interactive_mean"].to_numpy(float)
    hours = table["core_hours"].to_numpy(float)
    return str(table["run"].iloc[int(np.lexsort((hours, -w))[0])])


def _texts(table: pd.DataFrame) -> tuple[str, str]:
    by = table.set_index("run")
    summary = "; ".join(f"{NAMES.get(str(run), run)}: W {row['w_interactive_mean']:.3f}, "
                        f"{row['core_hours']:,.0f} core-hours" for run, row in by.iterrows()
                        if not pd.isna(row["w_interactive_mean"]))
    if pd.isna(by["w_interactive_mean"].to_numpy(dtype=float, na_value=np.nan)).any():
        return summary + ".", "No interactive job was counted: the responsiveness cannot be compared."
    best = best_run(table)
    w, paid_h = by["w_interactive_mean"].astype(float), by["core_hours"].astype(float)
    gain = w["sarsa (elastic)"] - w["threshold (elastic)"]
    rule_h = paid_h["threshold (elastic)"]
    hours = paid_h["sarsa (elastic)"] / rule_h - 1 if rule_h else 0.0
    paid = f"{abs(hours):.0%} {'more' if hours > 0 else 'fewer'} core-hours" if hours else "the same core-hours"
    learner = (f"SARSA {'gains' if gain > 0 else 'loses'} {abs(gain):.3f} in W against the threshold autoscaler for "
               f"{paid}" if gain else f"SARSA is as responsive as the threshold autoscaler for {paid}")
    if "sarsa-wait (elastic)" in by.index:
        learner += "; " + _against_rule(w, paid_h, "sarsa-wait (elastic)", "SARSA on the wait reward")
    row = by.loc[best]
    advice = (f"Run {NAMES[best]}: the most responsive pool (W {row['w_interactive_mean']:.3f}, "
              f"{row['core_hours']:,.0f} core-hours); {learner}.")
    if best == "fcfs (rigid)":
        advice += " An elastic pool saves core-hours here, not waits."
    return summary + ".", advice
