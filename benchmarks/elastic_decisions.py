"""Decisions per second of the elastic world, and the SARSA learner's training time, against the FCFS replay.

    python benchmarks/elastic_decisions.py [--trace ../shared/traces/LPC-EGEE-2004-1.2-cln.swf.gz] [--cores 81]
                                           [--limit N] [--modes rigid,elastic]

In one run, on the same jobs (the whole LPC-EGEE log by default: 220,695 one-core jobs) and pool:
the FCFS rule (the baseline: the world, the step function and the reward book, no learning), then
SARSA with its echo state network, per mode. Prints wall seconds, decisions per second, the share
of SARSA's time spent re-training its readout (batch ridge regression, timed around every
re-training) and the ratio to the FCFS replay.
"""

from __future__ import annotations

import argparse
import time

from broker.elastic.episode import run_episode
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent
from broker.elastic.world import ElasticWorld, PoolConfig
from workloads.cache import load_trace
from workloads.cores import cores_view

LPC = "../shared/traces/LPC-EGEE-2004-1.2-cln.swf.gz"


class TimedSarsa(SarsaAgent):
    """The learner, with the time spent in its re-trainings added up."""

    training_s = 0.0

    def train(self, sweeps: int) -> int:
        started = time.perf_counter()
        try:
            return super().train(sweeps)
        finally:
            self.training_s += time.perf_counter() - started


def replay(jobs, pool: PoolConfig, policy) -> tuple[float, int]:
    """Wall seconds and decisions of one run."""
    world = ElasticWorld(jobs, pool)
    started = time.perf_counter()
    run_episode(world, 0.5, policy.decide, getattr(policy, "observe", None))
    return time.perf_counter() - started, world.decisions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", default=LPC)
    parser.add_argument("--cores", type=int, default=81)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--modes", default="rigid,elastic")
    args = parser.parse_args()
    swf = load_trace(args.trace)
    jobs, _ = cores_view(swf.frame)
    if args.limit:
        jobs = jobs.head(args.limit)
    print(f"{args.trace}: {len(jobs):,} jobs on {args.cores} cores")
    print("| mode | policy | wall s | decisions | decisions/s | training s | vs FCFS |")
    print("|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        pool = PoolConfig(args.cores, elastic=mode == "elastic")
        base_s, base_n = replay(jobs, pool, RulePolicy("fcfs", sizing=pool.elastic))
        print(f"| {mode} | fcfs | {base_s:.1f} | {base_n:,} | {base_n / base_s:,.0f} | - | 1.00 |")
        agent = TimedSarsa(jobs.n_groups, pool.elastic, seed=0)
        sarsa_s, sarsa_n = replay(jobs, pool, agent)
        print(f"| {mode} | sarsa | {sarsa_s:.1f} | {sarsa_n:,} | {sarsa_n / sarsa_s:,.0f} | "
              f"{agent.training_s:.1f} ({100 * agent.training_s / sarsa_s:.0f} %, {agent.trainings} trainings) | "
              f"{sarsa_s / base_s:.2f} |")


if __name__ == "__main__":
    main()
