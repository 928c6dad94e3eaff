"""Read Standard Workload Format (SWF) traces into DataFrames: refuse syntax, count semantics.

An SWF file (Parallel Workloads Archive, SWF v2.0 to v2.2) is a block of ``; Key: value`` header
lines followed by one line of 18 whitespace-separated numbers per job, ``-1`` meaning unknown. Lines
starting with ``;`` are comments anywhere in the file. Files may be plain or gzip-compressed;
compression is detected from the gzip magic bytes, not from the file name. A file without a header
is read as well.

A line that cannot be parsed (a field that is not a number, a wrong number of fields) is refused
with file, line and field; ``lenient`` skips such lines and counts them by reason. A value that
parses but lies outside what the format documents (a status code of -4, a negative fraction, ids
out of order) is settled by the stated rule of :mod:`workloads.oddities` and counted by reason in
:attr:`SwfTrace.flagged`; ``strict`` refuses at the first one instead.

Reading is streaming: the (decompressed) byte stream is fed to pandas' C parser in chunks. Only
when that fast path fails (a malformed line) is the file read again line by line, to name the
first bad line exactly or, in lenient mode, to skip every bad line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import io
import itertools
import logging
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workloads.errors import InputError
from workloads.oddities import Oddity, settle
from workloads.schema import COLUMN_NAMES, INTEGER_COLUMNS, SWF_COLUMNS, from_float_columns

logger = logging.getLogger(__name__)

#: Number of fields on an SWF job line.
N_FIELDS = len(SWF_COLUMNS)
#: Rows parsed per pandas chunk.
CHUNK_ROWS = 100_000
#: How many skipped lines lenient mode describes in :attr:`SwfTrace.skipped_examples`.
MAX_EXAMPLES = 5

_GZIP_MAGIC = b"\x1f\x8b"
_IS_INT_COLUMN = np.array([name in INTEGER_COLUMNS for name in COLUMN_NAMES])
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: A job line that is certainly valid (integers of at most 15 digits, plain decimals).
_INT_TOKEN, _DECIMAL_TOKEN = rb"[+-]?\d{1,15}", rb"[+-]?(?:\d{1,15}\.?\d*|\.\d+)"
_GOOD_LINE = re.compile(rb"[ \t]+".join(_INT_TOKEN if i else _DECIMAL_TOKEN for i in _IS_INT_COLUMN))
#: What separates fields on a job line: spaces and tabs, as for pandas' whitespace separator (not \v, \f, \r).
_SEPARATOR = re.compile(rb"[ \t]+")
#: ``Key: value`` after the ``;`` of a header line; keys are capitalised words (``MaxProcs``).
_HEADER_FIELD = re.compile(r"\s*([A-Z][A-Za-z0-9_]*)\s*:(?:\s+(.*)|$)")
_LEADING_INT = re.compile(r"\s*([+-]?\d+)\b", re.ASCII)
#: The typed header fields and the largest value each may take (all are >= 0): counts up to 2**53, and Unix times
#: up to 9999-12-31T23:59:59Z, the last second a datetime can show.
MAX_UNIX_TIME = 253_402_300_799
_HEADER_BOUNDS = {"MaxJobs": 2**53, "MaxRecords": 2**53, "MaxNodes": 2**53, "MaxProcs": 2**53,
                  "UnixStartTime": MAX_UNIX_TIME}
_HEADER_ATTRIBUTES = {"MaxJobs": "max_jobs", "MaxRecords": "max_records", "MaxNodes": "max_nodes",
                      "MaxProcs": "max_procs", "UnixStartTime": "unix_start_time"}
#: pandas C-parser options for job lines: whitespace-separated floats, ``;`` comments.
_CSV_OPTIONS: dict[str, Any] = {
    "sep": r"\s+",
    "header": None,
    "comment": ";",
    "dtype": np.float64,
    "na_filter": False,
    "encoding": "latin-1",
    "engine": "c",
}


class SwfFormatError(InputError):
    """A trace file is not valid SWF.

    The message names the file, the 1-based line number in the file (header lines counted) and,
    for a bad value, the field number and name. ``path`` and ``line`` are also attributes.
    """

    def __init__(self, message: str, *, path: Path, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


@dataclass(frozen=True, slots=True)
class SwfHeader:
    """The header of an SWF file.

    Attributes
    ----------
    max_jobs, max_records, max_nodes, max_procs : int or None
        ``MaxJobs``, ``MaxRecords``, ``MaxNodes``, ``MaxProcs`` (counts), None when absent.
    unix_start_time : int or None
        ``UnixStartTime``: Unix time (seconds, UTC) of the trace's time 0.
    time_zone_string : str or None
        ``TimeZoneString``, e.g. ``"Europe/London"``.
    fields : dict of str to str
        Every ``; Key: value`` line. Repeated keys (``Partition``, ``Note``) and continuation
        lines (comment lines without a key that follow a keyed line) are joined with newlines.
    """

    max_jobs: int | None = None
    max_records: int | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    unix_start_time: int | None = None
    time_zone_string: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


# eq=False: DataFrames do not compare to a single bool.
@dataclass(frozen=True, slots=True, eq=False)
class SwfTrace:
    """A trace read from an SWF file.

    Attributes
    ----------
    frame : pd.DataFrame
        One row per job line read, columns and dtypes of :data:`workloads.schema.SWF_COLUMNS`
        (times in seconds), ``-1`` read as ``pd.NA``, odd values settled (:mod:`workloads.oddities`).
    header : SwfHeader
        The header block.
    path : Path
        The file read.
    skipped : int
        Malformed lines skipped (lenient mode only; 0 otherwise).
    skipped_examples : tuple of (int, str)
        The first few skipped lines as (1-based line number, reason).
    skipped_by_reason : dict of str to int
        The skipped lines counted by what was wrong (``"not a number"``, ``"wrong number of fields"``, ...).
    flagged : dict of str to int
        Lines (job lines, and header lines for a typed header value) holding a value the format does not
        document, counted by reason (``"status: undocumented code -4, read as unknown"``); each such line is
        read by the reason's rule.
    flagged_examples : tuple of (int, str)
        The first line of each reason, as (1-based line number, reason), in file order.
    """

    frame: pd.DataFrame
    header: SwfHeader
    path: Path
    skipped: int = 0
    skipped_examples: tuple[tuple[int, str], ...] = ()
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    flagged: dict[str, int] = field(default_factory=dict)
    flagged_examples: tuple[tuple[int, str], ...] = ()


@dataclass(slots=True)
class _Tally:
    """Lines counted by reason, with the first few as (line, reason)."""

    count: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)
    examples: list[tuple[int, str]] = field(default_factory=list)

    def add(self, line: int, reason: str, kind: str, times: int = 1) -> None:
        self.count += times
        self.by_reason[kind] = self.by_reason.get(kind, 0) + times
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append((line, reason))


def read_swf(path: str | PathLike[str], *, lenient: bool = False, strict: bool = False) -> SwfTrace:
    """Read an SWF trace, plain or gzip-compressed.

    Parameters
    ----------
    path : str or path-like
        The trace file.
    lenient : bool
        Skip malformed lines (counted in ``SwfTrace.skipped``, one warning logged) instead of
        raising.
    strict : bool
        Refuse the first value the format does not document (:mod:`workloads.oddities`; fractional
        seconds, which it permits, excepted) instead of settling and counting it.

    Returns
    -------
    SwfTrace
        The jobs, the header, what was skipped and what was flagged.

    Raises
    ------
    SwfFormatError
        On the first malformed line (unless ``lenient``): wrong number of fields, a token that is not
        a number; a carriage return inside a header line; a truncated/corrupt gzip stream. With
        ``strict``, also on the first odd value, naming its line and field.
    """
    path = Path(path)
    skips = _Tally()
    try:
        with open_stream(path) as stream:
            texts = list(_header_lines(stream))
            _refuse_carriage_returns(texts, path)
            header, odd_header = _checked_header(parse_header(texts), texts)
            values = _fast_values(stream)
        lines = None
        if values is None:
            with open_stream(path) as stream:
                values, lines = _checked_values(stream, path, skips, lenient=lenient)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        message = f"{path.name}: gzip stream is truncated or corrupt ({exc})"
        raise SwfFormatError(message, path=path) from exc
    values, oddities = settle(values)
    if strict:
        _refuse_first(odd_header, oddities, path, lines)
    flagged = _flagged(odd_header, oddities, path, lines)
    if skips.count:
        line, reason = skips.examples[0]
        message = "%s: skipped %d malformed line(s); first at line %d: %s"
        logger.warning(message, path.name, skips.count, line, reason)
    frame = from_float_columns(dict(zip(COLUMN_NAMES, values.T, strict=True)))
    return SwfTrace(frame, header, path, skips.count, tuple(skips.examples), dict(skips.by_reason), *flagged)


def _refuse_first(odd_header: list[tuple[int, str]], oddities: list[Oddity], path: Path,
                  lines: np.ndarray | None) -> None:
    """``strict``: refuse the first odd header value, else the first odd value on a job line, by line."""
    if odd_header:
        line, problem = odd_header[0]
        raise SwfFormatError(f"{path.name}:{line}: {problem} (--strict refuses it; without --strict the field is "
                             "ignored and counted)", path=path, line=line)
    refused = [o for o in oddities if not o.documented]
    if not refused:
        return
    first = min(refused, key=lambda o: (int(o.rows[0]), o.field))
    line = int(_line_numbers(path, lines)[first.rows[0]])
    raise SwfFormatError(f"{path.name}:{line}: {first.refusal()}", path=path, line=line)


def _flagged(odd_header: list[tuple[int, str]], oddities: list[Oddity], path: Path,
             lines: np.ndarray | None) -> tuple[dict[str, int], tuple[tuple[int, str], ...]]:
    """The flagged lines counted by reason, and the first line of each reason in file order."""
    counts = {reason: 1 for _, reason in odd_header}
    examples = list(odd_header)
    if oddities:
        numbers = _line_numbers(path, lines)
        for oddity in oddities:
            counts[oddity.reason] = counts.get(oddity.reason, 0) + len(oddity.rows)
            examples.append((int(numbers[oddity.rows[0]]), oddity.reason))
    return counts, tuple(sorted(examples))


def _line_numbers(path: Path, lines: np.ndarray | None) -> np.ndarray:
    """The 1-based file line of each job row: ``lines`` when the checked path recorded them, else counted again."""
    if lines is not None:
        return lines
    with open_stream(path) as stream:
        return np.array([n for n, raw in enumerate(stream, start=1) if raw.split(b";", 1)[0].strip()],
                        dtype=np.int64)


def parse_header(lines: Iterable[str]) -> SwfHeader:
    """Build an :class:`SwfHeader` from header comment texts (the part after ``;``).

    Parameters
    ----------
    lines : iterable of str
        One text per header line, without the leading ``;``. A line without a key continues
        the previous key's value when it is indented at least to where that value starts (or,
        after a key with an empty value or one ending in ``:``, indented past the key). Other
        keyless lines (column legends, free text after a bare ``;``) are not kept. Typed
        fields take the leading integer of their value (``"70  (dual)"`` -> 70).
    """
    values: dict[str, list[str]] = {}
    current: list[str] | None = None
    indent = 0
    for text in lines:
        match = _HEADER_FIELD.match(text)
        if match:
            value = (match[2] or "").strip()
            current = values.setdefault(match[1], [])
            current.append(value)
            opens_block = not value or value.endswith(":")
            indent = match.start(1) + 1 if opens_block else match.start(2)
        elif current is not None and text.strip() and len(text) - len(text.lstrip()) >= indent:
            current.append(text.strip())
        else:
            current = None
    fields = {key: "\n".join(parts).strip() for key, parts in values.items()}
    return SwfHeader(
        max_jobs=_header_int(fields, "MaxJobs"),
        max_records=_header_int(fields, "MaxRecords"),
        max_nodes=_header_int(fields, "MaxNodes"),
        max_procs=_header_int(fields, "MaxProcs"),
        unix_start_time=_header_int(fields, "UnixStartTime"),
        time_zone_string=fields.get("TimeZoneString", "").split("\n")[0].strip() or None,
        fields=fields,
    )


def _checked_header(header: SwfHeader, texts: list[str]) -> tuple[SwfHeader, list[tuple[int, str]]]:
    """Drop typed header values out of range (the field becomes None); each as (line, problem)."""
    odd = []
    for key, bound in _HEADER_BOUNDS.items():
        value = getattr(header, _HEADER_ATTRIBUTES[key])
        if value is None or 0 <= value <= bound:
            continue
        keys = (_HEADER_FIELD.match(text) for text in texts)
        number = next((i for i, m in enumerate(keys, start=1) if m and m[1] == key), 0)
        odd.append((number, f"header field {key}: {value} is out of range (0 to {bound}), ignored"))
        dropped: dict[str, Any] = {_HEADER_ATTRIBUTES[key]: None}
        header = dataclasses.replace(header, **dropped)
    return header, sorted(odd)  # by line: --strict names the first in the file


def _header_int(fields: dict[str, str], key: str) -> int | None:
    match = _LEADING_INT.match(fields.get(key, ""))
    return int(match[1]) if match else None


@contextlib.contextmanager
def open_stream(path: Path) -> Iterator[io.BufferedIOBase]:
    """Open a plain or gzip file (recognised by its magic bytes) as a stream of its content.

    Reading a truncated gzip file raises ``EOFError``; a corrupt one ``gzip.BadGzipFile`` or
    ``zlib.error``.
    """
    with path.open("rb") as raw:
        magic = raw.read(len(_GZIP_MAGIC))
        raw.seek(0)
        if magic != _GZIP_MAGIC:
            yield raw
            return
        with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            yield unzipped


def _header_lines(stream: io.BufferedIOBase) -> Iterator[str]:
    """Yield the texts of the leading comment/blank lines, leaving ``stream`` at the first job."""
    while True:
        position = stream.tell()
        line = stream.readline().strip()
        if not line.startswith(b";") and (line or stream.tell() == position):
            stream.seek(position)
            return
        yield line[1:].decode("utf-8", errors="replace")


def _refuse_carriage_returns(texts: list[str], path: Path) -> None:
    """Refuse a header line with a carriage return inside (old Mac line endings make the file one comment)."""
    number = next((n for n, text in enumerate(texts, start=1) if "\r" in text), None)
    if number is not None:
        raise SwfFormatError(f"{path.name}:{number}: a carriage return inside the line (SWF lines end with a "
                             "line feed; old Mac line endings?)", path=path, line=number)


#: Bytes pandas' C parser would read as a number (or as a separator) though no SWF number holds them: the
#: letters of ``True`` / ``False`` (read as 1.0 / 0.0 even into a float column), quotes (``"100"`` read as 100),
#: and the vertical tab and form feed it skips beside a number. A file where one occurs (in a comment too) takes
#: the checked path, which refuses them where they are not in a comment.
_NOT_IN_NUMBERS = (b"t", b"T", b"f", b"F", b'"', b"\x0b", b"\x0c")


def _fast_values(stream: io.BufferedIOBase) -> np.ndarray | None:
    """Read all job lines as a float64 ``(n, 18)`` array; None if any line is not clean.

    pandas pads short lines; with ``na_filter=False`` the padding is a conversion error. pandas reads
    ``inf`` as a number: a value that is not finite sends the file to the checked path, which tells
    the word (refused) from a number too large for a float (settled).
    """
    data = stream.read()
    if any(byte in data for byte in _NOT_IN_NUMBERS):  # each a memchr-fast scan
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):  # pandas ends a line at a lone CR; SWF does not
        return None
    try:
        with pd.read_csv(io.BytesIO(data), chunksize=CHUNK_ROWS, **_CSV_OPTIONS) as reader:
            blocks = [chunk.to_numpy(dtype=np.float64) for chunk in reader]
    except pd.errors.EmptyDataError:
        return np.empty((0, N_FIELDS))
    except (ValueError, OverflowError):
        return None
    if any(block.shape[1] != N_FIELDS for block in blocks):
        return None
    values = np.concatenate(blocks) if blocks else np.empty((0, N_FIELDS))
    return values if np.isfinite(values).all() else None


def _checked_values(
    stream: io.BufferedIOBase, path: Path, skips: _Tally, *, lenient: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Read job lines after checking each in Python (the slow path): the values and each row's file line."""
    numbers: list[int] = []
    lines = _valid_lines(stream, path, skips, numbers, lenient=lenient)
    blocks = []
    while batch := list(itertools.islice(lines, CHUNK_ROWS)):
        blocks.append(_parse_block(b"".join(batch), path))
    values = np.concatenate(blocks) if blocks else np.empty((0, N_FIELDS))
    return values, np.array(numbers, dtype=np.int64)


