"""Issue 34's tables: the paper's reward and the wait reward, beside the rules, on LPC-EGEE and a LAL-like workload.

    python experiments/elastic_wait.py --store results/elastic-wait --part rigid      # ~25 min on one core
    python experiments/elastic_wait.py --store results/elastic-wait --part elastic --only window   # ~10 min
    python experiments/elastic_wait.py --store results/elastic-wait --part elastic --only whole --paper-seeds 1 \
        --ceilings none                                                                # ~20 min
    python experiments/elastic_wait.py --store results/elastic-wait --part lal        # ~10 min
    python experiments/elastic_wait.py --store results/elastic-wait --part mechanism  # ~5 min
    python experiments/elastic_wait.py --store results/elastic-wait --part fqi        # ~15 min

Run from the repository root. Each run is one JSON file under ``--store`` keyed by its settings, so
the command resumes where it stopped and a table is re-printed from the store. The learners run
with seeds 1, 2 and 3 (``--seeds``; the CLI's ``--seed``), the rules once; a table gives the mean
over seeds and, in brackets, the spread (max - min). LPC-EGEE is read from ``../shared/traces``
(never copied); "whole" is the whole log, "window" its 8-week window of days 154-210 (load 0.555
on 81 cores, the one EXPERIMENTS' Tables 2-5 use). The LAL-like workload is
:func:`workloads.lal.lal_workload` with workload seeds 1-5 (``--workloads``), the learner's seed 1.

- ``rigid``: 81 cores; FCFS, SJF, EDF, greedy-W, urgent, SARSA with either reward.
- ``elastic``: the threshold autoscaler with FCFS and SJF, SARSA with the paper's reward (ceiling 162
  cores, twice the pool: the paper's learner spreads its sizes over a range) and with the wait
  reward (no ceiling, as in the paper, and 162); 81 cores at the start, at least 30, hold 15 min.
- ``lal``: the rigid rows on each LAL-like workload, and the elastic ones.
- ``mechanism``: on the window, the readout of the paper's learner trained on random play
  (epsilon 1): at each decision of an FCFS run with both classes waiting, which class it prefers;
  the same for the wait learner.
- ``fqi``: fitted Q iteration (:mod:`broker.elastic.fitted_q`) trained through the Gymnasium
  environment on LAL-like workload 9, judged on workloads 1-5.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from broker.elastic.descriptors import encode, slots
from broker.elastic.env import ElasticEnv
from broker.elastic.episode import run_episode
from broker.elastic.fitted_q import FittedQConfig, run_policy, train_fitted_q
from broker.elastic.metrics import summarize
from broker.elastic.rules import RulePolicy
from broker.elastic.sarsa import SarsaAgent, SarsaConfig
from broker.elastic.simulate import run_elastic
from broker.elastic.sweep import window
from broker.elastic.waitsarsa import WaitSarsaAgent
from broker.elastic.world import ElasticWorld, PoolConfig
from workloads.cores import CoreJobs, cores_view
from workloads.lal import lal_workload

LPC = "../shared/traces/LPC-EGEE-2004-1.2-cln.swf.gz"
KEEP = ("w_interactive_mean", "w_batch_mean", "share_interactive_wait_over_120s", "wait_interactive_mean_s",
        "share_interactive_w_over_0_9", "utilization", "mean_cores", "peak_cores", "size_demand_corr",
        "share_oldest_first", "share_interactive_when_both", "fairness_mean", "decisions")


def jobs_of(workload: str) -> CoreJobs:
    """``whole``, ``window`` (LPC-EGEE) or ``lal-N`` (the LAL-like workload of seed N)."""
    if workload == "whole":
        return window(LPC)
    if workload == "window":
        return window(LPC, first_day=154.0, days=56.0)
    return cores_view(lal_workload(seed=int(workload.split("-")[1])))[0]


def cached(store: Path, config: dict[str, Any], compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The stored result of ``config``, computed once."""
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    path = store / f"{key}.json"
    if path.exists():
        return dict(json.loads(path.read_text())["result"])
    result = compute()
    store.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"config": config, "result": result}, sort_keys=True))
    return result


def run(store: Path, workload: str, mode: str, policy: str, reward: str = "paper", seed: int = 0,
        max_cores: Any = None) -> dict[str, Any]:
    """One run's figures (``max_cores``: None twice the pool, ``"none"`` no ceiling)."""
    config = {"workload": workload, "mode": mode, "policy": policy, "reward": reward, "seed": seed,
              "max_cores": max_cores, "v": 1}

    def compute() -> dict[str, Any]:
        pool = PoolConfig(81, elastic=mode == "elastic", max_cores=None if max_cores == "none" else max_cores,
                          no_ceiling=max_cores == "none")
        summary = run_elastic(jobs_of(workload), pool, policy, seed=seed, reward=reward).summary.to_dict()  # type: ignore[arg-type]
        return {k: summary.get(k) for k in KEEP}

    return cached(store, config, compute)


