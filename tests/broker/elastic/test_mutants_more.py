"""The elastic world's last mutation gaps by hand: precisions, boundaries placed on a draw, flags and messages.

Sections follow the modules. Where a test places an input exactly on a random draw, the draw is read
from an independent ``numpy.random.default_rng`` of the same seed (the definition: a connection,
an exploration, when the draw is *below* the probability).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest

from broker.elastic.descriptors import encode, scale_time
from broker.elastic.episode import Action
from broker.elastic.esn import EchoStateNetwork, Gram
from broker.elastic.estimate import RunTimeEstimates
from broker.elastic.metrics import fairness_at_starts, native_figures
from broker.elastic.rewards import RewardBook, responsiveness
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.validate import ElasticValidator
from broker.elastic.world import Decision, ElasticWorld, PoolConfig, Queue
from broker.sim.validate import InvariantError
from tests.broker.elastic.test_mutants_validate import _state
from tests.broker.elastic.test_world import core_jobs

# -- descriptors ---------------------------------------------------------------------------------------


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


# -- esn -------------------------------------------------------------------------------------------------


def test_a_draw_equal_to_the_density_is_no_connection() -> None:
    # one unit: its weight is uniform(0, 1), then the connection draw; a connection exists where draw < density,
    # so with the density set to exactly that draw there is none (and nothing to rescale)
    rng = np.random.default_rng(0)
    rng.uniform(0.0, 1.0, (1, 1))
    draw = rng.random()  # 0.2697867137638703
    assert EchoStateNetwork(1, units=1, density=draw, seed=0).w.tolist() == [[0.0]]


def test_reset_sets_a_state_of_doubles() -> None:
    net = EchoStateNetwork(2, units=3)
    net.reset([1, 0, 0])  # integers are a state of doubles
    assert net.x.dtype == np.float64 and net.x.tolist() == [1.0, 0.0, 0.0]
    net.reset(np.full(3, 0.5, dtype=np.longdouble))  # and so is an extended-precision one: the step is in doubles
    assert net.step(np.zeros(2)).dtype == np.float64


def test_the_gram_reads_features_as_doubles() -> None:
    # y = 1 + 2 x at x = 0, 1, 2 without a penalty: coefficient 2, intercept 1, from extended-precision features too
    features = np.array([[0.0], [1.0], [2.0]], dtype=np.longdouble)
    gram = Gram(1)
    gram.add(features)
    coef, intercept = gram.solve(features, np.array([1.0, 3.0, 5.0]), 0.0)
    assert coef.dtype == np.float64 and coef == pytest.approx([2.0], rel=1e-12) and intercept == pytest.approx(1.0)


# -- estimate --------------------------------------------------------------------------------------------


def test_an_oracle_keeps_no_window() -> None:
    # completions join a class's window with median estimates only: an oracle's medians stay at the prior
    runtime = np.array([100.0, 2000.0])
    est = RunTimeEstimates(runtime, runtime < 900, "oracle", window=2, prior=900.0)
    est.completed(0)
    est.completed(1)
    assert est.median.tolist() == [900.0, 900.0]
    assert est.recent == (deque(), deque()) and est.ordered == ([], [])
    assert est.of(np.array([0, 1])).tolist() == [100.0, 2000.0]


# -- metrics ---------------------------------------------------------------------------------------------


def test_a_job_ending_at_a_start_has_ended_for_it_also_with_fractional_times() -> None:
    # job 0 (group 0) runs 0.2 s from 100.1; job 1 (group 1, 0.2 s) starts the instant job 0 ends, 100.1 + 0.2 in
    # floating point (the double nearest 100.3). Shares 1/2 each. Job 0: service (0.2, 0): F = 1 - (1/2) / (1/2) = 0.
    # Job 1: job 0 has received its 0.2 s, job 1's 0.2 s join group 1: (0.2, 0.2), the shares exactly: F = 1
    # (counted as still running, job 0 would have (100.1 + 0.2) - 100.1 = 0.20000000000000284 s)
    got = fairness_at_starts(np.array([100.1, 100.1 + 0.2]), np.array([0.2, 0.2]), np.array([0, 1]), 2)
    assert got.tolist() == [0.0, 1.0]


def test_ten_equal_native_waits_have_their_mean_and_no_spread() -> None:
    # ten interactive jobs of 100 s, each logged as waiting 0.1 s: mean 0.1 s, standard deviation 0
    jobs = core_jobs(1000.0 * np.arange(10), np.full(10, 100.0), np.zeros(10), wait=np.full(10, 0.1))
    figures, _, missing = native_figures(jobs, trim=0)
    assert missing == 0
    assert figures["wait_interactive_mean_s"] == 0.1 and figures["wait_interactive_std_s"] == 0.0
    assert figures["w_interactive_mean"] == pytest.approx(100 / 100.1) and figures["w_interactive_std"] < 1e-15


# -- rewards ---------------------------------------------------------------------------------------------


def test_responsiveness_is_computed_in_double_precision() -> None:
    # 100 s of run after 200 s of wait: W = 1/3, the double (not an extended-precision third)
    for runtime, wait in ((np.longdouble(100.0), 200.0), (100.0, np.longdouble(200.0))):
        got = responsiveness(runtime, wait)
        assert got.dtype == np.float64 and got == 1 / 3


def test_the_book_reads_the_target_shares_as_doubles() -> None:
    # shares 1/3 and 2/3 given in extended precision; group 0 has had 1 s, a job of group 1 believed to run 2 s is
    # elected: the service (1, 2) is exactly the target, F = 1; with lambda 0 the reward is F
    book = RewardBook(2, 0.0, elastic=False, shares=np.array([1, 2], dtype=np.longdouble) / 3)
    book.chose(0, 1, 2.0, np.array([1.0, 0.0]))
    book.terminated(0, 2.0, 0.0)
    assert book.take() == [(0, 1.0)]


def test_a_job_no_decision_dispatched_is_marked_minus_one() -> None:
    book = RewardBook(2, 0.5, elastic=False, shares=np.array([1.0]))
    book.chose(1, 0, 10.0, np.zeros(1))
    assert book.decision_of.tolist() == [-1, 0]


# -- rules -----------------------------------------------------------------------------------------------


def test_the_autoscaler_explores_only_below_the_probability() -> None:
    # 35 run, 5 wait on 40 cores: the demand (40) is the size, the autoscaler keeps it. With explore set to
    # exactly the policy's first draw (seed 2: 0.2616121342493164) that draw is not below it: no exploration
    draw = np.random.default_rng(2).random()
    world = ElasticWorld(core_jobs([0], [10], [0]), PoolConfig(1))
    decision = Decision(0.0, np.arange(5), 35, 40, 36, 100, True, 0.0)
    assert RulePolicy(sizing=True, explore=draw, seed=2).decide(decision, world) == Action(0, None)


# -- sarsa -----------------------------------------------------------------------------------------------


def _past_pretraining(elastic: bool, **config) -> SarsaAgent:
    agent = SarsaAgent(1, elastic, SarsaConfig(units=10, pretrain=1, retrain_every=1000, **config))
    agent.decisions = 1  # the teacher's decision is over: the network decides
    return agent


def test_the_learner_explores_only_below_epsilon() -> None:
    # j0 (10 s) and j1 (5 s) wait on one core: the candidates are [0, 1]; Q = -(scaled estimate) prefers j1.
    # Epsilon is exactly the first draw of seed 2 (0.2616121342493164): not below it, so greedy (a random pick
    # would draw index 0, j0)
    world = ElasticWorld(core_jobs([0, 0], [10, 5], [0, 0]), PoolConfig(1))
    d = world.advance()
    assert d is not None
    draw = np.random.default_rng(2).random()
    agent = _past_pretraining(False, epsilon=draw)
    agent.rng = np.random.default_rng(2)
    agent.esn.coef = np.zeros(len(agent.esn.coef))
    agent.esn.coef[7] = -1.0  # the inputs: 4 state values, 1 share, interactive, 1 group, then the estimate
    assert agent.decide(d, world) == Action(1, None)


def _elastic_start() -> tuple[ElasticWorld, Decision]:
    # j0 (10 s) and j1 (5 s) at 0 on an elastic pool of 1 core, 1..4: the pool may take 1, 2, 3 or 4 cores
    world = ElasticWorld(core_jobs([0, 0], [10, 5], [0, 0]),
                         PoolConfig(1, elastic=True, min_cores=1, max_cores=4, hold_s=0.0))
    d = world.advance()
    assert d is not None and (d.size, d.low, d.high, d.resizable) == (1, 1, 4, True)
    return world, d


@pytest.mark.parametrize(("slope", "expected"), [(1.0, Action(0, 4)), (-1.0, Action(0, None))])
def test_the_learner_resizes_only_to_another_size(slope, expected) -> None:
    # Q = slope x cores / nominal (the ninth input), the same for both jobs (ties: the first, j0): growing
    # takes 4 cores; shrinking takes the least, 1, the size the pool has: no resize, cores None
    world, d = _elastic_start()
    agent = _past_pretraining(True, epsilon=0.0, levels=4)
    agent.esn.coef = np.zeros(len(agent.esn.coef))
    agent.esn.coef[8] = slope
    assert agent.decide(d, world) == expected


def test_candidate_sizes_follow_the_decision() -> None:
    world, _ = _elastic_start()
    agent = SarsaAgent(1, True, SarsaConfig(units=10, levels=4))  # levels 1, 2, 3, 4 over [1, 4]
    # a decision that says the pool must stay at 2 offers 2 only, whatever range it carries
    stay = Decision(0.0, np.array([0, 1]), 0, 2, 1, 4, False, 0.0)
    jobs, sizes = agent.candidates(stay, world)
    assert jobs.tolist() == [0, 1] and sizes is not None and sizes.tolist() == [2, 2]
    # a decision allowing [1, 2] (below the pool's ceiling of 4) offers 1 and 2
    capped = Decision(0.0, np.array([0, 1]), 0, 2, 1, 2, True, 0.0)
    jobs, sizes = agent.candidates(capped, world)
    assert jobs.tolist() == [0, 0, 1, 1] and sizes is not None and sizes.tolist() == [1, 2, 1, 2]


def test_two_decisions_make_one_transition() -> None:
    # decision 0's reward known and decision 1 taken: transition 0 is complete, one re-training
    agent = SarsaAgent(1, False, SarsaConfig(units=10))
    for n in range(2):
        agent._remember(n, np.full(agent._phi.shape[1], float(n)))
    agent.decisions = 2
    agent.observe([(0, 0.5)])
    assert agent.train(1) == 1 and agent.trainings == 1


# -- validate --------------------------------------------------------------------------------------------

# the broken pool states of test_mutants_validate.py (two jobs on an elastic pool of 1..4 cores)


def test_more_running_jobs_than_cores_say_how_many() -> None:
    crowded = _state(done=0, running={0: 0.0, 1: 5.0}, size=1)
    with pytest.raises(InvariantError, match=r"^t=7.0: 2 jobs run on a pool of 1 cores$"):
        ElasticValidator(crowded).at_event(7.0)


def test_a_change_eps_before_the_hold_ends_is_tolerated() -> None:
    # sizes 2 and 3 from 0, then 4 at 60 - 1e-6: exactly the hold less the tolerance after the last change
    state = _state(sizes=[(0.0, 2), (0.0, 3)], size=3, done=0, submitted=0, start=np.full(2, np.nan))
    validator = ElasticValidator(state)
    state.sizes.append((60.0 - 1e-6, 4))
    state.size = 4
    validator.at_event(60.0 - 1e-6)


def test_core_seconds_off_by_exactly_the_tolerance_pass() -> None:
    # two jobs of 0 s at 0: the sizes give 0 core-seconds; 1e-6 counted is exactly the tolerance (1e-6 x 1)
    instant = _state(jobs=core_jobs([0, 0], [0, 0], [0, 0]), start=np.zeros(2), end=np.zeros(2),
                     core_seconds=lambda t: 2 * t + 1e-6)
    ElasticValidator(instant).at_end()


def test_a_run_of_no_job_is_checked_where_it_starts() -> None:
    # no job: the run ends at its start, 0, where the size 2 gives 0 core-seconds; one counted there is caught
    empty = _state(jobs=core_jobs([], [], [], groups=1), submitted=0, done=0, start=np.empty(0), end=np.empty(0),
                   core_seconds=lambda t: 2 * t + 1.0)
    with pytest.raises(InvariantError, match=r"^the pool's core-seconds are 1.0, its sizes give 0.0$"):
        ElasticValidator(empty).at_end()


# -- world -----------------------------------------------------------------------------------------------


def test_an_empty_queue_gives_integer_indices() -> None:
    jobs = Queue(3).jobs()
    assert jobs.dtype == np.int64 and np.arange(3)[jobs].tolist() == []


def test_a_pool_without_a_hold_schedules_no_hold_end() -> None:
    # one job on 1..2 cores, hold 0: grown to 2 at its dispatch; the run handles its submission and termination
    world = ElasticWorld(core_jobs([0], [10], [0]), PoolConfig(1, elastic=True, min_cores=1, max_cores=2, hold_s=0.0))
    assert world.advance() is not None
    world.act(Action(0, 2))
    assert len(world.kernel) == 1  # the termination at 10 only
    assert world.advance() is None and world.kernel.popped == 2


def test_the_last_time_the_pool_was_full_is_the_dispatch_that_filled_it() -> None:
    # two cores: j0 at 0 leaves one idle, j1 at 3 fills the pool
    world = ElasticWorld(core_jobs([0, 3], [10, 10], [0, 0]), PoolConfig(2))
    for _ in range(2):
        d = world.advance()
        assert d is not None
        world.act(Action(int(d.queued[0])))
    assert world.last_full == 3.0