def _valid_lines(
    stream: io.BufferedIOBase, path: Path, skips: _Tally, numbers: list[int], *, lenient: bool
) -> Iterator[bytes]:
    """Yield the data part of each valid job line, its number appended to ``numbers``; refuse (or skip) the rest."""
    for number, raw in enumerate(stream, start=1):
        data = raw.split(b";", 1)[0]
        if not data.strip():
            continue
        data = data.strip(b" \t\r\n")
        tokens = _SEPARATOR.split(data)
        problem = None if _GOOD_LINE.fullmatch(data) else _line_problem(tokens)
        if problem is None:
            numbers.append(number)
            yield b" ".join(tokens) + b"\n"
        elif lenient:
            skips.add(number, problem[0], problem[1])
        else:
            raise SwfFormatError(f"{path.name}:{number}: {problem[0]} (--lenient skips such lines and counts them)",
                                 path=path, line=number)


def _line_problem(tokens: list[bytes]) -> tuple[str, str] | None:
    """Why a job line cannot be parsed (``"field 4 (run_time): 'x' is not a number"``) and the kind of fault."""
    if len(tokens) != N_FIELDS:
        return f"expected {N_FIELDS} fields, found {len(tokens)}", "wrong number of fields"
    for number, (token, name) in enumerate(zip(tokens, COLUMN_NAMES, strict=True), start=1):
        if not _NUMBER.fullmatch(token):
            return f"field {number} ({name}): {token.decode('latin-1')!r} is not a number", "not a number"
    return None


