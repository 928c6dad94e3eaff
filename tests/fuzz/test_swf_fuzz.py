"""Fuzz the SWF reader: valid files read back exactly; a file with one broken line, field or header value is refused
with a message naming file, line and field (or, lenient, read with that line counted as skipped)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from hypothesis import strategies as st

from tests.fuzz.support import (
    HEADER_COUNTS,
    INT_COLUMN,
    MAX_EXACT_INT,
    MAX_UNIX_TIME,
    SwfDoc,
    fuzz_pair,
    run_cli,
    scratch,
    settled,
    swf_docs,
    time_limit,
    token_problem,
)
from workloads.cache import load_trace
from workloads.errors import CloudbrokerError
from workloads.schema import COLUMN_NAMES
from workloads.swf import SwfFormatError, SwfTrace, read_swf, trace_info

FIELDS = {"MaxJobs": "max_jobs", "MaxRecords": "max_records", "MaxNodes": "max_nodes", "MaxProcs": "max_procs",
          "UnixStartTime": "unix_start_time"}


def read(path: Path, *, lenient: bool = False, via_cache: bool = False) -> SwfTrace:
    with time_limit(10, f"reading {path.name}"):
        return load_trace(path, lenient=lenient) if via_cache else read_swf(path, lenient=lenient)


def assert_rows(trace: SwfTrace, values: list[list[float]], doc: SwfDoc) -> None:
    """The frame holds exactly ``values`` as settled by their fields' rules (-1 read as missing), integers exactly and
    reals to 1e-12."""
    frame = trace.frame
    assert len(frame) == len(values), (len(frame), len(values), doc.lines)
    for column, (name, integral) in enumerate(zip(COLUMN_NAMES, INT_COLUMN, strict=True)):
        for row, expected in enumerate(settled(v[column], column) for v in values):
            got = frame[name].iloc[row]
            if expected == -1:
                assert pd.isna(got), (name, row, got, doc.lines)
            elif integral:
                assert int(got) == int(expected), (name, row, got, expected, doc.lines)
            else:
                assert math.isclose(float(got), expected, rel_tol=1e-12, abs_tol=1e-300), (name, row, got, expected)


# --- valid files -------------------------------------------------------------------------------------------------

def _valid_swf_reads_exactly(case: tuple[SwfDoc, bool, bool]) -> None:
    doc, lenient, via_cache = case
    with scratch() as tmp:
        trace = read(doc.write(tmp), lenient=lenient, via_cache=via_cache)
        assert trace.skipped == 0 and trace.skipped_examples == ()
        assert_rows(trace, doc.values, doc)
        for key, attribute in FIELDS.items():
            assert getattr(trace.header, attribute) == doc.header.get(key), (key, doc.lines[:8])
        json.dumps(trace_info(trace))


test_valid_swf_reads_exactly, test_valid_swf_reads_exactly_slow = fuzz_pair(
    st.tuples(swf_docs(), st.booleans(), st.booleans()), _valid_swf_reads_exactly, fast=60, slow=2500)


# --- one broken field or line ------------------------------------------------------------------------------------

BAD_TOKENS = ["x", "1a", "--1", "0x1F", "1,5", "nan", "NaN", "inf", "-inf", "Infinity", "1_0", "#1", "1..2", "e5",
              ".", "+", "-", "\u0661\u0662", "1e", "1/2", '"1"', "'1'", "1e999", "-1e999", "1" + "0" * 400, "-2",
              "-1.5", "-1e9", "-1.0000001", "1.5", "0.1", "1e-3", "1" + "0" * 30, str(MAX_EXACT_INT + 2), "9" * 20,
              "\uff11", "1\u00a0", "TRUE", "None", "-0", "+.5", "5.", "1e5", "2e15", "0x0", "\u00b2", "1" * 16]
BAD_SEPARATORS = ["\x0b", "\x0c", "\r", "\x00", "\u00a0", ",", ";", "|", "\u2003"]


@dataclass(frozen=True)
class Broken:
    """One job line of ``doc`` spoiled: a field replaced, fields dropped or added, or a separator replaced."""

    doc: SwfDoc
    job: int  # which job line
    kind: str  # "token", "fewer", "more", "separator"
    field: int  # 1-based field (token, separator: the field after it)
    text: str  # the new token / separator; for "fewer" / "more" the number of fields

    @property
    def line(self) -> int:
        return self.doc.job_lines[self.job] + 1


@st.composite
def broken_docs(draw: st.DrawFn) -> Broken:
    doc = draw(swf_docs(min_jobs=1, max_jobs=6))
    job = draw(st.integers(0, len(doc.job_lines) - 1))
    index = doc.job_lines[job]
    tokens = doc.lines[index].split(";")[0].split()
    kind = draw(st.sampled_from(["token", "token", "token", "fewer", "more", "separator"]))
    field = draw(st.integers(1, 18))
    if kind == "token":
        text = draw(st.one_of(st.sampled_from(BAD_TOKENS),
                              st.text(st.characters(blacklist_categories=["Zs", "Cc", "Cs"], blacklist_characters=";"),
                                      min_size=1, max_size=6)))
        tokens[field - 1] = text
        line = " ".join(tokens)
    elif kind == "fewer":
        count = draw(st.integers(1, 17))
        line = " ".join(tokens[:count])
        text = str(count)
    elif kind == "more":
        count = draw(st.integers(19, 30))
        line = " ".join(tokens + ["1"] * (count - 18))
        text = str(count)
    else:
        field = draw(st.integers(2, 18))
        text = draw(st.sampled_from(BAD_SEPARATORS))
        line = " ".join(tokens[:field - 1]) + text + " ".join(tokens[field - 1:])
    doc.lines[index] = line
    if kind == "token" and token_problem(text) is None:
        doc.values[job][field - 1] = float(text)  # it parses: the file must read, the value settled by its rule
    return Broken(doc, job, kind, field, text)


def _broken_swf_line_is_named(case: tuple[Broken, bool]) -> None:
    broken, via_cache = case
    doc = broken.doc
    problem = token_problem(broken.text) if broken.kind == "token" else "broken"
    with scratch() as tmp:
        path = doc.write(tmp)
        if problem is None:
            assert_rows(read(path, via_cache=via_cache), doc.values, doc)
            return
        try:
            read(path, via_cache=via_cache)
        except SwfFormatError as exc:
            message, error = str(exc), exc
        else:
            raise AssertionError(f"read without error: {doc.lines[broken.doc.job_lines[broken.job]]!r}")
        assert message.startswith(f"{path.name}:{broken.line}: "), (message, broken)
        assert error.line == broken.line and error.path == path
        name = COLUMN_NAMES[broken.field - 1]
        assert message.endswith(" (--lenient skips such lines and counts them)"), message
        if broken.kind == "token":
            assert f"field {broken.field} ({name}): " in message and problem in message, (message, problem)
        elif broken.kind in ("fewer", "more"):
            assert f"expected 18 fields, found {broken.text} (--lenient skips" in message, message
        else:
            assert "field" in message, message
        lenient = read(path, lenient=True, via_cache=via_cache)
        assert lenient.skipped == 1 and lenient.skipped_examples[0][0] == broken.line, lenient.skipped_examples
        assert_rows(lenient, doc.values[:broken.job] + doc.values[broken.job + 1:], doc)


test_broken_swf_line_is_named, test_broken_swf_line_is_named_slow = fuzz_pair(
    st.tuples(broken_docs(), st.booleans()), _broken_swf_line_is_named, fast=80, slow=3000)


# --- header values -----------------------------------------------------------------------------------------------

HEADER_VALUES = ["abc", "", "-1", "-5", "0", "99999999999999999999999", "1e5", "12abc", "12 abc", "0x10", "nan",
                 "inf", str(MAX_UNIX_TIME), str(MAX_UNIX_TIME + 1), str(MAX_EXACT_INT), str(MAX_EXACT_INT + 1),
                 "-99999999999", "9223372036854775808", "+7", " 42", "1.5", "\u0661"]


def _leading_int(value: str) -> int | None:
    """The leading integer the header parser takes from a typed value (``"70  (dual)"`` -> 70)."""
    match = re.match(r"\s*([+-]?\d+)\b", value, re.ASCII)
    return int(match[1]) if match else None


def _in_range(key: str, value: int) -> bool:
    return 0 <= value <= (MAX_UNIX_TIME if key == "UnixStartTime" else MAX_EXACT_INT)


@st.composite
def broken_headers(draw: st.DrawFn) -> tuple[SwfDoc, str, str, int]:
    doc = draw(swf_docs(min_jobs=1, max_jobs=4))
    key = draw(st.sampled_from([*HEADER_COUNTS, "UnixStartTime"]))
    value = draw(st.one_of(st.sampled_from(HEADER_VALUES), st.integers(-(10**25), 10**25).map(str)))
    kept = [line for line in doc.lines[:doc.job_lines[0]] if f" {key}:" not in line]
    shift = doc.job_lines[0] - len(kept)
    at = draw(st.integers(0, 1))
    kept.insert(at, f"; {key}: {value}")
    doc.lines = kept + doc.lines[doc.job_lines[0]:]
    doc.job_lines = [i - shift + 1 for i in doc.job_lines]
    return doc, key, value, at + 1


def _header_value_read_or_named(case: tuple[tuple[SwfDoc, str, str, int], bool]) -> None:
    (doc, key, value, line), lenient = case
    number = _leading_int(value)
    with scratch() as tmp:
        path = doc.write(tmp)
        trace = read(path, lenient=lenient)
        if number is not None and not _in_range(key, number):
            # out of range: ignored and counted (the header line named); --strict refuses it in one line
            assert getattr(trace.header, FIELDS[key]) is None
            assert any(key in why for why in trace.flagged) and (line, next(
                why for why in trace.flagged if key in why)) in trace.flagged_examples, trace.flagged_examples
            try:
                read_swf(path, strict=True)
            except SwfFormatError as exc:
                assert str(exc).startswith(f"{path.name}:{line}: ") and key in str(exc), str(exc)
            else:
                raise AssertionError(f"header {key}: {value!r} read by --strict without error")
        else:
            assert getattr(trace.header, FIELDS[key]) == number, (key, value)
        assert trace.skipped == 0 and len(trace.frame) == len(doc.values)
        json.dumps(trace_info(trace))


test_header_value_read_or_named, test_header_value_read_or_named_slow = fuzz_pair(
    st.tuples(broken_headers(), st.booleans()), _header_value_read_or_named, fast=40, slow=1200)


# --- the CLI on broken files ---------------------------------------------------------------------------------------

def _trace_info_cli_on_broken_files(case: tuple[Broken, bool, bool]) -> None:
    broken, lenient, as_json = case
    with scratch() as tmp:
        path = broken.doc.write(tmp, "broken.swf")
        args = ["trace", "info", str(path), *(["--lenient"] if lenient else []), *(["--json"] if as_json else [])]
        run = run_cli(args, tmp=tmp)
        if run.code == 2:
            assert not lenient and f"broken.swf:{broken.line}:" in run.err, run.err


test_trace_info_cli_on_broken_files, test_trace_info_cli_on_broken_files_slow = fuzz_pair(
    st.tuples(broken_docs(), st.booleans(), st.booleans()), _trace_info_cli_on_broken_files, fast=20, slow=500)


def _trace_commands_on_odd_headers(case: tuple[tuple[SwfDoc, str, str, int], str]) -> None:
    (doc, key, value, line), command = case
    with scratch() as tmp:
        path = doc.write(tmp, "odd.swf")
        if command == "trace":
            args = ["trace", "info", str(path), "--json"]
        elif command == "cluster":
            args = ["cluster", "--trace", str(path), "--json"]
        else:
            args = ["leasing", "--trace", str(path), "--policy", "constant:1", "--json"]
        run = run_cli(args, tmp=tmp)
        assert "NaT" not in run.out, run.out
        number = _leading_int(value)
        if number is not None and not _in_range(key, number):  # ignored and counted, never the refusal
            assert f"odd.swf:{line}:" not in run.err or run.code == 0, run.err
            strict = run_cli([*args, "--strict"], tmp=tmp)
            assert strict.code == 2 and f"odd.swf:{line}:" in strict.err and key in strict.err, strict.err


test_trace_commands_on_odd_headers, test_trace_commands_on_odd_headers_slow = fuzz_pair(
    st.tuples(broken_headers(), st.sampled_from(["trace", "cluster", "leasing"])), _trace_commands_on_odd_headers,
    fast=20, slow=400)


def test_known_reproducer_huge_unix_start_time() -> None:
    """Issue 12 item 7, crash 1: ``trace info`` raised OverflowError, ``cluster`` reported a NaT month.

    Since issue 31 the value is ignored and counted (the log is read); ``--strict`` refuses it in one line."""
    with scratch() as tmp:
        path = tmp / "a.swf"
        path.write_text("; UnixStartTime: 99999999999999999999999\n" + " ".join(["1"] * 18) + "\n")
        for args in (["trace", "info", str(path), "--json"], ["cluster", "--trace", str(path), "--json"]):
            run = run_cli(args, tmp=tmp)
            assert run.code == 0 and "NaT" not in run.out, run.err
            strict = run_cli([*args, "--strict"], tmp=tmp)
            assert strict.code == 2 and "a.swf:1:" in strict.err and "UnixStartTime" in strict.err, strict.err
        info = json.loads(run_cli(["trace", "info", str(path), "--json"], tmp=tmp).out)
        assert info["unix_start_time"] is None and any("UnixStartTime" in why for why in info["flagged"])


def test_far_submit_times_do_not_crash_trace_info() -> None:
    """A submit time near 2**53 s after a valid origin is past year 9999: no UTC time, no crash."""
    with scratch() as tmp:
        path = tmp / "far.swf"
        job = ["1", str(MAX_EXACT_INT)] + ["1"] * 16
        path.write_text("; UnixStartTime: 1000000000\n" + " ".join(job) + "\n")
        info = json.loads(run_cli(["trace", "info", str(path), "--json"], tmp=tmp).out)
        assert info["first_submit"] == MAX_EXACT_INT and info["first_submit_utc"] is None


def test_a_broken_line_is_found_in_a_large_file() -> None:
    """The slow path names the right line past the first pandas chunk of a gzip file."""
    import gzip

    from workloads.swf import CHUNK_ROWS

    good = " ".join(["1"] * 18)
    lines = ["; MaxProcs: 4"] + [good] * (CHUNK_ROWS + 10)
    lines[CHUNK_ROWS + 5] = good.replace("1", "x", 1)
    with scratch() as tmp:
        path = tmp / "big.swf.gz"
        path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
        try:
            read(path)
        except CloudbrokerError as exc:
            assert str(exc).startswith(f"big.swf.gz:{CHUNK_ROWS + 6}: field 1 (job_id): 'x'"), str(exc)
        else:
            raise AssertionError("read without error")
