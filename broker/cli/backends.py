"""The CLI's ``--backend loky|dask|ray [--scheduler ADDRESS]``: set up the engine, make it joblib's backend.

The library never names a backend (:mod:`broker.sweep` runs under whatever
:func:`joblib.parallel_config` its caller set); this is where the CLI sets one: ``loky`` (processes
on this machine), ``dask`` (the current ``distributed`` client, or one connected to ``ADDRESS`` for
the block) or ``ray`` (the initialised runtime, or ``ray.init(address=ADDRESS)`` for the block).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from joblib import parallel_config

BACKENDS = ("loky", "dask", "ray")


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
