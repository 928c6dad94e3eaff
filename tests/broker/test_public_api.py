"""The public API: every exported name resolves, and the README's "From Python" example runs as written."""

from __future__ import annotations

import ast
import importlib
import json
from typing import Any

import pytest

import broker
from tests.conftest import REPO_ROOT, cloudbroker, without_timing


@pytest.mark.parametrize("name", broker.__all__)
def test_every_exported_name_resolves_to_its_module(name: str) -> None:
    value = getattr(broker, name)
    assert getattr(importlib.import_module(broker._EXPORTS[name]), name) is value


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Engine'"):
        broker.Engine  # noqa: B018


def readme_code() -> str:
    """The README's "From Python" example."""
    text = (REPO_ROOT / "README.md").read_text()
    start = text.index("```python", text.index("From Python")) + len("```python")
    return text[start:text.index("```", start)]


@pytest.mark.slow
def test_the_readme_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    code = readme_code()
    monkeypatch.chdir(REPO_ROOT)  # the example names ../shared/traces from the repository root
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["result"].summary.jobs == len(scope["jobs"]) > 28_000  # type: ignore[attr-defined]
    assert scope["leasing"].summary.twt_s > 0 and scope["cluster"].summary.cost > 0  # type: ignore[attr-defined]
    pool = scope["pool"].summary  # type: ignore[attr-defined]
    assert pool.decisions == pool.jobs == 5000 and 30 <= pool.mean_cores <= 162 and pool.policy == "sarsa"


def test_the_readme_cluster_example_bills_what_the_cluster_command_bills(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's cloud-cluster lines (with the imports), run alone, and ``cloudbroker cluster`` on the same run."""
    tree = ast.parse(readme_code())
    wanted = {"swf", "htc", "terms", "cluster"}
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
            or (isinstance(node, ast.Assign) and {n.id for t in node.targets for n in ast.walk(t)
                                                   if isinstance(n, ast.Name)} & wanted)]
    assigned = {n.id for node in kept if isinstance(node, ast.Assign) for t in node.targets for n in ast.walk(t)
                if isinstance(n, ast.Name)}
    assert {"swf", "htc", "cluster"} <= assigned  # the terms, if the example gives them
    monkeypatch.chdir(REPO_ROOT)  # the example names ../shared/traces from the repository root
    scope: dict[str, Any] = {}
    exec(compile(ast.Module(body=kept, type_ignores=[]), "README.md", "exec"), scope)
    cluster = without_timing(scope["cluster"].summary.to_dict())
    run = cloudbroker("cluster", "--trace", str(scope["swf"].path), "--cap", "50", "--seed", "1", "--json")
    command = json.loads(run.out)
    assert run.code == 0 and command["egress_cost"] > 0 and cluster["egress_cost"] > 0
    assert {k: command[k] for k in cluster} == cluster  # every figure of the summary, the bill's parts included
