"""The sweep runner: many independent cells on one machine, a Dask cluster or Ray, resumable.

A *cell* is one run of a cell function ``fn(config, seed) -> dict``: a pure function of its
configuration (a JSON-able mapping), its seed and the trace the configuration names. The constant-V
sweep is one cell per V; 1000 random-policy runs are one configuration repeated with 1000 seeds.

    from broker.sweep import cells, run_sweep

    grid = cells([{"policy": "constant", "v": v} for v in range(101)], name="leasing", root_seed=7)
    with joblib.parallel_config(backend="loky"):       # or "dask" with a distributed.Client, or "ray"
        results = run_sweep(leasing_cell, grid, store=Path("results/leasing"))

- **One runner; the caller picks the engine.** Cells go through :class:`joblib.Parallel`, which runs
  them on whatever backend the caller set with :func:`joblib.parallel_config` (loky processes on
  this machine by default, threading, sequential, Dask ``distributed`` or Ray). This module never
  names a backend; the CLI sets one up (:mod:`broker.cli.backends`). The cell code does not change.
- **Seeds.** :func:`cells` gives cell ``i`` child ``i`` of ``numpy.random.SeedSequence(root_seed).spawn(n)``
  (as a 63-bit integer), so a cell's seed depends on neither the backend nor the number of workers.
- **Store.** With ``store``, each finished cell is written as soon as it arrives at the caller, as one JSON
  file ``<key>.json`` (written to a temporary file, then renamed). A cell whose file exists is not
  recomputed, so a killed sweep resumes where it stopped. :attr:`Cell.key` hashes the cell's name,
  configuration and seed; change the name (``"leasing-v2"``) when the cell function's meaning changes.
- **Failures.** A cell that raises does not stop the others; when all have run, :class:`SweepError` names
  each failed cell's key and configuration. Failed cells are not stored, so the next run retries them.

The cell function must be importable by the workers (a module-level function of an installed module for
Dask and Ray with processes; :func:`functools.partial` of one is fine) and return a JSON-able dict.
Results come back in cell order, always as decoded from their JSON text, so a fresh run and a resumed run
return equal values. Cells that read a large input (a trace) keep it in a :class:`Memo`, an explicit
per-process memo, so the cells a worker runs read it once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import operator
import os
import tempfile
import traceback
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from broker import orphan
from workloads.errors import ConfigError

log = logging.getLogger(__name__)

V = TypeVar("V")
#: ``fn(config, seed) -> result``: a pure function returning a JSON-able dict.
CellFunction = Callable[[dict[str, Any], int], dict[str, Any]]


def _canonical(value: Any) -> str:
    """The JSON text hashed for keys: sorted keys, no spaces, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True, slots=True)
class Cell:
    """One configuration with one seed.

    Parameters
    ----------
    name : str
        What the cell computes (an experiment name such as ``"leasing"``); part of the key, so two
        experiments can share a store, and renaming invalidates stored results.
    config : mapping
        JSON-able configuration; kept in its JSON form (tuples become lists) and handed to the cell
        function as a fresh dict.
    seed : int
        Non-negative seed handed to the cell function.
    """

    name: str
    config: Mapping[str, Any] = field(hash=False)
    seed: int

    def __post_init__(self) -> None:
        seed = operator.index(self.seed)
        if seed < 0:
            raise ConfigError(f"seed must be non-negative, got {seed}")
        try:
            text = _canonical(dict(self.config))
        except (TypeError, ValueError) as e:
            raise TypeError(f"cell config must be a JSON-able mapping without NaN: {e}") from e
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "config", json.loads(text))

    @property
    def key(self) -> str:
        """Stable hash of (name, config, seed): 20 hex digits, the file name in a store."""
        text = _canonical([self.name, self.config, self.seed])
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def spawn_seeds(root_seed: int, n: int) -> list[int]:
    """Child ``i`` of ``SeedSequence(root_seed).spawn(n)`` as a 63-bit integer, for ``i < n``.

    Child ``i`` does not depend on ``n``: appending cells to a sweep keeps the earlier cells' seeds.
    """
    children = np.random.SeedSequence(root_seed).spawn(n)
    return [int(c.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)) for c in children]


#: The most cells a sweep may hold: each is a run, and every cell is kept in memory while the sweep runs.
MAX_CELLS = 2_000_000


def bounded(count: int, what: str) -> None:
    """Refuse a sweep of ``count`` cells, over :data:`MAX_CELLS`, before any is made (``what`` leads the message)."""
    if count > MAX_CELLS:
        raise ConfigError(f"{what}: {count:,} cells; a sweep holds at most {MAX_CELLS:,}")


