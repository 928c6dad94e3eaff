"""Read per-job data volumes for the cloud cluster (a trace's SWF file carries none).

A volumes file is CSV with the header ``job_id,input_bytes,output_bytes`` (any column order; other
columns are refused): one row per job of the trace, SWF job number and bytes uploaded before /
downloaded after the job runs (non-negative numbers). :func:`with_volumes` joins it to a trace
frame; :func:`workloads.htc.htc_view` then uses those columns instead of the volume model, and
removes and counts the jobs that have no row. Errors name the file, the line and the field.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pandas as pd

from workloads.errors import InputError

COLUMNS = ("job_id", "input_bytes", "output_bytes")
#: Job numbers and byte counts as written in CSV: ASCII decimal, no ``_`` separators, no ``nan`` / ``inf`` words
#: (Python's int() and float() take those, and a job number ``1_0`` would silently be job 10).
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
#: The largest job number: SWF fields are exact integers up to 2**53.
MAX_JOB_ID = 2**53


class VolumesFormatError(InputError):
    """A volumes file that cannot be read; the message names file, line and field."""


def read_volumes(path: str | Path) -> pd.DataFrame:
    """The file's rows as a frame indexed by ``job_id`` (see the module docstring)."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader, [])]
        if sorted(header) != sorted(COLUMNS):
            raise VolumesFormatError(f"{path}:1: header {header}; expected the columns {list(COLUMNS)}")
        ids: list[int] = []
        values: dict[str, list[float]] = {"input_bytes": [], "output_bytes": []}
        seen: dict[int, int] = {}
        for line, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise VolumesFormatError(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
            fields = dict(zip(header, (c.strip() for c in row), strict=True))
            job = _job_id(fields["job_id"], path, line)
            if job in seen:
                raise VolumesFormatError(f"{path}:{line}: field 'job_id': job {job} already on line {seen[job]}")
            seen[job] = line
            ids.append(job)
            for name in values:
                values[name].append(_bytes(fields[name], path, line, name))
    return pd.DataFrame(values, index=pd.Index(ids, name="job_id"))


def with_volumes(trace: pd.DataFrame, volumes: pd.DataFrame) -> pd.DataFrame:
    """The trace with ``input_bytes`` and ``output_bytes`` by job number (missing where no row)."""
    joined = trace.drop(columns=[c for c in ("input_bytes", "output_bytes") if c in trace.columns])
    ids = joined["job_id"].astype("float64")
    for name in ("input_bytes", "output_bytes"):
        joined[name] = ids.map(volumes[name]).astype("float64")
    return joined


def _job_id(text: str, path: Path, line: int) -> int:
    if not _INTEGER.fullmatch(text):
        raise VolumesFormatError(f"{path}:{line}: field 'job_id': {text!r} is not an integer")
    value = int(text)
    if abs(value) > MAX_JOB_ID:
        raise VolumesFormatError(f"{path}:{line}: field 'job_id': {text!r} is out of range (at most 2**53)")
    return value


def _bytes(text: str, path: Path, line: int, field: str) -> float:
    if not _NUMBER.fullmatch(text):
        raise VolumesFormatError(f"{path}:{line}: field {field!r}: {text!r} is not a number")
    value = float(text)
    if value < 0 or not math.isfinite(value):
        raise VolumesFormatError(f"{path}:{line}: field {field!r}: {value} must be a finite number >= 0")
    return value
