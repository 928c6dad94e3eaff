"""The page's lead and units: what a site operator acts on, from the sections' numbers, in hours and dollars."""

from __future__ import annotations

import pandas as pd

from broker.report import page, units
from broker.report.model import Section
from broker.report.summary import PRICES, lead


def done(key: str, numbers: dict) -> Section:
    return Section(key, key, numbers=numbers)


def test_hours_for_waits_and_dollars_for_costs() -> None:
    assert units.hours(360.0) == "0.1 h" and units.hours(1.0) == "0.000278 h" and units.hours(36_000) == "10 h"
    assert units.hours(3600 * 1234.4) == "1,234 h"
    assert units.dollars(1234.567) == "$1,234.57" and units.dollars(-2.0) == "-$2.00"
    assert units.column("wait_mean_s") == ("wait_mean (h)", 1 / 3600)
    assert units.column("cost") == ("cost ($)", 1.0) and units.column("egress_cost") == ("egress_cost ($)", 1.0)
    assert units.column("lower_bound") == ("lower_bound ($)", 1.0)
    assert units.column("twt_imp_pct") == ("twt_imp (%)", 1.0) and units.column("instances") == ("instances", 1.0)


def test_a_table_on_the_page_shows_seconds_as_hours_with_the_unit_in_its_heading() -> None:
    text = page._table("t", pd.DataFrame({"policy": ["a"], "wait_mean_s": [7200.0], "cost": [12.5]}))
    assert "<th>wait_mean (h)</th>" in text and "<td>2.000</td>" in text and "wait_mean_s" not in text
    assert "<th>cost ($)</th>" in text and "<td>12.500</td>" in text


def test_the_lead_answers_each_question_from_the_sections_that_ran() -> None:
    sections = [
        done("coh", {"jobs": 900, "jobs_in_trace": 1000, "policies": {
            "CoH (trio)": {"cost": 120.0, "lower_bound": 100.0, "cost_over_lb": 1.2},
            "CoH + IPP": {"cost": 110.0, "lower_bound": 100.0, "cost_over_lb": 1.1},
            "FCFS-SM": {"cost": 150.0, "lower_bound": 100.0, "cost_over_lb": 1.5}}}),
        done("reservations", {"plan": {"reservations": [{"instance_type": "small", "option": "reserved-heavy",
                                                         "count": 3}]},
                              "coh_r_cost": 90.0, "coh_on_demand_cost": 110.0, "replayed_savings_fraction": 20 / 110}),
        done("cluster", {"recommended": {"family": "P4 delay", "settings": "delay_min = 5", "cost": 12.0,
                                         "overhead_mean_s": 540.0}}),
        done("leasing", {"policies": {
            "constant V = 0": {"v": 0, "balance": 0.0, "twt_imp_pct": 0.0, "cost_pct": 0.0},
            "constant V = 8": {"v": 8, "balance": 40.0, "twt_imp_pct": 60.0, "cost_pct": 20.0},
            "Q-learning": {"v": None, "balance": 37.5, "twt_imp_pct": 50.0, "cost_pct": 12.5}}}),
        done("advisor", {"speeds": [{"overhead": 0.1, "saved_time_s": 7200.0, "oracle_saved_time_s": 10800.0},
                                    {"overhead": 1.0, "saved_time_s": -5.0, "oracle_saved_time_s": 0.0}]}),
        done("elastic", {"runs": {"fcfs (rigid)": {"w_interactive_mean": 0.6, "core_hours": 1000.0},
                                  "threshold (elastic)": {"w_interactive_mean": 0.9, "core_hours": 500.0},
                                  "sarsa (elastic)": {"w_interactive_mean": 0.7, "core_hours": 700.0}}}),
        Section("trace", "t", status="skipped")]
    assert lead(sections) == [
        ("Policy", "run CoH + IPP on on-demand instances: $110.00 for the first 900 of 1,000 jobs, 1.100 times the "
                   "lower bound $100.00."),
        ("Reserve", "3 small heavy (1-year term): CoH-R replayed on the plan costs $90.00 against $110.00 on demand "
                    "(18.2% saved)."),
        ("A cluster on the cloud", "P4 delay (delay_min = 5): $12.00 with 0.15 h of mean overhead per job."),
        ("Leasing", "a constant cap of V = 8 cloud nodes: waits 60.0% shorter than the site alone for 20.0% of an "
                    "unbounded lease's cloud use (balance 40.0); Q-learning loses 2.5 points of balance against it."),
        ("A pool of cores", "the threshold autoscaler: the highest responsiveness W 0.900 for 500 core-hours; SARSA "
                            "loses 0.200 in W against the threshold autoscaler."),
        ("Here or in the cloud", "the advisor's predictions save 2 h at a slow-down of 0.1 per processor, the "
                                 "oracle 3 h.")]


