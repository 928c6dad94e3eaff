"""Run-time estimates, the state and job descriptors, the slots, and the rules a site would run, by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from broker.elastic.descriptors import (
    encode,
    input_size,
    job_features,
    levels,
    n_slots,
    queue_cost,
    scale_time,
    slots,
    state,
    urgency,
)
from broker.elastic.episode import Action
from broker.elastic.estimate import RunTimeEstimates
from broker.elastic.rules import RulePolicy, pick, threshold_size
from broker.elastic.world import Decision, ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import core_jobs
from workloads.errors import ConfigError


def test_the_median_estimate_over_a_sliding_window_by_class() -> None:
    runtime = np.array([100.0, 300.0, 2000.0, 200.0, 5000.0, 50.0, 400.0])
    interactive = runtime < 900
    est = RunTimeEstimates(runtime, interactive, "median", window=3, prior=900.0)
    assert est.of(np.arange(7)).tolist() == [900.0] * 7  # nothing completed: the prior
    for job, expected in ((0, 100.0), (1, 200.0), (3, 200.0), (5, 200.0), (6, 200.0)):
        est.completed(job)
        assert est.one(0) == expected  # interactive: medians of {100}, {100, 300}, {100, 300, 200},
        # then the window of 3 drops 100: {300, 200, 50}, then 300: {200, 50, 400}
    assert est.one(2) == 900.0  # no batch job has completed
    est.completed(2)
    est.completed(4)
    assert est.one(4) == 3500.0 and est.one(2) == 3500.0
    twin = est.copy()
    twin.completed(0)
    assert est.one(0) == 200.0 and twin.one(0) == 100.0  # the copy moved on alone
    oracle = RunTimeEstimates(runtime, interactive, "oracle")
    oracle.completed(0)
    assert oracle.of(np.array([2, 5])).tolist() == [2000.0, 50.0]
    with pytest.raises(ConfigError, match="one of oracle, median"):
        RunTimeEstimates(runtime, interactive, "mean")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="window >= 1"):
        RunTimeEstimates(runtime, interactive, "median", window=0)


# two groups; at 100: jobs 0 (group 0, started 0, 300 s) and 1 (group 1, started 50, 100 s) run on 3 cores
# (one idle); jobs 2 (group 1, 1000 s), 3 (group 0, 60 s), 4 (group 1, 30 s) wait
SEVEN = core_jobs([0, 50, 60, 70, 80], [300, 100, 1000, 60, 30], [0, 1, 1, 0, 1])


def _at_100() -> tuple[ElasticWorld, Decision]:
    world = ElasticWorld(SEVEN, PoolConfig(2))
    d = world.advance()
    world.act(Action(0))
    d = world.advance()  # job 1 at 50
    world.act(Action(1))
    d = world.advance()  # job 1 ends at 150 with 2, 3, 4 waiting
    assert d is not None and d.now == 150.0
    return world, d


def test_the_state_descriptors_by_hand() -> None:
    world = ElasticWorld(SEVEN, PoolConfig(3))
    for _ in range(2):
        d = world.advance()
        assert d is not None
        world.act(Action(int(d.queued[0])))
    # jobs 2, 3, 4 arrive at 60, 70, 80 to one idle core: the decision at 60 sees only job 2; run the clock to 80
    world.kernel.run(world._handlers, until=80.0)
    d = world._decision(80.0)
    assert d is not None and d.queued.tolist() == [2, 3, 4] and d.idle == 1
    got = state(world, d)
    # remaining: job 0 300 - 80 = 220, job 1 100 - 30 = 70; a core is idle: 0 to wait; backlog 1090
    assert got.tolist() == [290.0, 0.0, 1090.0, 1.0, 1 / 3, 2 / 3]


def test_time_to_a_free_core_when_none_is_idle() -> None:
    world, d = _at_100()
    # at 150 job 1 ended: job 0 runs (150 left of 300 after 150 s), one core idle
    got = state(world, d)
    assert got.tolist() == [150.0, 0.0, 1090.0, 1.0, 1 / 3, 2 / 3]
    world.act(Action(2))
    world.kernel.run(world._handlers, until=160.0)
    full = Decision(160.0, np.array([3, 4]), 2, 2, 2, 2, False, 0.0)
    # jobs 0 (140 left) and 2 (990 left) run on the full pool: a core frees in 140 s
    assert state(world, full).tolist() == [1130.0, 140.0, 90.0, 0.0, 0.5, 0.5]


def test_a_running_job_past_its_estimate_has_no_work_left() -> None:
    jobs = core_jobs([0, 0, 10], [5000, 800, 10], [0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(2, estimate="median"))
    for _ in range(2):
        d = world.advance()
        assert d is not None
        world.act(Action(int(d.queued[0])))
    world.kernel.run(world._handlers, until=1000.0)  # job 1 ended at 800: interactive median 800
    d = Decision(1000.0, np.array([2]), 1, 2, 2, 2, False, 0.0)
    # job 0 (batch) is believed to take the prior 900 s: at 1000 it has none left; job 2 is believed 800 s
    assert state(world, d).tolist() == [0.0, 0.0, 800.0, 1.0, 1.0]


def test_the_slots_by_hand() -> None:
    # group 0: 0 (interactive, 500), 1 (batch, 2000), 3 (interactive, 100); group 1: 2 (interactive, 300)
    jobs = core_jobs([0, 1, 2, 3], [500, 2000, 300, 100], [0, 0, 1, 0])
    world = ElasticWorld(jobs, PoolConfig(1))
    d = world.advance()
    assert d is not None and d.now == 0.0
    world.kernel.run(world._handlers, until=3.0)
    d = Decision(3.0, np.array([0, 1, 2, 3]), 0, 1, 1, 1, False, 0.0)
    assert n_slots(2) == 8
    # oldest: batch g0 = 1, batch g1 = none, interactive g0 = 0, interactive g1 = 2;
    # shortest: batch g0 = 1, batch g1 = none, interactive g0 = 3 (100 < 500), interactive g1 = 2
    assert slots(world, d).tolist() == [1, -1, 0, 2, 1, -1, 3, 2]
    world.est.kind = "median"  # every interactive job looks the same: the shortest is the oldest
    assert slots(world, d).tolist() == [1, -1, 0, 2, 1, -1, 0, 2]
    empty = Decision(3.0, np.empty(0, dtype=np.int64), 0, 1, 1, 1, False, 0.0)
    assert slots(world, empty).tolist() == [-1] * 8


def test_job_features_encoding_and_levels() -> None:
    world, d = _at_100()
    got = job_features(world, np.array([2, 3]))
    assert got.tolist() == [[0.0, 0.0, 1.0, 1000.0], [1.0, 1.0, 0.0, 60.0]]
    rows = encode(world, d, np.array([2, 3]))
    assert rows.shape == (2, input_size(2, elastic=False)) == (2, 10)
    np.testing.assert_allclose(rows[0, :4], [scale_time(150.0), 0.0, scale_time(1090.0), 0.5])
    np.testing.assert_allclose(rows[1, 6:], [1.0, 1.0, 0.0, scale_time(60.0)])
    sized = encode(world, d, np.array([2, 3]), np.array([2, 4]))
    assert sized.shape == (2, 11) and sized[:, -1].tolist() == [1.0, 2.0]
    assert scale_time(0.0) == 0.0 and scale_time(60.0) == pytest.approx(np.log(2) / 10)
    spread = [30, 38, 46, 55, 63, 71, 80, 88, 96, 104, 112, 121, 129, 137, 146, 154, 162]  # halves round to even
    assert levels(30, 162, 17).tolist() == spread
    assert levels(30, 31, 17).tolist() == [30, 31] and levels(5, 9, 1).tolist() == [5]


def test_the_job_orders_by_hand() -> None:
    # submit, run: 0 at 0 for 1000; 1 at 10 for 50; 2 at 20 for 2000; 3 at 30 for 50; one core busy until 1000
    jobs = core_jobs([0, 10, 20, 30], [1000, 50, 2000, 50], [0, 0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(1))
    world.advance()
    world.act(Action(0))
    d = world.advance()
    assert d is not None and d.now == 1000.0 and d.queued.tolist() == [1, 2, 3]
    assert pick("fcfs", d, world) == 1
    assert pick("sjf", d, world) == 1  # 1 and 3 tie at 50: the older
    # deadlines submit + run / 9: 1: 15.6, 2: 242.2, 3: 35.6
    assert pick("edf", d, world) == 1
    later = Decision(1000.0, np.array([2, 3]), 0, 1, 1, 1, False, 0.0)
    assert pick("edf", later, world) == 3 and pick("fcfs", later, world) == 2 and pick("sjf", later, world) == 3
    # a younger job with an earlier deadline goes first: 20 + 9 / 9 = 21 before 10 + 100 / 9 = 21.1
    tight = core_jobs([0, 10, 20], [1000, 100, 9], [0, 0, 0])
    w2 = ElasticWorld(tight, PoolConfig(1))
    w2.advance()
    w2.act(Action(0))
    d2 = w2.advance()
    assert d2 is not None and pick("edf", d2, w2) == 2 and pick("fcfs", d2, w2) == 1
    with pytest.raises(ConfigError, match="one of fcfs, sjf, edf"):
        pick("lifo", d, world)


def _decision(size: int, running: int, queued: int, resizable: bool = True, idle_for: float = 0.0,
              low: int | None = None, high: int = 100) -> Decision:
    low = max(30, running + 1) if low is None else low
    return Decision(0.0, np.arange(queued), running, size, low, high, resizable, idle_for)


def test_the_threshold_autoscaler_by_hand() -> None:
    # grows to the demand (running + waiting) at once, within [low, high]
    assert threshold_size(_decision(40, 40, 10), 900.0) == 50
    assert threshold_size(_decision(40, 40, 500), 900.0) == 100
    # shrinks to the demand once a core has been idle 900 s without a break, not a second before
    assert threshold_size(_decision(80, 20, 5, idle_for=900.0), 900.0) == 30  # demand 25, floor 30
    assert threshold_size(_decision(80, 40, 5, idle_for=899.9), 900.0) is None
    assert threshold_size(_decision(80, 40, 5, idle_for=900.0), 900.0) == 45
    # at the demand already, or not allowed to change: keep
    assert threshold_size(_decision(45, 40, 5, idle_for=5000.0), 900.0) is None
    assert threshold_size(_decision(40, 40, 10, resizable=False), 900.0) is None


def test_a_rule_policy_sizes_only_an_elastic_pool_and_explores_when_asked() -> None:
    world, d = _at_100()
    assert RulePolicy("fcfs").decide(d, world) == Action(2)
    assert RulePolicy("sjf", sizing=True).decide(d, world) == Action(4)  # not resizable: no size
    grow = _decision(2, 1, 3, low=2, high=10)
    assert RulePolicy("fcfs", sizing=True).decide(grow, world).cores == 4
    explorer = RulePolicy("fcfs", sizing=True, explore=1.0, seed=3)
    sizes = {explorer.decide(grow, world).cores for _ in range(200)}
    assert sizes == set(range(2, 11))
    assert RulePolicy("edf", sizing=True).name == "edf+threshold" and RulePolicy("sjf").name == "sjf"
    with pytest.raises(ConfigError):
        RulePolicy("fcfs", explore=1.5)
    with pytest.raises(ConfigError):
        RulePolicy("rr")


# --- the pool-size levels are core counts: integers, not floats that happen to be whole ---------------------------


def test_levels_are_integers() -> None:
    got = levels(1, 4, 3)  # 1, 2.5, 4: 2.5 rounds to even, 2
    assert got.dtype == np.int64 and got.tolist() == [1, 2, 4]


# --- hand-worked edges: precisions --------------------------------------------------------------------------------


def test_scale_time_works_in_double_precision_whatever_the_input() -> None:
    # 3540 s is exact in float32: log1p(3540 / 60) / 10 = log(60) / 10 = 0.40943445622221...; in float32 it
    # would come out as 0.40943447 (off by 1.7e-8)
    got = scale_time(np.array([3540.0], dtype=np.float32))
    assert got.dtype == np.float64 and got[0] == pytest.approx(math.log(60.0) / 10.0, rel=1e-14)


def test_encode_divides_the_pool_size_in_double_precision() -> None:
    # one job on a nominal pool of 3: a size of 1 core is the input 1/3 (float32 would give 0.3333333432674408)
    world = ElasticWorld(core_jobs([0], [10], [0]), PoolConfig(3))
    d = world.advance()
    assert d is not None
    row = encode(world, d, np.array([0]), np.array([1], dtype=np.float32))[0]
    assert row[-1] == 1 / 3


# --- the wait reward's descriptors and rules (issue 34) ---------------------------------------------------------


def test_urgency_by_hand_and_its_edges() -> None:
    # 60 W^2 / e per minute: 10 s fresh -> 6, capped at 1; 10 s after 90 s -> 60 (1/10)^2 / 10 = 0.06;
    # 600 s fresh -> 0.1; a 0-second job: 1 before any wait, 0 once it has waited (its W is gone)
    got = urgency(np.array([10.0, 10.0, 600.0, 0.0, 0.0]), np.array([0.0, 90.0, 0.0, 0.0, 1.0]))
    assert got.tolist() == pytest.approx([1.0, 0.06, 0.1, 1.0, 0.0])
    assert urgency(60.0, 0.0) == 1.0  # exactly 1 per minute: the cap's edge


def test_the_wait_descriptors_and_the_urgent_slot_by_hand() -> None:
    world, d = _at_100()  # at 150: 2 (group 1, 1000 s, waited 90), 3 (group 0, 60 s, 80), 4 (group 1, 30 s, 70)
    features = job_features(world, np.array([2, 3, 4]), d.now)
    assert features[:, 4].tolist() == [90.0, 80.0, 70.0]  # the wait so far
    assert features[:, 5].tolist() == pytest.approx([1000 / 1090, 60 / 140, 30 / 100])
    assert features[:, 6].tolist() == pytest.approx([60 * (1000 / 1090) ** 2 / 1000, 60 * (60 / 140) ** 2 / 60,
                                                      60 * 0.3 ** 2 / 30])
    assert n_slots(2, wait=True) == 12 and len(slots(world, d, wait=True)) == 12
    got = slots(world, d, wait=True)
    assert got[:8].tolist() == slots(world, d).tolist()  # the paper's slots first, unchanged
    # urgent, by class and group (batch 0, batch 1, interactive 0, interactive 1): one job in each full one
    assert got[8:].tolist() == [-1, 2, 3, 4]
    assert input_size(2, True, wait=True) == input_size(2, True) + 5  # 3 of the job, 2 of the state
    # what the waiting costs, over the 2 nominal cores: 3 jobs, their urgencies summed
    hurry = 60 * (1000 / 1090) ** 2 / 1000 + 60 * (60 / 140) ** 2 / 60 + 60 * 0.3 ** 2 / 30
    assert queue_cost(world, d).tolist() == pytest.approx([3 / 2, hurry / 2])
    rows = encode(world, d, np.array([3]), wait=True)
    assert rows.shape == (1, input_size(2, False, wait=True))
    assert rows[0, -3:].tolist() == pytest.approx([scale_time(80.0), 60 / 140, 60 * (60 / 140) ** 2 / 60])


def test_the_urgent_slot_prefers_the_more_urgent_and_then_the_older() -> None:
    # one group, all interactive, at 150: 2 (100 s, waited 90), 3 (10 s, waited 80), 4 (10 s, waited 70)
    jobs = core_jobs([0, 50, 60, 70, 80], [300, 100, 100, 10, 10], [0, 0, 0, 0, 0])
    world = ElasticWorld(jobs, PoolConfig(2))
    for job in (0, 1):
        world.advance()
        world.act(Action(job))
    d = world.advance()
    assert d is not None and d.queued.tolist() == [2, 3, 4]
    # urgency: 2 -> 60 (100/190)^2 / 100 = 0.166; 3 -> 60 (10/90)^2 / 10 = 0.074; 4 -> 60 (10/80)^2 / 10 = 0.094
    assert slots(world, d, wait=True)[4:].tolist() == [-1, 2]
    assert pick("urgent", d, world) == 2 and pick("sjf", d, world) == 3
    assert pick("greedy-w", d, world) == 2  # W now: 100/190 = 0.53 against 10/90 and 10/80


def test_the_greedy_w_rule_passes_over_a_short_job_that_waited() -> None:
    # the paper reward's signature: the 1000 s job that waited 90 s (W 0.92) goes before the 60 s job that waited
    # 80 s (W 0.43, losing 0.184 a minute) and the 30 s one that waited 70 s (W 0.3, losing 0.18 a minute)
    world, d = _at_100()
    assert pick("greedy-w", d, world) == 2 and pick("urgent", d, world) == 3
