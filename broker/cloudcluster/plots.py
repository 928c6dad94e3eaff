"""Cloud-cluster figures as matplotlib objects (no file I/O here: the CLI and notebooks save or show them).

Cost against mean overhead with the Pareto front marked (the cloud-cluster paper's Figures 7,
10-14) and the benefit ``B_c`` of raising the cap (Figure 8).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure


def pareto(table: pd.DataFrame, *, title: str = "") -> Figure:
    """Cost against mean overhead, one marker per family; the front of all cells joined and circled."""
    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = fig.add_subplot()
    markers = "osD^vP*Xh<>p"
    for i, (family, rows) in enumerate(table.groupby("family", sort=False)):
        ax.scatter(rows["overhead_mean_s"], rows["cost"], s=18, marker=markers[i % len(markers)], label=family)
    front = table[table["pareto"]].sort_values("overhead_mean_s")
    ax.plot(front["overhead_mean_s"], front["cost"], color="black", linewidth=0.8, label="Pareto front")
    ax.scatter(front["overhead_mean_s"], front["cost"], s=60, facecolors="none", edgecolors="black")
    ax.set_xscale("log")
    ax.set_xlabel("mean overhead per job (s, log scale)")
    ax.set_ylabel("cost ($)")
    ax.legend(fontsize="small")
    ax.set_title(title or "cost against overhead")
    return fig


def cap_benefit(table: pd.DataFrame, *, title: str = "") -> Figure:
    """``B_c`` against the cap (equation 7), one line per ``bc_group``: dollars per second of mean overhead saved."""
    fig = Figure(figsize=(7, 3.5), layout="constrained")
    ax = fig.add_subplot()
    for group, rows in table.dropna(subset=["benefit_bc"]).groupby("bc_group", sort=False):
        rows = rows.sort_values("cap", key=lambda c: c.astype(float))
        ax.plot(rows["cap"].astype(float), rows["benefit_bc"], marker="o", label=group)
    ax.set_yscale("symlog", linthresh=1e-4)
    ax.set_xlabel("maximum instances c")
    ax.set_ylabel("B_c ($ per s of mean overhead)")
    ax.legend(fontsize="small")
    ax.set_title(title or "benefit of raising the cap")
    return fig
