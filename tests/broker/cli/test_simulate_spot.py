"""``cloudbroker simulate --spot``: refusals before any work, and a KTH slice on the r5.16xlarge preemption trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.broker.cli.test_refusals import boom, one_line
from tests.conftest import SPOT_DIR, cloudbroker, trace_path, without_timing

R5 = str(SPOT_DIR / "skypilot-spot-traces" / "preemption" / "1-node" / "aws-04-19-2023" / "us-east-1b_intel_64.json")
V100 = str(SPOT_DIR / "skypilot-spot-traces" / "availability" / "1-node" / "aws-02-15-2023" / "us-west-2b_v100_1.json")
KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))



@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr("broker.cli.simulate.simulate", boom)
    monkeypatch.setattr("broker.cli.inputs.workload", boom)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gap0.json").write_text('{"metadata": {"gap_seconds": 0}, "data": [1, 0]}')
    return tmp_path


@pytest.mark.parametrize(("args", "words"), [
    (("--checkpoint-s", "600"), ("--checkpoint-s", "--spot FILE")),
    (("--spot-notice-s", "30"), ("--spot-notice-s", "--spot FILE")),
    (("--spot", "gap0.json"), ("gap0.json", "metadata.gap_seconds")),
    (("--spot", "missing.json"), ("missing.json", "cannot be read")),
    (("--spot", R5, "--restart-overhead-s", "60"), ("--restart-overhead-s", "--checkpoint-s")),
    (("--spot", R5, "--spot-fraction", "0.5"), ("--spot-fraction", "has prices")),
    (("--spot", V100, "--spot-on-demand-price", "3"), ("--spot-on-demand-price", "has none")),
    (("--spot", R5, "--checkpoint-s", "0"), ("--checkpoint-s", "> 0")),
    (("--spot-return",), ("--spot-return", "--spot FILE")),
    (("--spot-max-preemptions", "2"), ("--spot-max-preemptions", "--spot FILE")),
    (("--spot-expected-cost",), ("--spot-expected-cost", "--spot FILE")),
], ids=["checkpoint-without-spot", "notice-without-spot", "bad-gap", "missing-file", "overhead-without-checkpoint",
        "fraction-with-prices", "price-without-prices", "checkpoint-0", "return-without-spot",
        "max-preemptions-without-spot", "expected-cost-without-spot"])
def test_bad_spot_input_is_refused_in_one_line_before_any_work(no_work: Path, args: tuple[str, ...],
                                                               words: tuple[str, ...]) -> None:
    line = one_line(cloudbroker("simulate", "--synthetic", *args))
    assert all(w in line for w in words), line


def test_a_kth_slice_on_the_r5_market_is_preempted_validated_and_deterministic() -> None:
    args = ("simulate", "--trace", KTH, "--limit-jobs", "2000", "--spot", R5, "--validate", "--json")
    first, again = cloudbroker(*args), cloudbroker(*args)
    assert first.code == 0, first
    out = json.loads(first.out)
    assert without_timing(out) == without_timing(json.loads(again.out))
    assert out["preemptions"] > 0 and out["restarts"] > 0 and out["lost_s"] > 0
    assert out["timeline_repeats"] >= 1  # 2000 jobs span more than the trace's 6.3 days
    assert set(out["cost_by_option"]) == {"spot", "on-demand"}
    assert out["cost"] == pytest.approx(sum(out["cost_by_option"].values()))
    assert out["spot"]["market"] == "us-east-1b_intel_64"


def test_a_run_without_spot_has_no_spot_figures() -> None:
    run = cloudbroker("simulate", "--trace", KTH, "--limit-jobs", "300", "--json")
    out = json.loads(run.out)
    assert not {"preemptions", "restarts", "lost_s", "timeline_repeats", "spot"} & set(out)
    assert set(out["cost_by_option"]) == {"on-demand"}