def test_the_lead_says_on_which_jobs_a_sliced_section_ran() -> None:
    cluster = {"jobs": 500, "jobs_in_trace": 2000, "recommended": {"family": "P1 cap", "settings": "cap = 4",
                                                                    "cost": 1.0, "overhead_mean_s": 3600.0}}
    assert lead([done("cluster", cluster)]) == [
        ("A cluster on the cloud", "P1 cap (cap = 4): $1.00 with 1 h of mean overhead per job (on the first 500 of "
                                   "2,000 jobs).")]
    advisor = {"replayable_jobs": 30_000, "skip": 10_000, "evaluate": 10_000,
               "speeds": [{"overhead": 0.1, "saved_time_s": 3600.0, "oracle_saved_time_s": 7200.0}]}
    assert lead([done("advisor", advisor)])[0][1].endswith(
        "the oracle 2 h (evaluated on 10,000 jobs after the first 10,000 of 30,000).")


def test_the_lead_says_when_nothing_pays() -> None:
    assert lead([done("reservations", {"plan": {"reservations": []}})]) == [
        ("Reserve", "none: no reservation breaks even on this demand.")]
    replayed = {"plan": {"reservations": [{"instance_type": "large", "option": "reserved-light", "count": 1}]},
                "coh_r_cost": 120.0, "coh_on_demand_cost": 100.0, "replayed_savings_fraction": -0.2}
    assert lead([done("reservations", replayed)])[0][1].endswith("(20.0% more: do not buy it yet).")
    assert lead([done("advisor", {"speeds": [{"overhead": 1.0, "saved_time_s": 0.0, "oracle_saved_time_s": 1.0}]})]) \
        == [("Here or in the cloud", "keep jobs here: at no cloud speed tried does the advisor save time.")]
    assert lead([Section("coh", "c", status="skipped")]) == []


def test_the_page_opens_with_the_lead_and_the_price_books() -> None:
    html = page.render("T", "sub", [Section("coh", "CoH")], {"budget_s": 60.0, "planned_s": 1.0, "wall_s": 1.0,
                                                              "seed": 0}, [("Policy", "run <it>")], PRICES)
    top = html.split("<nav>")[0]
    assert "<h2>Summary</h2><ul><li><b>Policy:</b> run &lt;it&gt;</li></ul>" in top
    assert "ec2-2013-cluster" in top and "do not compare with CoH&#x27;s" in top


def test_the_lead_line_of_the_pool_names_the_wait_learner_too() -> None:
    from broker.report.summary import _elastic

    runs = {"fcfs (rigid)": {"w_interactive_mean": 0.6, "core_hours": 1000.0},
            "threshold (elastic)": {"w_interactive_mean": 0.9, "core_hours": 500.0},
            "sarsa (elastic)": {"w_interactive_mean": 0.7, "core_hours": 700.0},
            "sarsa-wait (elastic)": {"w_interactive_mean": 0.95, "core_hours": 520.0}}
    assert _elastic({"runs": runs}) == ("SARSA on the wait reward: the highest responsiveness W 0.950 for 520 "
                                        "core-hours; SARSA loses 0.200 in W against the threshold autoscaler, on the "
                                        "wait reward gains 0.050.")
