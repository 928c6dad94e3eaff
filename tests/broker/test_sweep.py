"""The sweep runner: the same cells give the same results on loky, Dask and Ray; a killed sweep resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from joblib import parallel_config

from broker.sweep import Cell, Memo, SweepError, cells, run_sweep, spawn_seeds
from tests.broker.sweep_cells import coh_cost, echo_seed, fails_on, not_json, pid, recorded, slow
from tests.conftest import REPO_ROOT


def swept(fn, grid, backend: str, **kwargs):
    """``run_sweep`` under ``parallel_config(backend=...)``: the caller, never the runner, names the backend."""
    with parallel_config(backend=backend):
        return run_sweep(fn, grid, **kwargs)

POLICIES = ("coh", "FCFS-CFH", "FCFS-SM")


@pytest.fixture(scope="module")
def grid() -> list[Cell]:
    return cells([{"policy": p} for p in POLICIES], name="coh-cost", root_seed=2024, repeats=2)


@pytest.fixture(scope="module")
def reference(grid: list[Cell]) -> list[dict]:
    """The grid run in this process, one cell after the other."""
    return swept(coh_cost, grid, "sequential")


def stored_keys(store: Path) -> set[str]:
    return {p.stem for p in store.glob("*.json")}


# -- backends ----------------------------------------------------------------------------------------

def test_loky_matches_sequential(grid, reference, tmp_path):
    assert len({r["cost"] for r in reference}) > 1  # the cells differ: the comparison means something
    assert swept(coh_cost, grid, "loky", store=tmp_path, n_jobs=2) == reference
    assert stored_keys(tmp_path) == {c.key for c in grid}


def test_the_runner_uses_the_callers_backend(grid):
    here = os.getpid()
    assert {r["pid"] for r in swept(pid, grid, "threading", n_jobs=2)} == {here}
    assert here not in {r["pid"] for r in swept(pid, grid, "loky", n_jobs=2)}


# -- resume ------------------------------------------------------------------------------------------

RESUME_CELLS = 12
RESUME_SCRIPT = f"""
import sys
from pathlib import Path
from broker.sweep import cells, run_sweep
from tests.broker.sweep_cells import slow
grid = cells([{{"i": i, "sleep_s": 0.25}} for i in range({RESUME_CELLS})], name="resume", root_seed=5)
run_sweep(slow, grid, store=Path(sys.argv[1]), n_jobs=2)  # loky: joblib's default
"""


def test_killed_sweep_resumes_without_recomputing(tmp_path):
    store, markers = tmp_path / "store", tmp_path / "markers"
    markers.mkdir()
    grid = cells([{"i": i, "sleep_s": 0.25} for i in range(RESUME_CELLS)], name="resume", root_seed=5)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", RESUME_SCRIPT, str(store)], cwd=REPO_ROOT, env=env,
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(stored_keys(store) if store.exists() else ()) < 2:
            assert proc.poll() is None, f"the sweep ended early: {proc.communicate()[1].decode()}"
            assert time.monotonic() < deadline, "no cell finished within 60 s"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its loky workers
        proc.communicate()
    finished = stored_keys(store)
    assert 2 <= len(finished) < RESUME_CELLS
    for path in store.glob("*.json"):  # written atomically: every file is whole
        assert json.loads(path.read_text())["key"] == path.stem

    resumed = swept(partial(recorded, str(markers)), grid, "loky", store=store, n_jobs=2)

    computed = sorted(int(p.name.split(".")[0]) for p in markers.iterdir())
    assert computed == sorted(c.config["i"] for c in grid if c.key not in finished)  # each missing cell, once
    assert resumed == swept(slow, grid, "threading", n_jobs=RESUME_CELLS)  # an uninterrupted run
    assert stored_keys(store) == {c.key for c in grid}
    # all stored now: nothing runs (a failing function would raise)
    assert swept(not_json, grid, "loky", store=store) == resumed


# -- seeds -------------------------------------------------------------------------------------------

def test_seed_of_cell_i_is_child_i_whatever_the_backend():
    grid = cells([{"i": i} for i in range(4)], name="seeds", root_seed=42, repeats=3)
    children = np.random.SeedSequence(42).spawn(12)
    assert [c.seed for c in grid] == [int(s.generate_state(1, np.uint64)[0] >> np.uint64(1)) for s in children]
    assert len({c.seed for c in grid}) == 12  # repeats get distinct seeds
    assert [c.config["i"] for c in grid] == [i for i in range(4) for _ in range(3)]
    assert spawn_seeds(42, 20)[:12] == [c.seed for c in grid]  # a longer sweep keeps the first seeds

    runs = [swept(echo_seed, grid, "sequential"),
            swept(echo_seed, grid, "threading", n_jobs=3),
            swept(echo_seed, grid, "loky", n_jobs=1),
            swept(echo_seed, grid, "loky", n_jobs=2)]
    assert all(r == runs[0] for r in runs)
    assert [r["seed"] for r in runs[0]] == [c.seed for c in grid]
    assert [r["draw"] for r in runs[0]] == [np.random.default_rng(c.seed).random() for c in grid]


def test_paired_cells_share_the_seeds_of_each_repeat():
    grid = cells([{"v": v} for v in range(3)], name="paired", root_seed=7, repeats=4, paired=True)
    assert [c.seed for c in grid] == spawn_seeds(7, 4) * 3
    assert len({c.key for c in grid}) == 12


# -- cells, the store, failures ----------------------------------------------------------------------

def test_cell_key_is_stable_and_depends_on_name_config_and_seed():
    cell = Cell("leasing", {"v": 3, "policy": "constant", "span": [1, 2]}, 11)
    assert cell.key == Cell("leasing", {"span": (1, 2), "policy": "constant", "v": 3}, 11).key
    assert cell.key == "6ab1ce90e02a976c8073"  # stored results depend on it: change only on purpose
    others = [Cell("leasing-v2", cell.config, 11), Cell("leasing", {**cell.config, "v": 4}, 11),
              Cell("leasing", cell.config, 12)]
    assert len({cell.key, *(c.key for c in others)}) == 4
    with pytest.raises(TypeError, match="JSON"):
        Cell("x", {"a": {1, 2}}, 0)
    with pytest.raises(ValueError, match="non-negative"):
        Cell("x", {}, -1)


def test_failed_cell_is_reported_and_the_others_are_kept(tmp_path):
    grid = cells([{"i": i, "bad": 2} for i in range(5)], name="fails", root_seed=3)
    with pytest.raises(SweepError) as info:
        swept(fails_on, grid, "loky", store=tmp_path, n_jobs=2)
    [(cell, tb)] = info.value.failures
    assert cell == grid[2]
    assert "cell 2 is broken" in tb
    assert grid[2].key in str(info.value) and '"bad":2,"i":2' in str(info.value)
    assert stored_keys(tmp_path) == {c.key for c in grid} - {grid[2].key}
    # the next run computes the failed cell only
    calls = []
    results = swept(echo_seed, grid, "sequential", store=tmp_path, progress=lambda d, t: calls.append(d))
    assert calls == [4, 5]
    assert [r["i"] for r in results] == list(range(5))


def test_result_that_is_not_json_is_a_cell_failure():
    grid = cells([{"i": 0}], name="not-json", root_seed=1)
    with pytest.raises(SweepError, match="not JSON serializable"):
        swept(not_json, grid, "sequential")


def test_duplicate_cells_run_once_and_progress_counts_every_cell(tmp_path):
    grid = cells([{"i": i} for i in range(3)], name="dup", root_seed=9)
    seen = []
    results = swept(echo_seed, [*grid, grid[0]], "threading", store=tmp_path, n_jobs=2,
                        progress=lambda d, t: seen.append((d, t)))
    assert results[3] == results[0]
    assert seen[0] == (0, 4) and seen[-1] == (4, 4) and len(seen) == 4
    assert len(stored_keys(tmp_path)) == 3


def test_unreadable_cell_file_is_recomputed(tmp_path):
    grid = cells([{"i": i} for i in range(2)], name="corrupt", root_seed=1)
    first = swept(echo_seed, grid, "sequential", store=tmp_path)
    (tmp_path / f"{grid[0].key}.json").write_text("{truncated")
    assert swept(echo_seed, grid, "sequential", store=tmp_path) == first


def test_memo_builds_each_value_once_and_keeps_the_most_recent():
    built: list[str] = []
    memo: Memo[str] = Memo(size=2)

    def build(key: str):
        return lambda: built.append(key) or key.upper()

    assert [memo.get(k, build(k)) for k in ("a", "b", "a", "c", "b", "a")] == ["A", "B", "A", "C", "B", "A"]
    assert built == ["a", "b", "c", "b", "a"]  # "b" was dropped when "c" came (least recently used), then "a"
    assert len(memo) == 2
    memo.clear()
    assert len(memo) == 0
    with pytest.raises(ValueError, match="at least one"):
        Memo(size=0)


def test_a_sweep_of_more_cells_than_the_bound_is_refused_before_its_seeds_are_drawn(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from broker.sweep import MAX_CELLS
    from workloads.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^2 configurations x 1,000,001 repeats: 2,000,002 cells; a sweep holds at "
                                          r"most 2,000,000$"):
        cells([{"v": 1}, {"v": 2}], name="t", root_seed=1, repeats=MAX_CELLS // 2 + 1)
    monkeypatch.setattr("broker.sweep.MAX_CELLS", 4)
    assert len(cells([{"v": 1}, {"v": 2}], name="t", root_seed=1, repeats=2)) == 4  # the bound itself is a sweep
    with pytest.raises(ConfigError, match=r"^2 configurations x 3 repeats: 6 cells; a sweep holds at most 4$"):
        cells([{"v": 1}, {"v": 2}], name="t", root_seed=1, repeats=3)
