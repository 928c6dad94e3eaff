"""Spot instances: what spot VMs would save on the trace, at what lost work and wait (only with ``--spot FILE``).

CoH over the trio replays the trace's jobs twice: on demand only (the CoH section's replay, not
run again) and with spot VMs from one market timeline (:mod:`broker.coh.spot`): a VM no
reservation covers is spot while the market is open; a close preempts it after its notice, and its
jobs restart (from scratch, or from their last checkpoint). Both are the runs ``cloudbroker simulate``
makes without and with ``--spot`` on the same jobs and seed, so every number comes with its command.
The replay with spot was planned in the CoH section's share of the budget.
"""

from __future__ import annotations

import shlex
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from broker.coh.config import CohConfig, SimulationConfig
from broker.coh.metrics import RunResult
from broker.coh.simulate import simulate
from broker.pricing.book import load_price_book
from broker.report import figures
from broker.report.budget import Budget, estimate, limit_flag, sliced
from broker.report.model import Figure, ReportInput, Section, SpotSetting
from broker.report.sections.coh import REQS, broker_jobs, cli_seeds
from broker.report.units import HOUR, dollars, hours

DAY = 24 * HOUR
WEEK = 7 * DAY
#: The two runs' names in the table.
ON_DEMAND, WITH_SPOT = "CoH (trio), on demand only", "CoH (trio) with spot"


def run(inp: ReportInput, budget: Budget) -> Section:
    """The spot section (needs the CoH section's replay; the replay with spot was planned in its share)."""
    section = Section("spot", "Spot instances")
    if inp.spot is None:
        section.status, section.why = "not applicable", "no spot market: give one with --spot FILE"
        return section
    if "coh_trio_result" not in inp.shared:
        section.status, section.why = "skipped", "the CoH replay it is set against did not run"
        return section
    every = broker_jobs(inp)
    n = inp.shared["coh_jobs_run"]
    if n < len(every):
        section.skipped_parts.append(sliced(n, len(every)))
    without: RunResult = inp.shared["coh_trio_result"]
    budget.start("CoH over the trio with spot", estimate("coh_spot", n))
    _, policy_seed = cli_seeds(inp.seed)
    book = load_price_book()
    spotted = simulate(every.head(n), book.catalog(), config=SimulationConfig(CohConfig("coh")), seed=policy_seed,
                       book=book, spot=inp.spot.config)
    rows = [row(ON_DEMAND, without), row(WITH_SPOT, spotted)]
    section.tables["spot_runs"] = pd.DataFrame(rows)
    section.numbers = numbers(rows, inp.spot, n, len(every))
    _, cost_, ipp = inp.shared.get("coh_demand", (None, None, None))
    section.numbers["coh_ipp_on_demand_cost"] = cost_ if ipp is not None else None  # not replayed with spot
    command = (f"cloudbroker simulate --trace {inp.trace_cli} --reqs {REQS} --seed {inp.seed}"
               f"{limit_flag(n, len(every))} --json --policy coh")
    section.commands += [(ON_DEMAND, command),
                         (WITH_SPOT, f"{command} --spot {shlex.quote(inp.spot_arg)}{inp.spot.flags}")]
    section.figures.append(_figure(without.instances, spotted.instances))
    section.summary, section.recommendation = _texts(section.numbers)
    return section


def row(name: str, result: RunResult) -> dict[str, Any]:
    """A run's row: cost and its on-demand and spot parts, VM-hours, waits, preemptions and what they cost the jobs."""
    s, jobs = result.summary, result.jobs
    restarts = jobs["restarts"] if "restarts" in jobs else pd.Series(0, index=jobs.index)
    return {"run": name, "cost": s.cost, "on_demand_cost": s.cost_by_option.get("on-demand", 0.0),
            "spot_cost": s.cost_by_option.get("spot", 0.0), "instance_hours": s.instance_hours,
            "wait_mean_s": s.wait_mean_s, "wait_p95_s": s.wait_p95_s,
            "preemptions": getattr(s, "preemptions", 0), "restarts": getattr(s, "restarts", 0),
            "lost_s": getattr(s, "lost_s", 0.0), "jobs_restarted": int((restarts > 0).sum()),
            "jobs_restarted_pct": 100.0 * float((restarts > 0).mean()) if len(jobs) else 0.0,
            "timeline_repeats": getattr(s, "timeline_repeats", 0)}


def numbers(rows: list[dict[str, Any]], spot: SpotSetting, n: int, total: int) -> dict[str, Any]:
    """The section's figures: the market and its settings, both runs, the saving ($ and its fraction)."""
    without, spotted = ({k: v for k, v in r.items() if k != "run"} for r in rows)
    saving = without["cost"] - spotted["cost"]
    offer = spot.config.offer
    market = {"file": spot.file, **spot.config.to_dict(), "options": spot.flags.strip(),
              "spot_price_ratio_min": float(np.min(offer.ratios)), "spot_price_ratio_max": float(np.max(offer.ratios))}
    return {"jobs": n, "jobs_in_trace": total, "requirements": REQS, "market": market, "on_demand_only": without,
            "with_spot": spotted, "saving": saving,
            "saving_fraction": saving / without["cost"] if without["cost"] > 0 else None}


