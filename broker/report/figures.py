"""Figures as SVG text: vector graphics that scale to the page, embedded in the report as they are written."""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

#: Size (inches) of a report figure: wide and short, so that two fit a laptop's screen.
SIZE = (8.0, 3.4)
_STYLE: Any = {"svg.hashsalt": "cloudbroker-report", "svg.fonttype": "none", "axes.grid": True,
              "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False, "font.size": 9}


def new(ncols: int = 1) -> tuple[Any, Any]:
    """A figure and its axes in the report's style."""
    with plt.rc_context(_STYLE):
        return plt.subplots(1, ncols, figsize=SIZE, layout="constrained")


def svg(fig: Any) -> str:
    """The figure as SVG text (no date in its metadata: the same figure gives the same text); closes it."""
    buffer = io.StringIO()
    with plt.rc_context(_STYLE):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()
