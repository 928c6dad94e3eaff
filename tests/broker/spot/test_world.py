"""The deadline world on hand-worked timelines: progress, overhead, preemptions, notices, billing, validate mode."""

from __future__ import annotations

import math

import pytest

from broker.pricing.spot import SpotBilling
from broker.sim.recorder import MemoryRecorder
from broker.spot.simulate import run_spot
from broker.spot.world import IDLE, ON_DEMAND, SpotJob, SpotWorld
from tests.broker.spot.helpers import Script, market
from workloads.errors import ConfigError


def test_on_demand_pays_the_overhead_and_the_work_and_ends_between_ticks() -> None:
    run = run_spot(market([0] * 8), [SpotJob(300, 600, 50)], Script([ON_DEMAND]))
    row = run.jobs.iloc[0]
    assert run.cost == pytest.approx(0.35) and row["done_h"] == pytest.approx(350 / 3600)
    assert (run.deadline_misses, run.preemptions, run.launches, run.decisions) == (0, 0, 1, 4)


def test_progress_made_on_spot_is_kept_across_a_preemption_with_checkpointing() -> None:
    # spot from 0 (ready at 50), preempted at 200 with 150 s done; on-demand at 400: ready 450, done 600
    run = run_spot(market([1, 1, 0, 0, 1, 1, 1, 1]), [SpotJob(300, 600, 50)],
                   Script([0, 0, IDLE, IDLE, ON_DEMAND]), validate=True)
    row = run.jobs.iloc[0]
    assert (row["spot_cost"], row["od_cost"]) == (pytest.approx(0.02), pytest.approx(0.2))
    assert run.preemptions == 1 and row["done_h"] * 3600 == pytest.approx(600) and not row["missed"]


def test_a_job_done_exactly_at_its_deadline_has_met_it() -> None:
    run = run_spot(market([0] * 8), [SpotJob(550, 600, 50)], Script([ON_DEMAND]), validate=True)
    assert run.deadline_misses == 0 and run.jobs.iloc[0]["done_h"] * 3600 == pytest.approx(600)


def test_a_job_short_of_its_work_at_the_deadline_is_stopped_and_counted_as_missed() -> None:
    run = run_spot(market([0] * 8), [SpotJob(560, 600, 50)], Script([ON_DEMAND]), validate=True)
    row = run.jobs.iloc[0]
    assert run.deadline_misses == 1 and row["missed"] and math.isnan(row["done_h"])
    assert row["progress_h"] * 3600 == pytest.approx(550) and run.cost == pytest.approx(0.6)


def test_without_checkpointing_a_preemption_loses_the_progress() -> None:
    run = run_spot(market([1, 1, 0, 0, 1, 1, 1, 1]), [SpotJob(300, 600, 50, checkpoint=False)],
                   Script([0, 0, IDLE, IDLE, ON_DEMAND]), validate=True)
    row = run.jobs.iloc[0]  # the on-demand instance from 400 restarts at 0: 150 s of 300 by the deadline, then lost
    assert run.deadline_misses == 1 and row["progress_h"] == 0.0
    assert (row["spot_cost"], row["od_cost"]) == (pytest.approx(0.02), pytest.approx(0.2))


def test_a_preemption_at_the_last_tick_leaves_the_rest_to_on_demand() -> None:
    # the zone drops at tick 5 (t = 500), the last decision before the 600 s deadline
    run = run_spot(market([1, 1, 1, 1, 1, 0, 0]), [SpotJob(550, 600, 0)], Script([0, 0, 0, 0, 0, ON_DEMAND]),
                   validate=True)
    row = run.jobs.iloc[0]
    assert run.preemptions == 1 and row["done_h"] * 3600 == pytest.approx(550)
    assert (row["spot_cost"], row["od_cost"]) == (pytest.approx(0.05), pytest.approx(0.05))


def test_work_done_at_the_instant_of_a_preemption_is_done_not_preempted() -> None:
    run = run_spot(market([1, 1, 1, 1, 1, 0, 0]), [SpotJob(500, 600, 0)], Script([0]), validate=True)
    assert run.preemptions == 0 and run.jobs.iloc[0]["done_h"] * 3600 == pytest.approx(500)


def test_a_run_past_the_timelines_end_reads_it_again_and_counts_the_repeat() -> None:
    # [1, 1, 0] repeated over the 9 ticks of the run: spot drops at t = 200 and again at 500
    run = run_spot(market([1, 1, 0]), [SpotJob(450, 800, 0)], Script([0, 0, IDLE, 0, 0, IDLE, 0]), validate=True)
    assert run.timeline_repeats == 2 and run.preemptions == 2
    assert run.jobs.iloc[0]["done_h"] * 3600 == pytest.approx(650)  # 200 + 200 by 500, the last 50 from 600


