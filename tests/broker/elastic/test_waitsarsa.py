"""SARSA on the wait reward (:mod:`broker.elastic.waitsarsa`): its teacher, its size decisions and their rewards,
candidate sizes by hand, a pool without a ceiling, determinism."""

from __future__ import annotations

import copy
import itertools
from types import SimpleNamespace
from typing import cast

import numpy as np
import pytest

from broker.elastic.descriptors import encode, input_size, state_inputs
from broker.elastic.episode import run_episode
from broker.elastic.esn import EchoStateNetwork
from broker.elastic.sarsa import SarsaConfig
from broker.elastic.simulate import run_elastic
from broker.elastic.waitsarsa import SIZE_INPUTS, SizeConfig, WaitSarsaAgent
from broker.elastic.world import Action, Decision, ElasticWorld, PoolConfig
from tests.broker.elastic.test_sarsa import busy
from tests.broker.elastic.test_world import core_jobs
from workloads.errors import ConfigError

SMALL = SarsaConfig(pretrain=100, retrain_every=100, units=20)


def test_the_first_decisions_are_edfs_and_then_the_network_decides() -> None:
    jobs = busy(300)
    learner = run_elastic(jobs, PoolConfig(4), "sarsa", seed=1, sarsa=SMALL, trim=0, reward="wait")
    teacher = run_elastic(jobs, PoolConfig(4), "edf", trim=0)
    first = learner.jobs.sort_values("start", kind="stable").head(100)
    assert first.index.tolist() == teacher.jobs.sort_values("start", kind="stable").head(100).index.tolist()
    assert learner.jobs["start"].ne(teacher.jobs["start"]).any()
    assert learner.summary.reward == "wait" and learner.summary.trainings == SMALL.sweeps + (300 - 100) // 100


def test_same_seed_same_run_and_another_seed_another() -> None:
    jobs, pool = busy(300), PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    runs = [run_elastic(jobs, pool, "sarsa", seed=s, sarsa=SMALL, trim=0, reward="wait",
                        sizing=SizeConfig(size_pretrain=5, size_retrain_every=5)) for s in (3, 3, 4)]
    assert runs[0].jobs.equals(runs[1].jobs) and runs[0].instances.equals(runs[1].instances)
    assert not runs[0].jobs.equals(runs[2].jobs)


def _decision(running: int, queued: int, size: int, low: int, high: int, now: float = 0.0) -> Decision:
    return Decision(now, np.arange(queued), running, size, low, high, True, 0.0)


def test_candidate_sizes_follow_the_demand_by_hand() -> None:
    agent = WaitSarsaAgent(2, True, SMALL)
    # demand 10 running + 5 waiting = 15: ceil(15 x (1, 1.1, 1.25, 1.5, 2)) = 15, 17, 19, 23, 30; and 12 (keep)
    assert agent.size_candidates(_decision(10, 5, 12, 11, 100)).tolist() == [12, 15, 17, 19, 23, 30]
    # clipped to what the decision allows, duplicates merged
    assert agent.size_candidates(_decision(10, 5, 12, 11, 18)).tolist() == [12, 15, 17, 18]
    assert agent.size_candidates(_decision(1, 1, 40, 30, 100)).tolist() == [30, 40]


def test_a_size_decision_is_taken_when_the_hold_is_over_or_the_demand_exceeds_the_pool() -> None:
    jobs = busy(200)
    pool = PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    agent = WaitSarsaAgent(3, True, SMALL, SizeConfig(size_pretrain=10_000, size_explore=0.0), hold_s=300)
    times: list[tuple[float, int, int]] = []
    original = agent.size_candidates

    def spy(decision: Decision) -> np.ndarray:
        times.append((decision.now, decision.running + len(decision.queued), decision.size))
        return original(decision)

    agent.size_candidates = spy  # type: ignore[method-assign]
    run_episode(ElasticWorld(jobs, pool), 0.5, agent.decide, agent.observe, "wait")
    assert agent.size_decisions == len(times) > 5
    for (before, _, _), (now, demand, size) in itertools.pairwise(times):
        assert now >= before + 300 or demand > size


def test_a_size_decisions_reward_is_the_sum_of_its_steps() -> None:
    jobs = busy(200)
    pool = PoolConfig(4, elastic=True, min_cores=2, max_cores=12, hold_s=300)
    agent = WaitSarsaAgent(3, True, SMALL, SizeConfig(size_pretrain=10_000), hold_s=300, seed=2)
    episode = run_episode(ElasticWorld(jobs, pool), 0.5, agent.decide, agent.observe, "wait")
    book = episode.waits
    assert book is not None
    steps = np.array([book.reward(n) for n in range(book.count)])
    sized = agent.size_memory.rewards[:agent.size_decisions]
    # every step's reward went to the size decision open at it; before the first, none
    assert sized.sum() == pytest.approx(steps[agent.first_size_step:].sum())
    assert np.all(sized <= 0)


