"""The spot market as data: timelines read and refused, windows that repeat, hazard stand-ins, advisor, billing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from broker.pricing.spot import (
    SpotBilling,
    SpotMarket,
    Timeline,
    advisor_entry,
    hazard_timeline,
    load_timeline,
)
from tests.conftest import P3_ZONES_DIR, spot_path
from workloads.errors import ConfigError, InputError, UnknownName


def write(tmp_path: Path, doc: Any, name: str = "zone.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_a_shared_zone_reads_with_its_tick_length_and_availability() -> None:
    zone = load_timeline(P3_ZONES_DIR / "us-east-1a_v100_1.json")
    assert (zone.name, zone.gap_s, len(zone)) == ("us-east-1a_v100_1", 195, 20_158)
    assert zone.available == pytest.approx(0.167, abs=0.0005)  # SOURCES.md: 0.17
    assert zone.prices is None and not zone.counts.flags.writeable


def test_the_preemption_trace_carries_its_price_per_tick() -> None:
    zone = load_timeline(spot_path("skypilot-spot-traces/preemption/1-node/aws-04-19-2023/us-east-1b_intel_64.json"))
    assert zone.prices is not None and len(zone.prices) == len(zone) == 16_090
    assert 1.27 < zone.prices.min() <= zone.prices.max() < 1.42


def test_the_failed_convention_reads_one_as_a_failed_launch(tmp_path: Path) -> None:
    path = write(tmp_path, {"metadata": {"gap_seconds": 60}, "data": [1, 0, 0, 1]})
    assert load_timeline(path, convention="failed").counts.tolist() == [0, 1, 1, 0]
    assert load_timeline(path).counts.tolist() == [1, 0, 0, 1]


@pytest.mark.parametrize(("doc", "message"), [
    ("{not json", "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ([1, 0], "expected a JSON object with metadata and data, got list"),
    ({"data": [1]}, "metadata.gap_seconds is missing"),
    ({"metadata": {"gap_seconds": 0}, "data": [1]},
     "metadata.gap_seconds must be a whole number of seconds > 0, got 0"),
    ({"metadata": {"gap_seconds": 1.5}, "data": [1]},
     "metadata.gap_seconds must be a whole number of seconds > 0, got 1.5"),
    ({"metadata": {"gap_seconds": True}, "data": [1]},
     "metadata.gap_seconds must be a whole number of seconds > 0, got True"),
    ({"metadata": {"gap_seconds": 60}}, "data is missing or not a list"),
    ({"metadata": {"gap_seconds": 60}, "data": []}, "data is empty"),
    ({"metadata": {"gap_seconds": 60}, "data": [1, 0.5]}, "data[1] must be a whole number >= 0, got 0.5"),
    ({"metadata": {"gap_seconds": 60}, "data": [1, -1]}, "data[1] must be a whole number >= 0, got -1"),
    ({"metadata": {"gap_seconds": 60}, "data": [True]}, "data[0] must be a whole number >= 0, got True"),
    ({"metadata": {"gap_seconds": 60}, "data": ["1"]}, "data[0] must be a whole number >= 0, got '1'"),
    ({"metadata": {"gap_seconds": 60}, "data": [1, 1], "prices": [1.0]},
     "prices must be a list of 2 prices (one a tick, as data), got 1"),
    ({"metadata": {"gap_seconds": 60}, "data": [1, 1], "prices": [1.0, 0]},
     "prices[1] must be a price > 0 ($/h), got 0"),
])
def test_bad_syntax_is_refused_naming_the_file_and_field(tmp_path: Path, doc: Any, message: str) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(InputError) as info:
        load_timeline(path)
    assert str(info.value) == f"{path}: {message}"


def test_a_one_second_tick_is_a_tick() -> None:
    assert load_timeline_doc({"metadata": {"gap_seconds": 1}, "data": [1]}).gap_s == 1


def load_timeline_doc(doc: Any) -> Timeline:
    from broker.pricing.spot import parse_timeline

    return parse_timeline(Path("doc.json"), doc)


def test_an_unknown_convention_and_a_count_under_failed_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, {"metadata": {"gap_seconds": 60}, "data": [2, 0]})
    with pytest.raises(UnknownName) as unknown:
        load_timeline(path, convention="busy")
    assert str(unknown.value) == "unknown availability convention 'busy': use one of available, failed"
    with pytest.raises(InputError) as failed:
        load_timeline(path, convention="failed")
    assert str(failed.value) == f"{path}: the 'failed' convention (1 = the launch failed) takes 0 and 1 only"


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_timeline(tmp_path / "none.json")
    assert str(info.value) == f"{tmp_path / 'none.json'}: cannot be read (No such file or directory)"


def zone(counts: list[int], gap: int = 100, name: str = "z", prices: list[float] | None = None) -> Timeline:
    return Timeline(name, gap, np.array(counts), None if prices is None else np.array(prices))


def test_a_window_longer_than_the_timeline_repeats_it_from_its_start_and_says_how_often() -> None:
    market = SpotMarket((zone([1, 0, 1]), zone([0, 1, 1, 1, 1, 1, 1, 1])))
    w = market.window(2, 6)
    assert w.counts.tolist() == [[1, 1, 0, 1, 1, 0], [1, 1, 1, 1, 1, 1]]
    assert w.repeats == 2 + 0  # the 3-tick zone restarts twice (ticks 3 and 6), the 8-tick one never
    assert market.window(0, 3).repeats == 0 and market.window(0, 4).repeats == 1
    assert w.counts.dtype == np.int64 and not w.counts.flags.writeable and not w.prices.flags.writeable
    for start, ticks in ((-1, 3), (0, 0)):
        with pytest.raises(ConfigError, match="needs start >= 0 and ticks > 0"):
            market.window(start, ticks)


def test_zone_prices_come_from_the_file_else_the_markets_spot_price() -> None:
    market = SpotMarket((zone([1, 1], prices=[2.0, 3.0]), zone([1, 1])), spot_price=0.5)
    assert market.window(1, 2).prices.tolist() == [[3.0, 2.0], [0.5, 0.5]]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"zones": ()}, "^a spot market needs at least one zone$"),
    ({"on_demand": 0.0}, "on-demand price must be > 0"),
    ({"spot_price": float("nan")}, "spot price must be > 0"),
    ({"notice_s": -1.0}, "notice period must be >= 0"),
])
def test_a_market_refuses_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SpotMarket(**{"zones": (zone([1]),), **kwargs})


def test_zones_on_different_ticks_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"same tick, got gaps of \[60, 100\]"):
        SpotMarket((zone([1]), zone([1], gap=60)))


def test_a_hazard_timeline_is_seeded_and_its_bucket_sets_how_often_it_drops() -> None:
    a = hazard_timeline("h", 4, gap_s=600, ticks=50_000, seed=3)
    assert np.array_equal(a.counts, hazard_timeline("h", 4, gap_s=600, ticks=50_000, seed=3).counts)
    calm = hazard_timeline("h", 0, gap_s=600, ticks=50_000, seed=3)
    drops = [int(np.sum(np.diff(t.counts) < 0)) for t in (calm, a)]
    assert a.counts[0] == 1 and drops[0] < drops[1]
    # bucket 4: 25 % a month, 50,000 ticks of 600 s = 11.6 months, minus the time spent down
    assert 1 <= drops[1] <= 8
    with pytest.raises(ConfigError, match="bucket is 0-4"):
        hazard_timeline("h", 5, gap_s=600, ticks=10, seed=0)


def test_the_advisor_gives_savings_and_a_bucket_or_refuses_an_unknown_type() -> None:
    doc = json.loads(spot_path("aws-spot-advisor-2025-06.json").read_text())
    savings, bucket = advisor_entry(doc, "us-east-1", "p3.2xlarge")
    raw = doc["spot_advisor"]["us-east-1"]["Linux"]["p3.2xlarge"]
    assert (savings, bucket) == (raw["s"] / 100.0, raw["r"]) and 0 < savings < 1 and bucket in range(5)
    assert advisor_entry(entry(0, 4), "r", "t") == (0.0, 4)
    for s, r in ((100, 0), (-1, 0), (50, 5)):
        with pytest.raises(InputError) as info:
            advisor_entry(entry(s, r), "r", "t")
        assert str(info.value) == f"advisor entry r/Linux/t is out of range: s={s / 100.0}, r={r}"
    with pytest.raises(UnknownName, match=r"no p9\.huge"):
        advisor_entry(doc, "us-east-1", "p9.huge")


def entry(s: int, r: int) -> dict[str, Any]:
    return {"spot_advisor": {"r": {"Linux": {"t": {"s": s, "r": r}}}}}


def test_billing_per_second_per_hour_and_the_free_interrupted_hour() -> None:
    assert SpotBilling().hours(5400.0, interrupted=True) == 1.5
    hourly = SpotBilling("hour")
    assert hourly.hours(5400.0, interrupted=True) == 2.0 and hourly.hours(3600.0, interrupted=False) == 1.0
    free = SpotBilling("hour", interrupted_hour_free=True)
    assert free.hours(5400.0, interrupted=True) == 1.0 and free.hours(5400.0, interrupted=False) == 2.0
    assert free.hours(600.0, interrupted=True) == 0.0 and free.hours(7200.0, interrupted=True) == 2.0
    assert free.hours(10800.0, interrupted=True) == 3.0 and hourly.hours(3600.5, interrupted=False) == 2.0
    with pytest.raises(ConfigError, match="per 'second' or 'hour'"):
        SpotBilling("minute")  # type: ignore[arg-type]


@pytest.mark.parametrize(("doc", "message"), [
    ({"metadata": {"gap_seconds": float("inf")}, "data": [1]},
     "metadata.gap_seconds must be a whole number of seconds > 0, got inf"),
    ({"metadata": {"gap_seconds": 60}, "data": [1], "prices": [float("inf")]},
     "prices[0] must be a price > 0 ($/h), got inf"),
    ({"metadata": {"gap_seconds": 60}, "data": [1], "prices": [True]}, "prices[0] must be a price > 0 ($/h), got True"),
    ({"metadata": {"gap_seconds": 60}, "data": [1], "prices": "1.0"},
     "prices must be a list of 1 prices (one a tick, as data), got str"),
])
def test_infinite_gaps_and_prices_and_prices_that_are_no_list_are_refused(doc: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        load_timeline_doc(doc)
    assert str(info.value) == f"doc.json: {message}"


def test_counts_are_whole_numbers_and_prices_floats_both_read_only() -> None:
    zone = load_timeline_doc({"metadata": {"gap_seconds": 60}, "data": [1.0, 0.0], "prices": [2, 3]})
    assert zone.counts.dtype == np.int64 and zone.counts.tolist() == [1, 0]
    assert zone.prices is not None and zone.prices.dtype == np.float64 and not zone.prices.flags.writeable
    assert SpotMarket((zone,)).window(0, 1).counts.tolist() == [[1]]


def test_a_hazard_timeline_keeps_its_name_and_tick_and_its_outages_last_their_mean() -> None:
    day = 86400
    zone = hazard_timeline("stand-in", 4, gap_s=day, ticks=100_000, seed=5, mean_outage_s=10 * day)
    assert (zone.name, zone.gap_s, zone.counts.dtype) == ("stand-in", day, np.int64) and not zone.counts.flags.writeable
    edges = np.flatnonzero(np.diff(np.concatenate([[1], zone.counts, [1]])))
    downs = edges[1::2] - edges[::2]  # lengths of the runs of 0
    assert len(downs) > 500 and 9.0 < downs.mean() < 11.0  # p_up = 1 / 10 a tick
    assert len(hazard_timeline("h", 0, gap_s=1, ticks=1, seed=0, mean_outage_s=1.0)) == 1
    for kwargs in ({"gap_s": 0, "ticks": 5}, {"gap_s": 60, "ticks": 0},
                   {"gap_s": 60, "ticks": 5, "mean_outage_s": 59.0}):
        with pytest.raises(ConfigError) as info:
            hazard_timeline("h", 1, seed=0, **kwargs)  # type: ignore[arg-type]
        assert str(info.value).startswith("a hazard timeline needs gap_s > 0, ticks > 0 and mean_outage_s >= gap_s")


def test_a_hazard_timeline_outage_lasts_an_hour_by_default() -> None:
    # the default mean outage is 3600 s: hourly ticks are accepted, ticks of 3601 s are refused
    assert len(hazard_timeline("h", 4, gap_s=3600, ticks=3, seed=0)) == 3
    with pytest.raises(ConfigError, match=r"mean_outage_s >= gap_s, got 3601, 3, 3600\.0$"):
        hazard_timeline("h", 4, gap_s=3601, ticks=3, seed=0)
