"""What the commands read: traces (by path or registry name), price books, the broker's job view, the output format.

Every failure to read becomes a clear message on stderr and exit status 2 (:func:`fail`), or a
``typer.BadParameter`` naming the option.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import numpy as np
import typer

from broker.cli.console import bar, err
from broker.cli.files import TableFormat
from broker.pricing.book import PriceBook, load_price_book
from broker.sim.recorder import Recorder
from workloads.cache import load_trace
from workloads.errors import CloudbrokerError, ConfigError, InputError
from workloads.jobs import STATUS_GROUPS, FilterReport, JobTable, job_view
from workloads.lublin import default_workload
from workloads.requirements import MODELS
from workloads.swf import SwfTrace

#: ``--lenient`` of every command that reads a trace: skip the lines that cannot be parsed.
Lenient = Annotated[bool, typer.Option(help="Skip trace lines that cannot be parsed (counted by reason) instead of "
                                            "refusing the trace.")]
#: ``--strict`` of every command that reads a trace: refuse the first value the format does not document.
Strict = Annotated[bool, typer.Option(help="Refuse the trace at the first value the SWF format does not document "
                                           "(a status code of -4, ids out of order, ...) instead of reading it by "
                                           "its rule and counting it.")]


def finite(value: float | None) -> float | None:
    """An option callback: refuse NaN and infinities (click's ranges let NaN through)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, got {value}")
    return value


def positive(value: float | None) -> float | None:
    """An option callback: a finite number > 0."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a finite number > 0, got {value}")
    return value


def below_an_hour(value: float) -> float:
    """An option callback for minutes within an hour: finite, in [0, 60)."""
    if not (math.isfinite(value) and 0 <= value < 60):
        raise typer.BadParameter(f"must be a number of minutes in [0, 60), got {value}")
    return value


def workers(value: int) -> int:
    """An option callback for ``--n-jobs``: a positive count, or -1 for every core (-2 all but one, ...)."""
    if value == 0:
        raise typer.BadParameter("must be a number of workers >= 1, or negative (-1: every core), not 0")
    return value


def kept(report: FilterReport, label: str, swf: SwfTrace | None = None) -> dict[str, Any]:
    """Say on stderr what reading and the job view did (skipped, flagged, removed); the counts for ``--json``.

    A command calls it after its other checks, so that a refusal stays one line.
    """
    counts = reading_counts(report, swf)
    notes = [report.describe()] if counts["jobs_removed"] else []
    if swf is not None and swf.flagged:
        flagged = sum(swf.flagged.values())
        notes.append(f"{flagged:,} line(s) flagged (" + "; ".join(f"{why}: {c:,}" for why, c in swf.flagged.items())
                     + ")")
    if swf is not None and swf.skipped:
        first = swf.skipped_examples[0][0]
        notes.append(f"{swf.skipped:,} malformed line(s) skipped (--lenient; the first at line {first})")
    if notes:
        print(f"{label}: {'; '.join(notes)}", file=sys.stderr)
    return counts


def reading_counts(report: FilterReport, swf: SwfTrace | None) -> dict[str, Any]:
    """Every job line accounted for: read, removed by reason, kept; odd values flagged by reason; lines skipped."""
    return {"jobs_in": report.read,
            "jobs_removed": {why: count for why, count in report.removed.items() if count},
            "jobs_kept": report.kept,
            "jobs_flagged": {**({} if swf is None else swf.flagged),
                             **{why: count for why, count in report.kept_flagged.items() if count}},
            "lines_skipped": {} if swf is None else dict(swf.skipped_by_reason)}


def nothing_to_run(counts: dict[str, Any], label: str, *, as_json: bool, out_dir: Path | None = None) -> None:
    """A trace with no job left to run: one line on stderr, the counts as the result (``--json``, ``--out``).

    The trace was read: this is a result (exit status 0), not a refusal.
    """
    removed = ", ".join(f"{c:,} {why}" for why, c in counts["jobs_removed"].items()) or "none removed"
    reason = f"no job left to run: {counts['jobs_in']:,} job(s) read ({removed})"
    print(f"{label}: {reason}", file=sys.stderr)
    payload = {**counts, "jobs": 0, "nothing_to_run": reason}
    if out_dir is not None:
        with writing("--out", out_dir):
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "summary.json").write_text(json.dumps(payload, sort_keys=True, indent=2) + "\n",
                                                  encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))


#: The most steps (scheduling ticks, policy steps) a run may take over its trace.
MAX_STEPS = 10_000_000


def horizon(submit: np.ndarray, runtime: np.ndarray) -> float:
    """Seconds from the first submission to the last plus the longest run time (0 with no job)."""
    return float(submit[-1] - submit[0] + runtime.max()) if len(submit) else 0.0


def steps(horizon: float, step: float, option: str, unit: str, *, most: int = MAX_STEPS, hint: str = "") -> None:
    """Refuse a ``step`` so short that a run over ``horizon`` seconds would take more than ``most`` of them."""
    count = horizon / step
    if count > most:
        raise ConfigError(f"{option} {step:g} s makes about {count:.3g} {unit} over the trace's {horizon:,.0f} s; "
                          f"at most {most:,}{hint}")


def fits(jobs: JobTable, book: PriceBook, reqs: str) -> None:
    """Refuse a price book none of whose instance types holds the largest job's requirement."""
    largest = float(book.catalog().capacity.max())
    if len(jobs) and jobs.r.max() > largest:
        i = int(jobs.r.argmax())
        raise ConfigError(f"--price-book {book.name}: its largest instance type holds {largest:g} capacity units, "
                          f"job {jobs.job_id[i]} needs {jobs.r[i]:g} (--reqs {reqs}); choose a book with larger types "
                          f"or another --reqs")


def output_dir(path: Path | None, option: str, *, force: bool) -> None:
    """Refuse, before any work, an output directory that is a file, holds results (without --force) or is unwritable."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: a file is there; give a directory")
    writable(path, option)
    if path.is_dir() and _entries(path, option) and not force:
        raise ConfigError(f"{option} {path}: the directory is not empty; choose another or pass --force to overwrite")


def output_file(path: Path | None, option: str, *, force: bool) -> None:
    """Refuse, before any work, an output file that exists (unless ``--force``), is a directory or cannot be written."""
    if path is None:
        return
    if path.is_dir():
        raise ConfigError(f"{option} {path}: a directory is there; give a file name")
    if path.exists() and not force:
        raise ConfigError(f"{option} {path}: the file exists; choose another or pass --force to overwrite")
    writable(path, option)


def store_dir(path: Path | None, option: str = "--store") -> None:
    """A sweep store is resumed from when it exists; refuse one that is a file or cannot be written."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: a file is there; a store is a directory")
    writable(path, option)


