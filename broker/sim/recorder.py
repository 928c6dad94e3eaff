"""Observation of a run: a recorder object is passed in, the world and its policies report to it.

The world reports progress (jobs done); policies report per-tick records under a *kind* (for example
``"portfolio"``). :class:`Recorder` ignores everything (the default); :class:`MemoryRecorder`
keeps records in lists and turns them into DataFrames. A progress callback, when given, is called
every ``every`` jobs completed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

ProgressCallback = Callable[[int, int], None]


class Recorder:
    """A recorder that keeps nothing; subclass it to observe a run."""

    #: Policies skip building records when this is False.
    wants_records: bool = False

    def __init__(self, *, progress: ProgressCallback | None = None, every: int = 1000) -> None:
        self._progress, self.every = progress, max(1, every)

    def progress(self, done: int, total: int) -> None:
        """``done`` of ``total`` jobs have completed."""
        if self._progress is not None:
            self._progress(done, total)

    def record(self, kind: str, fields: dict[str, Any]) -> None:
        """A policy's record of one tick (ignored here)."""


class MemoryRecorder(Recorder):
    """Keeps every record in memory, by kind."""

    wants_records = True

    def __init__(self, *, progress: ProgressCallback | None = None, every: int = 1000) -> None:
        super().__init__(progress=progress, every=every)
        self.records: dict[str, list[dict[str, Any]]] = {}

    def record(self, kind: str, fields: dict[str, Any]) -> None:
        """Append a record of ``kind``."""
        self.records.setdefault(kind, []).append(fields)

    def frame(self, kind: str) -> pd.DataFrame:
        """All records of ``kind`` as a DataFrame (empty if none)."""
        return pd.DataFrame(self.records.get(kind, []))
