"""Writing run results to disk (the CLI's ``--out``): per-job and per-VM tables and the summary.

With the CLI, this is the only place in ``broker/`` that touches files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from broker.metrics import RunResult

TableFormat = Literal["parquet", "csv"]


def write_tables(result: RunResult, out: Path, *, fmt: TableFormat = "parquet",
                 extra: dict[str, Any] | None = None) -> list[Path]:
    """Write ``jobs.<fmt>``, ``vms.<fmt>`` and ``summary.json`` into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [_write(result.jobs, out / f"jobs.{fmt}", fmt), _write(result.vms, out / f"vms.{fmt}", fmt)]
    summary = out / "summary.json"
    summary.write_text(json.dumps({**result.summary.to_dict(), **(extra or {})}, indent=2, sort_keys=True) + "\n")
    return [*paths, summary]


def write_frames(frames: dict[str, pd.DataFrame], summary: dict[str, Any], out: Path, *,
                 fmt: TableFormat = "parquet") -> list[Path]:
    """Write each frame as ``<name>.<fmt>`` and ``summary.json`` into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [_write(frame, out / f"{name}.{fmt}", fmt) for name, frame in frames.items()]
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return [*paths, path]


def _write(frame: pd.DataFrame, path: Path, fmt: TableFormat) -> Path:
    if fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path