def test_a_pool_without_a_ceiling_is_sized_by_the_demand() -> None:
    jobs = busy(300)
    pool = PoolConfig(4, elastic=True, min_cores=2, hold_s=300, no_ceiling=True)
    result = run_elastic(jobs, pool, "sarsa", seed=1, sarsa=SMALL, trim=0, reward="wait", validate=True,
                         sizing=SizeConfig(size_pretrain=5, size_retrain_every=5))
    assert result.summary.max_cores is None and result.summary.peak_cores > 4
    assert result.summary.size_demand_corr is not None


def test_the_papers_learner_needs_a_ceiling() -> None:
    pool = PoolConfig(4, elastic=True, min_cores=2, no_ceiling=True)
    with pytest.raises(ConfigError, match=r"the paper's learner spreads its pool sizes over \[min_cores, max_cores\]"):
        run_elastic(busy(50), pool, "sarsa", reward="paper")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"headroom": ()}, "headroom needs at least one"),
    ({"headroom": (-0.1,)}, "headroom needs at least one finite value >= 0"),
    ({"size_gamma": 1.0}, r"size_gamma in \[0, 1\)"),
    ({"size_explore": 1.5}, r"size_explore in \[0, 1\]"),
    ({"size_pretrain": 0}, "must be >= 1"),
])
def test_bad_size_settings_are_refused(kwargs, match) -> None:
    with pytest.raises(ConfigError, match=match):
        SizeConfig(**kwargs)


def test_an_unknown_reward_is_refused_before_any_run() -> None:
    with pytest.raises(ConfigError, match=r"^reward must be one of paper, wait, got 'late'$"):
        run_elastic(busy(10), PoolConfig(4), "fcfs", reward="late")  # type: ignore[arg-type]


# -- settings, seeds and the size network's inputs by hand (the mutation gaps of issue 34) --------------


@pytest.mark.parametrize("kwargs", [{"size_gamma": 0.0}, {"size_explore": 1.0}, {"size_explore": 0.0},
                                    {"size_pretrain": 1, "size_retrain_every": 1, "size_sweeps": 1}])
def test_size_settings_at_their_bounds_are_accepted(kwargs) -> None:
    assert SizeConfig(**kwargs).to_dict() == {**SizeConfig().to_dict(), **kwargs}


def test_size_settings_as_plain_values() -> None:
    assert SizeConfig().to_dict() == {"headroom": (0.0, 0.1, 0.25, 0.5, 1.0), "size_gamma": 0.5, "size_pretrain": 100,
                                          "size_explore": 0.2, "size_retrain_every": 50, "size_sweeps": 5}


@pytest.mark.parametrize("kwargs", [{"size_sweeps": 0}, {"size_retrain_every": 0}, {"size_pretrain": 0}])
def test_each_size_count_below_one_is_refused_alone(kwargs) -> None:
    with pytest.raises(ConfigError, match=r"^size_pretrain, size_retrain_every and size_sweeps must be >= 1$"):
        SizeConfig(**kwargs)


@pytest.mark.parametrize("hold_s", [float("inf"), -1.0, float("nan")])
def test_a_hold_time_not_finite_or_negative_is_refused(hold_s: float) -> None:
    with pytest.raises(ConfigError, match=r"^the hold time must be a finite number >= 0 s, got "):
        WaitSarsaAgent(2, True, SMALL, hold_s=hold_s)


@pytest.mark.parametrize("hold_s", [0.0, 0.5])
def test_a_hold_time_of_zero_or_under_a_second_is_accepted(hold_s: float) -> None:
    assert WaitSarsaAgent(2, True, SMALL, hold_s=hold_s).hold_s == hold_s


def test_a_fresh_agent_holds_900_s_and_has_taken_no_size_decision() -> None:
    agent = WaitSarsaAgent(2, True, SMALL)
    assert (agent.hold_s, agent.first_size_step, agent.size_decisions, agent.decisions) == (900.0, -1, 0, 0)