def _parse_block(block: bytes, path: Path) -> np.ndarray:
    """Parse already-checked job lines; failure here means the checks and pandas disagree."""
    try:
        values = pd.read_csv(io.BytesIO(block), **_CSV_OPTIONS).to_numpy(dtype=np.float64)
    except (ValueError, OverflowError) as exc:
        raise SwfFormatError(f"{path.name}: cannot parse job lines: {exc}", path=path) from exc
    if values.shape[1] != N_FIELDS:
        raise SwfFormatError(f"{path.name}: cannot parse job lines", path=path)
    return values


def site_size(trace: SwfTrace) -> tuple[int | None, str]:
    """The site's processors and where the number comes from.

    The header's ``MaxProcs`` (SWF 2.1 on), else its ``MaxNodes`` (SWF 2.0, where a node is a
    processor), else the widest job's processors (allocated, else requested); ``(None, "")`` when
    the log records none of them.
    """
    header = trace.header
    if header.max_procs:
        return header.max_procs, "MaxProcs"
    if header.max_nodes:
        return header.max_nodes, "MaxNodes"
    widest = _int_or_none(trace.frame[["allocated_procs", "requested_procs"]].max().max())
    return (widest, "the widest job") if widest else (None, "")


def trace_info(trace: SwfTrace) -> dict[str, Any]:
    """Summarise a trace (JSON-serialisable: plain ints, strs, lists, dicts and None).

    Parameters
    ----------
    trace : SwfTrace
        A trace from :func:`read_swf`.

    Returns
    -------
    dict
        ``path``; ``jobs`` (records read); ``skipped`` (malformed lines skipped, lenient mode),
        ``skipped_by_reason``, ``skipped_examples``; ``flagged`` (lines with a value the format does not
        document, by reason) and ``flagged_examples`` (the first line of each reason); ``first_submit``,
        ``last_submit`` and ``span_s`` (seconds since the trace origin); ``first_submit_utc``/``last_submit_utc``
        (ISO 8601, None without ``UnixStartTime`` or past year 9999); ``unix_start_time``;
        ``time_zone_string``; ``max_procs`` (header ``MaxProcs``, else the largest
        allocated/requested processor count); ``max_nodes`` (header ``MaxNodes``);
        ``fields_present`` / ``fields_missing`` (columns with / without a known value);
        ``header`` (all header fields).
    """
    frame, header = trace.frame, trace.header
    first = _int_or_none(frame["submit_time"].min())
    last = _int_or_none(frame["submit_time"].max())
    present = [name for name in COLUMN_NAMES if frame[name].notna().any()]
    max_procs = header.max_procs
    if max_procs is None:
        max_procs = _int_or_none(frame[["allocated_procs", "requested_procs"]].max().max())
    return {
        "path": str(trace.path),
        "jobs": len(frame),
        "skipped": trace.skipped,
        "skipped_by_reason": dict(trace.skipped_by_reason),
        "skipped_examples": [{"line": line, "reason": reason} for line, reason in trace.skipped_examples],
        "flagged": dict(trace.flagged),
        "flagged_examples": [{"line": line, "reason": reason} for line, reason in trace.flagged_examples],
        "first_submit": first,
        "last_submit": last,
        "span_s": None if first is None or last is None else last - first,
        "first_submit_utc": _utc(header.unix_start_time, first),
        "last_submit_utc": _utc(header.unix_start_time, last),
        "unix_start_time": header.unix_start_time,
        "time_zone_string": header.time_zone_string,
        "max_procs": max_procs,
        "max_nodes": header.max_nodes,
        "fields_present": present,
        "fields_missing": [name for name in COLUMN_NAMES if name not in present],
        "header": dict(header.fields),
    }


def _int_or_none(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _utc(origin: int | None, seconds: int | None) -> str | None:
    """ISO 8601 UTC time of ``origin + seconds`` (Unix seconds), None if either is unknown or past year 9999."""
    if origin is None or seconds is None or not 0 <= origin + seconds <= MAX_UNIX_TIME:
        return None
    return datetime.fromtimestamp(origin + seconds, tz=UTC).isoformat()
