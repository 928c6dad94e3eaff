"""The rules a site would really run, on the same world as the learner: job orders and a threshold autoscaler.

Job orders (which waiting job runs next):

- ``fcfs``: the oldest.
- ``sjf``: the least estimated run time (the oldest among equals).
- ``edf``: the earliest deadline, the deadline being the latest start that keeps the job's
  responsiveness at 0.9 or above: ``submit + estimate * (1 / 0.9 - 1)`` (the paper pre-trains on
  an earliest-deadline-first policy without saying which deadline; this one is the paper's own
  "W > 0.9" target turned into a time).
- ``greedy-w``: the highest responsiveness now, ``e / (e + w)`` for estimate ``e`` and wait ``w``
  (ties: the oldest) — the myopic rule of the paper's reward, which pays a dispatch the ``W`` of
  its job: it shows that reward's signature (it passes over short jobs that have waited).
- ``urgent``: the highest urgency, the ``W`` lost per further minute of wait (``60 W^2 / e``, at
  most 1: :func:`broker.elastic.descriptors.urgency`; ties: the oldest) — the myopic rule of the
  wait reward.

Pool sizing (elastic pools only), the **threshold autoscaler**: when the pool may change, grow it to
the demand (running plus waiting jobs, within the allowed range) whenever that is more than it has;
shrink it to the demand once some core has been idle without a break for ``idle_hold_s`` (15
minutes by default, the paper's hold); otherwise keep it. The world's constraints (hold, 30 cores,
never below the running jobs) apply as to every policy. ``explore`` draws a random allowed size
with that probability (the learner's teacher uses it to show the network other sizes).
"""

from __future__ import annotations

import math

import numpy as np

from broker.elastic.descriptors import urgency
from broker.elastic.rewards import responsiveness
from broker.elastic.world import Action, Decision, ElasticWorld
from workloads.errors import ConfigError

ORDERS = ("fcfs", "sjf", "edf", "greedy-w", "urgent")
#: The responsiveness an EDF deadline keeps.
W_TARGET = 0.9


def pick(order: str, decision: Decision, world: ElasticWorld) -> int:
    """The job ``order`` runs next among ``decision.queued``."""
    queued = decision.queued
    if order == "fcfs":
        return int(queued[0])
    estimate = world.est.of(queued)
    if order == "sjf":
        return int(queued[np.argmin(estimate)])
    if order == "edf":
        return int(queued[np.argmin(world.jobs.submit[queued] + estimate * (1.0 / W_TARGET - 1.0))])
    wait = decision.now - world.jobs.submit[queued]
    if order == "greedy-w":
        return int(queued[np.argmax(responsiveness(estimate, wait))])
    if order == "urgent":
        return int(queued[np.argmax(urgency(estimate, wait))])
    raise ConfigError(f"job order must be one of {', '.join(ORDERS)}, got {order!r}")


def threshold_size(decision: Decision, idle_hold_s: float) -> int | None:
    """The autoscaler's pool size for ``decision`` (``None``: keep it)."""
    if not decision.resizable:
        return None
    demand = decision.running + len(decision.queued)
    target = min(max(demand, decision.low), decision.high)
    if target > decision.size or (target < decision.size and decision.idle_for >= idle_hold_s):
        return target
    return None


class RulePolicy:
    """A job order, with the threshold autoscaler for an elastic pool (see the module docstring)."""

    def __init__(self, order: str = "fcfs", *, sizing: bool = False, idle_hold_s: float = 900.0,
                 explore: float = 0.0, seed: int | np.random.SeedSequence | None = 0) -> None:
        if order not in ORDERS:
            raise ConfigError(f"job order must be one of {', '.join(ORDERS)}, got {order!r}")
        if not (math.isfinite(idle_hold_s) and idle_hold_s >= 0 and 0 <= explore <= 1):
            raise ConfigError(f"need idle_hold_s >= 0 and explore in [0, 1], got {idle_hold_s}, {explore}")
        self.order, self.sizing, self.idle_hold_s, self.explore = order, sizing, idle_hold_s, explore
        self.rng = np.random.default_rng(seed)
        self.name = f"{order}+threshold" if sizing else order

    def decide(self, decision: Decision, world: ElasticWorld) -> Action:
        """The job of the order and, with sizing, the autoscaler's size."""
        job = pick(self.order, decision, world)
        if not self.sizing or not decision.resizable:
            return Action(job)
        if self.explore and self.rng.random() < self.explore:
            return Action(job, int(self.rng.integers(decision.low, decision.high + 1)))
        return Action(job, threshold_size(decision, self.idle_hold_s))