def cells(configs: Iterable[Mapping[str, Any]], *, name: str, root_seed: int, repeats: int = 1,
          paired: bool = False) -> list[Cell]:
    """Cells for ``configs``, each repeated ``repeats`` times, configuration-major.

    Cell ``i`` of the list gets child ``i`` of ``SeedSequence(root_seed)``: every cell its own stream.
    With ``paired=True`` repeat ``r`` of every configuration gets child ``r`` instead (common random
    numbers: configurations are compared on the same workloads and draws).
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be at least 1, got {repeats}")
    configs = list(configs)
    bounded(len(configs) * repeats, f"{len(configs):,} configurations x {repeats:,} repeats")
    if paired:
        seeds = spawn_seeds(root_seed, repeats)
        return [Cell(name, c, seeds[r]) for c in configs for r in range(repeats)]
    seeds = spawn_seeds(root_seed, len(configs) * repeats)
    return [Cell(name, c, seeds[i * repeats + r]) for i, c in enumerate(configs) for r in range(repeats)]


class SweepError(RuntimeError):
    """Cells that raised; every other cell ran (and is stored when the sweep has a store).

    Attributes
    ----------
    failures : list of (Cell, str)
        Each failed cell with the traceback text of its exception.
    total : int
        The number of cells in the sweep.
    """

    def __init__(self, failures: list[tuple[Cell, str]], total: int) -> None:
        self.failures = failures
        self.total = total
        lines = [f"{len(failures)} of {total} cells failed:"]
        for cell, tb in failures[:10]:
            last = tb.strip().splitlines()[-1] if tb.strip() else "?"
            lines.append(f"  cell {cell.key} {cell.name} config={_canonical(cell.config)} seed={cell.seed}: {last}")
        if len(failures) > 10:
            lines.append(f"  ... and {len(failures) - 10} more")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> tuple[type[SweepError], tuple[list[tuple[Cell, str]], int]]:
        return type(self), (self.failures, self.total)


# -- the store ---------------------------------------------------------------------------------------

def _load(path: Path, key: str) -> dict[str, Any] | None:
    """The stored result of cell ``key``, or None when missing or unreadable."""
    try:
        envelope = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        log.warning("ignoring unreadable cell file %s (%s); recomputing it", path, e)
        return None
    if not isinstance(envelope, dict) or envelope.get("key") != key or not isinstance(envelope.get("result"), dict):
        log.warning("ignoring cell file %s: not the result of cell %s; recomputing it", path, key)
        return None
    result: dict[str, Any] = envelope["result"]
    return result


def _write(path: Path, cell: Cell, result: dict[str, Any]) -> None:
    """Write the cell's result atomically: a temporary file in the same directory, then a rename."""
    envelope = {"key": cell.key, "name": cell.name, "config": cell.config, "seed": cell.seed, "result": result}
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(envelope, f)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# -- running -----------------------------------------------------------------------------------------

def _run_cell(fn: CellFunction, key: str, config_json: str, seed: int,
              owner: orphan.Process | None = None) -> tuple[str, str | None, str | None]:
    """Run one cell where joblib puts it: ``(key, result as JSON text, None)`` or ``(key, None, traceback)``.

    A worker process watches ``owner``, the process that launched the sweep, and exits when it is
    killed (:mod:`broker.orphan`).
    """
    orphan.guard(owner)
    try:
        result = fn(json.loads(config_json), seed)
        if not isinstance(result, dict):
            raise TypeError(f"a cell function must return a dict, got {type(result).__name__}")
        return key, json.dumps(result), None
    except Exception:
        return key, None, traceback.format_exc()


