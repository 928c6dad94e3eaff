"""The CoH section (:mod:`broker.report.sections.coh`): its texts and rows on hand-made tables, the whole section
(and the reservations after it) on a small generated workload, the figure."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.report.budget import Budget
from broker.report.model import ReportInput
from broker.report.sections import coh, reservations
from tests.broker.report.hand_made import Clock, data, est, fresh, rgba, run_command, small_input

# --- the texts and rows on hand-made tables -----------------------------------------------------------------------


def test_coh_names_the_cheapest_row_wherever_it_is_and_without_heuristics() -> None:
    table = pd.DataFrame([
        {"policy": "FCFS-SM", "cost": 120.0, "lower_bound": 60.0, "cost_over_lb": 2.0, "wait_mean_s": 0.0,
         "wait_p95_s": 0.0},
        {"policy": "FCFS-LD", "cost": 80.0, "lower_bound": 60.0, "cost_over_lb": 80 / 60, "wait_mean_s": 1.0,
         "wait_p95_s": 2.0},
        {"policy": "CoH (trio)", "cost": 100.0, "lower_bound": 60.0, "cost_over_lb": 100 / 60, "wait_mean_s": 2.0,
         "wait_p95_s": 9.0}])
    summary, advice = coh._texts(table)
    assert summary == ("FCFS-LD costs $80.00, 1.333 times the lower bound $60.00; jobs wait 0.000278 h on average "
                       "(0.000556 h at the 95th percentile) for a VM to boot.")
    assert advice == "Run FCFS-LD: the portfolio does not beat it here."
    only = pd.DataFrame([{"policy": "CoH (trio)", "cost": 1234.5, "lower_bound": 1000.0, "cost_over_lb": 1.2345,
                          "wait_mean_s": 0.0, "wait_p95_s": 0.0},
                         {"policy": "CoH + IPP", "cost": 1200.0, "lower_bound": 1000.0, "cost_over_lb": 1.2,
                          "wait_mean_s": 0.0, "wait_p95_s": 0.0}])
    assert coh._texts(only) == (
        "CoH + IPP costs $1,200.00, 1.200 times the lower bound $1,000.00; jobs wait 0 h on average (0 h at the 95th "
        "percentile) for a VM to boot.",
        "Run CoH + IPP (the heuristics alone were left out to stay in the budget).")


def test_the_coh_row_and_its_numbers() -> None:
    summary = SimpleNamespace(cost=10.0, lower_bound=8.0, cost_over_lb=1.25, wait_mean_s=3.0, wait_p95_s=7.0,
                              utilization=0.5, instances=4, instance_hours=20.0)
    row = coh._row("CoH (trio)", SimpleNamespace(summary=summary))  # type: ignore[arg-type]
    assert row == {"policy": "CoH (trio)", "cost": 10.0, "lower_bound": 8.0, "cost_over_lb": 1.25,
                   "wait_mean_s": 3.0, "wait_p95_s": 7.0, "utilization": 0.5, "instances": 4, "instance_hours": 20.0}
    assert coh._numbers(row) == {k: v for k, v in row.items() if k != "policy"} and "policy" not in coh._numbers(row)


def test_the_cli_seeds_are_the_children_simulate_derives() -> None:
    requirement, policy = coh.cli_seeds(7)
    # SeedSequence(7).spawn(2) gives children with spawn keys (0,) and (1,); the workload child's second child (0, 1)
    assert requirement.entropy == 7 and requirement.spawn_key == (0, 1)
    assert policy == int(np.random.SeedSequence(7, spawn_key=(1,)).generate_state(1)[0])
    assert isinstance(policy, int)


def test_the_job_view_is_built_once_per_input(tmp_path: Path) -> None:
    inp = small_input(tmp_path)
    jobs = coh.broker_jobs(inp)
    assert inp.shared["coh_jobs"] is jobs and coh.broker_jobs(inp) is jobs
    assert len(jobs) == 3  # the jobs with a run time > 0


# --- the whole section on a small generated workload (300 jobs; 5,001 processors in all) --------------------------


def test_coh_and_the_reservations_with_every_part(generated: ReportInput, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(generated.path.parent)  # the commands name the trace g.swf and the plan beside it
    inp = fresh(generated)
    budget = Budget(600.0, clock=Clock())
    s = coh.run(inp, budget)
    n = len(inp.shared["coh_jobs"])
    assert n == 300 and s.numbers["jobs"] == 300 and s.numbers["requirements"] == "heterogeneous"
    assert (s.key, s.title, s.status, s.skipped_parts) == ("coh", "CoH on on-demand instances", "done", [])
    everything = est("coh_trio", n) + est("coh_ipp", n) + 3 * est("coh_heuristic", n) + est("coh_r", n)
    assert budget.planned == pytest.approx(everything)  # CoH-R's replay of the next section included
    table = s.tables["coh_policies"]
    assert table["policy"].tolist() == ["CoH (trio)", "CoH + IPP", "FCFS-SM", "FCFS-LD", "FCFS-CFH"]
    assert list(table.columns) == ["policy", "cost", "lower_bound", "cost_over_lb", "wait_mean_s", "wait_p95_s",
                                   "utilization", "instances", "instance_hours"]
    assert (table["cost_over_lb"] == table["cost"] / table["lower_bound"]).all()
    assert table["lower_bound"].nunique() == 1 and (table["cost"] >= table["lower_bound"]).all()
    assert s.numbers["policies"] == {r["policy"]: {k: v for k, v in r.items() if k != "policy"}
                                     for r in table.to_dict(orient="records")}
    base = "cloudbroker simulate --trace g.swf --reqs heterogeneous --seed 0 --json --policy"
    assert s.commands == [("CoH (trio)", f"{base} coh"),
                          ("CoH + IPP", f"{base} coh --solver cpsat --time-limit 1 --deterministic"),
                          ("FCFS-SM", f"{base} FCFS-SM"), ("FCFS-LD", f"{base} FCFS-LD"),
                          ("FCFS-CFH", f"{base} FCFS-CFH")]
    demand, cost, ipp = inp.shared["coh_demand"]
    assert cost == table.loc[1, "cost"] and ipp is coh.IPP and ipp.time_limit == 1.0 and ipp.deterministic
    assert (s.summary, s.recommendation) == coh._texts(table)
    for (what, command), cost_ in zip(s.commands, table["cost"], strict=True):
        assert run_command(command)["cost"] == cost_, what
    assert [f.name for f in s.figures] == ["coh_costs.svg"]
    assert s.figures[0].caption.startswith("Cost of each policy over its lower bound LB")
    assert ">cost of each policy on on-demand instances<" in s.figures[0].svg
    assert f">  ${float(table['cost'].iloc[2]):,.2f}<" in s.figures[0].svg

    r = reservations.run(inp, budget)
    assert (r.key, r.title, r.status, r.skipped_parts) == ("reservations", "Reserved instances", "done", [])
    assert budget.planned == pytest.approx(everything)
    numbers = r.numbers
    assert numbers["demand_from"] == "CoH + IPP" and numbers["term_years"] == 1
    assert numbers["coh_on_demand_cost"] == cost
    assert numbers["predicted_savings_fraction"] == pytest.approx(
        numbers["predicted_savings"] / numbers["on_demand_cost_per_term"])
    assert numbers["replayed_savings_fraction"] == pytest.approx((cost - numbers["coh_r_cost"]) / cost)
    plan = json.loads(r.files["reservation_plan.json"])
    assert plan["demand"] == {"source": "CoH replay of g", "intervals": len(demand)}
    assert plan["plan"] == numbers["plan"] and plan["mode"] == "per-type" and plan["term_years"] == 1
    assert plan["expected_cost"] == numbers["expected_cost_per_term"]
    assert plan["savings"] == numbers["predicted_savings"]
    assert plan["on_demand_cost"] == numbers["on_demand_cost_per_term"]
    assert r.files["reservation_plan.json"].startswith('{\n  "demand": {')  # sorted keys, indented by 2
    assert r.commands == [
        ("the plan", "cloudbroker plan-reservations --trace g.swf --reqs heterogeneous --seed 0 --replay-solver cpsat "
                     "--json"),
        ("the plan on plan-reservations' default demand (CoH without its integer program)",
         "cloudbroker plan-reservations --trace g.swf --reqs heterogeneous --seed 0 --json"),
        ("CoH-R on the plan", "cloudbroker simulate --trace g.swf --reqs heterogeneous --seed 0 --policy coh-r "
                              "--reservations reservation_plan.json --solver cpsat --time-limit 1 --deterministic "
                              "--json")]
    assert len(r.tables["reservation_lines"]) > 0 and [f.name for f in r.figures] == ["reservations_demand.svg"]
    assert ">CoH's demand per hour and the reserved instances<" in r.figures[0].svg
    assert r.summary.startswith("Reserve ") and " Replayed with CoH-R: $" in r.summary
    (generated.path.parent / "reservation_plan.json").write_text(r.files["reservation_plan.json"])
    assert run_command(r.commands[0][1])["plan"] == numbers["plan"]
    assert run_command(r.commands[1][1])["plan"] == numbers["trio_plan"]
    assert run_command(r.commands[2][1])["cost"] == numbers["coh_r_cost"]
    assert r.recommendation.startswith("Buy the plan: CoH-R saves ")
    assert r.summary.endswith(reservations.why_not_plan_reservations(numbers, True, r.commands[0][1]))


def test_coh_without_its_integer_program_when_its_share_cannot_hold_it(generated: ReportInput) -> None:
    inp = fresh(generated)
    n = 300
    rest = est("coh_trio", n) + 3 * est("coh_heuristic", n) + est("coh_r", n)
    budget = Budget(rest + 1e-9, clock=Clock())  # the trio, the heuristics and CoH-R, not the integer program
    s = coh.run(inp, budget)
    assert s.tables["coh_policies"]["policy"].tolist() == ["CoH (trio)", "FCFS-SM", "FCFS-LD", "FCFS-CFH"]
    with_ipp = rest + est("coh_ipp", n)
    assert s.skipped_parts == [f"CoH's integer program: needs about {with_ipp:.1f} s with the rest on 300 jobs, "
                               f"{rest:.1f} s of the budget left"]
    assert [c[0] for c in s.commands] == ["CoH (trio)", "FCFS-SM", "FCFS-LD", "FCFS-CFH"]
    assert inp.shared["coh_demand"][2] is None and budget.planned == pytest.approx(rest)
    assert inp.shared["coh_demand"][1] == s.tables["coh_policies"].loc[0, "cost"]
    r = reservations.run(inp, budget)
    assert r.numbers["demand_from"] == "CoH (trio)" and "coh_r_cost" in r.numbers and "trio_plan" not in r.numbers
    assert [c[0] for c in r.commands] == ["the plan", "CoH-R on the plan"]
    assert r.commands[0][1] == "cloudbroker plan-reservations --trace g.swf --reqs heterogeneous --seed 0 --json"
    assert r.summary.endswith("as plan-reservations makes it by default; the same numbers: " + r.commands[0][1] + ".")


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


def test_the_coh_figure_draws_each_policy_over_its_lower_bound(drawn: list[Any]) -> None:
    table = pd.DataFrame({"policy": ["CoH (trio)", "FCFS-SM", "CoH + IPP"], "cost": [90.0, 120.0, 80.0],
                          "cost_over_lb": [1.5, 2.0, 4 / 3]})
    figure = coh._figure(table)
    assert figure.caption == ("Cost of each policy over its lower bound LB (every job on a perfectly packed VM, no "
                              "waste); the figure at each bar's end is the policy's cost.")
    (ax,) = drawn[0].axes
    bars = ax.patches  # the most expensive first
    assert [b.get_width() for b in bars] == [2.0, 1.5, 4 / 3]
    assert [b.get_facecolor() for b in bars] == [rgba("tab:gray"), rgba("tab:blue"), rgba("tab:blue")]
    (one,) = ax.lines
    assert data(one, "x") == [1.0, 1.0] and one.get_color() == "k"
    assert (one.get_linewidth(), one.get_linestyle()) == (0.8, "--")
    texts = ax.texts
    assert [t.get_text() for t in texts] == ["  $120.00", "  $90.00", "  $80.00"]
    for text, bar in zip(texts, bars, strict=True):
        assert text.get_position() == (bar.get_width(), bar.get_y() + bar.get_height() / 2)
        assert (text.get_va(), text.get_fontsize()) == ("center", 8)
    assert ax.get_xlabel() == "cost / lower bound (1 = the lower bound)"
    assert ax.get_xlim() == (0.0, 2.5)
