"""The wait reward (``--reward wait``, issue 34): each decision is charged what the objective loses over the next step.

The paper's reward pays a dispatch the responsiveness ``W`` of the job it dispatched, when that job
ends: a job that waited long earns little whoever passed it over, and a short job that waited is
worth almost nothing, so the learner learns to starve short jobs. Here the cost of passing a job
over is booked on the decision that passed it.

Decision ``n`` is taken at ``t_n``; the next decision is at ``t_n+1``. A job ``j`` submitted at
``s_j`` that runs ``e_j`` seconds has, after waiting ``w``, the responsiveness ``W_j(w) = e_j /
(e_j + w)`` (``W_j(0) = 1``, also for ``e_j = 0``). Over the step every job waiting in ``(t_n,
t_n+1]`` — the queue after decision ``n``'s dispatch and the jobs submitted meanwhile, which are
exactly the next decision's queue, since only decisions dispatch — loses

    ``dW_j = W_j(max(t_n, s_j) - s_j) - W_j(t_n+1 - s_j)``.

- **Rigid pool**: ``r_n = -sum_j dW_j``. The losses telescope: summed over every step a job waits
  they are ``1 - W_j``, so the undiscounted return of a run is ``N (mean W - 1)`` for ``N`` jobs,
  the paper's objective (the mean responsiveness) up to a constant. ``lambda`` does not enter
  (the pool's cost is fixed).
- **Elastic pool**: ``r_n = -(lambda sum_j dW_j + (1 - lambda) I_n N / E)``, where ``I_n`` are the
  idle core-seconds of the step (the pool's core-seconds less the running jobs') and ``E`` the
  jobs' total execution time. Over a run ``U = E / C = 1 - I / C`` for ``C`` core-seconds and ``I =
  sum I_n``; charging ``I / E`` (``C`` at full use) makes the return ``N`` times ``lambda (mean W -
  1) - (1 - lambda) I / E``: the paper's ``lambda W + (1 - lambda) U``, linearised.

The losses use the jobs' actual run times: the reward is the simulator's (a replayed log), as the
paper's ``W`` is. The descriptors a policy sees still use the site's estimates. Each reward is
complete at the next decision (the run's end for the last), no later.
"""

from __future__ import annotations

import math

import numpy as np

from broker.elastic.rewards import responsiveness
from workloads.errors import ConfigError


def w_lost(runtime: np.ndarray, submit: np.ndarray, t0: float, t1: float) -> np.ndarray:
    """Each job's loss of ``W`` while it waits from ``max(t0, submit)`` to ``t1`` (s; ``t1 >= submit``)."""
    runtime, submit = np.asarray(runtime, dtype=np.float64), np.asarray(submit, dtype=np.float64)
    before = np.maximum(t0 - submit, 0.0)
    return responsiveness(runtime, before) - responsiveness(runtime, t1 - submit)


class WaitBook:
    """The wait reward of each decision (see the module docstring); complete at the next decision.

    ``runtime`` and ``submit`` are the jobs' (s); ``lam`` weighs the loss of ``W`` against the idle
    cores on an elastic pool.
    """

    def __init__(self, runtime: np.ndarray, submit: np.ndarray, lam: float, *, elastic: bool) -> None:
        if not (math.isfinite(lam) and 0 <= lam <= 1):
            raise ConfigError(f"lambda must lie in [0, 1], got {lam}")
        self.runtime, self.submit = np.asarray(runtime, dtype=np.float64), np.asarray(submit, dtype=np.float64)
        self.lam, self.elastic = lam, elastic
        work = float(self.runtime.sum())
        #: What one idle core-second costs, in jobs' W (``N / E``; 0 without work or on a rigid pool).
        self.idle_price = len(self.runtime) / work if elastic and work > 0 else 0.0
        self.count = 0
        self.losses: list[float] = []  # sum of dW of each decision's step
        self.idle: list[float] = []  # idle core-seconds of each decision's step

    def charge(self, t0: float, t1: float, waiting: np.ndarray, idle_core_s: float) -> tuple[int, float]:
        """Book decision number ``count``'s step; returns its number and reward.

        The decision was taken at ``t0``; the step runs to ``t1``, the ``waiting`` jobs waited in it and
        ``idle_core_s`` core-seconds were idle.
        """
        if t1 < t0 or idle_core_s < -1e-6 * max(1.0, abs(t1 - t0)):
            raise ValueError(f"a step runs forward with idle cores >= 0, got {t0} -> {t1}, {idle_core_s} core-s")
        n = self.count
        self.count += 1
        loss = float(w_lost(self.runtime[waiting], self.submit[waiting], t0, t1).sum()) if t1 > t0 else 0.0
        idle = max(idle_core_s, 0.0)
        self.losses.append(loss)
        self.idle.append(idle)
        return n, self.reward(n)

    def reward(self, n: int) -> float:
        """Decision ``n``'s reward."""
        if not self.elastic:
            return -self.losses[n]
        return -(self.lam * self.losses[n] + (1.0 - self.lam) * self.idle[n] * self.idle_price)