def run_sweep(fn: CellFunction, cells: Sequence[Cell], *, store: Path | None = None, n_jobs: int = -1,
              progress: Callable[[int, int], None] | None = None,
              setup: Callable[[], AbstractContextManager[Any]] | None = None) -> list[dict[str, Any]]:
    """Run ``fn(cell.config, cell.seed)`` for every cell not yet in ``store``; the results in cell order.

    The cells run on the joblib backend the caller chose with :func:`joblib.parallel_config`, or
    inside ``setup()`` (entered only when some cell is not stored yet: a resumed sweep that is
    complete needs no cluster).

    Parameters
    ----------
    fn : callable
        ``fn(config, seed) -> dict``, importable by the workers, returning a JSON-able dict.
    cells : sequence of Cell
        The cells; cells with equal keys run once.
    store : Path, optional
        Directory of finished cells (created if missing). Without it nothing is skipped or written.
    n_jobs : int
        Workers (-1: all cores, or the whole Dask or Ray cluster).
    progress : callable, optional
        ``progress(done, total)``: once with the cells found in the store, then after each finished cell.
    setup : callable, optional
        A context manager factory (such as the CLI's ``joblib_backend``) around the cells' run.

    Raises
    ------
    SweepError
        When any cell raised, after all the others ran (and were stored).
    """
    total = len(cells)
    by_key = {c.key: c for c in cells}
    results = _stored(store, by_key)
    todo = [c for k, c in by_key.items() if k not in results]
    log.info("sweep of %d cells (%d distinct): %d stored, %d to run", total, len(by_key), len(results), len(todo))
    repeats = Counter(c.key for c in cells)
    done = sum(repeats[k] for k in results)
    if progress is not None:
        progress(done, total)
    failures: list[tuple[Cell, str]] = []
    with setup() if setup is not None and todo else nullcontext():
        for cell, result, error in _finished(fn, todo, n_jobs, store):
            if error is not None:
                failures.append((cell, error))
                continue
            results[cell.key] = result
            done += repeats[cell.key]
            if progress is not None:
                progress(done, total)
    if failures:
        order = {k: i for i, k in enumerate(by_key)}
        raise SweepError(sorted(failures, key=lambda f: order[f[0].key]), total)
    return [results[c.key] for c in cells]


def cell_path(store: Path, key: str) -> Path:
    """Where ``store`` keeps the result of the cell with ``key``."""
    return store / f"{key}.json"


def _stored(store: Path | None, by_key: Mapping[str, Cell]) -> dict[str, dict[str, Any]]:
    """The results already in ``store`` (created if missing), by key."""
    if store is None:
        return {}
    store.mkdir(parents=True, exist_ok=True)
    found = {key: _load(cell_path(store, key), key) for key in by_key}
    return {key: result for key, result in found.items() if result is not None}


def _finished(fn: CellFunction, todo: list[Cell], n_jobs: int,
              store: Path | None) -> Iterator[tuple[Cell, dict[str, Any], str | None]]:
    """Run the cells; yield each as it finishes with its result (stored first) or its traceback."""
    by_key = {c.key: c for c in todo}
    for key, text, error in _outcomes(fn, todo, n_jobs) if todo else ():
        cell = by_key[key]
        if error is not None:
            log.warning("cell %s (config %s, seed %d) failed: %s", key, _canonical(cell.config), cell.seed,
                        error.strip().splitlines()[-1] if error.strip() else "?")
            yield cell, {}, error
            continue
        assert text is not None
        result = json.loads(text)
        if store is not None:
            _write(cell_path(store, key), cell, result)
        yield cell, result, None


def _outcomes(fn: CellFunction, todo: list[Cell], n_jobs: int) -> Iterator[tuple[str, str | None, str | None]]:
    """Run the cells under the active joblib configuration, yielding each outcome as soon as it is known.

    Backends that stream results (loky, threading, sequential, dask) yield each cell as it finishes;
    the others (Ray's joblib backend cannot return a generator) run in chunks of twice the workers.
    """
    owner = orphan.launcher()
    tasks = [delayed(_run_cell)(fn, c.key, _canonical(c.config), c.seed, owner) for c in todo]
    try:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    except ValueError:
        chunk = max(1, 2 * effective_n_jobs(n_jobs))
        with Parallel(n_jobs=n_jobs, return_as="list") as pool:
            for start in range(0, len(tasks), chunk):
                yield from pool(tasks[start:start + chunk])
        return
    with parallel:
        yield from parallel(tasks)


class Memo(Generic[V]):
    """An explicit per-process memo of a few values by key (a sweep's cells share a few workloads).

    ``get(key, build)`` returns the value kept for ``key``, or builds it with ``build()`` and keeps
    it, dropping the least recently used value beyond ``size``. Each worker process has its own
    memo; :meth:`clear` empties it.
    """

    def __init__(self, size: int = 4) -> None:
        if size < 1:
            raise ConfigError(f"a memo holds at least one value, got size {size}")
        self.size = size
        self._values: OrderedDict[Hashable, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        """The value of ``key``, built once per process."""
        if key in self._values:
            self._values.move_to_end(key)
            return self._values[key]
        value = build()
        self._values[key] = value
        if len(self._values) > self.size:
            self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every value."""
        self._values.clear()