def test_the_networks_and_the_teacher_are_drawn_from_the_seeds_four_streams() -> None:
    config = SarsaConfig(units=12, density=0.3, readout_density=0.5, spectral_radius=0.7, ridge=0.25)
    agent = WaitSarsaAgent(2, True, config, seed=7)
    net, draw, teacher, size = np.random.SeedSequence(7).spawn(4)
    width = input_size(2, False, wait=True)
    for got, want in ((agent.esn, EchoStateNetwork(width, 12, density=0.3, readout_density=0.5, spectral_radius=0.7,
                                                   ridge=0.25, seed=net)),
                      (agent.size_esn, EchoStateNetwork(4 + 2 + 2 + 5, 12, density=0.3, readout_density=0.5,
                                                        spectral_radius=0.7, ridge=0.25, seed=size))):
        assert (got.inputs, got.units, got.ridge) == (want.inputs, want.units, want.ridge)
        np.testing.assert_array_equal(got.w, want.w)
        np.testing.assert_array_equal(got.w_in, want.w_in)
        np.testing.assert_array_equal(got.read, want.read)
    assert agent.rng.random() == np.random.default_rng(draw).random()
    assert agent.teacher.rng.random() == np.random.default_rng(teacher).random()
    # a seed sequence is used as it is; no seed is seed 0
    same = WaitSarsaAgent(2, True, config, seed=np.random.SeedSequence(7))
    np.testing.assert_array_equal(same.size_esn.w_in, agent.size_esn.w_in)
    np.testing.assert_array_equal(WaitSarsaAgent(2, True, config).esn.w_in,
                                  WaitSarsaAgent(2, True, config, seed=0).esn.w_in)


def test_the_jobs_submitted_over_the_last_hold_by_hand() -> None:
    agent = WaitSarsaAgent(2, True, SMALL, hold_s=200.0)
    jobs = SimpleNamespace(submit=np.array([100.0, 250.0, 300.0, 400.0]))
    # at 300: the window is [100, 300], the job submitted at 100 s (exactly 200 s ago) still counts: 3
    assert agent._recent(_decision(0, 0, 4, 1, 8, now=300.0), cast(ElasticWorld, SimpleNamespace(
        jobs=jobs, submitted=3))) == 3
    # at 400 with one more job: [200, 400] holds 250, 300, 400
    assert agent._recent(_decision(0, 0, 4, 1, 8, now=400.0), cast(ElasticWorld, SimpleNamespace(
        jobs=jobs, submitted=4))) == 3


def _size_world() -> ElasticWorld:
    return ElasticWorld(busy(10), PoolConfig(4, elastic=True, min_cores=1, max_cores=40, hold_s=300))


def test_the_size_networks_inputs_by_hand() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SMALL, hold_s=300)
    agent._recent = lambda decision, world: 2  # type: ignore[method-assign]
    decision = _decision(3, 2, 6, 1, 40)  # demand 3 running + 2 waiting = 5 on a nominal pool of 4
    got = agent.size_inputs(decision, world, np.array([1, 5, 6, 10, 30]))
    assert got.shape == (5, len(state_inputs(world, decision, wait=True)) + SIZE_INPUTS)
    # the demand 5/4 and the 2 recent jobs over 4, the same for each size
    assert got[:, -5:-3].tolist() == [[1.25, 0.5]] * 5
    # each size over 4; its headroom (size - 5) / 5 = -0.8, 0, 0.2, 1, 5 clipped to 4; keeps the size 6
    assert got[:, -3:].tolist() == [[0.25, -0.8, 0.0], [1.25, 0.0, 0.0], [1.5, 0.2, 1.0], [2.5, 1.0, 0.0],
                                    [7.5, 4.0, 0.0]]
    # no demand: the headroom is over 1 (not 0, nor 2)
    empty = agent.size_inputs(_decision(0, 0, 2, 1, 40), world, np.array([1, 2]))
    assert empty[:, -3:].tolist() == [[0.25, 1.0, 0.0], [0.5, 2.0, 1.0]]
    # sizes given in float32 are read in float64: 1/4 is exact either way, 1/3 of a pool of 3 is not
    three = ElasticWorld(busy(10), PoolConfig(3, elastic=True, min_cores=1, max_cores=40, hold_s=300))
    assert agent.size_inputs(decision, three, np.array([1.0], dtype=np.float32))[0, -3] == 1 / 3


def test_candidate_sizes_are_integers_and_candidates_include_job_0() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SMALL)
    assert agent.size_candidates(_decision(10, 5, 12, 11, 100)).dtype == np.int64
    assert agent.candidates(_decision(0, 1, 4, 1, 40), world).tolist() == [0]


