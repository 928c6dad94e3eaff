"""``cloudbroker plan-reservations --spot``: refusals before any work, and the mix replayed on a KTH slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.broker.cli.test_refusals import boom, one_line
from tests.broker.cli.test_simulate_spot import KTH, R5
from tests.conftest import cloudbroker


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr("broker.cli.plan.replay_demand", boom)
    monkeypatch.setattr("broker.cli.plan.replay_mix", boom)
    monkeypatch.setattr("broker.cli.inputs.workload", boom)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gap0.json").write_text('{"metadata": {"gap_seconds": 0}, "data": [1, 0]}')
    (tmp_path / "plan.json").write_text('{"term_years": 1, "reservations": []}')
    (tmp_path / "demand.csv").write_text("large,small\n1,0\n")
    return tmp_path


@pytest.mark.parametrize(("args", "words"), [
    (("--checkpoint-s", "600"), ("--checkpoint-s", "--spot FILE")),
    (("--spot-fraction", "0.5"), ("--spot-fraction", "--spot FILE")),
    (("--spot", "gap0.json"), ("gap0.json", "metadata.gap_seconds")),
    (("--spot", "plan.json"), ("plan.json",)),
    (("--spot", R5, "--demand", "demand.csv"), ("--spot", "--demand")),
    (("--spot", R5, "--growth", "2"), ("--growth", "--spot")),
    (("--spot", R5, "--restart-overhead-s", "60"), ("--restart-overhead-s", "--checkpoint-s")),
], ids=["checkpoint-without-spot", "fraction-without-spot", "bad-gap", "not-a-timeline", "with-a-demand-file",
        "with-growth", "overhead-without-checkpoint"])
def test_bad_spot_input_is_refused_in_one_line_before_any_work(no_work: Path, args: tuple[str, ...],
                                                               words: tuple[str, ...]) -> None:
    line = one_line(cloudbroker("plan-reservations", *args))
    assert all(w in line for w in words), line


def test_the_mix_on_a_kth_slice_is_the_cheaper_candidate_and_simulate_gives_each_replay(tmp_path: Path) -> None:
    base = ("--trace", KTH, "--limit-jobs", "1000")
    run = cloudbroker("plan-reservations", *base, "--spot", R5, "--json")
    assert run.code == 0, run
    out = json.loads(run.out)
    replays = out["replays"]
    assert list(replays) == sorted(["on_demand", "reserved_only", "market_priced", "reserved_base", "mix"])
    market = out["market"]
    assert market["market"] == "us-east-1b_intel_64" and market["loss"] > 0 and market["factor"] < 1
    # r5's market at about half of on-demand is cheaper than any reservation: the market-priced plan reserves
    # nothing, where the plan without it reserves a base; each replay's count of reservations is its plan's
    reserved = sum(r["count"] for r in out["reserved_only"]["plan"]["reservations"])
    assert out["market_priced"]["plan"]["reservations"] == [] and reserved > 0
    assert [replays[k]["reservations"] for k in ("on_demand", "reserved_only", "market_priced", "reserved_base")] == [
        0, reserved, 0, reserved]
    assert replays["reserved_only"]["upfront_amortized"] > 0 and replays["market_priced"]["preemptions"] > 0
    assert set(replays["market_priced"]["cost_by_option"]) == {"on-demand", "spot"}
    assert out["market_priced"]["expected_cost"] < out["reserved_only"]["expected_cost"] < out["on_demand_cost"]
    # on this slice the reserved base with spot for the rest replays cheaper than the model's mix: it is the mix,
    # and below both the on-demand-only and the reserved-only replays
    assert replays["reserved_base"]["cost"] < replays["market_priced"]["cost"]
    assert out["mix_chosen"] == "reserved_base" and out["plan"] == out["reserved_only"]["plan"]
    assert replays["mix"] == replays["reserved_base"]
    assert replays["mix"]["cost"] < min(replays["reserved_only"]["cost"], replays["on_demand"]["cost"])
    # the replays are simulate's: CoH on demand, CoH-R on each plan (the candidates with the market), the same seed
    (tmp_path / "priced.json").write_text(json.dumps(out["market_priced"]))
    (tmp_path / "reserved.json").write_text(json.dumps(out["reserved_only"]))
    (tmp_path / "mix.json").write_text(run.out)
    for policy, extra, name in (("coh", (), "on_demand"),
                                ("coh-r", ("--reservations", str(tmp_path / "reserved.json")), "reserved_only"),
                                ("coh-r", ("--reservations", str(tmp_path / "priced.json"), "--spot", R5),
                                 "market_priced"),
                                ("coh-r", ("--reservations", str(tmp_path / "mix.json"), "--spot", R5), "mix")):
        again = cloudbroker("simulate", *base, "--policy", policy, *extra, "--json")
        assert again.code == 0, again
        assert json.loads(again.out)["cost"] == pytest.approx(replays[name]["cost"], rel=1e-12), name


def test_the_table_shows_the_market_the_choice_and_the_replays() -> None:
    run = cloudbroker("plan-reservations", "--trace", KTH, "--limit-jobs", "300", "--spot", R5)
    assert run.code == 0, run
    text = " ".join(run.out.split())  # the console wraps long lines and cells
    for words in ("market us-east-1b_intel_64", "Replayed on the trace", "the candidate whose replay costs", "mix"):
        assert words in text, words