def row(label: str, results: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    """A markdown row: each column's mean over ``results`` and, with several, the spread in brackets."""
    cells = []
    for c in columns:
        values = [r[c] for r in results if r.get(c) is not None]
        if not values:
            cells.append("-")
            continue
        mean = float(np.mean(values))
        text = f"{mean:,.1f}" if abs(mean) >= 10 else f"{mean:.3f}"
        if len(values) > 1:
            spread = max(values) - min(values)
            text += f" [{spread:,.1f}]" if abs(mean) >= 10 else f" [{spread:.3f}]"
        cells.append(text)
    return f"| {label} | " + " | ".join(cells) + " |"


RULES = ("fcfs", "sjf", "edf", "greedy-w", "urgent")
RIGID_COLUMNS = ("w_interactive_mean", "w_batch_mean", "share_interactive_wait_over_120s", "share_oldest_first",
                 "share_interactive_when_both")
ELASTIC_COLUMNS = ("w_interactive_mean", "w_batch_mean", "share_interactive_wait_over_120s", "mean_cores",
                   "peak_cores", "size_demand_corr", "utilization")


def rigid(store: Path, workload: str, seeds: list[int]) -> list[str]:
    """The rigid table of one workload."""
    lines = [f"rigid, {workload}: " + " | ".join(RIGID_COLUMNS)]
    lines += [row(p, [run(store, workload, "rigid", p)], RIGID_COLUMNS) for p in RULES]
    lines += [row(f"SARSA, {r} reward", [run(store, workload, "rigid", "sarsa", r, s) for s in seeds], RIGID_COLUMNS)
              for r in ("paper", "wait")]
    return lines


def elastic(store: Path, workload: str, seeds: list[int], paper_seeds: list[int], ceilings: list[Any]) -> list[str]:
    """The elastic table of one workload."""
    lines = [f"elastic, {workload}: " + " | ".join(ELASTIC_COLUMNS)]
    lines.append(row("threshold (FCFS)", [run(store, workload, "elastic", "threshold")], ELASTIC_COLUMNS))
    lines.append(row("threshold (FCFS), no ceiling", [run(store, workload, "elastic", "threshold", max_cores="none")],
                     ELASTIC_COLUMNS))
    lines.append(row("threshold + SJF", [run(store, workload, "elastic", "sjf")], ELASTIC_COLUMNS))
    lines.append(row("SARSA, paper reward, ceiling 162",
                     [run(store, workload, "elastic", "sarsa", "paper", s) for s in paper_seeds], ELASTIC_COLUMNS))
    for ceiling in ceilings:
        label = "no ceiling" if ceiling == "none" else "ceiling 162"
        lines.append(row(f"SARSA, wait reward, {label}",
                         [run(store, workload, "elastic", "sarsa", "wait", s, ceiling) for s in seeds],
                         ELASTIC_COLUMNS))
    return lines


def lal(store: Path, workloads: list[int]) -> list[str]:
    """Rigid and elastic rows over the LAL-like workloads: the mean over workloads, the spread in brackets."""
    names = [f"lal-{w}" for w in workloads]
    lines = ["rigid, LAL-like: " + " | ".join(RIGID_COLUMNS)]
    lines += [row(p, [run(store, w, "rigid", p) for w in names], RIGID_COLUMNS) for p in RULES]
    lines += [row(f"SARSA, {r} reward", [run(store, w, "rigid", "sarsa", r, 1) for w in names], RIGID_COLUMNS)
              for r in ("paper", "wait")]
    fcfs = [run(store, w, "rigid", "fcfs")["w_interactive_mean"] for w in names]
    wait = [run(store, w, "rigid", "sarsa", "wait", 1)["w_interactive_mean"] for w in names]
    lines.append("wait SARSA - FCFS, interactive W, per workload: " + ", ".join(
        f"{w}: {b - a:+.3f}" for w, a, b in zip(workloads, fcfs, wait, strict=True)))
    lines.append("elastic, LAL-like: " + " | ".join(ELASTIC_COLUMNS))
    lines.append(row("threshold (FCFS)", [run(store, w, "elastic", "threshold") for w in names], ELASTIC_COLUMNS))
    lines.append(row("threshold (FCFS), no ceiling", [run(store, w, "elastic", "threshold", max_cores="none")
                                                      for w in names], ELASTIC_COLUMNS))
    lines.append(row("threshold + SJF", [run(store, w, "elastic", "sjf") for w in names], ELASTIC_COLUMNS))
    lines.append(row("SARSA, paper reward, ceiling 162", [run(store, w, "elastic", "sarsa", "paper", 1) for w in names],
                     ELASTIC_COLUMNS))
    lines.append(row("SARSA, wait reward, no ceiling",
                     [run(store, w, "elastic", "sarsa", "wait", 1, "none") for w in names], ELASTIC_COLUMNS))
    return lines


def preference(jobs: CoreJobs, reward: str, seed: int) -> dict[str, Any]:
    """Train the rigid learner's readout on random play, then count the class it prefers when both wait."""
    config = SarsaConfig(epsilon=1.0, pretrain=1)
    agent: Any = (WaitSarsaAgent(jobs.n_groups, False, config, seed=seed) if reward == "wait"
                  else SarsaAgent(jobs.n_groups, False, config, seed=seed))
    run_episode(ElasticWorld(jobs, PoolConfig(81)), 0.5, agent.decide, agent.observe, reward)  # type: ignore[arg-type]
    agent.esn.reset()
    wait, fcfs = reward == "wait", RulePolicy("fcfs")
    world = ElasticWorld(jobs, PoolConfig(81))
    both = batch = 0
    decision = world.advance()
    while decision is not None:
        candidates = np.unique(slots(world, decision, wait))
        candidates = candidates[candidates >= 0]
        kinds = world.interactive[candidates]
        u = encode(world, decision, candidates, wait=wait)
        if kinds.any() and not kinds.all():
            both += 1
            batch += int(not kinds[int(np.argmax(agent.esn.q(u)))])
        action = fcfs.decide(decision, world)
        agent.esn.step(encode(world, decision, np.array([action.job]), wait=wait)[0])
        world.act(action)
        decision = world.advance()
    return {"decisions_with_both": both, "share_batch_preferred": batch / both if both else None}


def mechanism(store: Path, seeds: list[int]) -> list[str]:
    """The readouts' preference on the window, trained on random play, for each reward."""
    lines = ["readout trained on random play, window: share of decisions with both classes where it prefers batch"]
    for reward in ("paper", "wait"):
        got = [cached(store, {"mechanism": reward, "seed": s, "v": 1}, lambda r=reward, s=s: preference(
            jobs_of("window"), r, s)) for s in seeds]
        shares = [g["share_batch_preferred"] for g in got]
        lines.append(f"{reward}: {np.mean(shares):.3f} [{max(shares) - min(shares):.3f}] over "
                     f"{got[0]['decisions_with_both']:,} decisions")
    return lines


def fqi(store: Path, workloads: list[int]) -> list[str]:
    """Fitted Q trained through the environment on workload 9, judged on the others."""
    trained: list[Any] = []

    def compute(test: int) -> dict[str, Any]:
        if not trained:
            trained.append(train_fitted_q(ElasticEnv(jobs=jobs_of("lal-9"), reward="wait"), FittedQConfig(), seed=1))
        policy = trained[0]
        env = run_policy(ElasticEnv(jobs=jobs_of(f"lal-{test}"), reward="wait"), policy)
        assert env.episode is not None
        summary = summarize(env.episode.world, policy="fitted-q", lam=0.5).summary.to_dict()
        return {k: summary.get(k) for k in KEEP}

    results = [cached(store, {"fqi": w, "train": 9, "v": 1}, lambda w=w: compute(w)) for w in workloads]
    return ["fitted Q (trained on lal-9), rigid, LAL-like: " + " | ".join(RIGID_COLUMNS),
            row("fitted Q, wait reward", results, RIGID_COLUMNS),
            "per workload: " + ", ".join(f"{w}: {r['w_interactive_mean']:.3f}" for w, r in
                                         zip(workloads, results, strict=True))]


def main() -> None:
    """Run (or re-read) one part and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--part", choices=("rigid", "elastic", "lal", "mechanism", "fqi"), required=True)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--paper-seeds", default=None, help="the paper learner's seeds (default: --seeds)")
    parser.add_argument("--ceilings", default="none,162", help="the wait learner's ceilings on an elastic pool")
    parser.add_argument("--workloads", default="1,2,3,4,5")
    parser.add_argument("--only", choices=("whole", "window"), default=None)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    lal_seeds = [int(s) for s in args.workloads.split(",")]
    paper_seeds = [int(s) for s in args.paper_seeds.split(",")] if args.paper_seeds else seeds
    ceilings = [None if c == "162" else c for c in args.ceilings.split(",")]
    lpc = [args.only] if args.only else ["window", "whole"]
    parts: dict[str, Callable[[], list[str]]] = {
        "rigid": lambda: [line for w in lpc for line in rigid(args.store, w, seeds)],
        "elastic": lambda: [line for w in lpc for line in elastic(args.store, w, seeds, paper_seeds, ceilings)],
        "lal": lambda: lal(args.store, lal_seeds),
        "mechanism": lambda: mechanism(args.store, seeds),
        "fqi": lambda: fqi(args.store, lal_seeds),
    }
    print("\n".join(parts[args.part]()))


if __name__ == "__main__":
    main()
