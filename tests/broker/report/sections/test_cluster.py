"""The cloud-cluster section (:mod:`broker.report.sections.cluster`): the grid, the peak, the TOML and the flags by
hand, the whole section on a small generated workload, the pick on a hand-made grid, the figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.report.budget import Budget
from broker.report.model import ReportInput
from broker.report.sections import cluster
from tests.broker.report.hand_made import Clock, data, est, fresh, rgba

# --- the grid, the peak, the TOML, the flags ----------------------------------------------------------------------


def test_the_grid_families_in_full_and_a_cap_of_one_for_a_small_peak() -> None:
    assert cluster.families(40) == [
        {"name": "end of the paid hour"},
        {"name": "P1 cap", "cap": [4, 10, 20]},
        {"name": "P3 keep-alive", "keepalive": ["fixed:0.1", "fixed:0.3", "fixed:0.5"]},
        {"name": "P4 delay", "delay_min": [1, 5, 15]},
        {"name": "P6 next hour", "wait_next_hour_min": [5, 15]},
        {"name": "baseline: idle timeout", "idle_timeout_min": [5, 30]}]
    # peak 5: 0.5 -> 0 -> at least 1; 1.25 -> 1; 2.5 -> 2 (half to even)
    assert cluster.families(5)[1]["cap"] == [1, 2]


def test_no_jobs_have_a_peak_of_zero() -> None:
    assert cluster._peak(np.array([]), np.array([])) == 0


def test_the_toml_text_quotes_strings_and_writes_booleans_in_lower_case() -> None:
    spec = {"name": "r", "workload": {"trace": "/t.swf", "seed": 3, "paired": True, "other": False},
            "family": [{"name": "a", "cap": [1, 2], "keepalive": ["fixed:0.1"], "ratio": 0.5}]}
    assert cluster.toml(spec) == ('name = "r"\n[workload]\ntrace = "/t.swf"\nseed = 3\npaired = true\nother = false\n'
                                  '\n[[family]]\nname = "a"\ncap = [1, 2]\nkeepalive = ["fixed:0.1"]\nratio = 0.5\n')


def test_settings_and_flags_name_only_the_set_values() -> None:
    row = pd.Series({"family": "P1 cap", "cap": 4, "merge": None, "keepalive": "fixed:0.1",
                     "idle_timeout_min": float("nan"), "delay_min": 2.5, "burst_ratio": None,
                     "wait_next_hour_min": 15.0, "charging": None, "boot_s": None, "cost": 3.0})
    assert cluster._settings(row) == "cap = 4, keepalive = fixed:0.1, delay_min = 2.5, wait_next_hour_min = 15"
    assert cluster._flags(row) == "--cap 4 --keepalive fixed:0.1 --delay 2.5 --wait-next-hour 15 "
    other = pd.Series({"idle_timeout_min": 30.0, "burst_ratio": 0.25})
    assert cluster._settings(other) == "idle_timeout_min = 30, burst_ratio = 0.25"
    assert cluster._flags(other) == "--idle-timeout 30 --burst-ratio 0.25 "
    assert cluster._flags(pd.Series({"cost": 1.0})) == "" and cluster._settings(pd.Series({"cost": 1.0})) == ""
    assert cluster._value(5) == "5" and cluster._value(2.0) == "2" and cluster._value("x y") == "x y"


# --- the whole section on a small generated workload (300 jobs; 5,001 processors in all) --------------------------


def test_the_cluster_grid_its_front_and_the_pick(generated: ReportInput) -> None:
    import tomllib

    import joblib

    budget = Budget(600.0, clock=Clock())
    with joblib.parallel_config(backend="threading", n_jobs=1):
        s = cluster.run(fresh(generated), budget)
    assert (s.key, s.title, s.status) == ("cluster", "A cluster run wholly on the cloud", "done")
    spec = tomllib.loads(s.files["cluster_grid.toml"])
    # the trace as the commands name it, relative to the report's folder (where cluster sweep is run)
    assert spec["name"] == "report" and spec["workload"] == {"trace": "g.swf", "seed": 0}
    caps = spec["family"][1]["cap"]
    assert spec["family"][:1] == [{"name": "end of the paid hour"}] and spec["family"][1]["name"] == "P1 cap"
    assert spec["family"][2:] == cluster.families(1)[2:]  # the families without a cap do not depend on the peak
    cells = 1 + len(caps) + 3 + 3 + 2 + 2
    assert budget.planned == pytest.approx(est("cluster_cell", 300, runs=cells))
    table = s.tables["cluster_grid"]
    assert list(table.columns) == ["family", "settings", "cost", "instance_cost", "egress_cost", "overhead_mean_s",
                                   "overhead_p95_s", "instances", "pareto"]
    assert len(table) == cells and table["family"].iloc[0] == "end of the paid hour"
    assert table["settings"].iloc[0] == "" and table["settings"].iloc[1] == f"cap = {caps[0]}"
    n = s.numbers
    assert (n["jobs"], n["cells"], n["on_front"]) == (300, cells, int(table["pareto"].sum()))
    assert n["cheapest_cost"] == table["cost"].min() and n["lowest_overhead_s"] == table["overhead_mean_s"].min()
    front = table[table["pareto"]]
    within = front[front["overhead_mean_s"] <= 600.0]
    best = (within.iloc[int(np.argmin(within["cost"].to_numpy(float)))] if len(within) else
            front.iloc[int(np.argmin(front["overhead_mean_s"].to_numpy(float)))])
    pick = n["recommended"]
    assert pick == {"family": best["family"], "settings": best["settings"], "cost": best["cost"],
                    "overhead_mean_s": best["overhead_mean_s"]}
    kept = ("the cheapest policy that keeps a job's mean overhead within ten minutes." if len(within) else
            "the lowest overhead of the grid: no policy keeps it within ten minutes.")
    assert s.recommendation == (f"Run {best['family']} ({best['settings'] or 'its defaults'}): ${best['cost']:,.2f} "
                                f"with {best['overhead_mean_s'] / 3600:.3g} h of mean overhead, {kept}")
    assert s.summary == (f"{cells} policies on 300 jobs; {n['on_front']} are on the front of cost against the mean "
                         f"overhead a job sees (its wait for an instance and the boot).")
    flags = {"cap": "--cap", "keepalive": "--keepalive", "idle_timeout_min": "--idle-timeout", "delay_min": "--delay",
             "wait_next_hour_min": "--wait-next-hour"}
    flag = "".join(f"{flags[part.split(' = ')[0]]} {part.split(' = ')[1]} " for part in best["settings"].split(", ")
                   if part)
    assert s.commands == [
        ("every cell of the grid", "cloudbroker cluster sweep cluster_grid.toml --out cluster-sweep --seed 0 --json"),
        ("the recommended point", f"cloudbroker cluster --trace g.swf --seed 0 {flag}--json")]
    assert [f.name for f in s.figures] == ["cluster_front.svg"]
    for text in (">Pareto front<", ">recommended<", ">cloud cluster: cost against overhead<", ">cost ($)<"):
        assert text in s.figures[0].svg, text


def test_the_cluster_grid_gives_the_numbers_of_cluster_sweep_on_its_file(generated: ReportInput, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import joblib

    from tests.conftest import cloudbroker

    with joblib.parallel_config(backend="threading", n_jobs=1):
        s = cluster.run(fresh(generated), Budget(600.0, clock=Clock()))
    monkeypatch.chdir(generated.path.parent)  # the report's folder, where the file names the trace g.swf
    (tmp_path / "cluster_grid.toml").write_text(s.files["cluster_grid.toml"])
    # the command of the page, in one process: the reference for the grid's cells and their seeds
    run = cloudbroker("cluster", "sweep", str(tmp_path / "cluster_grid.toml"), "--out", str(tmp_path / "sweep"),
                      "--seed", "0", "--json", "--n-jobs", "1")
    assert run.code == 0, run.err
    sweep = json.loads(run.out)
    table = s.tables["cluster_grid"]
    assert [row["family"] for row in sweep] == table["family"].tolist()
    assert [row["cost"] for row in sweep] == pytest.approx(table["cost"].tolist(), rel=1e-10, abs=0)
    assert [row["overhead_mean_s"] for row in sweep] == pytest.approx(table["overhead_mean_s"].tolist(), rel=1e-10)


def cluster_table(overheads: tuple[float, float, float, float]) -> pd.DataFrame:
    """Four hand-made cells: the default policy, a cap, a delay on the front; a keep-alive off it."""
    rows = [{"family": "end of the paid hour", "cost": 10.0, "pareto": True},
            {"family": "P1 cap", "cap": 2, "cost": 8.0, "pareto": True},
            {"family": "P4 delay", "delay_min": 5.0, "cost": 12.0, "pareto": True},
            {"family": "P3 keep-alive", "keepalive": "fixed:0.1", "cost": 11.0, "pareto": False}]
    table = pd.DataFrame([{"family": r["family"], **{k: r.get(k) for k in cluster.SETTINGS}, "cost": r["cost"],
                           "instance_cost": r["cost"], "egress_cost": 0.0, "overhead_mean_s": o,
                           "overhead_p95_s": 2 * o, "instances": 3, "pareto": r["pareto"]}
                          for r, o in zip(rows, overheads, strict=True)])
    return table


@pytest.mark.parametrize(("overheads", "expected", "command"), [
    # exactly ten minutes is within: the cheapest such front cell is the default policy
    ((600.0, 900.0, 100.0, 700.0),
     "Run end of the paid hour (its defaults): $10.00 with 0.167 h of mean overhead, the cheapest policy that keeps a "
     "job's mean overhead within ten minutes.", "cloudbroker cluster --trace g.swf --seed 0 --json"),
    # nothing within: the lowest overhead of the front
    ((601.0, 900.0, 650.0, 100.0),
     "Run end of the paid hour (its defaults): $10.00 with 0.167 h of mean overhead, the lowest overhead of the grid: "
     "no policy keeps it within ten minutes.", "cloudbroker cluster --trace g.swf --seed 0 --json"),
    ((601.0, 900.0, 600.0, 100.0),
     "Run P4 delay (delay_min = 5): $12.00 with 0.167 h of mean overhead, the cheapest policy that keeps a job's mean "
     "overhead within ten minutes.", "cloudbroker cluster --trace g.swf --seed 0 --delay 5 --json"),
])
def test_the_cluster_pick_on_a_hand_made_grid(generated: ReportInput, monkeypatch: pytest.MonkeyPatch,
                                              overheads: tuple[float, float, float, float], expected: str,
                                              command: str) -> None:
    monkeypatch.setattr(cluster, "run_sweep", lambda fn, todo, n_jobs: [])
    monkeypatch.setattr(cluster, "sweep_table", lambda configs, results: cluster_table(overheads))
    s = cluster.run(fresh(generated), Budget(600.0, clock=Clock()))
    assert s.recommendation == expected
    assert s.commands[1] == ("the recommended point", command)
    n = s.numbers
    assert (n["cells"], n["on_front"], n["cheapest_cost"]) == (4, 3, 8.0)
    assert n["lowest_overhead_s"] == min(overheads)
    assert s.summary == ("4 policies on 300 jobs; 3 are on the front of cost against the mean overhead a job sees "
                         "(its wait for an instance and the boot).")
    assert s.tables["cluster_grid"]["settings"].tolist() == ["", "cap = 2", "delay_min = 5", "keepalive = fixed:0.1"]


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


def test_the_cluster_figure_draws_each_family_the_front_and_the_pick(drawn: list[Any]) -> None:
    table = cluster_table((600.0, 900.0, 100.0, 700.0))
    figure = cluster._figure(table, table.iloc[0])
    assert figure.caption == ("Every policy of the grid: its cost and the mean overhead a job sees; the line joins "
                              "the Pareto front, the circle marks the recommended point.")
    (ax,) = drawn[0].axes
    *families, pick = ax.collections
    assert [c.get_label() for c in families] == ["end of the paid hour", "P1 cap", "P4 delay", "P3 keep-alive"]
    assert [c.get_sizes().tolist() for c in families] == [[18.0]] * 4
    assert families[1].get_offsets().tolist() == [[0.25, 8.0]]  # overheads in hours, the page's unit for waits
    (front,) = ax.lines  # by overhead
    assert data(front, "x") == [100 / 3600, 600 / 3600, 900 / 3600] and data(front, "y") == [12.0, 10.0, 8.0]
    assert (front.get_color(), front.get_linestyle(), front.get_linewidth()) == ("k", "-", 0.8)
    assert front.get_label() == "Pareto front"
    assert pick.get_offsets().tolist() == [[600 / 3600, 10.0]] and pick.get_sizes().tolist() == [120.0]
    assert pick.get_label() == "recommended" and len(pick.get_facecolor()) == 0
    assert pick.get_edgecolor().tolist() == [list(rgba("tab:red"))] and pick.get_linewidth().tolist() == [1.5]
    assert ax.get_xscale() == "symlog" and ax.xaxis.get_transform().linthresh == 0.01
    assert ax.get_xlabel() == "mean overhead per job (h, logarithmic above 0.01 h)" and ax.get_ylabel() == "cost ($)"
    legend = ax.get_legend()
    assert legend.get_texts()[0].get_fontsize() == 6 and legend._ncols == 2
