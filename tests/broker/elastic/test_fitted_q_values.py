"""Fitted Q iteration's values (:mod:`broker.elastic.fitted_q`): a two-step bootstrap by hand, the forest's settings,
the exploration of each episode, the data kept across episodes, the empty next states, the settings' edges."""

from __future__ import annotations

import numpy as np
import pytest

import broker.elastic.fitted_q as fq
from broker.elastic.env import ElasticEnv
from broker.elastic.fitted_q import (
    FittedQConfig,
    FittedQPolicy,
    SlotRows,
    Transitions,
    fit,
    next_rows,
    play,
    train_fitted_q,
)
from tests.broker.elastic.test_fitted_q import TINY
from tests.broker.elastic.test_sarsa import busy
from workloads.errors import ConfigError


def _env(n: int = 60) -> ElasticEnv:
    return ElasticEnv(jobs=busy(n), cores=3, reward="wait")


def _mask(env: ElasticEnv, full: list[int]) -> np.ndarray:
    mask = np.zeros(env.n_slots, dtype=np.int8)
    mask[full] = 1
    return mask


def test_the_second_iteration_adds_gamma_times_the_best_next_q() -> None:
    env = _env()
    obs, _ = env.reset()
    rows = SlotRows(env)
    # a: slot 0, reward 0, next state with only slot 1 full; b: slot 1, reward 1, terminal
    data = Transitions([rows(obs, np.array([0]))[0], rows(obs, np.array([1]))[0]], [0.0, 1.0], [obs, obs],
                       [_mask(env, [1]), _mask(env, [])], [False, True])
    config = FittedQConfig(iterations=2, gamma=0.5, trees=3, min_samples_leaf=1)
    policy = fit(data, FittedQPolicy(rows, None), config, seed=0)
    # Q_1 = (0, 1); Q_2(a) = 0 + 0.5 x Q_1(b) = 0.5, Q_2(b) = 1 (terminal)
    assert policy.q(obs, _mask(env, [0, 1])).tolist() == pytest.approx([0.5, 1.0])
    assert policy.act(obs, _mask(env, [0, 1])) == 1
    assert policy.model is not None
    assert policy.model.n_estimators == 3 and policy.model.min_samples_leaf == 1 and policy.model.random_state == 0


def test_the_forest_has_the_configured_trees_and_leaf_size() -> None:
    env = _env()
    obs, _ = env.reset()
    rows = SlotRows(env)
    data = Transitions([rows(obs, np.array([k % 2]))[0] for k in range(12)], [float(k % 3) for k in range(12)],
                       [obs] * 12, [_mask(env, [0])] * 12, [False] * 12)
    policy = fit(data, FittedQPolicy(rows, None), FittedQConfig(iterations=1, trees=4, min_samples_leaf=6), seed=2)
    assert policy.model is not None
    assert policy.model.n_estimators == 4 and policy.model.min_samples_leaf == 6
    # one thread: with more, the trees' predictions are summed in the order the threads finish, and the
    # rounding can break a tie between slots differently, so a seed would not repeat the run
    assert policy.model.n_jobs == 1
    # leaves of 6 of the 12 rows at least: no tree splits the two slots' 6 rows each further
    assert all(tree.tree_.n_node_samples.min() >= 6 for tree in policy.model.estimators_)


def test_before_any_fit_q_is_zero_for_each_full_slot() -> None:
    env = _env()
    obs, _ = env.reset()
    policy = FittedQPolicy(SlotRows(env), None)
    assert policy.q(obs, _mask(env, [1, 2])).tolist() == [0.0, 0.0]
    assert policy.act(obs, _mask(env, [1, 2])) == 1


def test_no_live_next_state_gives_empty_int_arrays() -> None:
    env = _env()
    obs, _ = env.reset()
    rows = SlotRows(env)
    data = Transitions([rows(obs, np.array([0]))[0]] * 2, [0.0, 1.0], [obs] * 2, [_mask(env, [0]), _mask(env, [])],
                       [True, False])
    following, live, starts = next_rows(data, rows)
    assert following.shape == (0, 0)
    assert live.dtype == np.int64 and live.shape == (0,) and starts.dtype == np.int64 and starts.shape == (0,)
    policy = fit(data, FittedQPolicy(rows, None), FittedQConfig(iterations=2, gamma=0.5, trees=2,
                                                                min_samples_leaf=1), seed=0)
    assert policy.q(obs, _mask(env, [0])).tolist() == pytest.approx([0.5])  # the mean reward, no bootstrap


class Coin:
    """Stands in for the generator of :func:`play`: ``random`` gives ``value``; ``choice`` the last full slot."""

    def __init__(self, value: float) -> None:
        self.value, self.choices = value, 0

    def random(self) -> float:
        return self.value

    def choice(self, full: np.ndarray) -> int:
        self.choices += 1
        return int(full[-1])


