"""The CLI's ``--backend loky|dask|ray [--scheduler ADDRESS]``: set up the engine, make it joblib's backend.

The library never names a backend (:mod:`broker.sweep` runs under whatever
:func:`joblib.parallel_config` its caller set); this is where the CLI sets one: ``loky`` (processes
on this machine), ``dask`` (the current ``distributed`` client, one connected to ``ADDRESS`` for
the block, or a ``LocalCluster`` of ``--n-jobs`` worker processes started for the block) or ``ray``
(the initialised runtime, or ``ray.init(address=ADDRESS)`` for the block).

A sweep stopped by Ctrl-C closes its engine on the way out; one whose process is killed outright
leaves workers that notice it and exit (:func:`broker.sweep.run_sweep`'s orphan guard).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import typer
from joblib import effective_n_jobs, parallel_config

from broker import orphan
from broker.cli import inputs
from broker.cli.console import bar, err
from broker.sweep import Cell, CellFunction, cell_path, run_sweep

BACKENDS = ("loky", "dask", "ray")


def check(backend: str, scheduler: str | None) -> None:
    """Refuse a backend the CLI does not know, and a scheduler address loky cannot use."""
    if backend not in BACKENDS:
        raise typer.BadParameter(f"--backend must be one of {', '.join(BACKENDS)}")
    if backend == "loky" and scheduler is not None:
        raise typer.BadParameter("--scheduler is for the dask and ray backends, not loky")


def sweep(fn: CellFunction, todo: Sequence[Cell], *, backend: str, scheduler: str | None, store: Path | None,
          n_jobs: int) -> list[dict[str, Any]]:
    """The sweep's results, with a progress bar; the backend is set up only if some cell is not stored yet."""
    with bar("cells", len(todo), quiet=not err.is_terminal) as progress:
        try:
            return run_sweep(fn, todo, store=store, n_jobs=n_jobs, progress=progress,
                             setup=lambda: joblib_backend(backend, scheduler, local_workers=n_jobs))
        except (ImportError, ValueError, ConnectionError, OSError) as exc:
            inputs.fail(exc)
        except KeyboardInterrupt:
            kept = sum(1 for c in todo if store is not None and cell_path(store, c.key).exists())
            print(f"{kept} of {len(todo)} cells kept in --store {store}; the same command resumes"
                  if store is not None else "without --store the finished cells are not kept", file=sys.stderr)
            raise


@contextlib.contextmanager
def joblib_backend(name: str, scheduler: str | None = None, *, local_workers: int | None = None) -> Iterator[None]:
    """Inside the block, joblib runs on backend ``name`` (module docstring).

    ``local_workers``: for ``dask`` without a scheduler address or a current client, start a
    ``LocalCluster`` of that many worker processes (negative: as joblib counts, -1 every core).
    """
    if name == "loky":
        if scheduler is not None:
            raise ValueError("--scheduler is for the dask and ray backends, not loky")
        # each worker watches this process from its start, not only from its first cell (broker/orphan.py)
        with parallel_config(backend="loky", initializer=orphan.local_guard, initargs=(orphan.launcher(),)):
            yield
    elif name == "dask":
        with _dask(scheduler, local_workers) as client, parallel_config(backend="dask", client=client):
            yield
    elif name == "ray":
        with _ray(scheduler), parallel_config(backend="ray"):
            yield
    else:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")


@contextlib.contextmanager
def _dask(address: str | None, local_workers: int | None = None) -> Iterator[object]:
    try:
        import distributed
    except ImportError as e:
        raise ImportError("backend 'dask' needs dask and distributed (extra 'cluster')") from e
    if address is not None:
        with distributed.Client(address, set_as_default=False) as client:
            yield client
        return
    try:
        current = distributed.get_client()
    except ValueError:
        current = None
    if current is not None:
        yield current
    elif local_workers is not None:
        with _local_cluster(distributed, local_workers) as client:
            yield client
    else:
        raise ValueError("backend 'dask' needs a distributed cluster: create a distributed.Client first "
                         "(e.g. Client(LocalCluster())) or pass --scheduler tcp://HOST:8786")


@contextlib.contextmanager
def _local_cluster(distributed: Any, workers: int) -> Iterator[object]:
    """A ``LocalCluster`` of ``workers`` single-threaded processes on 127.0.0.1 and its client, closed at the end."""
    n = effective_n_jobs(workers)
    with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


@contextlib.contextmanager
def _ray(address: str | None) -> Iterator[None]:
    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError as e:
        raise ImportError("backend 'ray' needs ray (extra 'cluster')") from e
    register_ray()
    if ray.is_initialized():
        yield
        return
    if address is None:
        raise ValueError("backend 'ray' needs a Ray cluster: call ray.init(...) first or pass --scheduler HOST:6379")
    ray.init(address=address)
    try:
        yield
    finally:
        ray.shutdown()
