"""``cloudbroker spot``: a run against the library's, files, a small sweep with its figure, refusals before work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from broker.pricing.spot import SpotMarket, load_timeline
from broker.spot.simulate import run_starts, start_ticks, summarize
from broker.spot.world import SpotJob
from tests.conftest import P3_ZONES_DIR, cloudbroker, without_timing

EAST_1A, WEST_2A = (str(P3_ZONES_DIR / f"{z}_v100_1.json") for z in ("us-east-1a", "us-west-2a"))
#: 12 h of work by 16 h, 0.2 h overhead, 3 starts: a second's work.
SMALL = ("--work-h", "12", "--deadline-h", "16", "--starts", "3", "--seed", "7")


def run_json(*args: str) -> dict[str, Any]:
    run = cloudbroker("spot", *args, "--json")
    assert run.code == 0, run.err
    return json.loads(run.out)


def test_a_run_reports_the_librarys_means_over_the_same_seeded_starts() -> None:
    got = run_json("--availability", EAST_1A, WEST_2A, *SMALL, "--policy", "greedy")
    market = SpotMarket((load_timeline(EAST_1A), load_timeline(WEST_2A)))
    job = SpotJob(12 * 3600, 16 * 3600, 720)
    rows = run_starts(market, job, ["greedy"], start_ticks(market, job, 3, seed=7))
    assert {k: got[k] for k in summarize(rows)} == summarize(rows)
    assert got["zones"] == ["us-east-1a_v100_1", "us-west-2a_v100_1"] and got["deadline_misses"] == 0
    assert got["on_demand_cost"] == pytest.approx(3.06 * 12.2)
    assert without_timing(run_json("--availability", EAST_1A, WEST_2A, *SMALL, "--policy", "greedy")) == \
        without_timing(got)


def test_out_writes_one_row_per_start_and_the_summary(tmp_path: Path) -> None:
    got = run_json("--availability", EAST_1A, *SMALL, "--policy", "uniform-progress", "--out", str(tmp_path / "o"))
    rows = pd.read_csv(tmp_path / "o" / "starts.csv")
    assert len(rows) == 3 and rows["cost"].mean() == pytest.approx(got["cost"])
    assert json.loads((tmp_path / "o" / "summary.json").read_text()) == without_timing(got)


def test_a_sweep_runs_every_zone_alone_at_each_slack_and_draws_the_figure(tmp_path: Path) -> None:
    got = run_json("--availability", EAST_1A, WEST_2A, "--work-h", "4", "--sweep", "1,2", "--starts", "2",
                   "--policy", "on-demand,greedy,uniform-progress,omniscient", "--out", str(tmp_path / "s"))
    table = pd.read_csv(tmp_path / "s" / "starts.csv")
    assert len(table) == 2 * 2 * 4 * 2 and set(table["zone"]) == {"us-east-1a_v100_1", "us-west-2a_v100_1"}
    assert (tmp_path / "s" / "cost_over_on_demand.png").stat().st_size > 10_000
    assert got["cost_over_on_demand"]["1"]["on-demand"] == 1.0 and got["findings"]["deadline_misses"] == 0
    assert got["findings"]["2"]["omniscient_le_up_zones"] == 2


@pytest.mark.parametrize(("args", "message"), [
    ((), "--availability FILE [FILE ...] is required"),
    (("--availability", "missing.json"), "missing.json: cannot be read"),
    (("--availability", EAST_1A, "--deadline-h", "40"), "--deadline-h 40 must exceed --work-h 48"),
    (("--availability", EAST_1A, "--policy", "lucky"), "--policy takes on-demand, greedy"),
    (("--availability", EAST_1A, "--policy", "greedy,omniscient"), "several, comma-separated, with --sweep"),
    (("--availability", EAST_1A, "--policy", "omniscient", "--billing", "hour"), "for per-second billing"),
    (("--availability", EAST_1A, "--policy", "omniscient", "--overhead-h", "0.0001"), "needs whole seconds"),
    (("--availability", EAST_1A, "--billing", "minute"), "--billing must be second or hour"),
    (("--availability", EAST_1A, "--convention", "busy"), "--convention must be one of available, failed"),
    (("--availability", EAST_1A, "--sweep", "4,x"), "--sweep takes slacks in hours"),
    (("--availability", EAST_1A, "--sweep", "0,4"), "every slack must be in (0, 87600] h"),
    (("--availability", EAST_1A, "--sweep", "4", "--billing", "hour"), "--sweep bills per second"),
    (("--availability", EAST_1A, "--store", "cells"), "--store keeps a sweep's cells: give --sweep"),
    (("--availability", EAST_1A, "--sweep", "4", "--store", "spot.json"), "--store spot.json: a file is there"),
])
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spot.json").write_text("{}")
    run = cloudbroker("spot", *args)
    assert run.code == 2 and run.out == ""
    assert run.err.startswith("error: ") and run.err.count("\n") == 1 and message in run.err


def test_a_sweep_takes_zones_on_different_ticks_and_names_zones_that_share_a_stem(tmp_path: Path) -> None:
    for folder, gap in (("a", 195), ("b", 600)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "zone.json").write_text(json.dumps({"metadata": {"gap_seconds": gap}, "data": [1] * 400}))
    got = run_json("--availability", str(tmp_path / "a" / "zone.json"), str(tmp_path / "b" / "zone.json"),
                   "--work-h", "2", "--sweep", "1", "--starts", "1", "--policy", "greedy")
    assert got["zones"] == ["a/zone", "b/zone"]
    assert got["cost_over_on_demand"]["1"]["greedy"] == pytest.approx(0.9731 * 2.2 / (3.06 * 2.2))


def test_a_trace_with_bad_syntax_is_refused_naming_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "zone.json"
    bad.write_text(json.dumps({"metadata": {"gap_seconds": 60}, "data": [1, 0, 2.5]}))
    run = cloudbroker("spot", "--availability", EAST_1A, str(bad))
    assert run.code == 2 and f"error: {bad}: data[2] must be a whole number >= 0, got 2.5" in run.err


def test_a_sweep_with_a_store_keeps_each_cell_and_resumes_from_them(tmp_path: Path) -> None:
    args = ("--availability", EAST_1A, "--work-h", "2", "--sweep", "1,2", "--starts", "2",
            "--policy", "on-demand,greedy", "--store", str(tmp_path / "cells"))
    first = run_json(*args)
    stored = sorted((tmp_path / "cells").rglob("*.json"))
    assert len(stored) == 2 * 2  # a cell per (slack, policy)
    # a resumed sweep reads its cells from the store: one edited there shows in the result
    envelope = next(e for e in (json.loads(p.read_text()) for p in stored)
                    if e["config"]["policy"] == "greedy" and e["config"]["slack_h"] == 1.0)
    path = next(p for p in stored if json.loads(p.read_text())["key"] == envelope["key"])
    envelope["result"]["rows"]["cost_over_on_demand"] = [0.5, 0.25]
    path.write_text(json.dumps(envelope))
    again = run_json(*args)
    assert again["cost_over_on_demand"]["1"]["greedy"] == pytest.approx(0.375)
    assert without_timing(again)["cost_over_on_demand"]["2"] == without_timing(first)["cost_over_on_demand"]["2"]
