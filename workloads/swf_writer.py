"""Write a trace DataFrame as a Standard Workload Format file that :func:`workloads.swf.read_swf` reads back.

The header is a block of ``; Key: value`` lines (``Version: 2.2`` first, then the given fields in
order); each job is one line of the 18 fields, ``pd.NA`` written as ``-1``. Integer columns are
written as integers, float columns with ``repr``'s shortest round-trip form, so reading the file
gives the same frame. A path ending in ``.gz`` is gzip-compressed (with a zero modification time,
so the same frame gives the same bytes).
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

import pandas as pd

from workloads.schema import COLUMN_NAMES, INTEGER_COLUMNS


def swf_text(frame: pd.DataFrame, header: Mapping[str, object] | None = None) -> str:
    """The SWF text of ``frame`` (columns of :data:`workloads.schema.SWF_COLUMNS`) under ``header``."""
    missing = [name for name in COLUMN_NAMES if name not in frame.columns]
    if missing:
        raise ValueError(f"the frame lacks the SWF column(s) {', '.join(missing)}")
    lines = ["; Version: 2.2"]
    for key, value in (header or {}).items():
        if not key[:1].isupper() or not key.replace("_", "").isalnum():
            raise ValueError(f"an SWF header key is a capitalised word, got {key!r}")
        text = str(value)
        if "\n" in text:
            raise ValueError(f"the header value of {key} spans lines")
        lines.append(f"; {key}: {text}")
    columns = [_column(frame[name], name in INTEGER_COLUMNS) for name in COLUMN_NAMES]
    lines.extend(" ".join(row) for row in zip(*columns, strict=True))
    return "\n".join(lines) + "\n"


def write_swf(frame: pd.DataFrame, path: str | PathLike[str], header: Mapping[str, object] | None = None) -> Path:
    """Write ``frame`` to ``path`` (gzip when it ends in ``.gz``); returns the path."""
    path = Path(path)
    data = swf_text(frame, header).encode("latin-1")
    if path.suffix == ".gz":
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as stream:
            stream.write(data)
        data = buffer.getvalue()
    path.write_bytes(data)
    return path


def _column(values: pd.Series, integral: bool) -> list[str]:
    known = values.notna().to_numpy()
    raw = values.tolist()
    if integral:
        return [str(int(v)) if k else "-1" for v, k in zip(raw, known, strict=True)]
    return [_float(float(v)) if k else "-1" for v, k in zip(raw, known, strict=True)]


def _float(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
