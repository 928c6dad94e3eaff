"""The CoH world with spot VMs (:mod:`broker.coh.spot`), on tiny hand-built markets with hand-worked values.

Times: 100 s market ticks; a job is handed to the policy 130 s before it arrives, ticks lie on a
10 s grid, a VM boots 120 s and an idle one is released 10 s before its hour rolls over. The policy
is FCFS-SM, which starts the large type (410 units, 0.26 $/h on demand). The market's spot price is
a tenth of on-demand (0.36 over 3.6 $/h): a large spot VM costs 0.026 $/h.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.metrics import RunResult, SpotCohSummary, summarize
from broker.coh.policies import build_policy
from broker.coh.spot import SpotCohWorld, SpotConfig
from broker.coh.world import run
from broker.pricing.book import load_price_book
from broker.pricing.spot_offer import SpotOffer
from tests.broker.spot.helpers import market
from workloads.errors import ConfigError
from workloads.jobs import JobTable

CATALOG = load_price_book().catalog()
ENGINE = EngineConfig(validate=True)
POLICY = SimulationConfig(CohConfig("FCFS-SM"))
SPOT_LARGE, OD_LARGE = 0.026, 0.26
#: Open for ticks 0-9 ([0, 1000) s), closed for ticks 10-11, open again for 12-19; 20 ticks = 2000 s.
CLOSES_AT_1000 = [1] * 10 + [0] * 2 + [1] * 8


def table(arrival: Sequence[float] | np.ndarray, runtime: Sequence[float] | np.ndarray,
          r: Sequence[float] | np.ndarray) -> JobTable:
    return JobTable.from_arrays(arrival=np.asarray(arrival, float), runtime=np.asarray(runtime, float),
                                r=np.asarray(r, float), origin=0)


def offer(counts: Sequence[int], notice_s: float = 120.0) -> SpotOffer:
    return SpotOffer.from_market(market(counts), notice_s=notice_s)


def spot_run(jobs: JobTable, counts: Sequence[int] = CLOSES_AT_1000, *, notice_s: float = 120.0,
             **restart: float) -> tuple[SpotCohWorld, RunResult]:
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(jobs, CATALOG, ENGINE, offer=offer(counts, notice_s), lookahead=policy.lookahead,
                         **restart)
    return world, summarize(run(world, policy), CATALOG, ENGINE.billing(), policy="FCFS-SM")


def spot_summary(result: RunResult) -> SpotCohSummary:
    assert isinstance(result.summary, SpotCohSummary)
    return result.summary


def test_offer_caps_open_closed_and_counted_ticks() -> None:
    o = offer([1, 0, 3, 3])
    assert [o.cap(t) for t in (0, 99, 100, 200, 399, 400, -1)] == [math.inf, math.inf, 0, 3, 3, math.inf, 3]
    assert o.ratio_at(50) == pytest.approx(0.1)
    assert o.available == 0.75


def test_offer_next_change_follows_the_repeated_timeline() -> None:
    o = offer(CLOSES_AT_1000)
    assert [o.next_change(t) for t in (0, 999, 1000, 1100, 1200, 2500)] == [1000, 1000, 1200, 1200, 3000, 3000]
    assert offer([1, 1]).next_change(0) == math.inf
    assert o.repeats(70, 4710) == 2 and o.repeats(-130, 50) == 1


def test_offer_ratio_is_the_files_price_over_the_on_demand_price_given() -> None:
    o = SpotOffer.from_market(market([1, 1], prices=[[1.8, 0.9]]))
    assert o.ratios.tolist() == [0.5, 0.25]


def test_a_job_preempted_at_the_notice_restarts_from_scratch_on_demand_while_the_market_is_closed() -> None:
    # VM 0 (spot) from 70, ready 190; the job runs from 200; the market closes at 1000, the notice
    # ends at 1120: 920 s lost. Again at the tick of 1120 on VM 1 (on demand, closed market), ready
    # 1240, to 3240; released at 1120 + 3600 - 10.
    world, result = spot_run(table([200], [2000], [50]))
    s, vms, jobs = spot_summary(result), result.instances, result.jobs
    assert (s.preemptions, s.restarts, s.lost_s) == (1, 1, 920.0)
    assert vms["option"].tolist() == ["spot", "on-demand"]
    assert vms["released_at"].tolist() == [1120.0, 4710.0]
    assert vms["hourly"].tolist() == pytest.approx([SPOT_LARGE, OD_LARGE])
    assert s.cost == pytest.approx(SPOT_LARGE + OD_LARGE)
    assert s.cost_by_option == pytest.approx({"spot": SPOT_LARGE, "on-demand": OD_LARGE})
    assert jobs[["start", "end", "wait", "instance_id", "restarts", "lost_s", "runtime"]].iloc[0].tolist() == [
        1240.0, 3240.0, 1040.0, 1, 1, 920.0, 2000.0]
    assert s.timeline_repeats == 2  # ticks 0 to 47 of a 20-tick timeline
    assert world.completions.tolist() == [1]


def test_a_checkpointed_job_resumes_from_its_last_multiple_with_the_overhead() -> None:
    # 920 s done at the preemption: 900 kept (3 x 300), 20 lost; the rest, 1100 s, plus 50 s overhead.
    _, result = spot_run(table([200], [2000], [50]), checkpoint_s=300.0, restart_overhead_s=50.0)
    row = result.jobs.iloc[0]
    assert (row["start"], row["end"], row["lost_s"], row["restarts"]) == (1240.0, 2390.0, 20.0, 1)
    assert spot_summary(result).lost_s == 20.0


def test_a_job_ending_within_the_notice_completes_and_its_idle_vm_is_still_preempted() -> None:
    _, result = spot_run(table([200], [850], [50]))
    s = spot_summary(result)
    assert (s.preemptions, s.restarts, s.lost_s) == (1, 0, 0.0)
    assert result.jobs["end"].tolist() == [1050.0]
    assert result.instances["released_at"].tolist() == [1120.0]
    assert s.cost == pytest.approx(SPOT_LARGE)


def test_every_spot_vm_of_a_closing_market_is_preempted_at_once() -> None:
    _, result = spot_run(table([200, 200], [2000, 2000], [300, 300]))
    s, vms = spot_summary(result), result.instances
    assert (s.preemptions, s.restarts, s.lost_s) == (2, 2, 1840.0)
    assert vms["released_at"].tolist()[:2] == [1120.0, 1120.0]
    assert vms["option"].tolist() == ["spot", "spot", "on-demand", "on-demand"]


def test_a_cap_above_one_limits_spot_vms_and_its_fall_preempts_the_youngest() -> None:
    # Three jobs, each filling a VM (started at 70, 80, 90). Under a cap of 2 the third VM is on
    # demand; when a cap of 3 falls to 2 at 1000, the youngest spot VM (VM 2) is preempted at 1120.
    counts = [2] * 10 + [3] * 10
    _, result = spot_run(table([200, 210, 220], [500, 500, 500], [300, 300, 300]), counts)
    assert result.instances["option"].tolist() == ["spot", "spot", "on-demand"]
    assert spot_summary(result).preemptions == 0
    counts = [3] * 10 + [2] * 10
    _, result = spot_run(table([200, 210, 220], [2000, 2000, 2000], [300, 300, 300]), counts)
    vms = result.instances
    assert vms["option"].tolist()[:3] == ["spot", "spot", "spot"]
    assert vms["released_at"].tolist()[2] == 1120.0  # VM 2, the youngest
    assert spot_summary(result).preemptions == 1
    assert result.jobs["restarts"].tolist() == [0, 0, 1]


def test_a_vm_released_idle_during_its_notice_is_no_preemption() -> None:
    # The job ends at 300 on VM 0 (started at 70), released idle at 3660; the market closes at 1000,
    # with a notice of 3000 s: the VM went at 3660, before 4000.
    _, result = spot_run(table([200], [100], [50]), notice_s=3000.0)
    assert spot_summary(result).preemptions == 0
    assert result.instances["released_at"].tolist() == [3660.0]


def test_the_same_run_twice_gives_the_same_tables() -> None:
    jobs = table(np.arange(0, 3000, 100), np.full(30, 700.0), np.full(30, 100.0))
    _, a = spot_run(jobs, checkpoint_s=200.0)
    _, b = spot_run(jobs, checkpoint_s=200.0)
    assert spot_summary(a).to_dict() == spot_summary(b).to_dict()
    assert a.jobs.equals(b.jobs) and a.instances.equals(b.instances)
    assert spot_summary(a).restarts > 0


def test_restart_settings_out_of_range_are_refused() -> None:
    with pytest.raises(ConfigError, match="checkpoint_s"):
        SpotConfig(offer(CLOSES_AT_1000), checkpoint_s=0.0)
    with pytest.raises(ConfigError, match="restart_overhead_s"):
        SpotConfig(offer(CLOSES_AT_1000), restart_overhead_s=-1.0)


def test_a_copy_paused_after_a_preemption_runs_on_as_the_world_would_and_leaves_it_alone() -> None:
    jobs = table(np.arange(0, 3000, 100), np.full(30, 2500.0), np.full(30, 100.0))
    _, reference = spot_run(jobs, checkpoint_s=200.0, restart_overhead_s=30.0)
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(jobs, CATALOG, ENGINE, offer=offer(CLOSES_AT_1000), lookahead=policy.lookahead,
                         checkpoint_s=200.0, restart_overhead_s=30.0)
    while world.restarts_total == 0 and (batch := world.next_batch()) is not None:
        world.act(policy.decide(world.now, batch, world))
    twin = world.copy()
    results = [summarize(run(w, policy), CATALOG, ENGINE.billing(), policy="FCFS-SM") for w in (world, twin)]
    expected = {k: v for k, v in spot_summary(reference).to_dict().items() if k != "policy_stats"}
    for result in results:  # the policy's statistics, shared by the two runs, aside
        assert {k: v for k, v in spot_summary(result).to_dict().items() if k != "policy_stats"} == expected
        assert result.jobs.equals(reference.jobs)
    assert spot_summary(reference).restarts > 1


def test_with_no_spot_vm_running_the_market_schedules_nothing_and_a_run_that_places_nothing_ends() -> None:
    # A policy that places nothing: no VM ever starts, so the market's changes (every 1000 s, for ever) are
    # never scheduled; after the last job is handed and left waiting the kernel is empty and the run ends,
    # as the base world's does, instead of following the market's changes for ever.
    world = SpotCohWorld(table([200, 1500], [100, 100], [50, 50]), CATALOG, EngineConfig(), offer=offer(CLOSES_AT_1000),
                         lookahead=130.0)
    first = world.advance()
    assert first is not None and first.now == 70.0
    world.act(None)
    assert len(world.kernel) == 1 and world.kernel.peek() == 1370.0  # the tick for the second job, no market change
    second = world.advance()
    assert second is not None and second.now == 1370.0
    world.act(None)
    assert len(world.kernel) == 0
    assert world.advance() is None

