"""The leasing sweep's cells, their configurations and the summary, on a four-job trace worked by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from broker.hybrid.policies import RandomCap, run_leasing
from broker.hybrid.sweep import CELL_NAME, TRACES, SweepSummary, rigid_trace, summarize_sweep, sweep_cell, sweep_configs
from broker.sweep import spawn_seeds
from tests.broker.hybrid.test_world import rigid

UNKNOWN = "-1 -1 1 -1 -1 -1 -1"  # SWF fields 12-18
# 4 nodes; estimates exact. job 0 (3 nodes, 100 s) at 0; job 1 (2 nodes, 10 s) at 1; job 2 (4 nodes, 10 s) at 2;
# job 3 (1 node, 200 s) at 3.
# V = 0, EASY: job 3 backfills at 3 (ends 203, past the head's shadow time 100, but on its one extra node); job 1
#   starts at 100, job 2 waits for job 3: waits 99 + 201 + 0 = 300 s.
# V = 0, conservative: job 3 would delay job 2's reservation [110, 120): it starts at 120. Waits 99 + 108 + 117 = 324.
# V = 2 (EASY): job 1 to the cloud at 1 (20 node-s); job 2 cannot follow (4 > 2); job 3 waits for the cloud
#   until 11 (8 s) and runs there 200 s: twt 98 + 8 = 106, cloud 220.
# V unbounded: jobs 1 and 2 go out at once (20 + 40 node-s), job 3 runs locally at 3: twt 0, cloud 60.
FOUR = "".join(f"{i + 1} {s} 0 {r} {p} -1 -1 {p} {r} -1 1 {UNKNOWN}\n"
               for i, (s, r, p) in enumerate([(0, 100, 3), (1, 10, 2), (2, 10, 4), (3, 200, 1)]))


@pytest.fixture
def trace(tmp_path: Path) -> str:
    path = tmp_path / "four.swf"
    path.write_text("; MaxProcs: 4\n" + FOUR)
    return str(path)


def cell(trace: str, policy: str = "constant", seed: int = 0, **config: object) -> dict:
    return sweep_cell({"trace": trace, "nodes": 4, "policy": policy, **config}, seed)


def test_rigid_trace_keeps_the_first_limit_jobs_and_all_without_a_limit(trace: str) -> None:
    TRACES.clear()
    whole, two = rigid_trace(trace, 4), rigid_trace(trace, 4, 2)
    assert whole.submit.tolist() == [0.0, 1.0, 2.0, 3.0] and whole.nodes.tolist() == [3, 2, 4, 1]
    assert two.submit.tolist() == [0.0, 1.0] and two.runtime.tolist() == [100.0, 10.0]
    assert rigid_trace(trace, 4, 2) is two  # built once per process


def test_a_constant_cell_by_hand(trace: str) -> None:
    assert cell(trace, params={"v": 0}) == {"twt_s": 300.0, "cloud_cpu_s": 0.0, "simulated": 1, "cap_mean": 0.0}
    assert cell(trace, params={"v": 2}) == {"twt_s": 106.0, "cloud_cpu_s": 220.0, "simulated": 1, "cap_mean": 2.0}
    unbounded = cell(trace, params={"v": "inf"})
    assert (unbounded["twt_s"], unbounded["cloud_cpu_s"], unbounded["cap_mean"]) == (0.0, 60.0, float("inf"))
    # no params: the constant policy's default V = 0
    assert cell(trace)["twt_s"] == 300.0


def test_a_cell_limited_to_two_jobs(trace: str) -> None:
    # jobs 0 and 1 alone: job 1 waits 99 s at V = 0
    assert cell(trace, limit=2, params={"v": 0})["twt_s"] == 99.0
    assert cell(trace, limit=None, params={"v": 0})["twt_s"] == 300.0


def test_a_cell_under_conservative_backfilling(trace: str) -> None:
    assert cell(trace, discipline="conservative", params={"v": 0})["twt_s"] == 324.0
    assert cell(trace, discipline="easy", params={"v": 0})["twt_s"] == 300.0


def test_a_cells_step_and_grid_offset(trace: str) -> None:
    # EASY, V = 0: the last job ends at 213. Steps of 50 s from 0: 5 steps; the grid shifted by 10 s: 6
    assert cell(trace, step=50.0, params={"v": 0})["simulated"] == 5
    assert cell(trace, step=50.0, offset_s=10.0, params={"v": 0})["simulated"] == 6
    assert cell(trace, step=50.0, offset_s=0.0, params={"v": 0})["simulated"] == 5
    assert cell(trace, offset_s=10.0, params={"v": 0})["simulated"] == 2  # a day's step: [0, 10) then the rest


def test_a_random_cell_uses_its_seed(trace: str) -> None:
    jobs = rigid([0, 1, 2, 3], [100, 10, 10, 200], [3, 2, 4, 1])
    for seed in (3, 11):
        expected = run_leasing(jobs, 4, RandomCap(4, seed=seed), step=50.0)
        got = cell(trace, "random", seed, step=50.0)
        assert got == {"twt_s": expected.summary.twt_s, "cloud_cpu_s": expected.summary.cloud_cpu_s,
                       "simulated": len(expected.summary.caps), "cap_mean": float(np.mean(expected.summary.caps))}
    draws = {cell(trace, "random", seed, step=50.0)["cap_mean"] for seed in (0, 3, 11)}
    assert len(draws) == 3  # three seeds, three different draws


def test_sweep_configs_by_hand() -> None:
    ref, const, rand = sweep_configs("t.swf", 4, [0, 2], random_runs=2)
    base = {"trace": "t.swf", "nodes": 4, "step": 86400.0, "discipline": "easy", "offset_s": 0.0}
    assert [c.config for c in ref] == [{**base, "policy": "constant", "params": {"v": "inf"}}]
    assert [c.config for c in const] == [{**base, "policy": "constant", "params": {"v": v}} for v in (0, 2)]
    assert [c.config for c in rand] == [{**base, "policy": "random"}] * 2
    assert {c.name for c in [*ref, *const, *rand]} == {CELL_NAME}
    # the root seed 1 by default: the references and constants from SeedSequence(1), the random runs from 2
    assert [c.seed for c in ref] == spawn_seeds(1, 1)
    assert [c.seed for c in const] == spawn_seeds(1, 2)
    assert [c.seed for c in rand] == spawn_seeds(2, 2)
    ref, const, rand = sweep_configs("t.swf", 4, [1], random_runs=1, root_seed=5, limit=7, step=60.0,
                                     discipline="conservative", offset_s=30.0)
    assert ref[0].config == {"trace": "t.swf", "nodes": 4, "limit": 7, "step": 60.0, "discipline": "conservative",
                             "offset_s": 30.0, "policy": "constant", "params": {"v": "inf"}}
    assert (ref[0].seed, const[0].seed, rand[0].seed) == (spawn_seeds(5, 1)[0], spawn_seeds(5, 1)[0],
                                                           spawn_seeds(6, 1)[0])


def test_the_best_v_is_the_highest_balance_and_the_smallest_on_a_tie() -> None:
    ref, local = {"twt_s": 0.0, "cloud_cpu_s": 100.0}, {"twt_s": 200.0, "cloud_cpu_s": 0.0}
    # balances: V = 0 -> 0; V = 1 -> 50 - 10 = 40; V = 2 -> 75 - 35 = 40 (a tie: 1 wins); V = 3 -> 100 - 100 = 0
    constant = {0: local, 1: {"twt_s": 100.0, "cloud_cpu_s": 10.0}, 2: {"twt_s": 50.0, "cloud_cpu_s": 35.0},
                3: {"twt_s": 0.0, "cloud_cpu_s": 100.0}}
    summary = summarize_sweep(ref, local, constant, [])
    assert [summary.constant[v]["balance"] for v in range(4)] == [0.0, 40.0, 40.0, 0.0]
    assert summary.best_v == 1 and summary.undefined == {}
    # the best V is not the largest one
    summary = summarize_sweep(ref, local, {0: local, 1: constant[1], 3: constant[3]}, [])
    assert summary.best_v == 1


def test_the_summary_as_json() -> None:
    constant: dict[int, dict[str, float | None]] = {
        0: {"twt_imp_pct": 0.0, "cost_pct": 0.0, "balance": 0.0},
        2: {"twt_imp_pct": 50.0, "cost_pct": 20.0, "balance": 30.0}}
    out = SweepSummary(constant, 2, [10.0, None, 30.0]).to_dict()
    assert out == {"constant": {"0": constant[0], "2": constant[2]}, "best_v": 2, "best_constant": constant[2],
                   "random": {"runs": 3, "mean": 20.0, "std": 10.0, "best": 30.0}}
    undefined = SweepSummary({0: {"balance": None}}, None, [None], {"balance": "why"}).to_dict()
    assert undefined == {"constant": {"0": {"balance": None}}, "best_v": None, "best_constant": None,
                         "random": {"runs": 1, "mean": None, "std": None, "best": None},
                         "undefined": {"balance": "why"}}
