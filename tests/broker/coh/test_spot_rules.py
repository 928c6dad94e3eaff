"""The CoH world's spot rules (:mod:`broker.coh.spot`): back to spot, on demand after N preemptions, expected cost.

The set-up of ``test_spot_world``: 100 s market ticks, the market closed over [1000, 1200) of every
2000 s, a spot price a tenth of on-demand; jobs handed to FCFS-SM 130 s before they arrive, ticks on
a 10 s grid, a VM boots 120 s and an idle one goes 10 s before its hour rolls over (at start + 3590
s); a large VM costs 0.26 $/h on demand, 0.026 $/h spot. Every run validates.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.coh.metrics import summarize
from broker.coh.policies import build_policy
from broker.coh.spot import SpotCohWorld, SpotConfig, _without
from broker.coh.world import run
from broker.pricing.spot_offer import SpotOffer
from heuristics.fleet import Fleet, Plan
from tests.broker.coh.test_spot_world import (
    CATALOG,
    CLOSES_AT_1000,
    ENGINE,
    OD_LARGE,
    POLICY,
    SPOT_LARGE,
    offer,
    spot_run,
    spot_summary,
    table,
)
from workloads.errors import ConfigError

#: The rules are off by default; a test turns on the one it is about.
NO_RULES = {"spot_return": False, "expected_cost": False}


# -- the hazard and the expected cost -----------------------------------------------------------------------------
def test_the_hazard_is_the_closes_seen_so_far_per_hour_of_ticks_seen() -> None:
    o = offer(CLOSES_AT_1000)
    # tick 9: no close yet; tick 10 (t = 1050): 1 close in 11 ticks (1100 s); tick 30: closes at 10 and 30 in 3100 s
    assert [o.hazard(t) for t in (-5.0, 0.0, 999.0)] == [0.0, 0.0, 0.0]
    assert o.hazard(1050.0) == pytest.approx(3600 / 1100)
    assert o.hazard(1310.0) == pytest.approx(3600 / 1400)
    assert o.hazard(3050.0) == pytest.approx(2 * 3600 / 3100)


def test_closes_are_counted_across_readings_of_the_timeline_and_at_its_wrap() -> None:
    # [0, 1, 1, 0] read again and again: closes at ticks 3 and 7; tick 4 (a reading's tick 0) follows a
    # closed tick, no close; [1, 0] closes at every odd tick, the wrap (tick 2 -> 3) included.
    assert [offer([0, 1, 1, 0]).closes_through(k) for k in range(10)] == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert [offer([1, 0]).closes_through(k) for k in range(6)] == [0, 1, 1, 2, 2, 3]
    assert offer([1, 1]).hazard(1e6) == 0.0


def test_spot_pays_below_the_break_even_work_and_not_at_or_above_it() -> None:
    # at 1310 the hazard is 3600 / 1400 per hour: ratio 0.1 + h * W < 1 holds for W < 0.35 h (1260 s)
    world, _ = spot_run(table([200], [100], [50]))
    assert world.spot_pays(1310.0, 1250 / 3600)
    assert not world.spot_pays(1310.0, 1260 / 3600 + 1e-9)
    assert world.spot_pays(999.0, 1e6)  # no close seen yet: no hazard


@pytest.mark.parametrize(("runtime", "option"), [(1250.0, "spot"), (1270.0, "on-demand")])
def test_a_job_whose_expected_loss_outweighs_the_saving_starts_on_demand(runtime: float, option: str) -> None:
    # handed at 1310 (arrives 1440): W = its run, 1250 s passes (< 1260 s), 1270 s does not
    _, result = spot_run(table([1440], [runtime], [50]), expected_cost=True)
    s = spot_summary(result)
    assert result.instances["option"].tolist() == [option]
    key = "spot" if option == "spot" else "on_demand_jobs"
    assert s.vms_started == {"spot": 0, "fallback": 0, "on_demand_jobs": 0} | {key: 1}
    assert s.cost == pytest.approx(SPOT_LARGE if option == "spot" else OD_LARGE)


def test_with_checkpoints_only_the_checkpoint_interval_and_overhead_are_at_stake() -> None:
    # 1270 s of run, but at most 600 + 60 s lost: spot
    _, result = spot_run(table([1440], [1270], [50]), expected_cost=True, checkpoint_s=600.0,
                         restart_overhead_s=60.0)
    assert result.instances["option"].tolist() == ["spot"]


def test_without_the_expected_cost_a_long_job_starts_on_spot() -> None:
    _, result = spot_run(table([1440], [1270], [50]), **NO_RULES)
    assert result.instances["option"].tolist() == ["spot"]


# -- back to spot when the market returns -------------------------------------------------------------------------
def test_a_fallback_on_demand_vm_takes_no_new_job_once_the_market_is_back() -> None:
    # A (2000 s) runs on spot VM 0 from 200, preempted at 1120 (market closed): again on VM 1, on demand
    # for want of spot, 1240-3240, released idle at 1120 + 3590. B (100 s, handed at 1370, market open)
    # packs onto VM 1 without the rule; with it VM 1 is hidden and B gets spot VM 2 (1370, ready 1490),
    # idle from 1600 and preempted at 3120 with the market's next close.
    jobs = table([200, 1500], [2000, 100], [50, 50])
    _, off = spot_run(jobs, expected_cost=True)
    assert off.instances["option"].tolist() == ["spot", "on-demand"]
    assert off.jobs["instance_id"].tolist() == [1, 1]
    assert spot_summary(off).cost == pytest.approx(SPOT_LARGE + OD_LARGE)
    _, on = spot_run(jobs, spot_return=True, expected_cost=True)
    vms, s = on.instances, spot_summary(on)
    assert vms["option"].tolist() == ["spot", "on-demand", "spot"]
    assert vms["released_at"].tolist() == [1120.0, 4710.0, 3120.0]
    assert on.jobs[["instance_id", "start", "end"]].values.tolist() == [[1, 1240, 3240], [2, 1500, 1600]]
    assert (s.preemptions, s.restarts) == (2, 1)
    assert s.vms_started == {"spot": 2, "fallback": 1, "on_demand_jobs": 0}
    assert s.cost == pytest.approx(2 * SPOT_LARGE + OD_LARGE)


def test_a_fallback_vm_still_takes_jobs_while_the_market_is_closed() -> None:
    # B handed at 1130 (arrives 1260), the market still closed: it packs onto A's fallback VM 1
    _, result = spot_run(table([200, 1260], [2000, 100], [50, 50]), spot_return=True, expected_cost=True)
    assert result.instances["option"].tolist() == ["spot", "on-demand"]
    assert result.jobs["instance_id"].tolist() == [1, 1]


# -- on demand after N preemptions ----------------------------------------------------------------------------------
def test_a_job_preempted_n_times_goes_on_demand_and_the_other_jobs_of_its_tick_see_its_vm() -> None:
    # Notice 305 s: A (1500 s from 200 on spot VM 0) is preempted at 1305, 1105 s lost; the tick of 1310
    # holds A and B (arrives 1440). Without a limit both go to a new spot VM 1 (1310, ready 1430), which
    # is preempted idle at 3305. With a limit of 1, A is placed first on a fleet without spot VMs: VM 1
    # on demand; B next, on the fleet A's pass left: VM 1 too, released idle at 1310 + 3590.
    jobs = table([200, 1440], [1500, 100], [50, 50])
    _, free = spot_run(jobs, notice_s=305.0, **NO_RULES)
    assert free.instances["option"].tolist() == ["spot", "spot"]
    assert spot_summary(free).preemptions == 2
    assert spot_summary(free).cost == pytest.approx(2 * SPOT_LARGE)
    world, capped = spot_run(jobs, notice_s=305.0, max_preemptions=1, **NO_RULES)
    s = spot_summary(capped)
    assert capped.instances["option"].tolist() == ["spot", "on-demand"]
    assert capped.instances["released_at"].tolist() == [1305.0, 4900.0]
    assert capped.jobs[["instance_id", "start", "end", "restarts", "lost_s"]].values.tolist() == [
        [1, 1430, 2930, 1, 1105], [1, 1440, 1540, 0, 0]]
    assert (s.preemptions, s.vms_started) == (1, {"spot": 1, "fallback": 0, "on_demand_jobs": 1})
    assert s.cost == pytest.approx(SPOT_LARGE + OD_LARGE)
    assert world.completions.tolist() == [1, 1]


def test_a_job_below_its_limit_may_still_go_to_spot() -> None:
    _, result = spot_run(table([200, 1440], [1500, 100], [50, 50]), notice_s=305.0, max_preemptions=2, **NO_RULES)
    assert result.instances["option"].tolist() == ["spot", "spot"]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_preemptions"):
        SpotConfig(offer(CLOSES_AT_1000), max_preemptions=0)


def test_the_rules_keep_a_busy_market_run_valid_and_every_job_done_once() -> None:
    # 40 jobs of 300-2300 s over two closes; validate mode checks every tick (the run raises otherwise)
    arrival = [float(50 * k) for k in range(40)]
    runtime = [300.0 + 50.0 * (k % 41) for k in range(40)]
    world, result = spot_run(table(arrival, runtime, [100] * 40), max_preemptions=1, checkpoint_s=400.0,
                             spot_return=True, expected_cost=True)
    assert world.completions.tolist() == [1] * 40
    assert spot_summary(result).preemptions > 0 and not math.isnan(result.jobs["end"].max())


def test_a_job_at_its_limit_skips_a_spot_vm_with_room() -> None:
    # A (r 50) and F (r 300) run on spot VM 0 from 200, both preempted at 1305. E (r 100, arrives 1330,
    # handed at 1200 with the market open again) does not fit beside them: spot VM 1 at 1200. At the
    # tick of 1310, without a limit, A packs onto VM 1 and F (no room left there) starts spot VM 2; with
    # a limit of 1, VM 1 is hidden from both: they share VM 2, on demand (1310, ready 1430).
    jobs = table([200, 200, 1330], [1500, 1500, 1500], [50, 300, 100])
    _, free = spot_run(jobs, notice_s=305.0, **NO_RULES)
    assert free.instances["option"].tolist() == ["spot", "spot", "spot"]
    assert free.jobs[["instance_id", "start"]].values.tolist() == [[1, 1320], [2, 1430], [1, 1330]]
    _, capped = spot_run(jobs, notice_s=305.0, max_preemptions=1, **NO_RULES)
    assert capped.instances["option"].tolist() == ["spot", "spot", "on-demand"]
    assert capped.jobs[["instance_id", "start"]].values.tolist() == [[2, 1430], [2, 1430], [1, 1330]]
    assert spot_summary(capped).cost == pytest.approx(2 * SPOT_LARGE + OD_LARGE)


def test_the_expected_cost_rule_is_off_by_default() -> None:
    # the 1270-s job the rule would send on demand (handed at 1310) starts on spot when no rule is named
    _, result = spot_run(table([1440], [1270], [50]))
    assert result.instances["option"].tolist() == ["spot"]


def test_just_above_the_break_even_work_a_job_starts_on_demand() -> None:
    # at 1310 the break-even run is 1260 s (3600 s to the hour): 1260.2 s is 0.2 s too long for spot
    _, result = spot_run(table([1440], [1260.2], [50]), expected_cost=True)
    assert result.instances["option"].tolist() == ["on-demand"]


def test_spot_does_not_pay_at_exactly_the_on_demand_price() -> None:
    # at 1750 (tick 17): one close in 1800 s of ticks, a hazard of exactly 2 per hour
    world, _ = spot_run(table([200], [100], [50]))
    ratio = world.offer.ratio_at(1750.0)
    assert world.offer.hazard(1750.0) == 2.0
    work = (1.0 - ratio) / 2.0
    assert ratio + 2.0 * work == 1.0  # the expected price equals on-demand to the last bit
    assert not world.spot_pays(1750.0, work)
    assert world.spot_pays(1750.0, math.nextafter(work, 0.0))


def test_the_restart_overhead_adds_to_the_work_at_stake() -> None:
    # checkpoints every 1200 s and 100 s of overhead: 1300 s at stake, above the 1260 s that pays at 1310
    _, result = spot_run(table([1440], [2000], [50]), expected_cost=True, checkpoint_s=1200.0,
                         restart_overhead_s=100.0)
    assert result.instances["option"].tolist() == ["on-demand"]


def test_the_expected_cost_applies_to_a_market_with_room_for_one_vm() -> None:
    # the set-up's market with a cap of 1 (not "no cap") while open: the 1270-s job still goes on demand
    caps = np.array([1.0] * 10 + [0.0] * 2 + [1.0] * 8)
    one = SpotOffer("one", 100, caps, np.full(20, 0.1), 120.0)
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(table([1440], [1270], [50]), CATALOG, ENGINE, offer=one, lookahead=policy.lookahead,
                         expected_cost=True)
    result = summarize(run(world, policy), CATALOG, ENGINE.billing(), policy="FCFS-SM")
    assert result.instances["option"].tolist() == ["on-demand"]


def test_a_job_at_its_limit_goes_on_demand_even_when_spot_would_pay() -> None:
    # as above with the limit of 1, checkpoints every 300 s: A, preempted at 1305, has 300 s at stake at
    # 1310, which pays on spot (below 1260 s); its limit still sends it on demand, B with it
    jobs = table([200, 1440], [1500, 100], [50, 50])
    _, capped = spot_run(jobs, notice_s=305.0, max_preemptions=1, checkpoint_s=300.0, expected_cost=True)
    assert capped.instances["option"].tolist() == ["spot", "on-demand"]
    assert capped.jobs["restarts"].tolist() == [1, 0]


def test_an_on_demand_job_skips_spot_vm_zero_and_packs_onto_an_on_demand_vm() -> None:
    # A (1000 s, handed at 1310) pays on spot: spot VM 0. B and C (1270 s, handed at 1370 and 1380) do
    # not: VM 0 hidden, B starts on-demand VM 1 at 1370, where C packs (on-demand VMs stay shown)
    _, result = spot_run(table([1440, 1500, 1510], [1000, 1270, 1270], [50, 50, 50]), expected_cost=True)
    assert result.instances["option"].tolist() == ["spot", "on-demand"]
    assert result.jobs["instance_id"].tolist() == [0, 1, 1]


def test_a_fallback_vm_released_at_its_deadline_is_forgotten() -> None:
    # A's fallback VM 1 (on demand from 1120 while the market was closed) goes idle at its deadline
    world, result = spot_run(table([200], [2000], [50]), spot_return=True)
    assert result.instances["option"].tolist() == ["spot", "on-demand"]
    assert world.started["fallback"] == 1 and world._fallback == {}


def test_a_hidden_vm_reads_as_a_released_slot() -> None:
    # type -1 and free capacity -1.0, as Pool.release leaves a slot; the other slots as they were
    world, _ = spot_run(table([200, 210], [500, 500], [300, 300]), counts=[1] * 20)
    fleet = Fleet(0.0, 120.0, np.array([50.0, 100.0]), np.array([400.0, 400.0]), np.array([3, 3]),
                  *([np.zeros(2)] * 9), 3600.0, 0.0, CATALOG.capacity,
                  np.arange(len(CATALOG.capacity)), np.zeros(2))
    shown = _without(fleet, [1])
    assert (shown.vm_type.tolist(), shown.free.tolist()) == ([3, -1], [50.0, -1.0])
    assert world.pool.col.vm_type.tolist()[:2] == [-1, -1] and world.pool.col.free.tolist()[:2] == [-1.0, -1.0]


def test_a_spot_configs_rules_build_the_world_it_describes() -> None:
    config = SpotConfig(offer(CLOSES_AT_1000), checkpoint_s=600.0, restart_overhead_s=60.0, spot_return=True,
                        max_preemptions=2, expected_cost=True)
    world = SpotCohWorld(table([200], [100], [50]), CATALOG, ENGINE, lookahead=130.0,
                         **config.rules())  # type: ignore[arg-type]
    assert (world.offer, world.checkpoint_s, world.restart_overhead_s, world.spot_return, world.max_preemptions,
            world.expected_cost) == (config.offer, 600.0, 60.0, True, 2, True)


def test_jobs_both_passes_leave_wait_together_in_order() -> None:
    # A at its limit and B, both handed at 1310 (as above): with no plan for either pass, both wait, in order
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(table([200, 1440], [1500, 100], [50, 50]), CATALOG, ENGINE,
                         offer=offer(CLOSES_AT_1000, 305.0), lookahead=policy.lookahead, max_preemptions=1)
    while (first := world.next_batch()) is not None and world.restarts_total == 0:
        world.act(policy.decide(world.now, first, world))
    assert first is not None and first.index.tolist() == [0]  # A, alone, on demand
    world.act(None)
    second = world.next_batch()
    assert second is not None and second.index.tolist() == [1] and world.waiting == 1  # A carried
    world.act(None)
    assert world._waiting == [0, 1] and world.waiting == 2


def test_a_plan_of_another_tick_is_blamed_on_the_policy_named_or_policy_by_default() -> None:
    world = SpotCohWorld(table([200], [100], [50]), CATALOG, ENGINE, offer=offer(CLOSES_AT_1000), lookahead=130.0)
    assert world.next_batch() is not None
    stale = Plan(np.array([0]), np.array([5]), np.array([3]), 5)
    with pytest.raises(RuntimeError, match=r"^policy policy: plan built on 5 slots, the pool has 0"):
        world.act(stale)
    world = SpotCohWorld(table([200], [100], [50]), CATALOG, ENGINE, offer=offer(CLOSES_AT_1000), lookahead=130.0)
    assert world.next_batch() is not None
    with pytest.raises(RuntimeError, match=r"^policy FFD: plan built on 5 slots"):
        world.act(stale, by="FFD")


def test_a_tick_with_no_job_to_hand_is_no_decision() -> None:
    # the only job arrives at 5000: nothing is visible at 0
    world = SpotCohWorld(table([5000], [100], [50]), CATALOG, ENGINE, offer=offer(CLOSES_AT_1000), lookahead=130.0)
    assert world._tick(0.0, None) is False
    assert world._pending is None and world.waiting == 0


def test_the_fleet_asked_with_statistics_has_them_refreshed_after_a_departure() -> None:
    # A (200, 500 s) and B (210, 700 s) share VM 0; at 770, when C is handed, A left at 700: B alone remains
    policy = build_policy(POLICY, seed=0, billing=ENGINE.billing(), catalog=CATALOG)
    world = SpotCohWorld(table([200, 210, 900], [500, 700, 100], [50, 50, 50]), CATALOG, ENGINE,
                         offer=offer(CLOSES_AT_1000), lookahead=policy.lookahead)
    for _ in range(2):
        batch = world.next_batch()
        assert batch is not None
        world.act(policy.decide(world.now, batch, world))
    assert world.next_batch() is not None and world.now == 770.0
    fleet = world.fleet(stats=True)
    assert (fleet.n_jobs.tolist(), fleet.arr_min.tolist(), fleet.arr_sum.tolist()) == ([1], [210.0], [210.0])


def test_the_run_record_lists_the_runs_a_preemption_cut_short() -> None:
    # as in the limit test: A ran 1105 s on spot VM 0 before its preemption at 1305
    world, _ = spot_run(table([200, 1440], [1500, 100], [50, 50]), notice_s=305.0, max_preemptions=1, **NO_RULES)
    spot = world.result().spot
    assert spot is not None and spot.cut == ((0, 0, 1105.0),)


def test_the_other_jobs_of_an_on_demand_jobs_tick_still_start_spot() -> None:
    # handed together at 1310: X (1270 s) fails the expected cost and starts an on-demand VM; Y (100 s)
    # passes and, not fitting beside X (300 + 300 of 400), starts a spot VM in the second pass
    _, result = spot_run(table([1440, 1440], [1270, 100], [300, 300]), expected_cost=True)
    assert result.instances["option"].tolist() == ["on-demand", "spot"]
    assert result.jobs["instance_id"].tolist() == [0, 1]
