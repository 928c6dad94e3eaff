"""The CLI's ``--backend loky|dask|ray [--scheduler ADDRESS]``: set up the engine, make it joblib's backend.

The library never names a backend (:mod:`broker.sweep` runs under whatever
:func:`joblib.parallel_config` its caller set); this is where the CLI sets one: ``loky`` (processes
on this machine), ``dask`` (the current ``distributed`` client, or one connected to ``ADDRESS`` for
the block) or ``ray`` (the initialised runtime, or ``ray.init(address=ADDRESS)`` for the block).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import typer
from joblib import parallel_config

from broker.cli import inputs
from broker.cli.console import bar, err
from broker.sweep import Cell, CellFunction, run_sweep

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
                             setup=lambda: joblib_backend(backend, scheduler))
        except (ImportError, ValueError, ConnectionError, OSError) as exc:
            inputs.fail(exc)


@contextlib.contextmanager
def joblib_backend(name: str, scheduler: str | None = None) -> Iterator[None]:
    """Inside the block, joblib runs on backend ``name`` (module docstring)."""
    if name == "loky":
        if scheduler is not None:
            raise ValueError("--scheduler is for the dask and ray backends, not loky")
        with parallel_config(backend="loky"):
            yield
    elif name == "dask":
        with _dask(scheduler) as client, parallel_config(backend="dask", client=client):
            yield
    elif name == "ray":
        with _ray(scheduler), parallel_config(backend="ray"):
            yield
    else:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")


@contextlib.contextmanager
def _dask(address: str | None) -> Iterator[object]:
    try:
        import distributed
    except ImportError as e:
        raise ImportError("backend 'dask' needs dask and distributed (extra 'cluster')") from e
    if address is not None:
        with distributed.Client(address, set_as_default=False) as client:
            yield client
        return
    try:
        yield distributed.get_client()
    except ValueError as e:
        raise ValueError("backend 'dask' needs a distributed cluster: create a distributed.Client first "
                         "(e.g. Client(LocalCluster())) or pass --scheduler tcp://HOST:8786") from e


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
