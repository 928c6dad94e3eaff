"""``cloudbroker/Spot-v0``: one job with a deadline on a spot market, an agent choosing at every tick.

The same :class:`~broker.spot.world.SpotWorld` the policies run on, one step per decision tick.

- **Action**: ``Discrete(2 + zones)``: 0 wait (idle), 1 on-demand, ``2 + z`` spot in zone ``z``
  (kept while it runs). Spot in a zone with no free instance at the tick is taken as wait and
  ``info["invalid_action"]`` says so; ``info["action_mask"]`` marks the actions possible now.
- **Observation** (all in [0, 1] but the prices): elapsed time over the deadline, progress over
  the work, the slack left over the deadline, what runs (on-demand, each zone; none of them: idle), the
  overhead still to pay over ``d``, whether a preemption notice is pending, each zone's free spot
  (0/1) and its price over on-demand.
- **Reward**: minus the money charged during the step (an instance is charged when released: on a
  switch, a preemption, the job's end), and minus ``miss_penalty`` (default: the job's on-demand
  cost) if the deadline is missed. An episode is one job from a start tick (``options={"start": k}``,
  else drawn from the environment's generator so the job's window lies inside the timelines).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from broker.pricing.spot import PAPER_ON_DEMAND, PAPER_SPOT, SpotMarket, load_timeline
from broker.spot.simulate import on_demand_cost, start_ticks
from broker.spot.world import IDLE, ON_DEMAND, Decision, SpotJob, SpotWorld
from workloads.errors import ConfigError

HOUR = 3600.0
#: The observation's bound on a zone's price over on-demand.
PRICE_HIGH = 10.0


class SpotEnv(gym.Env[np.ndarray, Any]):
    """One job on a spot market as an environment (see the module docstring).

    Give ``availability`` (trace files, one per zone) or a ``market``.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (Gymnasium's own attribute)

    def __init__(self, availability: Sequence[str | Path] | None = None, *, market: SpotMarket | None = None,
                 work_h: float = 48.0, deadline_h: float = 52.0, overhead_h: float = 0.2,
                 on_demand_price: float = PAPER_ON_DEMAND, spot_price: float = PAPER_SPOT,
                 miss_penalty: float | None = None) -> None:
        if (availability is None) == (market is None):
            raise ConfigError("give availability files or a market, not both")
        if market is None:
            assert availability is not None
            market = SpotMarket(tuple(load_timeline(f) for f in availability), on_demand=on_demand_price,
                                spot_price=spot_price)
        self.market, self.job = market, SpotJob(work_h * HOUR, deadline_h * HOUR, overhead_h * HOUR)
        self.reference = on_demand_cost(market, self.job)
        self.miss_penalty = self.reference if miss_penalty is None else miss_penalty
        zones = len(market.zones)
        self.n_actions = 2 + zones
        self.action_space = spaces.Discrete(self.n_actions)
        self.high = np.concatenate([np.ones(6 + 2 * zones), np.full(zones, PRICE_HIGH)])
        self.observation_space = spaces.Box(np.zeros_like(self.high), self.high, dtype=np.float64)
        self.world: SpotWorld | None = None
        self.decision: Decision | None = None
        self.charged = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """A new episode from ``options["start"]`` or a drawn start tick: the first decision's observation."""
        super().reset(seed=seed)
        start = (options or {}).get("start")
        if start is None:
            start = start_ticks(self.market, self.job, 1, seed=int(self.np_random.integers(2**63 - 1)))[0]
        self.world = SpotWorld(self.market, [self.job], start=int(start))
        self.decision, self.charged = self.world.advance(), 0.0
        return self._observe(), self._info(False)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the choice for the next tick; run to the next decision (or the job's end)."""
        world, decision = self.world, self.decision
        if world is None or decision is None:
            raise RuntimeError("call reset() before step(), and again once an episode has terminated")
        a = int(action)
        if not 0 <= a < self.n_actions:
            raise ConfigError(f"action {action!r} is outside the action space {self.action_space}")
        choice, invalid = self._choice(a, decision)
        world.act((choice,))
        self.decision = world.advance()
        charged = sum(world.spot_cost) + sum(world.od_cost)
        reward = -(charged - self.charged)
        self.charged = charged
        done = self.decision is None
        if done and world.missed[0]:
            reward -= self.miss_penalty
        return self._observe(), float(reward), done, False, self._info(invalid)

    def _choice(self, action: int, decision: Decision) -> tuple[int, bool]:
        if action == 0:
            return IDLE, False
        if action == 1:
            return ON_DEMAND, False
        z, using = action - 2, decision.jobs[0].using
        if z == using or decision.free[z] > 0:
            return z, False
        return IDLE, True

    def _mask(self) -> np.ndarray:
        mask = np.zeros(self.n_actions, dtype=np.int8)
        if self.decision is not None:
            mask[:2] = 1
            using = self.decision.jobs[0].using
            for z, free in enumerate(self.decision.free):
                mask[2 + z] = free > 0 or z == using
        return mask

    def _observe(self) -> np.ndarray:
        out = np.zeros(len(self.high), dtype=np.float64)
        d = self.decision
        if d is None:
            return out
        job, zones = d.jobs[0], len(self.market.zones)
        t, w = job.deadline_s, job.work_s
        running = np.zeros(2 + zones)
        running[job.using + 2 if job.using >= 0 else (1 if job.using == ON_DEMAND else 0)] = 1.0
        head = [d.now / t, job.progress_s / w, max(0.0, t - d.now - job.left_s) / t]
        ready = job.ready_in_s / job.overhead_s if job.overhead_s > 0 else 0.0
        free = [1.0 if f > 0 else 0.0 for f in d.free]
        prices = [min(PRICE_HIGH, p / d.on_demand) for p in d.prices]
        out[:] = np.concatenate([head, running[1:], [ready, float(job.noticed)], free, prices])
        return np.clip(out, 0.0, self.high)

    def _info(self, invalid: bool) -> dict[str, Any]:
        now = None if self.decision is None else self.decision.now
        return {"action_mask": self._mask(), "invalid_action": invalid, "now": now, "charged": self.charged}