def _queue(now: float, running: int, queued: int, size: int, idle_for: float = 0.0, first: int = 0) -> Decision:
    """A resizable decision at 40 000 s + ``now`` (all of ``_size_world``'s jobs submitted), on a pool of 1 to 40
    cores, with ``queued`` jobs from ``first`` on waiting."""
    return Decision(40_000.0 + now, np.arange(first, first + queued), running, size, 1, 40, True, idle_for)


def test_the_job_network_trains_at_the_end_of_pretraining_then_every_retrain_every() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, False, SarsaConfig(pretrain=1, retrain_every=3, sweeps=2, units=10))
    trained: list[tuple[int, int]] = []
    agent._train = lambda sweeps: trained.append((agent.decisions, sweeps))  # type: ignore[method-assign]
    teacher = agent.teacher.decide
    taught: list[int] = []
    agent.teacher.decide = lambda d, w: (taught.append(agent.decisions), teacher(d, w))[1]  # type: ignore[method-assign]
    for _ in range(8):
        agent.decide(_queue(0.0, 0, 5, 4), world)
    # only decision 0 is the teacher's; 2 sweeps after it (1 decision), then 1 after 4 and 7 (1 + 3k)
    assert taught == [0]
    assert trained == [(1, 2), (4, 1), (7, 1)]


def test_after_pretraining_the_job_is_the_greedy_one_or_with_epsilon_a_random_one() -> None:
    world = _size_world()
    for epsilon in (0.0, 1.0):
        agent = WaitSarsaAgent(world.jobs.n_groups, False, SarsaConfig(pretrain=1, units=10, epsilon=epsilon), seed=2)
        agent.decide(_queue(0.0, 0, 8, 4), world)  # the teacher's
        agent.esn.coef = np.random.default_rng(0).normal(size=len(agent.esn.coef))  # a readout that prefers some jobs
        picked, expected = [], []
        for first, queued in ((0, 8), (1, 7), (4, 6), (2, 5), (3, 7), (5, 5)):
            decision = _queue(0.0, 0, queued, 4, first=first)
            jobs = agent.candidates(decision, world)
            if epsilon:  # the agent's stream draws whether to explore, then the job
                rng = copy.deepcopy(agent.rng)
                rng.random()
                i = int(rng.integers(len(jobs)))
            else:
                i = int(np.argmax(copy.deepcopy(agent.esn).q(encode(world, decision, jobs, wait=True))))
            expected.append(int(jobs[i]))
            picked.append(agent.decide(decision, world).job)
        assert picked == expected
        assert len(set(expected)) > 1  # not the first candidate each time


def test_a_job_only_learner_never_sizes_the_pool() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, False, SMALL, SizeConfig(size_explore=0.0))
    # the demand 5 + 2 = 7 exceeds the 4 cores, but the learner does not size
    assert agent.decide(_queue(0.0, 5, 2, 4), world).cores is None
    assert agent.size_decisions == 0


def test_size_decisions_and_the_autoscalers_sizes_by_hand() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SMALL, SizeConfig(size_pretrain=10_000, size_explore=0.0),
                           hold_s=300)
    decisions = (_queue(0.0, 0, 1, 4),  # the first: a size decision; demand 1, no idle hold: keep 4
                 _queue(100.0, 0, 1, 4),  # within the hold, the demand fits: none
                 _queue(200.0, 5, 2, 4),  # the demand 7 exceeds 4: grow to 7 (of 4, 7, 8, 9, 11, 14)
                 _queue(400.0, 0, 1, 7),  # within the hold (to 500): none
                 _queue(500.0, 0, 1, 7, idle_for=300.0))  # the hold is over, idle for 300 s: shrink to 1
    got = [(agent.decide(decision, world).cores, agent.size_decisions) for decision in decisions]
    assert got == [(None, 1), (None, 1), (7, 2), (None, 2), (1, 3)]
    assert agent.first_size_step == 0
    assert agent.size_memory.rewards[:3].tolist() == [0.0, 0.0, 0.0]  # each starts at 0 until its steps' rewards


def test_a_size_decision_explores_with_size_explore_while_pretraining() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SMALL, SizeConfig(size_pretrain=10_000, size_explore=1.0),
                           hold_s=0)
    picked, expected = [], []
    for running in (5, 9, 20, 3, 12, 30):
        decision = _queue(0.0, running, 2, 4)
        sizes = agent.size_candidates(decision)
        rng = copy.deepcopy(agent.rng)
        rng.random()
        size = int(sizes[int(rng.integers(len(sizes)))])
        expected.append(None if size == 4 else size)
        picked.append(agent.decide(decision, world).cores)
    assert picked == expected
    assert len(set(expected)) > 2