def test_the_notice_comes_its_period_before_the_preemption_and_is_shown_to_the_policy() -> None:
    recorder = MemoryRecorder()
    world = SpotWorld(market([1, 1, 1, 0], notice_s=120.0), [SpotJob(1000, 2000, 0)], recorder=recorder)
    seen = []
    while (d := world.advance()) is not None:
        seen.append((d.now, d.jobs[0].noticed))
        world.act((0 if d.tick < 3 else ON_DEMAND,))
    assert seen[:4] == [(0.0, False), (100.0, False), (200.0, True), (300.0, False)]
    assert world.result().jobs.iloc[0]["notices"] == 1
    assert recorder.frame("preemption")["t"].tolist() == [300.0]


def test_hourly_billing_charges_started_hours_and_a_preempted_partial_hour_is_free_when_asked() -> None:
    zones = [1] * 36 + [0] * 40  # spot held 3,600 s, then preempted
    job, script = SpotJob(5000, 7000, 0), Script([0] * 36 + [ON_DEMAND])
    charged = run_spot(market(zones, billing=SpotBilling("hour")), [job], script).jobs.iloc[0]
    assert (charged["spot_cost"], charged["od_cost"]) == (pytest.approx(0.36), pytest.approx(3.6))
    zones = [1] * 30 + [0] * 40  # preempted after 3,000 s: the partial hour is free, on-demand's is not
    free = run_spot(market(zones, billing=SpotBilling("hour", interrupted_hour_free=True)), [job],
                    Script([0] * 30 + [ON_DEMAND])).jobs.iloc[0]
    assert (free["spot_cost"], free["od_cost"]) == (0.0, pytest.approx(3.6))


def test_spot_is_charged_each_ticks_price_per_second() -> None:
    run = run_spot(market([1, 1, 1, 1], prices=[[3.6, 7.2, 36.0, 36.0]]), [SpotJob(250, 400, 0)], Script([0]))
    assert run.cost == pytest.approx(0.1 + 0.2 + 0.5)


def test_two_jobs_share_a_one_instance_zone_and_the_younger_is_preempted_first() -> None:
    world = SpotWorld(market([2, 2, 1, 1, 1, 1]), [SpotJob(300, 600, 0), SpotJob(300, 600, 0)], validate=True)
    d = world.advance()
    assert d is not None and d.free == (2,)
    world.act((0, 0))
    while (d := world.advance()) is not None:
        world.act(tuple(j.using if j.using != IDLE else ON_DEMAND for j in d.jobs))
    run = world.result()
    assert run.jobs["preemptions"].tolist() == [0, 1] and run.deadline_misses == 0


def test_launching_spot_where_no_instance_is_free_is_refused() -> None:
    world = SpotWorld(market([1, 1]), [SpotJob(300, 600, 0), SpotJob(300, 600, 0)])
    assert world.advance() is not None
    with pytest.raises(ValueError, match="no spot instance free at tick 0"):
        world.act((0, 0))


def test_the_world_refuses_choices_it_does_not_know_and_jobs_that_cannot_be() -> None:
    world = SpotWorld(market([1]), [SpotJob(300, 600, 0)])
    assert world.advance() is not None
    with pytest.raises(ValueError, match="choice 3 is not idle"):
        world.act((3,))
    with pytest.raises(ValueError, match="2 choices for 1 unfinished jobs"):
        world.act((0, 0))
    for kwargs, message in (({"work_s": 0.0}, "work must be > 0"), ({"deadline_s": math.inf}, "deadline must be"),
                            ({"overhead_s": -1.0}, "overhead must be >= 0")):
        with pytest.raises(ConfigError, match=message):
            SpotJob(**{"work_s": 1.0, "deadline_s": 2.0, **kwargs})  # type: ignore[arg-type]


def test_validate_mode_catches_a_second_instance_and_progress_above_the_work() -> None:
    world = SpotWorld(market([1] * 8), [SpotJob(300, 600, 0)], validate=True)
    assert world.advance() is not None
    world.act((ON_DEMAND,))
    assert world.advance() is not None
    with pytest.raises(RuntimeError, match="would hold two instances"):
        world._launch(0, 0, 100.0, 1, set())
    world.base[0] = 400.0  # a world that let progress pass the work
    with pytest.raises(RuntimeError, match="progressed"):
        world._release(0, 100.0, interrupted=False)
