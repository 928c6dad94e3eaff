"""The reservations section (:mod:`broker.report.sections.reservations`): its texts and fractions by hand, the
figure. The whole section runs after CoH's in ``test_coh.py``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from broker.report.sections import reservations
from tests.broker.report.hand_made import data

# --- the texts and rows on hand-made tables -----------------------------------------------------------------------


def test_the_reservation_texts_and_fractions() -> None:
    assert reservations._fraction(1.0, 4.0) == 0.25
    assert reservations._fraction(1.0, 0.5) == 2.0  # any whole above 0 divides
    assert reservations._fraction(1.0, 0.0) is None and reservations._fraction(1.0, -2.0) is None
    nothing: Any = SimpleNamespace(plan=SimpleNamespace(counts={}))
    assert reservations._texts({}, nothing) == ("The demand never holds steady enough for a reservation to pay.",
                                                "Stay on demand: no reservation breaks even on this demand.")
    plan: Any = SimpleNamespace(plan=SimpleNamespace(counts={("m1.small", "reserved-heavy"): 2,
                                                             ("c1.medium", "reserved-light"): 1}))
    n: dict[str, object] = {"predicted_savings_fraction": 0.25, "replayed_savings_fraction": 0.1,
                            "coh_r_cost": 1234.5, "coh_on_demand_cost": 1371.666}
    assert reservations._texts(n, plan) == (
        "Reserve 1 c1.medium light, 2 m1.small heavy (1-year term): predicted 25.0% below all on demand. Replayed "
        "with CoH-R: $1,234.50 against $1,371.67 on demand.",
        "Buy the plan: CoH-R saves 10.0% when it is replayed on the trace.")
    n["replayed_savings_fraction"] = -0.05
    assert reservations._texts(n, plan)[1] == "Do not buy it yet: replayed, CoH-R costs 5.0% more than CoH on demand."
    n["replayed_savings_fraction"] = 0.0  # no saving is no reason to buy
    assert reservations._texts(n, plan)[1].startswith("Do not buy it yet: replayed, CoH-R costs")
    assert reservations._texts({"predicted_savings_fraction": None}, plan) == (
        "Reserve 1 c1.medium light, 2 m1.small heavy (1-year term).",
        "Buy the plan if the coming year's demand looks like the trace's (not replayed: budget).")


# --- the figure: what it draws, read from the matplotlib figure itself --------------------------------------------


class FakeDemand:
    interval_s = 3600.0
    types = ("small", "large")
    counts = np.array([[1, 0], [3, 2], [4, 1]])

    def __len__(self) -> int:
        return 3


def test_the_reservations_figure_draws_the_demand_by_day_and_the_reserved_levels(drawn: list[Any]) -> None:
    report: Any = SimpleNamespace(plan=SimpleNamespace(counts={("small", "reserved-heavy"): 2,
                                                               ("small", "reserved-light"): 1}))
    figure = reservations._figure(FakeDemand(), report)  # type: ignore[arg-type]
    assert figure.caption == ("VMs CoH bills in each hour, by type, and the instances the plan reserves (dashed).")
    (ax,) = drawn[0].axes
    small, reserved, large = ax.lines  # no line for a type without reservations
    assert data(small, "x") == [0.0, 1 / 24, 2 / 24] and data(small, "y") == [1, 3, 4]
    assert (small.get_linewidth(), small.get_label()) == (0.6, "small VMs billed")
    assert data(reserved, "y") == [3, 3] and reserved.get_color() == small.get_color()
    assert (reserved.get_linestyle(), reserved.get_linewidth(), reserved.get_label()) == ("--", 1.0,
                                                                                        "small reserved (3)")
    assert data(large, "y") == [0, 2, 1] and large.get_label() == "large VMs billed"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("day", "VMs")
    legend = ax.get_legend()
    assert legend._loc == 1 and legend.get_texts()[0].get_fontsize() == 7  # 1: upper right
