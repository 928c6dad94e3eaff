"""The paper's figure as a matplotlib object (no file I/O here: the CLI and notebooks save or show it).

Cost over on-demand against the slack (deadline less work, hours), one line per policy, the mean
over zones of each zone's mean over its starts (Wu et al., NSDI 2024, Figure 9's axes).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

#: Line styles of the policies, in the order the legend lists them.
STYLES = {"on-demand": ("black", "-"), "greedy": ("tab:orange", "--"), "uniform-progress": ("tab:blue", "-"),
          "failover": ("tab:green", ":"), "omniscient": ("tab:gray", "-.")}


def cost_against_slack(comparison: pd.DataFrame, *, title: str = "") -> Figure:
    """Mean cost / on-demand per slack and policy from :func:`broker.spot.sweep.comparison`'s table."""
    means = comparison.groupby(["policy", "slack_h"])["cost_over_on_demand"].mean().unstack("policy")
    fig = Figure(figsize=(6.0, 4.0))
    ax = fig.add_subplot()
    for policy in [p for p in STYLES if p in means.columns] + [p for p in means.columns if p not in STYLES]:
        color, line = STYLES.get(policy, ("tab:purple", "-"))
        ax.plot(means.index, means[policy], marker="o", color=color, linestyle=line, label=policy)
    ax.set_xlabel("slack: deadline - work (h)")
    ax.set_ylabel("cost / on-demand cost")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