def test_play_explores_only_below_epsilon_and_marks_only_the_last_step_done() -> None:
    env = _env(20)
    greedy = FittedQPolicy(SlotRows(env), None)  # Q = 0: the first full slot
    coin = Coin(0.0)
    data = play(env, greedy, 0.0, coin)  # 0.0 is not below 0.0: greedy throughout
    assert coin.choices == 0 and data.done[-1] is True and not any(data.done[:-1])
    assert len(data.rows) == len(data.rewards) == len(data.next_obs) == len(data.next_mask) == len(data.done)
    coin = Coin(0.5)
    data = play(env, greedy, 0.6, coin)
    assert coin.choices == len(data.done) > 0
    coin = Coin(0.5)
    data = play(env, greedy, 0.4, coin)
    assert coin.choices == 0


def test_the_first_episode_explores_fully_then_epsilon_and_the_data_accumulate(monkeypatch) -> None:
    epsilons: list[float] = []
    sizes: list[int] = []
    real_play, real_fit = fq.play, fq.fit

    def logged_play(env, policy, epsilon, rng, data=None):
        epsilons.append(epsilon)
        return real_play(env, policy, epsilon, rng, data)

    def logged_fit(data, policy, config, seed):
        sizes.append(len(data.rows))
        return real_fit(data, policy, config, seed)

    monkeypatch.setattr(fq, "play", logged_play)
    monkeypatch.setattr(fq, "fit", logged_fit)
    config = FittedQConfig(episodes=3, iterations=1, epsilon=0.25, trees=2, min_samples_leaf=2)
    policy = train_fitted_q(_env(), config, seed=1)
    assert epsilons == [1.0, 0.25, 0.25]
    # each episode adds its steps to the earlier ones'
    assert len(sizes) == 3 and sizes[0] > 0 and sizes[1] == 2 * sizes[0] and sizes[2] == 3 * sizes[0]
    assert policy.model is not None and policy.model.n_estimators == 2  # the given settings, not the defaults


def test_the_default_seed_is_0() -> None:
    env = _env()
    obs, info = env.reset()
    a, b = train_fitted_q(_env(), TINY), train_fitted_q(_env(), TINY, seed=0)
    assert a.q(obs, info["action_mask"]).tolist() == b.q(obs, info["action_mask"]).tolist()
    assert a.model is not None and b.model is not None
    assert [t.tree_.threshold.tolist() for t in a.model.estimators_] == \
        [t.tree_.threshold.tolist() for t in b.model.estimators_]
    c = train_fitted_q(_env(), TINY, seed=1)
    assert c.model is not None
    assert [t.tree_.threshold.tolist() for t in a.model.estimators_] != \
        [t.tree_.threshold.tolist() for t in c.model.estimators_]


def test_the_settings_are_plain_values() -> None:
    assert TINY.to_dict() == {"episodes": 2, "iterations": 2, "gamma": 0.8, "epsilon": 0.1, "trees": 5,
                              "min_samples_leaf": 2}


def test_an_elastic_environment_is_refused_with_the_whole_message() -> None:
    with pytest.raises(ConfigError, match=r"^fitted Q chooses a slot: use a rigid pool's environment "
                                          r"\(mode='rigid'\)$"):
        train_fitted_q(ElasticEnv(jobs=busy(20), mode="elastic", cores=3, min_cores=2), TINY)


@pytest.mark.parametrize("kwargs", [
    {"episodes": 1}, {"iterations": 1}, {"trees": 1}, {"min_samples_leaf": 1},
    {"epsilon": 0.0}, {"epsilon": 1.0}, {"gamma": 0.0},
])
def test_the_settings_edges_are_accepted(kwargs) -> None:
    assert FittedQConfig(**kwargs) is not None


@pytest.mark.parametrize("kwargs", [{"episodes": 0}, {"iterations": 0}, {"trees": 0}, {"min_samples_leaf": 0}])
def test_a_count_below_1_is_refused_with_the_whole_message(kwargs) -> None:
    with pytest.raises(ConfigError, match=r"^fitted Q needs episodes, iterations, trees and min_samples_leaf >= 1$"):
        FittedQConfig(**kwargs)


@pytest.mark.parametrize("kwargs", [{"epsilon": 1.5}, {"epsilon": 1.01}, {"gamma": -0.1}, {"gamma": float("nan")}])
def test_gamma_and_epsilon_past_their_edges_are_refused(kwargs) -> None:
    with pytest.raises(ConfigError, match=r"gamma in \[0, 1\) and epsilon in \[0, 1\]"):
        FittedQConfig(**kwargs)
