"""The CLI's files: run results written to disk (``--out``), and the planner's input and output files read.

With the other CLI modules (and the sweep store), the only place in ``broker/`` that writes files.

Read the reservation planner's inputs and outputs: demand series and reservation plans.

A demand file is CSV with a header: one column per instance type (VMs needed in the interval, a
non-negative integer) and optionally ``start_s``, the interval's start in seconds, which must then
be evenly spaced (its step is the interval). Rows are intervals in time order. A plan file is the
JSON object ``cloudbroker plan-reservations --json`` prints (its ``"plan"`` member is read) or that
member alone. Errors name the file, the line and the field.
"""

from __future__ import annotations

import csv
import json
import math
import re
from array import array
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from broker.planning.demand import Demand
from broker.pricing.reservations import PlanError, ReservationPlan
from broker.sim.result import Result
from workloads.errors import InputError

TableFormat = Literal["parquet", "csv"]


def write_result(result: Result[Any], out: Path, *, fmt: TableFormat = "parquet", summary: dict[str, Any] | None = None,
                 frames: dict[str, pd.DataFrame] | None = None) -> list[Path]:
    """Write ``jobs.<fmt>``, ``instances.<fmt>`` (and any other ``frames``) and ``summary.json`` into ``out``.

    ``summary`` is what ``summary.json`` holds (default: the result's summary) but for a measured
    ``wall_s``, so the same run writes the same file; returns the paths.
    """
    out.mkdir(parents=True, exist_ok=True)
    tables = {"jobs": result.jobs, "instances": result.instances, **(frames or {})}
    paths = [_write(frame, out / f"{name}.{fmt}", fmt) for name, frame in tables.items()]
    path = out / "summary.json"
    content = {k: v for k, v in (summary if summary is not None else result.summary.to_dict()).items()
               if k != "wall_s"}
    path.write_text(json.dumps(content, indent=2, sort_keys=True, default=str) + "\n")
    return [*paths, path]


def _write(frame: pd.DataFrame, path: Path, fmt: TableFormat) -> Path:
    if fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


class DemandFormatError(InputError):
    """A demand file that cannot be read; the message names file, line and field."""


def read_demand(path: str | Path, types: tuple[str, ...], *, interval_s: float = 3600.0) -> Demand:
    """Read a demand CSV whose type columns are among ``types`` (see the module docstring)."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if not header:
            raise DemandFormatError(f"{path}:1: empty file (expected a header)")
        header = [h.strip() for h in header]
        unknown = [h for h in header if h not in types and h != "start_s"]
        if unknown:
            raise DemandFormatError(f"{path}:1: unknown column(s) {unknown}; expected 'start_s' and types {types}")
        cols = [h for h in header if h in types]
        if not cols:
            raise DemandFormatError(f"{path}:1: no instance-type column; expected some of {types}")
        rows, starts = array("q"), array("d")  # 8 bytes a count, however many rows
        for line, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise DemandFormatError(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
            if len(rows) + len(cols) > MAX_DEMAND_CELLS:
                raise DemandFormatError(f"{path}:{line}: more than {MAX_DEMAND_CELLS:,} counts (rows x {len(cols)} "
                                        "types), the most a demand file may hold; use longer intervals")
            values = dict(zip(header, (c.strip() for c in row), strict=True))
            rows.extend(_count(values[c], path, line, c) for c in cols)
            if "start_s" in values:
                starts.append(_number(values["start_s"], path, line))
    step = _step(list(starts), path) if len(starts) > 1 else interval_s
    counts = np.frombuffer(rows, dtype=np.int64).reshape(-1, len(cols)) if rows else np.zeros((0, len(cols)), np.int64)
    return Demand(counts.copy(), tuple(cols), step, starts[0] if starts else 0.0, str(path))


#: A count as a demand file writes it: ASCII digits (Python's int() would also take "1_0" and other scripts' digits).
_COUNT = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: The largest count read (instances of one type in one interval).
MAX_COUNT = 2**53
#: The largest demand table read or made by a replay (intervals x instance types): 100 million counts, 800 MB.
MAX_DEMAND_CELLS = 100_000_000


def _count(text: str, path: Path, line: int, field: str) -> int:
    if not _COUNT.fullmatch(text):
        raise DemandFormatError(f"{path}:{line}: field {field!r}: {text!r} is not an integer")
    value = int(text)
    if value < 0:
        raise DemandFormatError(f"{path}:{line}: field {field!r}: {value} is negative")
    if value > MAX_COUNT:
        raise DemandFormatError(f"{path}:{line}: field {field!r}: {value} is more than 2**53")
    return value


def _number(text: str, path: Path, line: int) -> float:
    try:
        value = float(text) if "_" not in text else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise DemandFormatError(f"{path}:{line}: field 'start_s': {text!r} is not a finite number")
    return value


def _step(starts: list[float], path: Path) -> float:
    steps = np.diff(starts)
    if steps[0] <= 0 or not np.allclose(steps, steps[0]):
        bad = int(np.flatnonzero(~np.isclose(steps, steps[0]) | (steps <= 0))[0]) if steps[0] > 0 else 0
        raise DemandFormatError(f"{path}:{bad + 3}: field 'start_s': intervals must be evenly spaced and increasing")
    return float(steps[0])


#: The largest plan file read (bytes): a plan holds one entry per instance type and option.
MAX_PLAN_BYTES = 16 * 2**20


def read_plan(path: str | Path) -> ReservationPlan:
    """Read a reservation plan (``plan-reservations --json`` output, or its ``"plan"`` member).

    A file over :data:`MAX_PLAN_BYTES`, or a plan of more than
    :data:`broker.pricing.reservations.MAX_RESERVATIONS` reservations, is refused before it is read whole.
    """
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: {size:,} bytes; a plan file holds at most {MAX_PLAN_BYTES:,} (one entry per "
                        "instance type and option)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PlanError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # an integer of more than 4,300 digits, an undecodable byte
        raise PlanError(f"{path}: not a plan ({exc})") from None
    if isinstance(data, dict) and "plan" in data:
        data = data["plan"]
    return ReservationPlan.from_dict(data, source=str(path))
