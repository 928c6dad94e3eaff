"""Restarts in the CoH spot world (:mod:`broker.coh.spot`): a job preempted twice, checkpoints, the cap's bookkeeping.

The world of :mod:`tests.broker.coh.test_spot_world` (100 s ticks, notice 120 s, a VM boots 120 s,
FCFS-SM). ``TWICE`` closes the market for tick 10 and tick 12: it closes at 1000 and 1200 and opens
again at 1100 and 1300 (and, read again, closes at 3000). One job (arrives 200, 1200 s, 50 units):

- VM 0 (spot) from 70, ready 190; the job runs from 200; notice at 1000, preempted at 1120 after
  920 s of its run;
- VM 1 (spot: tick 11 is open) from 1120, ready 1240; the job runs from 1240; notice at 1200,
  preempted at 1320 after 80 s;
- VM 2 (spot) from 1320, ready 1440: the job runs from 1440 to 2640; the idle VM gets notice at
  3000 and is preempted at 3120 (its hour would roll over at 1320 + 3590).

Its departures of 1400 (first run) and 2440 (second) are stale: the first comes after both
preemptions, so the per-job count is 2 there. These runs are of the mechanism alone: the spot rules
are off (with the expected cost, the job, 0.33 h at stake after a close seen in 1,200 s, would go on
demand at 1120; ``test_spot_rules`` has the rules).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.coh.config import EngineConfig
from broker.coh.metrics import RunResult, summarize
from broker.coh.policies import build_policy
from broker.coh.spot import SpotCohWorld, SpotConfig
from broker.coh.world import run
from broker.pricing.book import load_price_book
from broker.pricing.reservations import HEAVY_CODE, SPOT_CODE, ReservationPlan, ReservedCapacity
from broker.pricing.spot_offer import SpotOffer
from heuristics.fleet import Plan
from tests.broker.coh.test_spot_world import (
    CATALOG,
    CLOSES_AT_1000,
    ENGINE,
    POLICY,
    offer,
    spot_run,
    spot_summary,
    table,
)
from tests.broker.spot.helpers import market
from workloads.errors import ConfigError
from workloads.jobs import JobTable

LARGE = 1  # the catalog's index of the large type
TWICE = [1] * 10 + [0] + [1] + [0] + [1] * 7
ONE_JOB = ([200], [1200], [50])
RULES_OFF = {"spot_return": False, "expected_cost": False}


def test_a_job_preempted_twice_counts_two_restarts_and_the_sum_of_both_losses() -> None:
    world, result = spot_run(table(*ONE_JOB), TWICE, **RULES_OFF)
    s = spot_summary(result)
    assert (s.preemptions, s.restarts, s.lost_s) == (3, 2, 920.0 + 80.0)
    row = result.jobs.iloc[0]
    assert (row["start"], row["end"], row["restarts"], row["lost_s"], row["runtime"]) == (1440.0, 2640.0, 2, 1000.0,
                                                                                        1200.0)
    assert world.preempted == {0: 1120.0, 1: 1320.0, 2: 3120.0}
    assert world.completions.tolist() == [1]  # both stale departures (1400, 2440) skipped, the third completes
    assert world._stale == [0]
    assert result.instances["option"].tolist() == ["spot", "spot", "spot"]
    assert result.instances["released_at"].tolist() == [1120.0, 1320.0, 3120.0]


def run_fast_closing(jobs: JobTable, **restart: float) -> tuple[SpotCohWorld, RunResult]:
    """A run on 50 s ticks, notice 60 s, the market closed for ticks 20 and 22 ([1000, 1050), [1100, 1150))."""
    counts = [1] * 20 + [0] + [1] + [0] + [1] * 17
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(jobs, CATALOG, ENGINE, lookahead=policy.lookahead,
                         offer=SpotOffer.from_market(market(counts, gap=50), notice_s=60.0), **RULES_OFF, **restart)
    return world, summarize(run(world, policy), CATALOG, ENGINE.billing(), policy="FCFS-SM")


def test_restarts_are_integers_in_the_world_and_the_jobs_table() -> None:
    world, result = spot_run(table(*ONE_JOB), TWICE, **RULES_OFF)
    assert world.restarts.dtype == np.int64
    assert result.jobs["restarts"].dtype == np.int64
    assert world.restarts_total == 2


def test_a_preempted_vm_keeps_only_the_seconds_its_job_ran_as_busy_capacity() -> None:
    # 50 units x 920 s on VM 0, x 80 s on VM 1; the whole 1200 s run on VM 2.
    _, result = spot_run(table(*ONE_JOB), TWICE, **RULES_OFF)
    assert result.instances["busy_capacity_s"].tolist() == [50 * 920.0, 50 * 80.0, 50 * 1200.0]


def test_a_job_checkpointed_twice_keeps_its_progress_across_both_preemptions_without_the_overhead() -> None:
    # C = 46, overhead 50. First run: 920 s = 20 x 46 kept, 0 lost; next run 1200 - 920 + 50 = 330 s.
    # Second run (from 1240) cut at 1320 after 80 s, of which 50 s overhead: work 920 + 30 = 950, kept
    # 920 (not 966), 80 s lost; next run 330 s again: 1440 to 1770.
    world, result = spot_run(table(*ONE_JOB), TWICE, **RULES_OFF, checkpoint_s=46.0, restart_overhead_s=50.0)
    row = result.jobs.iloc[0]
    assert (row["start"], row["end"], row["restarts"], row["lost_s"]) == (1440.0, 1770.0, 2, 80.0)
    assert row["runtime"] == 1200.0  # the original run time in the table, not the last run's
    assert world._progress == [920.0]
    assert world.completions.tolist() == [1]


def test_the_default_restart_overhead_is_zero() -> None:
    # C = 46, no overhead: 920 kept, next run 280 s (1240 to 1520); cut at 1320 after 80 s: work 1000,
    # kept 966 = 21 x 46, 80 - 46 = 34 s lost; last run 1200 - 966 = 234 s, 1440 to 1674.
    world, result = spot_run(table(*ONE_JOB), TWICE, **RULES_OFF, checkpoint_s=46.0)
    row = result.jobs.iloc[0]
    assert (row["end"], row["lost_s"]) == (1674.0, 34.0)
    assert world._progress == [966.0]
    assert world.restart_overhead_s == 0.0
    assert SpotConfig(offer(TWICE)).restart_overhead_s == 0.0


def test_a_job_evicted_before_its_booting_vm_is_ready_lost_nothing_there() -> None:
    # 50 s ticks, notice 60 s: closed for ticks 20 and 22 ([1000, 1050), [1100, 1150)). VM 0 preempted
    # at 1060 after 860 s of the job's run; VM 1 (spot) from 1060, ready 1180, gets notice at 1100 and
    # is preempted at 1160, before it is ready: the job had not started there (0 s, not less than 0).
    world, result = run_fast_closing(table(*ONE_JOB))
    row = result.jobs.iloc[0]
    assert (row["restarts"], row["lost_s"]) == (2, 860.0)
    assert world.preempted[1] == 1160.0
    assert result.instances["busy_capacity_s"].tolist()[:2] == [50 * 860.0, 0.0]


def test_a_checkpointed_job_evicted_before_its_booting_vm_is_ready_keeps_exactly_its_progress() -> None:
    # As above with C = 1 s: 860 s kept at 1060 (next run 340 s); at 1160 the job had run 0 s on VM 1:
    # still 860 kept, 0 lost; VM 2 (spot) from 1160, ready 1280: the last 340 s run to 1620.
    world, result = run_fast_closing(table(*ONE_JOB), checkpoint_s=1.0)
    row = result.jobs.iloc[0]
    assert (row["restarts"], row["lost_s"], row["start"], row["end"]) == (2, 0.0, 1280.0, 1620.0)
    assert world._progress == [860.0]


def test_a_preempted_job_is_waiting_unplaced_at_the_decision_tick_of_its_preemption() -> None:
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(table(*ONE_JOB), CATALOG, ENGINE, offer=offer(TWICE), lookahead=policy.lookahead,
                         **RULES_OFF)
    while (batch := world.next_batch()) is not None:
        if world.now >= 1120:
            break
        world.act(policy.decide(world.now, batch, world))
    assert world.now == 1120.0 and world.restarts_total == 1
    assert (world.job_slot[0], world.job_vm[0]) == (-1, -1)
    assert math.isnan(world.job_start[0]) and math.isnan(world.job_end[0])
    assert world.jobs.runtime.tolist() == [1200.0]


def test_a_spot_vm_released_idle_at_its_deadline_frees_its_place_under_the_cap() -> None:
    # Cap 2 throughout: two VMs filled at 70 and released idle at 3660; a third job at 5000 gets spot.
    world, result = spot_run(table([200, 200, 5000], [100, 100, 100], [300, 300, 300]), [2] * 20)
    assert result.instances["option"].tolist() == ["spot", "spot", "spot"]
    assert result.instances["released_at"].tolist() == [3660.0, 3660.0, 8460.0]
    assert world.spot_running == 0


def test_a_run_without_validation_preempts_as_with_it() -> None:
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(table(*ONE_JOB), CATALOG, EngineConfig(), offer=offer(TWICE), lookahead=policy.lookahead,
                         **RULES_OFF)
    result = summarize(run(world, policy), CATALOG, EngineConfig().billing(), policy="FCFS-SM")
    assert (spot_summary(result).preemptions, spot_summary(result).lost_s) == (3, 1000.0)


def test_a_copy_keeps_its_own_run_times_while_the_world_runs_on() -> None:
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(table(*ONE_JOB), CATALOG, ENGINE, offer=offer(TWICE), lookahead=policy.lookahead, **RULES_OFF,
                         checkpoint_s=46.0)
    while world.now < 500 and (batch := world.next_batch()) is not None:
        world.act(policy.decide(world.now, batch, world))
    twin = world.copy()  # paused at 1120 (the decision tick after 200): preempted once, 280 s to run
    assert (twin.now, twin.jobs.runtime.tolist()) == (1120.0, [280.0])
    run(world, policy)
    assert world.jobs.runtime.tolist() == [234.0]  # the last run's length after the second preemption
    assert twin.jobs.runtime.tolist() == [280.0]


def test_a_market_that_never_changes_ends_its_run() -> None:
    world, result = spot_run(table([200], [100], [50]), [1, 1])
    assert spot_summary(result).preemptions == 0
    assert result.instances["released_at"].tolist() == [3660.0]
    assert world.now == 3660.0


def test_the_world_refuses_restart_settings_out_of_range() -> None:
    with pytest.raises(ConfigError) as error:
        SpotCohWorld(table(*ONE_JOB), CATALOG, ENGINE, offer=offer(TWICE), checkpoint_s=0.0)
    assert str(error.value) == "checkpoint_s must be > 0 s, got 0.0"
    with pytest.raises(ConfigError) as error:
        SpotCohWorld(table(*ONE_JOB), CATALOG, ENGINE, offer=offer(TWICE), restart_overhead_s=math.inf)
    assert str(error.value) == "restart_overhead_s must be >= 0 s, got inf"
    with pytest.raises(ConfigError) as error:
        SpotCohWorld(table(*ONE_JOB), CATALOG, ENGINE, offer=offer(TWICE), max_preemptions=0)
    assert str(error.value) == "max_preemptions must be >= 1, got 0"


def test_a_checkpoint_below_one_second_is_accepted() -> None:
    assert SpotConfig(offer(TWICE), checkpoint_s=0.5).checkpoint_s == 0.5


def test_the_spot_config_in_json_names_its_keys() -> None:
    config = SpotConfig(offer(CLOSES_AT_1000, notice_s=90.0), checkpoint_s=600.0, restart_overhead_s=60.0)
    assert config.to_dict() == {"market": "z0", "notice_s": 90.0, "available": 0.9, "checkpoint_s": 600.0,
                                "restart_overhead_s": 60.0, "spot_return": False, "max_preemptions": None,
                                "expected_cost": False}


def test_a_heavy_reservation_starts_as_heavy_not_spot_in_an_open_market() -> None:
    book = load_price_book()
    reserved = ReservedCapacity(ReservationPlan(1, {("large", "reserved-heavy"): 1}), book, CATALOG)
    world = SpotCohWorld(table([1000], [100], [50]), CATALOG, ENGINE, offer=offer(TWICE), lookahead=130.0,
                         reservations=reserved)
    assert world.pool.n_slots == 1 and int(world.pool.option[0]) == HEAVY_CODE
    assert float(world.pool.ready_at[0]) == 870.0  # already booted at the first tick (1000 - 130)
    assert world.spot_running == 0


def test_an_empty_run_starts_and_ends_at_zero_without_market_events() -> None:
    world = SpotCohWorld(table([], [], []), CATALOG, ENGINE, offer=offer(TWICE), lookahead=130.0)
    assert world.advance() is None
    record = world.result()
    assert (record.began, record.ended, world.now) == (0.0, 0.0, 0.0)


def test_a_completing_job_brings_a_decision_tick_for_the_jobs_left_waiting() -> None:
    # By hand, in an open market: A and B arrive at 1,000 for 100 s; at 870 only A is placed, on a new
    # (spot) VM ready at 990, and runs 1,000-1,100; its departure brings a tick at 1,100 for B.
    world = SpotCohWorld(table([1000, 1000], [100, 100], [50, 50]), CATALOG, ENGINE, offer=offer([1, 1]),
                         lookahead=130.0)
    assert world.advance() is not None and world.now == 870.0
    world.act(Plan(jobs=np.array([0]), targets=np.array([0]), new_types=np.array([LARGE]), n_slots=0))
    assert world.pool.option[0] == SPOT_CODE and world.waiting == 1
    decision = world.advance()
    assert decision is not None and decision.now == 1100.0 and decision.batch.index.tolist() == [1]
    assert world.completions.tolist() == [1, 0]
