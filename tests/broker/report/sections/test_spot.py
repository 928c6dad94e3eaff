"""The spot section (:mod:`broker.report.sections.spot`): the accrual and the texts by hand, the figure on hand-made
VMs, a bad ``--spot`` refused before any work, and ``cloudbroker report --spot`` on KTH-SP2's first 400 jobs, whose
numbers are those of the ``simulate`` runs its page gives."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.report import build
from broker.report.sections import SECTIONS, coh, spot
from tests.broker.cli.test_refusals import boom, one_line
from tests.broker.report.hand_made import data, est, run_command
from tests.conftest import SPOT_DIR, cloudbroker, trace_path

R5 = SPOT_DIR / "skypilot-spot-traces" / "preemption" / "1-node" / "aws-04-19-2023" / "us-east-1b_intel_64.json"
KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
#: KTH-SP2's first 400 jobs span 2.6 days of the r5 market: 3 preemptions, 6 restarts (seed 0).
JOBS = 400

# --- the accrual and the texts by hand ---------------------------------------------------------------------------


def test_each_amount_accrues_evenly_over_its_life_and_an_empty_life_whole_at_its_start() -> None:
    # [0, 10) 10 $ (1 $/s); [5, 5) 3 $ (whole at 5); [4, 8) 8 $ (2 $/s)
    at = [-1.0, 0.0, 4.0, 5.0, 6.0, 8.0, 10.0, 20.0]
    got = spot.accrued(np.array([0.0, 5.0, 4.0]), np.array([10.0, 5.0, 8.0]), np.array([10.0, 3.0, 8.0]),
                       np.array(at))
    assert got.tolist() == pytest.approx([0.0, 0.0, 4.0, 5 + 3 + 2, 6 + 3 + 4, 8 + 3 + 8, 21.0, 21.0])


def test_the_budget_plans_the_replay_with_spot_in_cohs_share() -> None:
    assert coh.cost(400, spot=True) - coh.cost(400) == pytest.approx(est("coh_spot", 400)) == 0.05 + 1e-4 * 400
    assert coh.cost(400, ipp=False, spot=True) - coh.cost(400, ipp=False) == pytest.approx(0.05 + 1e-4 * 400)


def _numbers(saving: float, checkpoint: float | None = None) -> dict[str, Any]:
    market = {"market": "z", "file": "z.json", "available": 0.85, "spot_price_ratio_min": 0.316,
              "spot_price_ratio_max": 0.35, "notice_s": 120.0, "checkpoint_s": checkpoint, "restart_overhead_s": 60.0}
    off = {"cost": 100.0, "wait_mean_s": 0.0, "wait_p95_s": 0.0}
    on = {"cost": 100.0 - saving, "on_demand_cost": 80.0 - saving, "spot_cost": 20.0, "preemptions": 1200,
          "jobs_restarted": 3, "jobs_restarted_pct": 7.5, "restarts": 4, "lost_s": 7200.0, "wait_mean_s": 1800.0,
          "wait_p95_s": 3600.0}
    return {"market": market, "on_demand_only": off, "with_spot": on, "saving": saving,
            "saving_fraction": saving / 100.0}


def test_the_spot_texts_name_the_market_the_parts_the_lost_work_and_the_waits() -> None:
    summary, advice = spot._texts(_numbers(10.0))
    assert summary == ("On the market z (z.json; open 85% of the time, spot at 0.32-0.35 of on-demand, a 120 s notice; "
                       "jobs restart from scratch), CoH over the trio costs $90.00 with spot ($70.00 on demand, $20.00 "
                       "spot) against $100.00 on demand only. 1,200 spot VMs were preempted; 3 jobs (7.5%) restarted "
                       "4 times and lost 2 h of runs. Jobs wait 0.5 h on average (1 h at the 95th percentile) with "
                       "spot, 0 h (0 h) on demand only.")
    assert advice == ("Rent spot VMs while the market is open: 10.0% ($10.00) saved, at 2 h of lost runs and a mean "
                      "wait of 0.5 h against 0 h.")
    assert spot._texts(_numbers(10.0) | {"coh_ipp_on_demand_cost": 90.0})[0] == summary  # not below the spot run
    cheaper = spot._texts(_numbers(10.0) | {"coh_ipp_on_demand_cost": 89.99})[0]
    assert cheaper == summary + (" CoH with its integer program (the CoH section) costs $89.99 on demand, less than "
                                 "the trio with spot; it was not replayed with spot.")
    summary, _ = spot._texts(_numbers(10.0, checkpoint=600.0))
    assert "; jobs resume from a checkpoint every 600 s of work (+60 s to restart)), CoH" in summary
    assert spot._texts(_numbers(-5.0))[1] == "Stay on demand: with spot CoH costs 5.0% more here."
    assert spot._texts(_numbers(0.0))[1] == "Stay on demand: spot saves nothing here."  # a tie: no reason to change
    nothing = _numbers(0.0) | {"saving_fraction": None}
    assert spot._texts(nothing)[1] == "Stay on demand."


# --- the figure on hand-made VMs ---------------------------------------------------------------------------------

DAY = 86400.0


def _vms(rows: list[tuple[float, float, float, float, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["hired_at", "released_at", "cost", "billed_hours", "option"])


def test_the_spot_figure_draws_the_accrued_costs_and_the_weekly_hours_by_option(drawn: list[Any]) -> None:
    without = _vms([(0.0, 2 * DAY, 10.0, 48.0, "on-demand")])
    spotted = _vms([(0.0, DAY, 4.0, 24.0, "on-demand"), (DAY, 2 * DAY, 2.0, 24.0, "spot"),
                    (8 * DAY, 8 * DAY, 1.0, 1.0, "spot")])  # released as it started: whole in week 1
    figure = spot._figure(without, spotted)
    assert figure.name == "spot_costs.svg" and figure.caption.startswith("Left: the cost accrued by each day")
    left, right = drawn[0].axes
    own, total, on_demand = left.lines
    assert [line.get_label() for line in left.lines] == ["on demand only", "with spot", "with spot: its on-demand VMs"]
    assert data(own, "x")[0] == 0.0 and data(own, "x")[-1] == 8.0  # days, from the first start to the last release
    assert data(own, "y")[-1] == pytest.approx(10.0) and data(total, "y")[-1] == pytest.approx(7.0)
    assert data(on_demand, "y")[-1] == pytest.approx(4.0) and on_demand.get_linestyle() == "--"
    half = int(np.searchsorted(data(own, "x"), 1.0))  # 1 day in: half the 2-day VM's cost
    assert data(own, "y")[half] == pytest.approx(5.0 * data(own, "x")[half])
    bars = right.patches[:-1]  # the last patch: the run on demand only, as stairs
    heights = [(b.get_x(), b.get_height(), b.get_y()) for b in bars]
    assert heights == [(0.0, 24.0, 0.0), (1.0, 0.0, 0.0), (0.0, 24.0, 24.0), (1.0, 1.0, 0.0)]  # on-demand, then spot
    assert [t.get_text() for t in right.get_legend().get_texts()] == ["on demand only", "with spot: on-demand",
                                                                      "with spot: spot"]
    assert right.get_ylim() == pytest.approx((0.0, 1.45 * 48.0))  # room above the tallest week for the legend
    stairs = right.patches[-1]
    assert stairs.get_data().values.tolist() == [48.0, 0.0] and stairs.get_data().edges.tolist() == [0.0, 1.0, 2.0]


# --- refusals -----------------------------------------------------------------------------------------------------



@pytest.mark.parametrize(("args", "words"), [
    (("--spot", "missing.json"), ("missing.json", "cannot be read")),
    (("--spot", "gap0.json"), ("gap0.json", "metadata.gap_seconds")),
    (("--checkpoint-s", "600"), ("--checkpoint-s", "--spot FILE")),
    (("--spot", str(R5), "--restart-overhead-s", "60"), ("--restart-overhead-s", "--checkpoint-s")),
    (("--spot", str(R5), "--spot-fraction", "0.5"), ("--spot-fraction", "has prices")),
], ids=["missing-file", "bad-gap", "checkpoint-without-spot", "overhead-without-checkpoint", "fraction-with-prices"])
def test_a_bad_spot_market_is_refused_in_one_line_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...], words: tuple[str, ...]) -> None:
    monkeypatch.setattr("broker.report.build_report", boom)
    monkeypatch.setattr("broker.cli.inputs.trace", boom)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gap0.json").write_text('{"metadata": {"gap_seconds": 0}, "data": [1, 0]}')
    line = one_line(cloudbroker("report", "--trace", KTH, "--out", "r", *args))
    assert all(w in line for w in words), line
    assert not (tmp_path / "r").exists()


# --- the report on KTH-SP2's first 400 jobs, against the simulate runs its page gives ----------------------------


@pytest.fixture(scope="module")
def kth_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``cloudbroker report --spot`` on KTH's first 400 jobs with the trace, CoH and spot sections only (time)."""
    out = tmp_path_factory.mktemp("spot") / "r"
    kept = tuple(s for s in SECTIONS if s[0] in ("trace", "coh", "spot"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "SECTIONS", kept)
        run = cloudbroker("report", "--trace", KTH, "--limit-jobs", str(JOBS), "--spot", str(R5), "--checkpoint-s",
                          "900", "--restart-overhead-s", "30", "--out", str(out), "--json")
    assert run.code == 0, run.err
    return out


def _section(out: Path) -> dict[str, Any]:
    (s,) = [s for s in json.loads((out / "report.json").read_text())["sections"] if s["key"] == "spot"]
    return s


def test_the_spot_sections_numbers_are_those_of_simulate_with_and_without_spot(kth_report: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(kth_report)  # the commands read trace.swf beside the page and the market relative to it
    s = _section(kth_report)
    assert s["status"] == "done" and s["skipped_parts"] == []
    n = s["numbers"]
    assert (n["jobs"], n["jobs_in_trace"]) == (JOBS, JOBS)
    (what_off, off_cmd), (what_on, on_cmd) = ((c["what"], c["command"]) for c in s["commands"])
    assert (what_off, what_on) == (spot.ON_DEMAND, spot.WITH_SPOT)
    assert on_cmd.startswith(off_cmd + " --spot ") and on_cmd.endswith(
        "us-east-1b_intel_64.json --checkpoint-s 900.0 --restart-overhead-s 30.0")
    off = cloudbroker(*shlex.split(off_cmd)[1:])
    on = cloudbroker(*shlex.split(on_cmd)[1:], "--out", "on")
    assert off.code == 0 and on.code == 0, (off.err, on.err)
    plain, spotted = json.loads(off.out), json.loads(on.out)
    assert plain["cost"] == n["on_demand_only"]["cost"] == n["on_demand_only"]["on_demand_cost"]
    assert n["on_demand_only"]["spot_cost"] == 0.0 and n["on_demand_only"]["preemptions"] == 0
    with_spot = n["with_spot"]
    assert spotted["cost"] == with_spot["cost"]
    assert spotted["cost_by_option"] == {"on-demand": with_spot["on_demand_cost"], "spot": with_spot["spot_cost"]}
    for key in ("preemptions", "restarts", "lost_s", "wait_mean_s", "wait_p95_s", "instance_hours",
                "timeline_repeats"):
        assert spotted[key] == with_spot[key], key
    for key in ("wait_mean_s", "wait_p95_s", "instance_hours"):
        assert plain[key] == n["on_demand_only"][key], key
    assert with_spot["preemptions"] > 0 and with_spot["restarts"] > 0  # the slice does meet the market's closes
    jobs = pd.read_parquet(kth_report / "on" / "jobs.parquet")
    assert with_spot["jobs_restarted"] == int((jobs["restarts"] > 0).sum()) > 0
    assert with_spot["jobs_restarted_pct"] == pytest.approx(100 * with_spot["jobs_restarted"] / JOBS)
    assert n["saving"] == pytest.approx(plain["cost"] - spotted["cost"])
    assert n["saving_fraction"] == pytest.approx(n["saving"] / plain["cost"])
    assert n["market"]["market"] == "us-east-1b_intel_64" and n["market"]["file"] == str(R5)
    assert (n["market"]["checkpoint_s"], n["market"]["restart_overhead_s"]) == (900.0, 30.0)
    assert n["market"]["options"] == "--checkpoint-s 900.0 --restart-overhead-s 30.0"
    report = json.loads((kth_report / "report.json").read_text())
    (coh_numbers,) = [c["numbers"] for c in report["sections"] if c["key"] == "coh"]
    assert n["coh_ipp_on_demand_cost"] == coh_numbers["policies"]["CoH + IPP"]["cost"]


def test_the_spot_figure_and_table_are_written_and_on_the_page(kth_report: Path) -> None:
    s = _section(kth_report)
    assert s["figures"] == [{"file": "figures/spot_costs.svg", "caption": s["figures"][0]["caption"]}]
    svg = (kth_report / "figures" / "spot_costs.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and ">cost accrued by each day<" in svg
    page = (kth_report / "index.html").read_text()
    section = page.split('<section id="spot">')[1].split("</section>")[0]
    assert section.count('src="data:image/svg+xml;base64,') == 1 and s["summary"].split(" (")[0] in section
    table = pd.read_parquet(kth_report / s["tables"]["spot_runs"])
    assert table["run"].tolist() == [spot.ON_DEMAND, spot.WITH_SPOT]
    assert table["cost"].tolist() == [s["numbers"]["on_demand_only"]["cost"], s["numbers"]["with_spot"]["cost"]]
    summary = json.loads((kth_report / "report.json").read_text())["summary"]
    assert [line["what"] for line in summary] == ["Policy", "Spot"]


def test_on_a_slice_of_cohs_jobs_the_spot_section_runs_the_same_slice_and_plans_nothing(
        kth_report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from broker.cli.spot_options import SPOT_OPTIONS, spot_config
    from broker.coh.config import CohConfig, SimulationConfig
    from broker.coh.simulate import simulate
    from broker.pricing.book import load_price_book
    from broker.report.budget import Budget
    from broker.report.build import report_input
    from broker.report.model import ReportConfig, SpotSetting
    from tests.broker.report.hand_made import Clock

    market = SpotSetting(spot_config(R5, {k: default for k, (_, default) in SPOT_OPTIONS.items()}), str(R5))
    inp = report_input(ReportConfig(trace=str(kth_report / "trace.swf"), spot=market), tmp_path)  # KTH's first 400
    budget = Budget(600.0, clock=Clock())
    s = spot.run(inp, budget)
    assert (s.status, s.why) == ("skipped", "the CoH replay it is set against did not run")
    slice_ = JOBS // 2  # as if the CoH section's share held only the first half
    jobs = coh.broker_jobs(inp).head(slice_)
    inp.shared["coh_jobs_run"] = slice_
    inp.shared["coh_trio_result"] = simulate(jobs, load_price_book().catalog(), config=SimulationConfig(
        CohConfig("coh")), seed=coh.cli_seeds(0)[1])
    s = spot.run(inp, budget)
    assert s.status == "done" and budget.planned == 0.0  # planned in the CoH section's share
    assert s.skipped_parts == [f"ran on the first {slice_:,} of {JOBS:,} jobs (the budget)"]
    assert s.numbers["jobs"] == slice_ and s.numbers["jobs_in_trace"] == JOBS
    monkeypatch.chdir(tmp_path)  # the commands name the trace and the market relative to the report's folder
    for (_, command), key in zip(s.commands, ("on_demand_only", "with_spot"), strict=True):
        assert f" --limit-jobs {slice_} " in command
        assert run_command(command)["cost"] == s.numbers[key]["cost"], key
