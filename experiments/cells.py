"""What the experiment scripts share: seed ranges and a store of finished cells.

A cell is a pure function of its configuration; its result is kept as one JSON file named after a
hash of that configuration, written atomically, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def seeds_of(text: str) -> list[int]:
    """``"1-10"`` or ``"1,4,7"`` -> the seeds."""
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def stored(path: Path, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The cell stored at ``path``, computed and written (atomically) first if it is missing."""
    if path.exists():
        result: dict[str, Any] = json.loads(path.read_text())
        return result
    result = compute()
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(result, default=str))
    tmp.replace(path)
    return result
