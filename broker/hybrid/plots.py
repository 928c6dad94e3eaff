"""Leasing figures as matplotlib objects (no file I/O here: the CLI and notebooks save or show them).

Balance against constant V (the Q-learning paper's Figure 5) and balance over time (Figure 6).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from broker.hybrid.metrics import Balance


def balance_vs_v(constant: Mapping[int, Balance], best_v: int, *, title: str = "") -> Figure:
    """Balance, twt_imp % and c % of every constant V (Figure 5)."""
    fig = Figure(figsize=(7, 3.5), layout="constrained")
    ax = fig.add_subplot()
    v = list(constant)
    ax.plot(v, [b.balance for b in constant.values()], label="balance")
    ax.plot(v, [b.twt_imp_pct for b in constant.values()], label="twt_imp %", alpha=0.6)
    ax.plot(v, [b.c_pct for b in constant.values()], label="c %", alpha=0.6)
    ax.axvline(best_v, color="grey", linestyle=":")
    ax.set_xlabel("constant V (cloud nodes)")
    ax.set_ylabel("percent")
    ax.legend()
    ax.set_title(title or "balance against constant V")
    return fig


def balance_over_time(curves: Mapping[str, np.ndarray], *, step_label: str = "day", title: str = "") -> Figure:
    """The balance so far after each step, one line per policy (Figure 6)."""
    fig = Figure(figsize=(7, 3.5), layout="constrained")
    ax = fig.add_subplot()
    for label, curve in curves.items():
        ax.plot(np.arange(1, len(curve) + 1), curve, label=label)
    ax.set_xlabel(step_label)
    ax.set_ylabel("balance so far")
    ax.legend()
    ax.set_title(title or "balance over time")
    return fig
