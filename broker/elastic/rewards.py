"""The elastic RL paper's utilities (§3.2) and the book that turns them into each decision's reward.

All three are in ``[0, 1]``:

- **Responsiveness** ``W_j = exec_j / (exec_j + wait_j)`` (1 for a job that neither waited nor
  ran), known when job ``j`` terminates: its reward arrives late, as in the paper.
- **Fairness** ``F_j = 1 - D_j / M`` with ``D_j = max_k (w_k - S_kj)+`` and ``M = max_k w_k``: ``w``
  are the target shares, ``S_kj`` the share of the service (core-seconds) that group ``k`` has
  received *as of the election of job j, counting the elected job's estimated run time as service
  to its group* (read without the elected job, ``F`` would not depend on the action at all). With
  no service at all, every share is 0.
- **Utilization** ``U_n = f_n / sum_k P_k (T_k+1 - T_k)``: execution time of the jobs terminated by
  the n-th decision time over the pool's core-seconds until then (0 before any core-second).

Rewards: rigid ``lambda W_j + (1 - lambda) F_j``; elastic ``lambda W_j + (1 - lambda) U``, where
``U`` is measured at the *next* decision point, the first instant at which the size chosen by this
decision has counted (at the run's end for the last decision). A decision's reward is complete once
its job has terminated and its ``U`` (elastic) is known.

The target shares default to each group's share of the run's total execution time
(:func:`target_shares`): the paper's shares are the site's own, which an SWF log does not carry.
"""

from __future__ import annotations

import math

import numpy as np

from workloads.errors import ConfigError


def responsiveness(runtime: np.ndarray | float, wait: np.ndarray | float) -> np.ndarray:
    """``W = runtime / (runtime + wait)``, 1 where both are 0."""
    runtime, wait = np.asarray(runtime, dtype=np.float64), np.asarray(wait, dtype=np.float64)
    total = runtime + wait
    return np.divide(runtime, total, out=np.ones_like(total), where=total > 0)


def fairness(service: np.ndarray, shares: np.ndarray, group: int, estimate: float) -> float:
    """``F`` of electing a job of ``group`` believed to run ``estimate`` s, given each group's ``service`` so far."""
    after = np.array(service, dtype=np.float64)
    after[group] += estimate
    total = after.sum()
    received = after / total if total > 0 else np.zeros_like(after)
    deficit = max(float(np.max(shares - received)), 0.0)
    return 1.0 - deficit / float(shares.max())


def target_shares(runtime: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Each group's share of the total execution time (equal shares when there is none)."""
    work = np.bincount(group, weights=runtime, minlength=groups).astype(np.float64)
    total = work.sum()
    return work / total if total > 0 else np.full(groups, 1.0 / groups)


class RewardBook:
    """Each decision's reward, completed as its pieces become known (see the module docstring).

    Decision ``n`` dispatches one job; :meth:`chose` notes it (with ``F`` for a rigid pool),
    :meth:`reached` gives ``U`` to the decisions waiting for the next decision time, and
    :meth:`terminated` gives ``W`` to the decisions whose jobs ended. Each returns nothing; the
    rewards that became complete are taken with :meth:`take`.
    """

    def __init__(self, n_jobs: int, lam: float, *, elastic: bool, shares: np.ndarray) -> None:
        if not (math.isfinite(lam) and 0 <= lam <= 1):
            raise ConfigError(f"lambda must lie in [0, 1], got {lam}")
        self.lam, self.elastic, self.shares = lam, elastic, np.asarray(shares, dtype=np.float64)
        self.decision_of = np.full(n_jobs, -1, dtype=np.int64)
        self.w: list[float] = []
        self.other: list[float] = []  # F (rigid) or U (elastic) of each decision, NaN until known
        self.waiting_u: list[int] = []
        self.ready: list[tuple[int, float]] = []
        self.count = 0

    def chose(self, job: int, group: int, estimate: float, service: np.ndarray) -> int:
        """Decision number ``count`` dispatches ``job``; returns its number."""
        n = self.count
        self.count += 1
        self.decision_of[job] = n
        self.w.append(math.nan)
        if self.elastic:
            self.other.append(math.nan)
            self.waiting_u.append(n)
        else:
            self.other.append(fairness(service, self.shares, group, estimate))
        return n

    def reached(self, utilization: float) -> None:
        """A decision point (or the run's end) is reached where the utilization is ``utilization``."""
        for n in self.waiting_u:
            self.other[n] = utilization
            self._maybe_ready(n)
        self.waiting_u = []

    def terminated(self, job: int, runtime: float, wait: float) -> None:
        """``job`` ended after waiting ``wait`` and running ``runtime`` s."""
        n = int(self.decision_of[job])
        if n < 0:
            raise ValueError(f"job {job} ended without a decision that dispatched it")
        self.w[n] = float(responsiveness(runtime, wait))
        self._maybe_ready(n)

    def take(self) -> list[tuple[int, float]]:
        """The ``(decision, reward)`` pairs completed since the last call, in completion order."""
        ready, self.ready = self.ready, []
        return ready

    def reward(self, n: int) -> float:
        """Decision ``n``'s reward (NaN while a piece is missing)."""
        return self.lam * self.w[n] + (1.0 - self.lam) * self.other[n]

    def _maybe_ready(self, n: int) -> None:
        if not (math.isnan(self.w[n]) or math.isnan(self.other[n])):
            self.ready.append((n, self.reward(n)))
