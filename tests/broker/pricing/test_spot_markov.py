"""A generated market not from ``../shared/spot``: :func:`markov_timeline` and its trace-file form."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from broker.pricing.spot import Timeline, markov_timeline, parse_timeline, timeline_document
from workloads.errors import ConfigError


def spells(counts: np.ndarray, state: int) -> np.ndarray:
    """Lengths (ticks) of the runs of ``state``, the last one cut by the end left out."""
    edges = np.flatnonzero(np.diff(np.r_[-1, counts, -1]))
    starts, ends = edges[:-1], edges[1:]
    keep = (counts[starts] == state) & (ends < len(counts))
    return (ends - starts)[keep]


def test_spells_of_one_tick_alternate_open_and_closed_from_open() -> None:
    # every tick an open market closes and a closed one opens: 1, 0, 1, 0, ... whatever the draws
    t = markov_timeline("m", gap_s=60, ticks=7, mean_open_s=60, mean_closed_s=60, seed=4)
    assert t.counts.tolist() == [1, 0, 1, 0, 1, 0, 1]
    assert (t.name, t.gap_s, t.prices) == ("m", 60, None) and not t.counts.flags.writeable


def test_spells_last_their_means_and_a_seed_repeats_its_market() -> None:
    t = markov_timeline("m", gap_s=600, ticks=50_000, mean_open_s=6000, mean_closed_s=1800, seed=2)
    assert 9.5 < spells(t.counts, 1).mean() < 10.5  # 6000 / 600 ticks
    assert 2.85 < spells(t.counts, 0).mean() < 3.15  # 1800 / 600 ticks
    again = markov_timeline("m", gap_s=600, ticks=50_000, mean_open_s=6000, mean_closed_s=1800, seed=2)
    assert np.array_equal(t.counts, again.counts)


def test_the_document_reads_back_as_the_same_timeline() -> None:
    t = markov_timeline("m", gap_s=300, ticks=50, mean_open_s=1500, mean_closed_s=600, seed=1)
    back = parse_timeline(Path("m.json"), timeline_document(t))
    assert (back.name, back.gap_s, back.counts.tolist(), back.prices) == ("m", 300, t.counts.tolist(), None)
    priced = Timeline("p", 60, np.array([1, 0]), np.array([0.5, 0.7]))
    assert timeline_document(priced) == {"metadata": {"gap_seconds": 60}, "data": [1, 0], "prices": [0.5, 0.7]}


@pytest.mark.parametrize("kwargs", [{"gap_s": 0}, {"ticks": 0}, {"mean_open_s": 59.0}, {"mean_closed_s": 10.0}])
def test_a_markov_market_out_of_range_is_refused(kwargs: dict[str, float]) -> None:
    given = {"gap_s": 60, "ticks": 5, "mean_open_s": 600.0, "mean_closed_s": 60.0} | kwargs
    with pytest.raises(ConfigError, match="Markov"):
        markov_timeline("m", seed=0, **given)  # type: ignore[arg-type]


def test_a_one_tick_market_of_one_second_ticks_is_accepted_and_open() -> None:
    t = markov_timeline("m", gap_s=1, ticks=1, mean_open_s=1.0, mean_closed_s=1.0, seed=0)
    assert (t.gap_s, t.counts.tolist()) == (1, [1])


def test_a_draw_equal_to_the_close_or_open_probability_changes_nothing() -> None:
    # per tick the market changes when the draw u < p (probability exactly p): u == p keeps it as it is
    u = np.random.default_rng(0).random(2).tolist()
    assert 1 / (1 / u[0]) == u[0] and 1 / (1 / u[1]) == u[1]  # the means below give p = u exactly
    # p_close = u[0]: still open after the first draw; then u[1] < u[0] closes it
    t = markov_timeline("m", gap_s=1, ticks=3, mean_open_s=1 / u[0], mean_closed_s=1.0, seed=0)
    assert u[1] < u[0] and t.counts.tolist() == [1, 1, 0]
    # p_close = 1 closes it at once; p_open = u[1]: still closed after the second draw
    t = markov_timeline("m", gap_s=1, ticks=3, mean_open_s=1.0, mean_closed_s=1 / u[1], seed=0)
    assert t.counts.tolist() == [1, 0, 0]
