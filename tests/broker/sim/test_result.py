"""The shared result shape: summary dictionaries and the wait figures, by hand."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from broker.sim.result import SummaryMixin, wait_figures


@dataclass(frozen=True, slots=True)
class Figures(SummaryMixin):
    cost: float
    jobs: int


def test_to_dict_is_the_dataclass_fields() -> None:
    assert Figures(1.5, 3).to_dict() == {"cost": 1.5, "jobs": 3}


def test_wait_figures_are_the_mean_the_95th_percentile_and_the_maximum() -> None:
    # linear interpolation between order statistics: rank 0.95 x 4 = 3.8, between 30 and 40 -> 38
    assert wait_figures(np.array([40.0, 0.0, 20.0, 10.0, 30.0])) == (20.0, 38.0, 40.0)
    assert wait_figures(np.array([5.0])) == (5.0, 5.0, 5.0)
    assert wait_figures(np.array([])) == (0.0, 0.0, 0.0)
    assert all(type(x) is float for x in wait_figures(np.array([1, 2], dtype=np.int64)))