def accrued(start: ArrayLike, end: ArrayLike, amount: ArrayLike, at: ArrayLike) -> np.ndarray:
    """The sum of the amounts accrued by each time of ``at``, each spread evenly over ``[start, end)``.

    An item with ``end <= start`` accrues whole at ``start``. The sum over items of
    ``amount * clip((t - start) / (end - start), 0, 1)`` by sorted prefix sums (no items-by-times
    matrix): ``sum rate (t - p)`` over the points ``p <= t`` is ``t W - S``, ``W`` and ``S`` the
    prefix sums of ``rate`` and ``rate p``.
    """
    begin, finish, value, t = (np.asarray(x, dtype=float) for x in (start, end, amount, at))
    spread = finish > begin
    rate = np.where(spread, value / np.where(spread, finish - begin, 1.0), 0.0)

    def ramps(points: np.ndarray, weights: np.ndarray, slope: bool) -> np.ndarray:
        order = np.argsort(points, kind="stable")
        p, w = points[order], weights[order]
        k = np.searchsorted(p, t, side="right")
        total = np.concatenate(([0.0], np.cumsum(w)))[k]
        if not slope:
            return total
        return t * total - np.concatenate(([0.0], np.cumsum(w * p)))[k]

    whole = np.where(spread, 0.0, value)
    return ramps(begin, rate, True) - ramps(finish, rate, True) + ramps(begin, whole, False)


def _figure(without: pd.DataFrame, spotted: pd.DataFrame) -> Figure:
    fig, (left, right) = figures.new(2)
    both = pd.concat([without, spotted])
    first, last = float(both["hired_at"].min()), float(both["released_at"].max())
    grid = np.linspace(first, last, 600)
    for frame, label, style in ((without, "on demand only", "-"), (spotted, "with spot", "-"),
                                (spotted[spotted["option"] != "spot"], "with spot: its on-demand VMs", "--")):
        cost = accrued(frame["hired_at"], frame["released_at"], frame["cost"], grid)
        left.plot(grid / DAY, cost, ls=style, lw=1.2 if style == "-" else 1.0,
                  color="tab:orange" if label.startswith("with spot") else "tab:blue", label=label)
    left.set(xlabel="day", ylabel="$", title="cost accrued by each day")
    left.legend(loc="upper left", fontsize=7)
    weeks = np.arange(np.floor(first / WEEK), np.ceil(last / WEEK) + 1) * WEEK
    bottom = np.zeros(len(weeks) - 1)
    for option, color in (("on-demand", "tab:blue"), ("spot", "tab:green")):
        part = spotted[spotted["option"] == option]
        if len(part):
            billed = np.diff(accrued(part["hired_at"], part["released_at"], part["billed_hours"], weeks))
            right.bar(weeks[:-1] / WEEK, billed, bottom=bottom, width=0.9, align="edge", color=color,
                      label=f"with spot: {option}")
            bottom += billed
    own = np.diff(accrued(without["hired_at"], without["released_at"], without["billed_hours"], weeks))
    right.stairs(own, weeks / WEEK, color="k", lw=0.9, label="on demand only")
    right.set(xlabel="week", ylabel="VM-hours billed", title="VM-hours billed by week")
    right.set_ylim(0, 1.45 * max(float(bottom.max()), float(own.max()), 1e-9))  # room for the legend above the bars
    right.legend(loc="upper center", fontsize=7, ncols=2)
    caption = ("Left: the cost accrued by each day, on demand only and with spot (dashed: the on-demand VMs of the run "
               "with spot). Right: the VM-hours billed in each week, of the run with spot by billing option (bars) "
               "and of the run on demand only (line). Each VM's cost and billed hours are spread evenly over its life.")
    return Figure("spot_costs.svg", caption, figures.svg(fig))


def _texts(n: dict[str, Any]) -> tuple[str, str]:
    m, off, on = n["market"], n["on_demand_only"], n["with_spot"]
    restart = ("jobs restart from scratch" if m["checkpoint_s"] is None else
               f"jobs resume from a checkpoint every {m['checkpoint_s']:g} s of work "
               f"(+{m['restart_overhead_s']:g} s to restart)")
    summary = (f"On the market {m['market']} ({m['file']}; open {m['available']:.0%} of the time, spot at "
               f"{m['spot_price_ratio_min']:.2f}-{m['spot_price_ratio_max']:.2f} of on-demand, a "
               f"{m['notice_s']:g} s notice; {restart}), CoH over the trio costs {dollars(on['cost'])} with spot "
               f"({dollars(on['on_demand_cost'])} on demand, {dollars(on['spot_cost'])} spot) against "
               f"{dollars(off['cost'])} on demand only. {on['preemptions']:,} spot VMs were preempted; "
               f"{on['jobs_restarted']:,} jobs ({on['jobs_restarted_pct']:.1f}%) restarted {on['restarts']:,} times "
               f"and lost {hours(on['lost_s'])} of runs. Jobs wait {hours(on['wait_mean_s'])} on average "
               f"({hours(on['wait_p95_s'])} at the 95th percentile) with spot, {hours(off['wait_mean_s'])} "
               f"({hours(off['wait_p95_s'])}) on demand only.")
    ipp = n.get("coh_ipp_on_demand_cost")
    if ipp is not None and ipp < on["cost"]:
        summary += (f" CoH with its integer program (the CoH section) costs {dollars(ipp)} on demand, less than the "
                    f"trio with spot; it was not replayed with spot.")
    fraction = n["saving_fraction"]
    if fraction is None:
        return summary, "Stay on demand."
    if fraction == 0:
        return summary, "Stay on demand: spot saves nothing here."
    if fraction < 0:
        return summary, f"Stay on demand: with spot CoH costs {-fraction:.1%} more here."
    return summary, (f"Rent spot VMs while the market is open: {fraction:.1%} ({dollars(n['saving'])}) saved, at "
                     f"{hours(on['lost_s'])} of lost runs and a mean wait of {hours(on['wait_mean_s'])} against "
                     f"{hours(off['wait_mean_s'])}.")
