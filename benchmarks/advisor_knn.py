"""Advisor predictions per second on SDSC-BLUE against a brute-force k-NN in numpy, same answers, same run.

Both predict each query's wait time from exactly the labels known when it was submitted (the HEOM
embedding of ``broker.advisor.knn``, k = 20, width 0.1). The baseline computes, per query, the
distance to every known row and keeps the k nearest (``numpy.argpartition``); the project's
``predict_as_submitted`` batches queries against a scikit-learn neighbour index rebuilt as the
knowledge base grows. The script checks that both give the same predictions and prints the rates.

    python benchmarks/advisor_knn.py [--queries 2000] [--skip 10000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from broker.advisor.features import CATEGORIES, NUMBERS, submission_features
from broker.advisor.knn import HeomEmbedding, stable_weights, weighted_variance
from broker.advisor.online import first_known, predict_as_submitted
from workloads.swf import read_swf

TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
K, WIDTH = 20, 0.1


def brute_force(embedded: np.ndarray, y: np.ndarray, first: np.ndarray, queries: np.ndarray) -> np.ndarray:
    out = np.empty(len(queries))
    for n, i in enumerate(queries):
        rows = np.flatnonzero(first <= i)
        d = np.sqrt(((embedded[rows] - embedded[i]) ** 2).sum(axis=1))
        near = np.argpartition(d, K - 1)[:K] if len(rows) > K else np.arange(len(rows))
        near = near[np.lexsort((rows[near], d[near]))]
        mean, _ = weighted_variance(y[rows[near]][None, :], stable_weights(d[near][None, :], WIDTH))
        out[n] = mean[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--skip", type=int, default=10_000)
    args = parser.parse_args()
    swf = read_swf(TRACE)
    started = time.perf_counter()
    frame, _ = submission_features(swf.frame, max_procs=swf.header.max_procs or 1,
                                   unix_start=swf.header.unix_start_time, time_zone=swf.header.time_zone_string)
    features_s = time.perf_counter() - started
    X = frame[[*CATEGORIES, *NUMBERS]].fillna(0.0).to_numpy()
    embedded = HeomEmbedding(categorical=[0, 1, 2]).fit(X[:args.skip]).embed_together(X)
    y, first = frame["wait_s"].to_numpy(), first_known(frame, "wait_s")
    queries = np.arange(args.skip, args.skip + args.queries)
    print(f"SDSC-BLUE: {len(frame):,} jobs; features of every submission in {features_s:.2f} s; "
          f"{embedded.shape[1]} HEOM dimensions; {args.queries:,} queries after {args.skip:,}")
    started = time.perf_counter()
    baseline = brute_force(embedded, y, first, queries)
    base_s = time.perf_counter() - started
    started = time.perf_counter()
    ours = predict_as_submitted(embedded, y, first, queries, n_neighbors=K, width=WIDTH).mean
    ours_s = time.perf_counter() - started
    same = np.allclose(ours, baseline, rtol=1e-9, atol=1e-9)
    print(f"brute force (numpy, per query): {base_s:7.2f} s  {args.queries / base_s:8.0f} predictions/s")
    print(f"cloudbroker (batched index)   : {ours_s:7.2f} s  {args.queries / ours_s:8.0f} predictions/s")
    gap = np.max(np.abs(ours - baseline))
    print(f"ratio {base_s / ours_s:.1f}x; same predictions: {same} (max difference {gap:.3g} s)")
    if not same:
        raise SystemExit("the two k-NN disagree")


if __name__ == "__main__":
    main()
