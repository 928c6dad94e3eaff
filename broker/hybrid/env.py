"""``cloudbroker/Leasing-v0``: the hybrid site as a Gymnasium environment, one step per leasing step.

The step is :func:`broker.hybrid.learning.leasing_step`, the one the built-in Q-learning and
epsilon-greedy policies run: an agent trained here faces their world and their rewards.

- **Action**: the cap ``V`` in ``0..M`` for the next step (``Discrete(M + 1)``).
- **Observation**, what a site knows at the step boundary, scaled: waiting jobs over ``M``, their
  requested work (nodes x requested time) over ``M x step``, local nodes busy over ``M``, cloud nodes
  in use over ``M``, the time of day and of the week from Monday 00:00 (fractions, UTC on the trace's
  clock from its ``UnixStartTime``), and the last step's wait and cloud use over ``M x step``.
- **Reward**: the step's balance (``twt_imp% - c%``) of the chosen cap against the step's references
  (``references="runs"``, the default, or ``"clones"``: :mod:`broker.hybrid.learning`).
- ``evaluate="all"`` also simulates a clone of the step for every ``V`` and puts every balance in
  ``info["balances"]`` (what Q-learning learns from: a tabular agent updating from them is the
  built-in learner); by default only the chosen cap's (and the references') are there.
- ``info`` carries the running totals (``twt_s``, ``cloud_cpu_s``), the step's references and cap.
- An episode is the whole trace; it terminates when every job has ended.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from broker.hybrid.learning import leasing_step, references_of
from broker.hybrid.policies import first_step_end
from broker.hybrid.world import HybridWorld
from heuristics.backfill import Discipline
from workloads.cache import load_trace
from workloads.errors import ConfigError
from workloads.rigid import RigidJobs, rigid_view
from workloads.swf import site_size

DAY, WEEK = 86400.0, 7 * 86400.0
#: From the last Monday 00:00 UTC before the Unix epoch (a Thursday) to the epoch.
MONDAY = 3 * DAY


class LeasingEnv(gym.Env[np.ndarray, int]):
    """The hybrid site as an environment (see the module docstring).

    Give a ``trace`` (path or registry name; ``nodes`` defaults to its MaxProcs) or ``jobs`` and
    ``nodes``; ``limit_jobs`` keeps the first ones.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (Gymnasium's own attribute)

    def __init__(self, trace: str | None = None, *, jobs: RigidJobs | None = None, nodes: int | None = None,
                 step_s: float = DAY, offset_s: float = 0.0, discipline: Discipline = "easy",
                 references: str = "runs", evaluate: str = "none", limit_jobs: int | None = None,
                 origin: float = 0.0) -> None:
        if (trace is None) == (jobs is None):
            raise ConfigError("give a trace or jobs, not both")
        if jobs is None:
            swf = load_trace(str(trace))
            nodes = nodes or site_size(swf)[0]
            if not nodes:
                raise ConfigError(f"{trace}: the trace gives no MaxProcs, no MaxNodes and no processor count: "
                                  "pass nodes")
            jobs, _ = rigid_view(swf.frame, nodes=nodes)
            origin = float(swf.header.unix_start_time or 0)
        if nodes is None or nodes < 1:
            raise ConfigError(f"the site needs nodes >= 1, got {nodes}")
        if limit_jobs is not None:
            jobs = jobs.head(limit_jobs)
        if not len(jobs):
            raise ConfigError("the environment needs at least one job")
        if not (step_s > 0 and 0 <= offset_s < step_s):
            raise ConfigError(f"need step_s > 0 and 0 <= offset_s < step_s, got {step_s}, {offset_s}")
        if evaluate not in ("none", "all"):
            raise ConfigError(f"evaluate must be 'none' or 'all', got {evaluate!r}")
        references_of(references)  # refuse an unknown reading now
        self.jobs, self.m, self.step_s, self.offset_s = jobs, int(nodes), float(step_s), float(offset_s)
        self.discipline, self.references_name, self.evaluate, self.origin = discipline, references, evaluate, origin
        self.action_space = spaces.Discrete(self.m + 1)  # type: ignore[assignment]
        most_jobs = len(jobs) / self.m
        most_work = float((jobs.nodes * jobs.estimate).sum()) / (self.m * self.step_s)
        self.high = np.array([most_jobs, most_work, 1.0, 1.0, 1.0, 1.0, max(most_jobs, 1.0), 1.0])
        self.observation_space = spaces.Box(np.zeros_like(self.high), self.high, dtype=np.float64)
        self.site: HybridWorld | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """A new episode from the first job."""
        super().reset(seed=seed)
        self.site = HybridWorld(self.jobs, self.m, self.discipline)
        self.refs = references_of(self.references_name)
        self.until = first_step_end(self.site.now, self.step_s, self.offset_s)
        self.steps = 0
        self._last = (0.0, 0.0)
        return self._observe(), {"twt_s": 0.0, "cloud_cpu_s": 0.0, "step": 0}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Run the next step under the cap ``action``."""
        site = self.site
        if site is None or site.finished():
            raise RuntimeError("call reset() before step(), and again once an episode has terminated")
        cap = int(action)
        if not 0 <= cap <= self.m:
            raise ConfigError(f"action {action!r} is outside the action space {self.action_space}")
        wait, cpu = site.wait_s, site.cloud_cpu_s
        report = leasing_step(site, self.until, cap, self.refs,
                              evaluate=range(self.m + 1) if self.evaluate == "all" else ())
        self.site = site = report.site
        self._last = (site.wait_s - wait, site.cloud_cpu_s - cpu)
        self.until += self.step_s
        self.steps += 1
        info = {"twt_s": site.wait_s, "cloud_cpu_s": site.cloud_cpu_s, "step": self.steps, "cap": cap,
                "twt_ref_s": report.twt_ref_s, "c_ref_s": report.c_ref_s, "balances": report.balances,
                "simulated": report.simulated}
        return self._observe(), float(report.balances[cap]), site.finished(), False, info

    def _observe(self) -> np.ndarray:
        site = self.site
        if site is None:
            return np.zeros(len(self.high))
        queue, scale = site.cluster.queue, self.m * self.step_s
        jobs = self.jobs
        waiting_work = float(sum(jobs.nodes[j] * jobs.estimate[j] for j in queue))
        clock = self.origin + site.now
        obs = np.array([len(queue) / self.m, waiting_work / scale, (self.m - site.cluster.free) / self.m,
                        site.cloud_used / self.m, (clock % DAY) / DAY, ((clock + MONDAY) % WEEK) / WEEK,
                        self._last[0] / scale, self._last[1] / scale])
        return np.clip(obs, 0.0, self.high)
