"""cloudbroker's Gymnasium environments, registered under the ``cloudbroker/`` namespace.

:func:`register_envs` adds them to Gymnasium's registry. ``import broker`` arranges for it to run:
at once when Gymnasium is already imported, else when Gymnasium is first imported
(:func:`install`), so that ``import broker`` and the CLI do not pay for importing Gymnasium and
numpy, and ``gymnasium.make("cloudbroker/Elastic-v0", ...)`` (or ``Leasing-v0``) works after
``import broker`` either way.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: Environment id -> entry point.
ENVS = {
    "cloudbroker/Elastic-v0": "broker.elastic.env:ElasticEnv",
    "cloudbroker/Leasing-v0": "broker.hybrid.env:LeasingEnv",
    "cloudbroker/Spot-v0": "broker.spot.env:SpotEnv",
}


def register_envs() -> None:
    """Register every environment of :data:`ENVS` that Gymnasium does not know yet."""
    import gymnasium

    for env_id, entry_point in ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


class _AfterGymnasium(importlib.abc.Loader):
    """Gymnasium's own loader, followed by :func:`register_envs`."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        """The wrapped loader's module."""
        return self.loader.create_module(spec) if self.loader is not None else None

    def exec_module(self, module: ModuleType) -> None:
        """Run Gymnasium's own loader, then register."""
        if self.loader is not None:
            self.loader.exec_module(module)
        register_envs()


class _Finder(importlib.abc.MetaPathFinder):
    """On the first import of ``gymnasium``: its spec, with a loader that registers afterwards; then steps aside."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """Wrap ``gymnasium``'s spec; every other name goes to the other finders."""
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _AfterGymnasium(spec.loader)
        return spec


def install() -> None:
    """Register now if Gymnasium is loaded, else when it is first imported (once)."""
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
