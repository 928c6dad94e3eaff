"""A corpus of archive quirks: generated SWF logs, each showing one thing real logs hold.

Each :class:`Quirk` is a small log (a couple of hundred ordinary jobs and the quirk) with what the
reader must make of it, worked out from how the log was built, not from the reader: the job
lines read, the lines skipped and the values flagged, by reason. ``refusal`` is set where the log
truly cannot be read: the one line every command must print (and ``--lenient`` reads it, skipping
``skipped`` lines).

The table is used by ``tests/workloads/test_quirk_corpus.py`` (the reader, line by line) and
``tests/broker/cli/test_quirk_corpus.py`` (every command that reads a trace, with its defaults).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

#: Jobs of the ordinary part of every log.
BASE_JOBS = 200
#: The site of the ordinary part: 64 processors.
SITE = 64
DAY = 86_400
YEAR = 365 * DAY

Row = list[float]


def base_rows(n: int = BASE_JOBS, *, seed: int = 31, gap: float = 120.0) -> list[Row]:
    """``n`` ordinary jobs: ids 1..n, submits every ~``gap`` s, 1-16 processors, completed (status 1)."""
    rng = np.random.default_rng(seed)
    rows, t = [], 0
    for i in range(1, n + 1):
        t += int(rng.integers(1, 2 * gap))
        run = int(rng.integers(60, 7200))
        procs = int(rng.choice([1, 1, 2, 4, 8, 16]))
        rows.append([i, t, int(rng.integers(0, 600)), run, procs, -1, -1, procs, 2 * run, -1, 1,
                     int(rng.integers(1, 9)), 1, -1, 1, 1, -1, -1])
    return rows


def header(version: str | None = "2.2", *, max_procs: int | str = SITE) -> list[str]:
    """A header block of the given SWF version (``None``: no header)."""
    if version is None:
        return []
    lines = [f"; Version: {version}", "; Computer: generated for the quirk corpus", f"; MaxJobs: {BASE_JOBS}",
             f"; MaxProcs: {max_procs}", f"; MaxNodes: {max_procs}"]
    if version == "2.0":  # 2.0 wrote the time zone as an offset and had no UnixStartTime
        return [*lines, "; TimeZone: 3600", "; StartTime: Mon Jan 01 00:00:00 2001"]
    lines += ["; UnixStartTime: 978307200", "; TimeZoneString: Europe/Stockholm"]
    if version == "2.2":  # 2.2 added the notes on how the log was converted
        lines += ["; Conversion: generated", "; Information: tests/quirks.py"]
    return lines


def text(rows: list[Row], head: list[str]) -> str:
    """The log as SWF text: whole numbers printed without a point, others as written."""
    def cell(v: float | str) -> str:
        if isinstance(v, str):
            return v
        return str(int(v)) if float(v).is_integer() else repr(float(v))
    return "\n".join([*head, *(" ".join(cell(v) for v in row) for row in rows)]) + "\n"


@dataclass(frozen=True)
class Quirk:
    """One log of the corpus and what reading it must give."""

    name: str
    build: Callable[[], str]
    jobs: int  # job lines read
    flagged: dict[str, int] = field(default_factory=dict)  # reader's flags: reason -> lines
    skipped: dict[str, int] = field(default_factory=dict)  # with --lenient (or always, when no refusal)
    refusal: tuple[str, ...] = ()  # what the one refusal line names (file line, field), if the log is refused
    strict: tuple[str, ...] = ()  # what --strict's one refusal line names; () = --strict reads it too
    partial: int = 0  # lines of partial executions (status 2-4) of a job listed whole: removed by every job view
    kept_none: bool = False  # no job is left to run: every command says so, exit 0


def _set(rows: list[Row], where: dict[int, dict[int, float | str]]) -> list[Row]:
    """``rows`` with fields (1-based) set on rows (0-based)."""
    out = [list(r) for r in rows]
    for i, fields in where.items():
        for f, v in fields.items():
            out[i][f - 1] = v  # type: ignore[call-overload]
    return out


def _status_codes_all() -> str:
    """The done-when log: -4, -2, 2, 3, 4 on some lines and -0.5 in a real-valued field."""
    rows = base_rows()
    rows = _set(rows, {40: {11: -4}, 41: {11: -2}, 79: {6: -0.5}})
    whole = rows[10]
    partials = [[whole[0], whole[1], whole[2], 60, whole[4], -1, -1, whole[7], whole[8], -1, code, *whole[11:]]
                for code in (2, 3)]
    failed = rows[20]
    partial_4 = [[failed[0], failed[1], failed[2], 30, failed[4], -1, -1, failed[7], failed[8], -1, 4, *failed[11:]]]
    return text(rows[:11] + partials + rows[11:21] + partial_4 + rows[21:], header())


def _fractions() -> str:
    # fractional seconds on two lines (rounded: documented), 2.5 processors (rounded up), a job number of 7.5
    return text(_set(base_rows(), {5: {4: 100.4}, 6: {3: 10.5}, 7: {5: 2.5}, 8: {1: 7.5}}), header())


def _ids_out_of_order() -> str:
    rows = base_rows()
    rows[50][0], rows[51][0] = rows[51][0], rows[50][0]  # job 52 before job 51
    return text(rows, header())


def _submits_backwards() -> str:
    rows = base_rows()
    rows[60][1] = rows[58][1] - 5  # line 61 submitted before line 59
    return text(rows, header())


def _duplicate_ids() -> str:
    rows = base_rows()
    rows[100][0] = rows[99][0]  # two whole jobs numbered 100
    return text(rows, header())


def _ten_years() -> str:
    rows = base_rows(300, gap=10 * YEAR / 300)  # a submit every ~12 days (1 s to 24 days apart): about ten years
    return text(rows, header())


def _all_cancelled() -> str:
    return text(_set(base_rows(), {i: {11: 5, 4: -1, 3: -1, 5: -1} for i in range(BASE_JOBS)}), header())


def _one_instant() -> str:
    return text(_set(base_rows(), {i: {2: 0} for i in range(BASE_JOBS)}), header())


def _odd_header() -> str:
    return text(base_rows(), header(max_procs=-5))


def _too_few_fields() -> str:
    rows = base_rows()
    lines = text(rows, header()).splitlines()
    lines[len(header()) + 70] = " ".join(lines[len(header()) + 70].split()[:17])
    return "\n".join(lines) + "\n"


def _not_a_number() -> str:
    return text(_set(base_rows(), {90: {4: "12:30"}}), header())


def _overflow() -> str:
    return text(_set(base_rows(), {30: {10: "1e999"}}), header())


#: Lines of the default (2.2) header: a job row ``i`` (0-based) is on file line ``HEAD + i + 1``.
HEAD = len(header())

QUIRKS: tuple[Quirk, ...] = (
    # partial lines (status 2, 3 for job 11; 4 for job 21) repeat a job's number by design: not flagged by the
    # reader; every job view removes them (their job is listed whole)
    Quirk("status codes -4 -2 2 3 4 and -0.5", _status_codes_all, BASE_JOBS + 3,
          flagged={"status: undocumented code -4, read as unknown": 1,
                   "status: undocumented code -2, read as unknown": 1,
                   "avg_cpu_time: negative, read as unknown": 1},
          partial=3, strict=(f":{HEAD + 40 + 3 + 1}:", "field 11 (status)")),
    Quirk("fractions where integers are documented", _fractions, BASE_JOBS,
          flagged={"run_time: fractional seconds, rounded to the nearest second": 1,
                   "wait_time: fractional seconds, rounded to the nearest second": 1,
                   "allocated_procs: fractional, rounded up": 1,
                   "job_id: fractional, read as unknown": 1},
          strict=(f":{HEAD + 7 + 1}:", "field 5 (allocated_procs)")),  # fractional seconds are documented
    Quirk("ids out of order", _ids_out_of_order, BASE_JOBS,
          flagged={"job_id: lower than the line before's, kept": 1}, strict=(f":{HEAD + 51 + 1}:", "field 1 (job_id)")),
    Quirk("submits going backwards", _submits_backwards, BASE_JOBS,
          flagged={"submit_time: earlier than the line before's, kept": 1},
          strict=(f":{HEAD + 60 + 1}:", "field 2 (submit_time)")),
    Quirk("duplicate job ids", _duplicate_ids, BASE_JOBS,
          flagged={"job_id: repeats an earlier whole-job line's, kept": 1},
          strict=(f":{HEAD + 100 + 1}:", "field 1 (job_id)")),
    Quirk("header SWF 2.0", lambda: text(base_rows(), header("2.0")), BASE_JOBS),
    Quirk("header SWF 2.1", lambda: text(base_rows(), header("2.1")), BASE_JOBS),
    Quirk("header SWF 2.2", lambda: text(base_rows(), header("2.2")), BASE_JOBS),
    Quirk("no header", lambda: text(base_rows(), header(None)), BASE_JOBS),
    Quirk("header values out of range", _odd_header, BASE_JOBS,
          flagged={f"header field {key}: -5 is out of range (0 to {2**53}), ignored": 1
                   for key in ("MaxProcs", "MaxNodes")},
          strict=(":4:", "MaxProcs")),  # line 4 of the header, before MaxNodes on line 5
    Quirk("ten years, three hundred jobs", _ten_years, 300),
    Quirk("every job cancelled", _all_cancelled, BASE_JOBS, kept_none=True),
    Quirk("every job at one instant", _one_instant, BASE_JOBS),
    Quirk("a value that overflows", _overflow, BASE_JOBS,
          flagged={"requested_memory: too large to hold, read as unknown": 1},
          strict=(f":{HEAD + 30 + 1}:", "field 10 (requested_memory)")),
    Quirk("a line of 17 fields", _too_few_fields, BASE_JOBS - 1, skipped={"wrong number of fields": 1},
          refusal=(f":{HEAD + 70 + 1}:", "expected 18 fields, found 17", "--lenient")),
    Quirk("a field that is not a number", _not_a_number, BASE_JOBS - 1, skipped={"not a number": 1},
          refusal=(f":{HEAD + 90 + 1}:", "field 4 (run_time)", "'12:30' is not a number", "--lenient")),
)
