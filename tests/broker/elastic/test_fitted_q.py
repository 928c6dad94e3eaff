"""Fitted Q iteration through the Gymnasium environment (:mod:`broker.elastic.fitted_q`): targets by hand, masks,
determinism, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.env import ElasticEnv
from broker.elastic.fitted_q import (
    FittedQConfig,
    FittedQPolicy,
    SlotRows,
    Transitions,
    fit,
    next_rows,
    run_policy,
    train_fitted_q,
)
from tests.broker.elastic.test_sarsa import busy
from workloads.errors import ConfigError

TINY = FittedQConfig(episodes=2, iterations=2, trees=5, min_samples_leaf=2)


def _env(n: int = 150) -> ElasticEnv:
    return ElasticEnv(jobs=busy(n), cores=3, reward="wait")


def test_a_slots_row_is_the_head_its_table_row_and_its_index() -> None:
    env = _env()
    obs, _info = env.reset()
    rows = SlotRows(env)
    got = rows(obs, np.array([1]))[0]
    head = len(obs) - env.n_slots * env.columns
    assert env.columns == 4 and len(got) == head + 4 + env.n_slots
    assert got[:head].tolist() == obs[:head].tolist()
    assert got[head:head + 4].tolist() == obs[head + 4:head + 8].tolist()
    assert got[head + 4:].tolist() == np.eye(env.n_slots)[1].tolist()


def test_with_gamma_zero_q_is_the_reward_and_the_greedy_slot_the_cheaper() -> None:
    env = _env()
    obs, _ = env.reset()
    rows = SlotRows(env)
    mask = np.zeros(env.n_slots, dtype=np.int8)
    mask[[0, 1]] = 1
    # the same observation 40 times: slot 0 costs 1, slot 1 nothing
    data = Transitions([rows(obs, np.array([k % 2]))[0] for k in range(40)], [-1.0 if k % 2 == 0 else 0.0
                                                                               for k in range(40)],
                       [obs] * 40, [mask] * 40, [False] * 40)
    policy = fit(data, FittedQPolicy(rows, None), FittedQConfig(iterations=1, gamma=0.0, trees=3,
                                                                  min_samples_leaf=1), seed=0)
    assert policy.q(obs, mask).tolist() == pytest.approx([-1.0, 0.0])
    assert policy.act(obs, mask) == 1


def test_the_targets_bootstrap_on_the_best_full_slot_and_stop_at_the_end() -> None:
    env = _env()
    obs, _ = env.reset()
    rows = SlotRows(env)
    full, empty = np.array([1, 1, 0] + [0] * (env.n_slots - 3), dtype=np.int8), np.zeros(env.n_slots, dtype=np.int8)
    data = Transitions([rows(obs, np.array([0]))[0]] * 3, [0.0, 0.0, 0.0], [obs] * 3, [full, full, empty],
                       [False, True, False])
    following, live, starts = next_rows(data, rows)
    # only transition 0 has a next state that is not terminal and has a full slot: its slots 0 and 1
    assert live.tolist() == [0] and starts.tolist() == [0] and len(following) == 2


def test_the_policy_picks_only_full_slots_and_a_seed_repeats_the_run() -> None:
    first = run_policy(_env(), train_fitted_q(_env(), TINY, seed=3)).episode
    again = run_policy(_env(), train_fitted_q(_env(), TINY, seed=3)).episode
    assert first is not None and again is not None
    assert first.world.start.tolist() == again.world.start.tolist()
    assert first.world.finished()


def test_an_elastic_environment_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"fitted Q chooses a slot: use a rigid pool's environment"):
        train_fitted_q(ElasticEnv(jobs=busy(20), mode="elastic", cores=3, min_cores=2), TINY)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"episodes": 0}, "must be >= 1|>= 1"),
    ({"gamma": 1.0}, r"gamma in \[0, 1\)"),
    ({"epsilon": -0.1}, r"epsilon in \[0, 1\]"),
])
def test_bad_settings_are_refused(kwargs, match) -> None:
    with pytest.raises(ConfigError, match=match):
        FittedQConfig(**kwargs)
