"""The answer a site operator acts on, at the top of the page: from the sections' numbers, one line each.

What to run on on-demand instances and what it costs against the lower bound; what to reserve and
what the reservations save replayed; what spot VMs save and at what lost work (with ``--spot``);
how to run a cluster wholly on the cloud; whether to lease beside the site's own cluster; which
pool of cores to run; and what each learned policy (Q-learning, SARSA, the advisor's predictions)
gains or loses against the rule beside it. A section that did not run gives no line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from broker.report.model import Section
from broker.report.sections.elastic import NAMES
from broker.report.units import dollars, hours

#: The price books behind the page's dollars, in one sentence.
PRICES = ("Prices: CoH, its heuristics and the reservations are priced with the ec2-2013 book (the CoH paper's "
          "small and large instances, on demand and reserved for a year); the cloud cluster with ec2-2013-cluster "
          "(one c1.medium per job and the data sent out, as in the cloud-cluster paper), so its dollars do not "
          "compare with CoH's; leasing is measured in cloud CPU time and the elastic pool in core-hours, not dollars.")


def lead(sections: Sequence[Section]) -> list[tuple[str, str]]:
    """``(what, answer)`` lines, in the page's order, for the sections that ran (and on which jobs, if a slice)."""
    by_key = {s.key: s for s in sections if s.status == "done"}
    lines: list[tuple[str, str]] = []
    for key, what, line in _LINES:
        if key in by_key:
            text = line(by_key[key].numbers)
            if text:
                lines.append((what, text[:-1] + _slice(key, by_key[key].numbers) + text[-1]))
    return lines


def _slice(key: str, n: dict[str, Any]) -> str:
    """`` (on the first N of M jobs)`` when a section ran on a slice of the trace (CoH's line says so itself)."""
    if key == "coh":
        return ""
    for ran, every, what in (("jobs", "jobs_in_trace", "jobs"), ("core_jobs", "core_jobs_in_trace", "core-jobs")):
        if ran in n and every in n and n[ran] < n[every]:
            return f" (on the first {n[ran]:,} of {n[every]:,} {what})"
    if "evaluate" in n:
        return f" (evaluated on {n['evaluate']:,} jobs after the first {n['skip']:,} of {n['replayable_jobs']:,})"
    return ""


def _coh(n: dict[str, Any]) -> str:
    policies = n["policies"]
    name = min(policies, key=lambda p: policies[p]["cost"])
    best = policies[name]
    jobs = f"{n['jobs']:,} jobs" if n["jobs"] == n.get("jobs_in_trace", n["jobs"]) else (
        f"the first {n['jobs']:,} of {n['jobs_in_trace']:,} jobs")
    return (f"run {name} on on-demand instances: {dollars(best['cost'])} for {jobs}, "
            f"{best['cost_over_lb']:.3f} times the lower bound {dollars(best['lower_bound'])}.")


def _reservations(n: dict[str, Any]) -> str:
    bought = ", ".join(f"{r['count']} {r['instance_type']} {r['option'].removeprefix('reserved-')}"
                       for r in n["plan"]["reservations"])
    if not bought:
        return "none: no reservation breaks even on this demand."
    saved = n.get("replayed_savings_fraction")
    if saved is None:
        return f"{bought} (1-year term)."
    verdict = f"{saved:.1%} saved" if saved >= 0 else f"{-saved:.1%} more: do not buy it yet"
    return (f"{bought} (1-year term): CoH-R replayed on the plan costs {dollars(n['coh_r_cost'])} against "
            f"{dollars(n['coh_on_demand_cost'])} on demand ({verdict}).")


def _spot(n: dict[str, Any]) -> str:
    on, off, fraction = n["with_spot"], n["on_demand_only"], n["saving_fraction"]
    if fraction is None or fraction <= 0:
        return f"stay on demand: CoH with spot on {n['market']['market']} saves nothing here."
    return (f"CoH with spot on {n['market']['market']} costs {dollars(on['cost'])} against {dollars(off['cost'])} "
            f"({fraction:.1%} saved), losing {hours(on['lost_s'])} of runs to {on['preemptions']:,} preemptions; "
            f"mean wait {hours(on['wait_mean_s'])} against {hours(off['wait_mean_s'])}.")


def _cluster(n: dict[str, Any]) -> str:
    r = n["recommended"]
    return (f"{r['family']} ({r['settings'] or 'its defaults'}): {dollars(r['cost'])} with "
            f"{hours(r['overhead_mean_s'])} of mean overhead per job.")


def _leasing(n: dict[str, Any]) -> str:
    policies = n["policies"]
    constant = {k: p for k, p in policies.items() if p["v"] is not None and p["balance"] is not None}
    if not constant:
        return "do not lease: the site runs its jobs without waiting."
    best = max(constant, key=lambda k: constant[k]["balance"])
    b = constant[best]
    text = (f"a constant cap of V = {b['v']} cloud nodes: waits {b['twt_imp_pct']:.1f}% shorter than the site alone "
            f"for {b['cost_pct']:.1f}% of an unbounded lease's cloud use (balance {b['balance']:.1f})")
    learned = policies.get("Q-learning")
    if learned is None or learned["balance"] is None:
        return text + "."
    gain = learned["balance"] - constant[best]["balance"]
    return text + f"; Q-learning {'gains' if gain > 0 else 'loses'} {abs(gain):.1f} points of balance against it."


def _elastic(n: dict[str, Any]) -> str:
    runs = n["runs"]
    if any(r["w_interactive_mean"] is None for r in runs.values()):
        return ""
    best = max(runs, key=lambda k: (runs[k]["w_interactive_mean"], -runs[k]["core_hours"]))
    gain = runs["sarsa (elastic)"]["w_interactive_mean"] - runs["threshold (elastic)"]["w_interactive_mean"]
    text = (f"{NAMES.get(best, best)}: the highest responsiveness W {runs[best]['w_interactive_mean']:.3f} for "
            f"{runs[best]['core_hours']:,.0f} core-hours; SARSA {'gains' if gain > 0 else 'loses'} {abs(gain):.3f} "
            f"in W against the threshold autoscaler")
    if "sarsa-wait (elastic)" in runs:
        wait = runs["sarsa-wait (elastic)"]["w_interactive_mean"] - runs["threshold (elastic)"]["w_interactive_mean"]
        text += f", on the wait reward {'gains' if wait > 0 else 'loses'} {abs(wait):.3f}"
    return text + "."


def _advisor(n: dict[str, Any]) -> str:
    paying = [s for s in n["speeds"] if s["saved_time_s"] > 0]
    if not paying:
        return "keep jobs here: at no cloud speed tried does the advisor save time."
    best = max(paying, key=lambda s: s["saved_time_s"])
    return (f"the advisor's predictions save {hours(best['saved_time_s'])} at a slow-down of {best['overhead']:g} "
            f"per processor, the oracle {hours(best['oracle_saved_time_s'])}.")


_LINES: tuple[tuple[str, str, Callable[[dict[str, Any]], str]], ...] = (
    ("coh", "Policy", _coh),
    ("reservations", "Reserve", _reservations),
    ("spot", "Spot", _spot),
    ("cluster", "A cluster on the cloud", _cluster),
    ("leasing", "Leasing", _leasing),
    ("elastic", "A pool of cores", _elastic),
    ("advisor", "Here or in the cloud", _advisor),
)
