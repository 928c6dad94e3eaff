"""The leasing section (:mod:`broker.report.sections.leasing`): its texts and rows on hand-made tables, the whole
section on an 80-job workload, the figure."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from broker.report.budget import Budget
from broker.report.model import ReportInput
from broker.report.sections import leasing
from tests.broker.report.hand_made import Clock, data, est, small_frame, small_input
from workloads.lublin import default_workload
from workloads.swf import SwfHeader
from workloads.swf_writer import write_swf

# --- the texts and rows on hand-made tables -----------------------------------------------------------------------


def test_leasing_without_balances_and_without_the_learner() -> None:
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 4"], "v": pd.array([0, 4], dtype="Int64"),
                          "twt_imp_pct": [None, None], "cost_pct": [None, None], "balance": [None, None]})
    assert leasing._texts(table, 4) == (
        "The balances are undefined: the site alone never waits, or leasing never uses a node.",
        "Do not lease: the site runs its jobs without waiting.")
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 4", "constant V = 8"],
                          "v": pd.array([0, 4, 8], dtype="Int64"), "twt_imp_pct": [0.0, 50.0, 90.0],
                          "cost_pct": [0.0, 20.0, 60.0], "balance": [0.0, 30.0, 30.0]})  # a tie: the first
    assert leasing._texts(table, 8) == (
        "The best constant cap is V = 4 of M = 8: waits 50.0 % shorter for 20.0 % of the cloud use of an unbounded "
        "lease (balance 30.0).",
        "Lease with a constant cap of 4 nodes (the learner was left out: budget).")


def test_the_leasing_row_normalises_by_the_references() -> None:
    s = SimpleNamespace(twt_s=50.0, cloud_cpu_s=10.0, wait_mean_s=2.5, caps=[1, 2, 3, 6])
    assert leasing._row("constant V = 3", 3, s, (200.0, 50.0)) == {
        "policy": "constant V = 3", "v": 3, "twt_s": 50.0, "cloud_cpu_s": 10.0, "wait_mean_s": 2.5,
        "twt_imp_pct": 75.0, "cost_pct": 20.0, "balance": 55.0, "cap_mean": 3.0}
    none = leasing._row("Q-learning", None, SimpleNamespace(twt_s=1.0, cloud_cpu_s=1.0, wait_mean_s=0.0, caps=[]),
                        (0.0, 50.0))
    assert none["twt_imp_pct"] is None and none["cost_pct"] == 2.0 and none["balance"] is None
    assert none["cap_mean"] is None and none["v"] is None


# --- the whole section on a small generated workload (300 jobs; 5,001 processors in all) --------------------------


def test_leasing_every_cap_and_the_learner(tmp_path: Path) -> None:
    frame = default_workload(seed=0, n_jobs=80)
    inp = ReportInput(write_swf(frame, tmp_path / "l.swf"), frame, SwfHeader(max_procs=256), "l", "l.swf", 256, 0)
    budget = Budget(600.0, clock=Clock())
    s = leasing.run(inp, budget)
    assert budget.planned == pytest.approx(est("leasing_constant", 80, runs=8) + est("leasing_qlearning", 80))
    assert (s.key, s.title, s.status, s.skipped_parts) == ("leasing", "A site that leases cloud nodes", "done", [])
    table = s.tables["leasing_policies"]
    names = [f"constant V = {v}" for v in (0, 16, 32, 64, 128, 256)]
    assert table["policy"].tolist() == [*names, "Q-learning"]
    assert table["v"].dtype == "Int64" and table["v"].tolist()[:6] == [0, 16, 32, 64, 128, 256]
    assert pd.isna(table["v"].iloc[6])
    assert list(table.columns) == ["policy", "v", "twt_s", "cloud_cpu_s", "wait_mean_s", "twt_imp_pct", "cost_pct",
                                   "balance", "cap_mean"]
    n = s.numbers
    assert (n["nodes"], n["jobs"]) == (256, 80)
    v0 = n["policies"]["constant V = 0"]
    # V = 0 is the site alone: the reference wait, no cloud use, balance 0
    assert v0["twt_s"] == n["twt_local_only_s"] and v0["cloud_cpu_s"] == 0.0
    assert (v0["twt_imp_pct"], v0["cost_pct"], v0["balance"], v0["cap_mean"]) == (0.0, 0.0, 0.0, 0.0)
    assert n["policies"]["constant V = 64"]["cap_mean"] == 64.0
    assert set(v0) == {"v", "twt_s", "cloud_cpu_s", "wait_mean_s", "twt_imp_pct", "cost_pct", "balance", "cap_mean"}
    assert n["cloud_cpu_unbounded_s"] >= n["policies"]["constant V = 256"]["cloud_cpu_s"] > 0
    command = "cloudbroker leasing --trace l.swf --nodes 256 --policy"
    assert s.commands == [*[(name, f"{command} constant:{v} --json") for name, v in
                            zip(names, (0, 16, 32, 64, 128, 256), strict=True)],
                          ("Q-learning", f"{command} qlearning --json")]
    assert (s.summary, s.recommendation) == leasing._texts(table, 256)
    assert [f.name for f in s.figures] == ["leasing_caps.svg"]
    svg = s.figures[0].svg
    for text in (">constant cap V (cloud nodes)<", ">leasing: the constant caps and the learner<",
                 ">wait improvement %<", ">cloud cost %<", ">balance<", ">Q-learning's balance<"):
        assert text in svg, text

    budget = Budget(est("leasing_constant", 80, runs=8) + 1e-9, clock=Clock())
    s = leasing.run(inp, budget)
    assert s.tables["leasing_policies"]["policy"].tolist() == names
    both = est("leasing_constant", 80, runs=8) + est("leasing_qlearning", 80)
    assert s.skipped_parts == [f"Q-learning: needs about {both:.1f} s with the caps on 80 jobs, "
                               f"{est('leasing_constant', 80, runs=8):.1f} s of the budget left"]
    assert ">Q-learning's balance<" not in s.figures[0].svg
    assert s.recommendation.startswith("Lease with a constant cap of ")


def test_leasing_with_no_job_that_fits_the_site(tmp_path: Path) -> None:
    frame = small_frame()
    frame["requested_procs"] = pd.array([4, 4, 4, 4, 4], dtype="Int64")
    frame["allocated_procs"] = pd.array([4, 4, 4, 4, 4], dtype="Int64")
    inp = small_input(tmp_path, frame, nodes=2)
    s = leasing.run(inp, Budget(60.0, clock=Clock()))
    assert (s.status, s.why) == ("not applicable", "no job of the trace fits the site's nodes")


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


def test_the_leasing_figure_draws_the_three_curves_and_the_learners_balance(drawn: list[Any]) -> None:
    table = pd.DataFrame({"policy": ["constant V = 0", "constant V = 8", "Q-learning"],
                          "v": pd.array([0, 8, None], dtype="Int64"), "twt_imp_pct": [0.0, 60.0, 70.0],
                          "cost_pct": [0.0, 20.0, 25.0], "balance": [0.0, 40.0, 45.0]})
    figure = leasing._figure(table)
    assert figure.caption == ("Wait improvement over the site alone, cloud use against leasing without a cap, and "
                              "their difference (the balance), for each constant cap V; the dashed line is "
                              "Q-learning's balance.")
    (ax,) = drawn[0].axes
    imp, cost, balance, q = ax.lines
    for line, y, marker in ((imp, [0.0, 60.0], "o"), (cost, [0.0, 20.0], "s"), (balance, [0.0, 40.0], "^")):
        assert data(line, "x") == [0.0, 8.0] and data(line, "y") == y
        assert (line.get_marker(), line.get_linestyle()) == (marker, "-")
    assert data(q, "y") == [45.0, 45.0] and (q.get_color(), q.get_linestyle()) == ("tab:red", "--")
    assert ax.get_ylabel() == "%" and ax.get_legend().get_texts()[0].get_fontsize() == 7