def writable(path: Path, option: str) -> None:
    """Refuse an output ``path`` that cannot be created and written, in one line naming ``option`` and ``path``.

    The path itself if it exists, else its first existing ancestor, must be writable: a directory in
    which an entry can be made (not on a read-only file system, ``os.access`` W and X, and a probe
    directory made and removed there, which also holds for root), or an existing file open to writing.
    """
    target = path.absolute()
    existing = target
    while not _exists(existing):
        if existing.is_symlink():
            raise ConfigError(f"{option} {path}: cannot write there: {existing} is a broken symbolic link")
        existing = existing.parent
    if existing != target and not existing.is_dir():
        raise ConfigError(f"{option} {path}: cannot write there: {existing} is a file, not a directory")
    why = _unwritable(existing)
    if why:
        raise ConfigError(f"{option} {path}: cannot write there: {existing} {why}")


def _exists(path: Path) -> bool:
    """Whether ``path`` exists (False also when it cannot be examined: its parent is then checked)."""
    try:
        return path.exists()
    except OSError:
        return False


def _unwritable(existing: Path) -> str:
    """Why nothing can be written at ``existing`` (an existing file or directory); empty if it can."""
    try:
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            return "is on a read-only file system"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if not existing.is_dir():
        return "" if os.access(existing, os.W_OK) else "is a file that is not writable (its permissions)"
    if not os.access(existing, os.W_OK | os.X_OK):
        return "is a directory that is not writable (its permissions)"
    try:
        Path(tempfile.mkdtemp(prefix=".cloudbroker-probe-", dir=existing)).rmdir()
    except OSError as exc:
        return f"is a directory in which nothing can be created ({exc.strerror})"
    return ""


def _entries(path: Path, option: str) -> bool:
    """Whether the directory ``path`` holds anything (refused in one line if it cannot be listed)."""
    try:
        return any(path.iterdir())
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot list the directory ({exc.strerror})") from None


