"""``cloudbroker/Spot-v0``: Gymnasium's checks, and agents that replay the policies' costs."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import broker  # noqa: F401  (registers the environments)
from broker.spot.env import SpotEnv
from broker.spot.policies import Greedy
from broker.spot.simulate import run_spot
from tests.broker.spot.helpers import market
from tests.conftest import P3_ZONES_DIR

ZONES = [str(P3_ZONES_DIR / f"{z}_v100_1.json") for z in ("us-east-1a", "us-west-2a")]


def make(**kwargs):  # type: ignore[no-untyped-def]
    return gymnasium.make("cloudbroker/Spot-v0", availability=ZONES, work_h=6.0, deadline_h=8.0, **kwargs).unwrapped


def test_the_environment_passes_gymnasiums_checks() -> None:
    check_env(make(), skip_render_check=True)


def episode(env: SpotEnv, start: int, agent) -> tuple[float, dict]:  # type: ignore[no-untyped-def]
    obs, info = env.reset(options={"start": start})
    total, done = 0.0, False
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, done, truncated, info = env.step(agent(env, info))
        total += reward
        assert not truncated
    return total, info


@pytest.mark.parametrize("start", [0, 4321, 15000])
def test_an_always_on_demand_agent_pays_the_on_demand_policys_cost(start: int) -> None:
    env = make()
    total, _ = episode(env, start, lambda env, info: 1)
    assert -total == pytest.approx(run_spot(env.market, [env.job], "on-demand", start=start).cost)
    assert -total == pytest.approx(3.06 * 6.2)


def test_an_agent_playing_greedys_choices_pays_greedys_cost() -> None:
    env, policy = make(), Greedy()

    def agent(env: SpotEnv, info: dict) -> int:
        choice = policy.decide(env.decision, env.world)[0]  # type: ignore[arg-type]
        return {-2: 0, -1: 1}.get(choice, choice + 2)

    total, _ = episode(env, 9000, agent)
    assert -total == pytest.approx(run_spot(env.market, [env.job], "greedy", start=9000).cost)


def test_a_missed_deadline_costs_the_penalty_and_spot_where_none_is_free_is_waiting() -> None:
    env = SpotEnv(market=market([0] * 20), work_h=0.1, deadline_h=0.5, overhead_h=0.0, miss_penalty=100.0)
    total, info = episode(env, 0, lambda env, info: 2)
    assert info["invalid_action"] and total == -100.0
    assert np.array_equal(env.reset(options={"start": 0})[1]["action_mask"], [1, 1, 0])
