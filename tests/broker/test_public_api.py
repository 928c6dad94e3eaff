"""The public API: every exported name resolves, and the README's "From Python" example runs as written."""

from __future__ import annotations

import importlib

import pytest

import broker
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize("name", broker.__all__)
def test_every_exported_name_resolves_to_its_module(name: str) -> None:
    value = getattr(broker, name)
    assert getattr(importlib.import_module(broker._EXPORTS[name]), name) is value


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Engine'"):
        broker.Engine  # noqa: B018


@pytest.mark.slow
def test_the_readme_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REPO_ROOT / "README.md").read_text()
    start = text.index("```python", text.index("From Python")) + len("```python")
    code = text[start:text.index("```", start)]
    monkeypatch.chdir(REPO_ROOT)  # the example names ../shared/traces from the repository root
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["result"].summary.jobs == len(scope["jobs"]) > 28_000  # type: ignore[attr-defined]
    assert scope["leasing"].summary.twt_s > 0 and scope["cluster"].summary.cost > 0  # type: ignore[attr-defined]
    pool = scope["pool"].summary  # type: ignore[attr-defined]
    assert pool.decisions == pool.jobs == 5000 and 30 <= pool.mean_cores <= 162 and pool.policy == "sarsa"
