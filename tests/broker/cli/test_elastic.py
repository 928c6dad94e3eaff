"""``cloudbroker elastic`` on slices of LPC-EGEE: the figures against the library's, the pool's rules, files, sweeps.

Every run here is a window of two days (about 2,250 one-core jobs) or one day (about 1,300) from
day 91, the start of the paper's eight weeks, with 100 jobs trimmed at each end.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from broker.elastic.simulate import run_elastic
from broker.elastic.sweep import FIGURES
from broker.elastic.world import PoolConfig
from tests.conftest import SOURCES_JOBS, cloudbroker, trace_path, without_timing
from workloads.cache import load_trace
from workloads.cores import CoreJobs, cores_view

NAME = "LPC-EGEE-2004-1.2-cln.swf.gz"
LPC = str(trace_path(NAME))
DAY = 86400.0
#: Two days from day 91 (2,250 jobs), 100 jobs out of the statistics at each end.
TWO_DAYS = ("--first-day", "91", "--days", "2", "--trim", "100")
SARSA = ("--policy", "sarsa", "--pretrain", "200", "--retrain-every", "200")


def run_json(*args: str) -> dict[str, Any]:
    run = cloudbroker("elastic", "--trace", LPC, *args, "--json")
    assert run.code == 0, run.err
    return json.loads(run.out)


def window(first_day: float, days: float) -> CoreJobs:
    """The one-core jobs the CLI's window holds, built here from the library."""
    swf = load_trace(LPC)
    every, _ = cores_view(swf.frame, origin=float(swf.header.unix_start_time or 0))
    return every.window(float(every.submit[0]) + first_day * DAY, days * DAY)


