"""The notebooks assert the numbers they show (issue 19): each has an assertion cell, and what runs them fails on it.

The notebooks themselves are executed on their CI slices by nbmake under pytest (``--nbmake`` with
``notebooks`` among the test paths, pyproject.toml) and by the documentation build (mkdocs-jupyter
with ``allow_errors: false``, mkdocs.yml); a failing assert fails either. These tests are cheap: they
read ``notebooks/build_notebooks.py`` and the generated notebooks, they execute nothing.
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from types import ModuleType

import nbformat
import pytest

from tests.conftest import REPO_ROOT

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"


def build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_notebooks", NOTEBOOKS_DIR / "build_notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = build_module()


def asserts_in(source: str) -> int:
    """The number of ``assert`` statements in a code cell's source."""
    return sum(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(source)))


def test_every_notebook_is_built() -> None:
    assert sorted(BUILD.NOTEBOOKS) == sorted(p.name for p in NOTEBOOKS_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("name", sorted(BUILD.NOTEBOOKS))
def test_notebook_has_an_assertion_cell(name: str) -> None:
    cells = BUILD.NOTEBOOKS[name]
    headed = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Assertions")]
    assert len(headed) == 1, f"{name}: one '## Assertions' markdown cell"
    cell = cells[headed[0] + 1]
    assert cell.cell_type == "code" and asserts_in(cell.source) >= 3, f"{name}: the assertion cell follows its heading"
    # the CI slice's pinned figures sit under `if not FULL:`, so FULL = True runs the invariants alone
    pinned = [node for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.If)]
    assert any(ast.unparse(node.test) == "not FULL" and asserts_in(ast.unparse(node)) for node in pinned), name
    # the notebook still has its FULL switch in the parameters cell
    parameters = next(c for c in cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", []))
    assert "FULL = False" in parameters.source, name


@pytest.mark.parametrize("name", sorted(BUILD.NOTEBOOKS))
def test_generated_notebook_matches_its_cells(name: str) -> None:
    """The .ipynb carries the cells of build_notebooks.py (run it after editing a cell list)."""
    written = nbformat.read(NOTEBOOKS_DIR / name, as_version=4).cells
    expected = BUILD.NOTEBOOKS[name]
    assert [(c.cell_type, c.source) for c in written] == [(c.cell_type, c.source) for c in expected], (
        f"notebooks/{name} is stale: run python notebooks/build_notebooks.py"
    )


def test_a_raising_cell_fails_the_tests_and_the_docs_build() -> None:
    options = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "--nbmake" in options["addopts"].split() and "notebooks" in options["testpaths"]
    mkdocs = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "execute: true" in mkdocs
    assert "allow_errors: false" in mkdocs