def test_after_size_pretraining_the_size_network_decides() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SarsaConfig(pretrain=100, units=10, epsilon=0.0),
                           SizeConfig(size_pretrain=1, size_explore=0.0), hold_s=0)
    assert agent.decide(_queue(0.0, 0, 1, 4), world).cores == 1  # the autoscaler's: the demand 1 (no hold)
    # a readout that prefers the largest size: Q grows with the size over the nominal pool (its input -3)
    width = len(agent.size_esn.coef) - len(agent.size_esn.read)
    agent.size_esn.coef = np.zeros(len(agent.size_esn.coef))
    agent.size_esn.coef[width - 3] = 1.0
    # demand 7: candidates 4, 7, 8, 9, 11, 14; the autoscaler would take 7, the network takes 14
    assert agent.decide(_queue(0.0, 5, 2, 4), world).cores == 14


def test_the_size_network_trains_at_the_end_of_size_pretraining_then_every_size_retrain_every() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SMALL,
                           SizeConfig(size_pretrain=2, size_retrain_every=3, size_sweeps=4), hold_s=0)
    trained: list[tuple[int, int]] = []
    agent._train_sizes = lambda sweeps: trained.append((agent.size_decisions, sweeps))  # type: ignore[method-assign]
    for _ in range(9):
        agent.decide(_queue(0.0, 5, 2, 4), world)  # with no hold each decision is a size decision
    # 4 sweeps after size decision 2, then 1 after 5 and 8 (2 + 3k)
    assert trained == [(2, 4), (5, 1), (8, 1)]


def test_the_candidates_include_the_most_urgent_job_besides_the_oldest_and_the_shortest() -> None:
    # one group, both interactive: job 0 (submitted 0, 10 s), job 1 (submitted 990, 100 s); at 1000
    world = ElasticWorld(core_jobs([0, 990], [10, 100], [0, 0]), PoolConfig(1))
    decision = Decision(1000.0, np.array([0, 1]), 0, 1, 1, 1, False, 0.0)
    # job 0 is the oldest and the shortest; its urgency 60 (10/1010)^2 / 10 = 5.9e-4 is below job 1's
    # 60 (100/110)^2 / 100 = 0.50: only the urgent kind holds job 1
    assert WaitSarsaAgent(1, False, SMALL).candidates(decision, world).tolist() == [0, 1]


class _Draws:
    """An agent's stream that draws ``u`` for each coin and the first index for each pick."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u

    def integers(self, n: int) -> int:
        return 0


def test_a_draw_equal_to_epsilon_does_not_explore() -> None:
    # explore with probability epsilon: a uniform draw in [0, 1) below it, so a draw of exactly 0.5 does not
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SarsaConfig(pretrain=1, units=10, epsilon=0.5),
                           SizeConfig(size_pretrain=1, size_explore=0.5), hold_s=0)
    agent.decide(_queue(0.0, 0, 8, 4), world)  # the teacher's job, the autoscaler's size: a draw of the real stream
    agent.rng = _Draws(0.5)  # type: ignore[assignment]
    width = len(agent.size_esn.coef) - len(agent.size_esn.read)
    agent.size_esn.coef = np.zeros(len(agent.size_esn.coef))
    agent.size_esn.coef[width - 3] = 1.0  # prefers the largest size
    agent.esn.coef = np.random.default_rng(0).normal(size=len(agent.esn.coef))
    decision = _queue(0.0, 5, 8, 4, first=1)
    jobs = agent.candidates(decision, world)
    greedy = int(jobs[int(np.argmax(copy.deepcopy(agent.esn).q(encode(world, decision, jobs, wait=True))))])
    assert greedy != jobs[0]
    # demand 5 + 8 = 13: candidates 4, 13, 15, 17, 20, 26; the network's is 26, an exploring pick 4 (keep: None)
    assert agent.decide(decision, world) == Action(greedy, 26)


def test_a_draw_equal_to_size_explore_takes_the_autoscalers_size() -> None:
    world = _size_world()
    agent = WaitSarsaAgent(world.jobs.n_groups, True, SMALL, SizeConfig(size_explore=0.5), hold_s=300)
    agent.rng = _Draws(0.5)  # type: ignore[assignment]
    # demand 7 over 4 cores: the autoscaler's 7 of 4, 7, 8, 9, 11, 14 (an exploring pick: 4, keep)
    assert agent.decide(_queue(0.0, 5, 2, 4), world).cores == 7
