"""The CoH world's spot rules (:mod:`broker.coh.spot`): back to spot, on demand after N preemptions, expected cost.

The set-up of ``test_spot_world``: 100 s market ticks, the market closed over [1000, 1200) of every
2000 s, a spot price a tenth of on-demand; jobs handed to FCFS-SM 130 s before they arrive, ticks on
a 10 s grid, a VM boots 120 s and an idle one goes 10 s before its hour rolls over (at start + 3590
s); a large VM costs 0.26 $/h on demand, 0.026 $/h spot. Every run validates.
"""

from __future__ import annotations

import math

import pytest

from broker.coh.spot import SpotConfig
from tests.broker.coh.test_spot_world import CLOSES_AT_1000, OD_LARGE, SPOT_LARGE, offer, spot_run, spot_summary, table
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
