"""A stand-in for ``np.random.Generator`` returning scripted draws: tests pin each draw's parameters."""

from __future__ import annotations

from typing import Any


class ScriptedDraws:
    """Returns the scripted draws in order and logs each call; a test's subclass names the draws it takes."""

    def __init__(self, draws: list[Any]) -> None:
        self.draws = list(draws)
        self.calls: list[tuple[Any, ...]] = []

    def _next(self, *call: Any) -> Any:
        self.calls.append(call)
        return self.draws.pop(0)