def running_at(jobs: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """How many jobs run at the end of each instant of ``times`` (started by then, not yet ended)."""
    start, end = jobs["start"].to_numpy(), jobs["end"].to_numpy()
    return ((start[None, :] <= times[:, None]) & (end[None, :] > times[:, None])).sum(axis=1)


@pytest.fixture(scope="module")
def fcfs() -> dict[str, Any]:
    return run_json("--policy", "fcfs", *TWO_DAYS)


# -- one run ---------------------------------------------------------------------------------------------------
def test_fcfs_json_is_what_run_elastic_gives_on_the_same_window(fcfs: dict[str, Any]) -> None:
    jobs = window(91, 2)
    direct = run_elastic(jobs, PoolConfig(81), "fcfs", lam=0.5, trim=100).summary.to_dict()
    assert len(jobs) == 2250 and direct["jobs"] == len(jobs)
    assert {k: fcfs[k] for k in direct} == direct  # every figure, exactly (JSON keeps floats exact)
    for key in ("w_interactive_mean", "w_batch_mean", "share_interactive_wait_over_120s", "utilization",
                "mean_cores", "core_hours", "peak_cores", "span_s"):
        assert isinstance(fcfs[key], int | float), key
    # the view's counts: LPC-EGEE holds 234,889 jobs, 14,194 of them without a run time
    assert fcfs["jobs_in"] == SOURCES_JOBS[NAME] and fcfs["jobs_removed"] == {"run time unknown or < 0": 14_194}
    assert fcfs["jobs_in"] - sum(fcfs["jobs_removed"].values()) == fcfs["jobs_kept"] == 220_695
    # a rigid pool: its size throughout, every job dispatched by one decision, 100 jobs left out at each end
    assert fcfs["mean_cores"] == fcfs["peak_cores"] == fcfs["cores"] == fcfs["min_cores"] == fcfs["max_cores"] == 81
    assert fcfs["resizes"] == 0 and fcfs["trainings"] == 0 and fcfs["sarsa"] is None
    assert fcfs["decisions"] == fcfs["jobs"] == 2250 and fcfs["jobs_counted"] == 2250 - 200
    assert fcfs["core_hours"] == pytest.approx(fcfs["mean_cores"] * fcfs["span_s"] / 3600, rel=1e-12)
    assert fcfs["utilization"] == pytest.approx(jobs.runtime.sum() / (fcfs["core_hours"] * 3600), rel=1e-12)
    assert (fcfs["mode"], fcfs["policy"], fcfs["lam"], fcfs["estimate"]) == ("rigid", "fcfs", 0.5, "oracle")


def test_the_logs_own_schedule_is_computed_from_the_traces_wait_column(fcfs: dict[str, Any]) -> None:
    """The ``native`` figures, recomputed here from the SWF columns without the library's job view."""
    frame = load_trace(LPC).frame
    frame = frame[frame["run_time"].notna() & (frame["run_time"] >= 0)]
    submit = frame["submit_time"].to_numpy(dtype=float)
    first = submit[0] + 91 * DAY
    part = frame[(submit >= first) & (submit < first + 2 * DAY)].iloc[100:-100]
    runtime, wait = part["run_time"].to_numpy(dtype=float), part["wait_time"].to_numpy(dtype=float)
    w = np.where(runtime + wait > 0, runtime / np.maximum(runtime + wait, 1e-300), 1.0)
    interactive = runtime < 900
    native = fcfs["native"]
    assert native["jobs_without_wait"] == 0 and native["undefined"] == {}
    assert native["w_interactive_mean"] == pytest.approx(w[interactive].mean(), rel=1e-12)
    assert native["w_batch_mean"] == pytest.approx(w[~interactive].mean(), rel=1e-12)
    assert native["share_interactive_w_over_0_9"] == pytest.approx((w[interactive] > 0.9).mean(), rel=1e-12)
    assert native["share_interactive_wait_over_120s"] == pytest.approx((wait[interactive] > 120).mean(), rel=1e-12)
    assert native["wait_interactive_mean_s"] == pytest.approx(wait[interactive].mean(), rel=1e-12)
    assert native["w_interactive_mean"] != fcfs["w_interactive_mean"]  # the replay is not the log


def test_fcfs_writes_a_schedule_that_keeps_order_and_never_idles_a_core_a_job_waits_for(tmp_path: Path,
                                                                                         fcfs: dict[str, Any]) -> None:
    out = tmp_path / "run"
    payload = run_json("--policy", "fcfs", *TWO_DAYS, "--out", str(out), "--format", "csv")
    assert without_timing(payload) == without_timing(fcfs)
    for name in ("jobs.csv", "instances.csv", "summary.json", "pool.png", "responsiveness.png"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "pool.png").stat().st_size > 10_000 and (out / "responsiveness.png").stat().st_size > 10_000
    jobs = pd.read_csv(out / "jobs.csv")
    assert len(jobs) == payload["jobs"] and int(jobs["counted"].sum()) == payload["jobs_counted"]
    assert np.array_equal(jobs["wait"], jobs["start"] - jobs["submit"])
    assert np.array_equal(jobs["end"], jobs["start"] + jobs["runtime"]) and (jobs["wait"] >= 0).all()
    assert jobs["submit"].is_monotonic_increasing and jobs["start"].is_monotonic_increasing  # first come, first served
    busy = running_at(jobs, jobs["start"].to_numpy())
    assert busy.max() == 81  # never more than the pool; full at times
    waited = jobs["wait"].to_numpy() > 0
    assert waited.sum() > 100 and (running_at(jobs, jobs["submit"].to_numpy()[waited]) == 81).all()
    counted = jobs[jobs["counted"] & jobs["interactive"]]
    assert payload["w_interactive_mean"] == pytest.approx(counted["w"].mean(), rel=1e-12)
    assert payload["share_interactive_wait_over_120s"] == pytest.approx((counted["wait"] > 120).mean(), rel=1e-12)
    pool = pd.read_csv(out / "instances.csv")
    assert pool["cores"].tolist() == [81] and pool["core_s"].sum() / 3600 == pytest.approx(payload["core_hours"])
    summary = json.loads((out / "summary.json").read_text())
    assert "wall_s" not in summary and summary == without_timing(payload)
    again = cloudbroker("elastic", "--trace", LPC, "--policy", "fcfs", *TWO_DAYS, "--out", str(out), "--format", "csv")
    lines = again.err.splitlines()
    assert again.code == 2 and len(lines) == 1 and "--force" in lines[0] and f"--out {out}" in lines[0], again.err
    forced = cloudbroker("elastic", "--trace", LPC, "--policy", "sjf", *TWO_DAYS, "--out", str(out), "--format", "csv",
                         "--force")
    assert forced.code == 0, forced.err
    assert json.loads((out / "summary.json").read_text())["policy"] == "sjf"


def test_threshold_sizes_an_elastic_pool_within_its_bounds_and_holds(tmp_path: Path, fcfs: dict[str, Any]) -> None:
    out = tmp_path / "run"
    payload = run_json("--mode", "elastic", "--policy", "threshold", "--min-cores", "40", "--max-cores", "120",
                       "--hold", "600", *TWO_DAYS, "--out", str(out), "--format", "csv")
    pool = PoolConfig(81, elastic=True, min_cores=40, max_cores=120, hold_s=600)
    direct = run_elastic(window(91, 2), pool, "threshold", trim=100).summary.to_dict()
    assert {k: payload[k] for k in direct} == direct
    assert (payload["mode"], payload["policy"], payload["min_cores"], payload["max_cores"]) == \
           ("elastic", "fcfs+threshold", 40, 120)
    assert 40 <= payload["mean_cores"] <= 120 and payload["peak_cores"] <= 120 and payload["mean_cores"] != 81
    assert payload["resizes"] > 10 and payload["decisions"] == payload["jobs"] == 2250
    assert payload["core_hours"] == pytest.approx(payload["mean_cores"] * payload["span_s"] / 3600, rel=1e-12)
    periods, jobs = pd.read_csv(out / "instances.csv"), pd.read_csv(out / "jobs.csv")
    assert len(periods) == payload["resizes"] + 1 and periods["cores"].iloc[0] == 81
    assert periods["cores"].between(40, 120).all() and periods["cores"].max() == payload["peak_cores"]
    assert (np.diff(periods["start_s"].to_numpy()[1:]) >= 600).all()  # a size holds 600 s before the next change
    assert periods["core_s"].sum() / 3600 == pytest.approx(payload["core_hours"], rel=1e-12)
    starts = jobs["start"].to_numpy()
    size = periods["cores"].to_numpy()[np.searchsorted(periods["start_s"].to_numpy(), starts, side="right") - 1]
    assert (running_at(jobs, starts) <= size).all()  # the running jobs always fit the pool
    assert payload["utilization"] > fcfs["utilization"]  # fewer cores on average for the same work


def test_threshold_is_refused_on_a_rigid_pool_in_one_line() -> None:
    run = cloudbroker("elastic", "--trace", LPC, "--policy", "threshold", *TWO_DAYS)
    assert run.code == 2 and run.out == "" and run.err.count("\n") == 1, run
    assert run.err.startswith("error: ") and "--policy threshold sizes an elastic pool: add --mode elastic" in run.err


def test_sarsa_is_reproducible_from_its_seed_and_another_seed_decides_otherwise() -> None:
    first, again = run_json(*SARSA, *TWO_DAYS, "--seed", "1"), run_json(*SARSA, *TWO_DAYS, "--seed", "1")
    other = run_json(*SARSA, *TWO_DAYS, "--seed", "2")
    assert without_timing(first) == without_timing(again)
    differs = {k for k in without_timing(first) if first[k] != other[k]} - {"seed", "wall_s"}
    assert {"w_interactive_mean", "w_batch_mean", "fairness_mean"} <= differs
    assert first["sarsa"]["pretrain"] == first["sarsa"]["retrain_every"] == 200 and first["sarsa"]["levels"] == 17
    # 5 sweeps once pre-training ends, then one re-training every 200 decisions
    assert first["trainings"] == 5 + (first["decisions"] - 200) // 200 == 15
    assert first["decisions"] == first["jobs"] and first["mean_cores"] == 81 and first["policy"] == "sarsa"


def test_the_table_shows_the_run_beside_the_logs_own_schedule(fcfs: dict[str, Any]) -> None:
    run = cloudbroker("elastic", "--trace", LPC, "--policy", "fcfs", *TWO_DAYS)
    assert run.code == 0, run.err
    # the title is centred and wraps when the trace's path is long: only its start is fixed
    assert "the log's own schedule" in run.out and run.out.lstrip().startswith("fcfs on ")
    row = next(line for line in run.out.splitlines() if " w_interactive_mean " in line)
    assert f"{fcfs['w_interactive_mean']:,.3f}" in row and f"{fcfs['native']['w_interactive_mean']:,.3f}" in row
    row = next(line for line in run.out.splitlines() if " core_hours " in line)
    assert f"{fcfs['core_hours']:,.3f}" in row


# -- sweeps ----------------------------------------------------------------------------------------------------
#: One day from day 91 (1,289 jobs): FCFS, and SARSA with two seeds, on 81 rigid cores.
SWEEP = ("elastic", "sweep", "--trace", LPC, "--mode", "rigid", "--policy", "fcfs,sarsa", "--lambda", "0.5",
         "--estimate", "oracle", "--seeds", "2", "--first-day", "91", "--days", "1", "--trim", "100")


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A loky sweep with a store: ``store/`` and ``out/table.csv`` under the returned directory."""
    base = tmp_path_factory.mktemp("sweep")
    run = cloudbroker(*SWEEP, "--n-jobs", "1", "--store", str(base / "store"), "--out", str(base / "out"), "--json")
    assert run.code == 0, run.err
    table = pd.read_csv(base / "out" / "table.csv")
    rows = json.loads(run.out)
    assert [list(r) for r in rows] == [list(table.columns)] * 4
    assert [list(r.values()) for r in rows] == [[None if pd.isna(v) else v if isinstance(v, str) else
                                                 pytest.approx(v, rel=1e-15) for v in r]
                                                for r in table.itertuples(index=False)]
    return base


def stored(store: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(store.glob("*.json"))]


def test_sweep_has_a_row_per_run_and_the_logs_own_schedule_last(swept: Path) -> None:
    table = pd.read_csv(swept / "out" / "table.csv")
    assert table["policy"].tolist() == ["fcfs", "sarsa", "sarsa", "native"]  # the rule once, the learner per seed
    assert table["mode"].tolist() == ["rigid", "rigid", "rigid", "log"] and (table["jobs"] == 1289).all()
    assert table["lam"].iloc[:3].tolist() == [0.5] * 3 and table["estimate"].iloc[:3].tolist() == ["oracle"] * 3
    assert table.iloc[-1][["lam", "estimate", "seed", "utilization", "mean_cores"]].isna().all()
    assert (table["mean_cores"].iloc[:3] == 81).all() and (table["decisions"].iloc[:3] == 1289).all()
    assert table["trainings"].tolist()[:3] == [0, 5, 5] and table["seed"].iloc[1] != table["seed"].iloc[2]
    cells = stored(swept / "store")  # one file per run; the log's own schedule is not a cell
    assert len(cells) == 3 and sorted(c["config"]["policy"] for c in cells) == ["fcfs", "sarsa", "sarsa"]
    assert all(c["config"]["trace"] == LPC and c["config"]["days"] == 1 and c["config"]["trim"] == 100 for c in cells)
    # each row is the single run of its cell: FCFS, SARSA with the cell's own seed, and the log's schedule
    fcfs = run_json("--policy", "fcfs", "--first-day", "91", "--days", "1", "--trim", "100")
    assert {k: table[k].iloc[0] for k in FIGURES} == pytest.approx({k: fcfs[k] for k in FIGURES}, rel=1e-12)
    learner = next(c for c in cells if c["config"]["policy"] == "sarsa")
    sarsa = run_json("--policy", "sarsa", "--seed", str(learner["seed"]), "--first-day", "91", "--days", "1",
                     "--trim", "100")
    assert learner["result"] == {k: sarsa[k] for k in FIGURES}
    assert any(table.iloc[i][list(FIGURES)].tolist() == pytest.approx([sarsa[k] for k in FIGURES], rel=1e-12)
               for i in (1, 2))
    native = table.iloc[-1]
    assert native["w_interactive_mean"] == pytest.approx(fcfs["native"]["w_interactive_mean"], rel=1e-12)
    assert native["share_interactive_wait_over_120s"] == pytest.approx(
        fcfs["native"]["share_interactive_wait_over_120s"], rel=1e-12)


def test_sweep_resumes_from_its_store_running_only_the_missing_cells(swept: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import broker.elastic.sweep as elastic_sweep

    store = tmp_path / "store"
    shutil.copytree(swept / "store", store)
    ran: list[dict[str, Any]] = []
    cell = elastic_sweep.elastic_cell

    def counted_cell(config: dict[str, Any], seed: int) -> dict[str, Any]:
        ran.append(config)
        return cell(config, seed)

    monkeypatch.setattr(elastic_sweep, "elastic_cell", counted_cell)
    args = (*SWEEP, "--n-jobs", "1", "--store", str(store), "--out", str(tmp_path / "out"))
    assert cloudbroker(*args).code == 0 and ran == []  # every cell stored: nothing runs
    expected = (swept / "out" / "table.csv").read_text()
    assert (tmp_path / "out" / "table.csv").read_text() == expected
    refused = cloudbroker(*args)  # its table is in --out now
    assert refused.code == 2 and "--force" in refused.err and refused.err.count("\n") == 1
    sorted(store.glob("*.json"))[0].unlink()
    again = cloudbroker(*args, "--force")
    assert again.code == 0 and len(ran) == 1 and len(list(store.glob("*.json"))) == 3
    assert (tmp_path / "out" / "table.csv").read_text() == expected


def test_sweep_on_a_local_dask_cluster_writes_the_loky_table(swept: Path, tmp_path: Path) -> None:
    run = cloudbroker(*SWEEP, "--backend", "dask", "--n-jobs", "2", "--out", str(tmp_path / "out"))
    assert run.code == 0, run.err
    assert (tmp_path / "out" / "table.csv").read_text() == (swept / "out" / "table.csv").read_text()


def test_sweep_table_keeps_each_runs_seed_exactly(swept: Path) -> None:
    seeds = sorted(c["seed"] for c in stored(swept / "store"))
    text = (swept / "out" / "table.csv").read_text().splitlines()
    written = sorted(int(line.split(",")[4]) for line in text[1:4])
    assert written == seeds


def test_the_sizes_chosen_are_the_sizes_held_longest_by_hand() -> None:
    from broker.cli.elastic import sizes_chosen

    periods = pd.DataFrame({"start_s": [0.0, 100.0, 400.0, 500.0], "end_s": [100.0, 400.0, 500.0, 1000.0],
                            "cores": [30, 40, 30, 50]})
    # 50 cores 500 s, 40 cores 300 s, 30 cores 100 + 100 s: of 1,000 s
    assert sizes_chosen(periods) == [[50, 0.5], [40, 0.3], [30, 0.2]]
    assert sizes_chosen(periods, top=1) == [[50, 0.5]]
    tie = pd.DataFrame({"start_s": [0.0, 10.0], "end_s": [10.0, 20.0], "cores": [60, 30]})
    assert sizes_chosen(tie) == [[30, 0.5], [60, 0.5]]  # a tie: the smaller first (groupby sorts the sizes)
    assert sizes_chosen(pd.DataFrame({"start_s": [5.0], "end_s": [5.0], "cores": [30]})) == []