def in_options(exc: Exception, words: dict[str, str], *, default: str | None = None) -> ConfigError:
    """A library's refusal of what the options configured, led by the options it is about.

    ``words`` maps the words the library's messages use (its fields: ``chunk_jobs``, ``min_cores``,
    ``k``) to the options that set them; every option whose word the message holds before its list
    of what is allowed ("one of ...", "known: ...") leads it, or ``default`` when none does:
    ``--ipp-max-jobs, --ipp-chunk-jobs: chunk_jobs (60) must be below max_jobs (50) ...``.
    """
    message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    subject = re.split(r" one of |; known|: expected|; use ", message, maxsplit=1)[0]
    named = [option for word, option in words.items() if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", subject)]
    named = list(dict.fromkeys(named or ([default] if default else [])))
    return ConfigError(f"{', '.join(named)}: {message}" if named else message)


@contextmanager
def writing(option: str, path: Path) -> Iterator[None]:
    """Around the writes into ``path`` (given by ``option``): a failure is one line naming both, not a traceback.

    The path was checked before any work (:func:`writable`); this catches what happens after (a full
    disk, a folder removed meanwhile).
    """
    try:
        yield
    except OSError as exc:
        raise ConfigError(f"{option} {path}: writing failed ({exc.strerror or exc})") from exc


def fail(exc: BaseException) -> NoReturn:
    """Refuse: ``exc`` becomes one line on stderr and exit status 2 (:func:`broker.cli.main`)."""
    if isinstance(exc, CloudbrokerError):
        raise exc
    raise InputError(str(exc)) from exc


def trace(path_or_name: str, lenient: bool = False, strict: bool = False) -> SwfTrace:
    """A trace by path or registry name (``workloads.cache.load_trace``); errors exit with status 2."""
    if not path_or_name.strip():
        raise ConfigError("the trace: give an SWF file or a registry name, not an empty string")
    if Path(path_or_name).is_dir():
        raise ConfigError(f"the trace {path_or_name}: a directory, not an SWF file")
    try:
        return load_trace(path_or_name, lenient=lenient, strict=strict)
    except (OSError, LookupError, ValueError, RuntimeError) as exc:
        fail(exc)


def book(name_or_path: str) -> PriceBook:
    """A bundled price book by name, or one read from a .toml path."""
    try:
        return load_price_book(name_or_path)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc


def table_format(fmt: str) -> TableFormat:
    """``--format``: parquet or csv."""
    if fmt not in ("parquet", "csv"):
        raise typer.BadParameter("--format must be parquet or csv")
    return "parquet" if fmt == "parquet" else "csv"


@dataclass(frozen=True, slots=True)
class Workload:
    """The broker's jobs, how the filter treated the trace, a label for output, and the trace read (None: generated)."""

    jobs: JobTable
    report: FilterReport
    label: str
    swf: SwfTrace | None = None


def workload(path_or_name: str | None, n_synthetic: int, reqs: str, seed: np.random.SeedSequence, limit: int | None,
             drop_status: str, lenient: bool = False, strict: bool = False) -> Workload:
    """The job view of a trace, or of the generated Lublin-Feitelson workload when none is given."""
    if reqs not in MODELS:
        raise typer.BadParameter(f"--reqs must be one of {', '.join(MODELS)}")
    drop = frozenset(s.strip() for s in drop_status.split(",") if s.strip())
    if drop - set(STATUS_GROUPS):
        raise typer.BadParameter(f"--drop-status takes {', '.join(STATUS_GROUPS)}")
    gen_seed, req_seed = seed.spawn(2)
    swf = None
    if path_or_name is None:
        frame = default_workload(seed=int(gen_seed.generate_state(1)[0]), n_jobs=n_synthetic)
        origin, label = 0, f"synthetic Lublin-Feitelson ({n_synthetic} jobs)"
    else:
        swf = trace(path_or_name, lenient, strict)
        frame, origin, label = swf.frame, swf.header.unix_start_time or 0, path_or_name
    jobs, report = job_view(frame, reqs=reqs, seed=req_seed, drop_status=drop, origin=origin, source=label)
    return Workload(jobs.head(limit) if limit is not None else jobs, report, label, swf)


@contextmanager
def progress(label: str, total: int) -> Iterator[Recorder]:
    """A recorder that drives a progress bar on a terminal's stderr (and does nothing elsewhere)."""
    with bar(label, total, quiet=not err.is_terminal) as update:
        yield Recorder() if update is None else Recorder(progress=update, every=500)
