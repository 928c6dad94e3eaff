"""The paper's comparison as a sweep: zones x slacks x policies, each over the same random starts.

A cell (:func:`slack_cell`) is one policy on one zone's timeline at one slack, over a list of start
ticks, a pure function of its configuration; :func:`configs` builds the grid, drawing each zone's
starts once (from the seed, for the largest deadline) so that every policy and every slack is
measured on the same starts. :func:`comparison` gives the mean cost over on-demand per (zone,
slack, policy); :func:`findings` the checks of the issue (orderings, misses, the gap ratio).

Configuration keys: ``file``, ``convention``, ``work_h``, ``slack_h``, ``overhead_h``, ``policy``,
``starts`` (ticks), ``on_demand``, ``spot_price`` ($/h), ``notice_s``, ``checkpoint``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from broker.pricing.spot import PAPER_ON_DEMAND, PAPER_SPOT, SpotMarket, load_timeline
from broker.spot.simulate import START_COLUMNS, run_starts, start_ticks
from broker.spot.world import SpotJob
from broker.sweep import Cell, Memo

#: The version of the cells' meaning (part of every cell's key): v2 since greedy's safety net and Uniform
#: Progress's hysteresis follow the paper's text and its authors' code.
CELL_NAME = "spot-v2"
HOUR = 3600.0
#: Timelines this process has read, by (file, convention).
TIMELINES: Memo[Any] = Memo(size=16)


def job_of(config: dict[str, Any]) -> SpotJob:
    """The cell's job."""
    work = config["work_h"] * HOUR
    return SpotJob(work, work + config["slack_h"] * HOUR, config["overhead_h"] * HOUR, config.get("checkpoint", True))


def market_of(config: dict[str, Any]) -> SpotMarket:
    """The cell's one-zone market."""
    key = (config["file"], config["convention"])
    zone = TIMELINES.get(key, lambda: load_timeline(config["file"], convention=config["convention"]))
    return SpotMarket((zone,), on_demand=config["on_demand"], spot_price=config["spot_price"],
                      notice_s=config["notice_s"])


def slack_cell(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """One policy on one zone at one slack over the configured starts: a row per start."""
    rows = run_starts(market_of(config), job_of(config), [config["policy"]], config["starts"])
    return {"rows": rows.to_dict(orient="list")}


def configs(files: Sequence[str], *, slacks_h: Sequence[float], policies: Sequence[str], starts: int, seed: int,
            work_h: float = 48.0, overhead_h: float = 0.2, on_demand: float = PAPER_ON_DEMAND,
            spot_price: float = PAPER_SPOT, notice_s: float = 120.0, convention: str = "available",
            checkpoint: bool = True) -> list[dict[str, Any]]:
    """The grid, zone-major; each zone's starts drawn once for the largest slack (see the module docstring)."""
    out = []
    for file in files:
        base = {"file": str(file), "convention": convention, "work_h": work_h, "overhead_h": overhead_h,
                "on_demand": on_demand, "spot_price": spot_price, "notice_s": notice_s, "checkpoint": checkpoint}
        widest = job_of({**base, "slack_h": max(slacks_h)})
        ticks = start_ticks(market_of({**base}), widest, starts, seed=seed)
        out += [{**base, "slack_h": float(s), "policy": p, "starts": ticks} for s in slacks_h for p in policies]
    return out


def zone_names(files: Iterable[str]) -> dict[str, str]:
    """Each file's zone: its stem, or its folder and stem where two files share a stem."""
    files = list(dict.fromkeys(files))
    stems = [Path(f).stem for f in files]
    return {f: (s if stems.count(s) == 1 else f"{Path(f).parent.name}/{s}") for f, s in zip(files, stems, strict=True)}


def sweep_table(cells: Sequence[Cell], results: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per (zone, slack, policy, start)."""
    names = zone_names(c.config["file"] for c in cells)
    frames = []
    for cell, result in zip(cells, results, strict=True):
        rows = pd.DataFrame(result["rows"], columns=list(START_COLUMNS))
        rows.insert(0, "slack_h", cell.config["slack_h"])
        rows.insert(0, "zone", names[cell.config["file"]])
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def comparison(table: pd.DataFrame) -> pd.DataFrame:
    """Mean cost, cost over on-demand, misses and preemptions per (zone, slack, policy)."""
    return (table.groupby(["zone", "slack_h", "policy"], sort=True)
            .agg(cost=("cost", "mean"), cost_over_on_demand=("cost_over_on_demand", "mean"),
                 deadline_misses=("missed", "sum"), preemptions=("preemptions", "sum"), starts=("start", "size"))
            .reset_index())


def findings(table: pd.DataFrame, *, tolerance: float = 1e-9) -> dict[str, Any]:
    """The issue's checks per slack: misses, omniscient <= UP <= on-demand per zone, UP vs greedy, the gap ratio.

    The gap ratio at a slack is UP's cost above the omniscient one summed over zones, over greedy's
    (``None`` with its reason when greedy's gap is zero). Orderings compare each zone's mean cost.
    """
    means = comparison(table).pivot_table(index=["slack_h", "zone"], columns="policy", values="cost")
    out: dict[str, Any] = {"deadline_misses": int(table["missed"].sum())}
    for slack, frame in means.groupby(level="slack_h"):
        entry: dict[str, Any] = {}
        if {"omniscient", "uniform-progress", "on-demand"} <= set(frame.columns):
            up = frame["uniform-progress"]
            entry["omniscient_le_up_zones"] = int((frame["omniscient"] <= up * (1 + tolerance)).sum())
            entry["up_le_on_demand_zones"] = int((up <= frame["on-demand"] * (1 + tolerance)).sum())
            entry["zones"] = len(frame)
        if {"greedy", "uniform-progress"} <= set(frame.columns):
            entry["up_mean"], entry["greedy_mean"] = float(frame["uniform-progress"].mean()), \
                float(frame["greedy"].mean())
        if {"greedy", "uniform-progress", "omniscient"} <= set(frame.columns):
            up_gap = float((frame["uniform-progress"] - frame["omniscient"]).sum())
            greedy_gap = float((frame["greedy"] - frame["omniscient"]).sum())
            entry["gap_ratio"] = up_gap / greedy_gap if greedy_gap > 0 else None
        out[f"{slack:g}"] = entry
    return out
