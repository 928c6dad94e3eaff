"""Tests of the SWF reader on the shared real traces and on malformed files written to tmp_path."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import workloads.swf as swf
from tests.conftest import SOURCES_JOBS, trace_path
from workloads.schema import COLUMN_NAMES, DTYPES
from workloads.swf import SwfFormatError, SwfTrace, _parse_block, parse_header, read_swf, trace_info

SHARED_JOBS = SOURCES_JOBS
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
LCG = "LCG-2005-1.swf.gz"


@pytest.fixture(scope="session")
def shared_trace(traces_dir: Path) -> Callable[[str], SwfTrace]:
    """Read a shared trace once per session (several tests look at the same big traces)."""
    read: dict[str, SwfTrace] = {}

    def get(filename: str) -> SwfTrace:
        if filename not in read:
            read[filename] = read_swf(trace_path(filename))
        return read[filename]

    return get


def job_line(job_id: int = 1, **fields: str) -> str:
    """An 18-field job line; ``fields`` override columns by name with raw tokens."""
    values = dict.fromkeys(COLUMN_NAMES, "-1")
    values.update(job_id=str(job_id), submit_time=str(10 * job_id), run_time="100")
    values.update(allocated_procs="4", status="1", avg_cpu_time="95.5")
    values.update(fields)
    return " ".join(values[name] for name in COLUMN_NAMES)


def write_swf(folder: Path, name: str, lines: list[str], *, compress: bool) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path = folder / name
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


HEADER = ["; Version: 2.2", "; MaxJobs: 3", "; UnixStartTime: 1000000000"]


# --- the shared real traces ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("filename", sorted(SHARED_JOBS))
def test_shared_traces_have_the_documented_job_counts(shared_trace, filename):
    trace = shared_trace(filename)
    assert len(trace.frame) == SHARED_JOBS[filename]
    assert list(trace.frame.columns) == list(COLUMN_NAMES)
    assert {name: str(dtype) for name, dtype in trace.frame.dtypes.items()} == DTYPES
    assert trace.skipped == 0
    assert trace.skipped_examples == ()
    assert trace.header.max_records is not None


def test_lcg_header_metadata(shared_trace):
    header = shared_trace(LCG).header
    assert header.unix_start_time == 1132444805
    assert header.time_zone_string == "Europe/London"
    assert header.max_procs == 24515
    assert header.max_jobs == header.max_records == 188041
    assert header.max_nodes is None
    partitions = header.fields["Partition"].split("\n")
    assert len(partitions) == int(header.fields["MaxPartitions"]) == 170
    assert partitions[0] == "1 grid.ici.ro"


def test_kth_header_metadata(shared_trace):
    header = shared_trace(KTH).header
    assert (header.max_jobs, header.max_records) == (28490, 28476)
    assert (header.max_nodes, header.max_procs) == (100, 100)
    assert header.unix_start_time == 843480031
    assert header.time_zone_string == "Europe/Stockholm"
    assert header.fields["Information"] == (
        "http://www.pdc.kth.se/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/"
    )
    assert header.fields["Note"].startswith("uses the EASY scheduler\nTHIS IS A CLEANED")
    assert header.fields["Note"].endswith("job<=14 (14 jobs removed)")


def test_lpc_header_with_indented_keys_and_trailing_text(shared_trace):
    header = shared_trace("LPC-EGEE-2004-1.2-cln.swf.gz").header
    assert header.max_nodes == 70  # "70  (dual)"
    assert header.max_procs == 140
    assert header.time_zone_string == "Europe/Paris"
    assert header.fields["Queue"].split("\n")[0] == "1   test"


def test_minus_one_becomes_na(shared_trace):
    frame = shared_trace(LCG).frame
    assert frame["wait_time"].isna().all()  # LCG has no wait times: every value was -1
    assert frame["run_time"].notna().all()
    assert not (frame.fillna(0) == -1).any().any()
    lublin = shared_trace("lublin_256.swf.gz").frame
    assert lublin["requested_time"].isna().all()  # the Lublin model writes no requested times


def test_first_kth_job_values(shared_trace):
    first = shared_trace(KTH).frame.iloc[0]
    assert first["job_id"] == 15  # jobs 1..14 were removed by the cleaning filter
    assert first["submit_time"] == 599_850  # the cleaned log starts a week into the original


# --- trace_info -------------------------------------------------------------------------------


def test_trace_info_kth(shared_trace):
    info = trace_info(shared_trace(KTH))
    json.dumps(info)  # plain types only
    assert info["jobs"] == 28_476
    assert info["skipped"] == 0
    assert info["first_submit"] == 599_850
    assert info["span_s"] == info["last_submit"] - info["first_submit"]
    assert info["span_s"] / 86_400 == pytest.approx(332.9, abs=0.1)
    assert info["first_submit_utc"].startswith("1996-09-30")
    assert info["last_submit_utc"].startswith("1997-08-29")
    assert (info["max_procs"], info["max_nodes"]) == (100, 100)
    assert info["header"]["TimeZoneString"] == "Europe/Stockholm"
    assert sorted(info["fields_present"] + info["fields_missing"]) == sorted(COLUMN_NAMES)
    assert info["path"].endswith(KTH)


def test_trace_info_lcg(shared_trace):
    info = trace_info(shared_trace(LCG))
    json.dumps(info)
    assert info["jobs"] == 188_041
    assert info["first_submit_utc"] == "2005-11-20T00:00:05+00:00"
    assert info["last_submit_utc"].startswith("2005-11-30")
    assert info["span_s"] / 86_400 == pytest.approx(11.0, abs=0.1)
    assert info["max_procs"] == 24515
    assert info["max_nodes"] is None
    assert "wait_time" in info["fields_missing"]
    assert "run_time" in info["fields_present"]


def test_trace_info_without_header_times(shared_trace):
    trace = shared_trace("lublin_256.swf.gz")
    info = trace_info(trace)
    assert info["first_submit_utc"] is None
    assert info["max_procs"] == int(trace.frame["allocated_procs"].max())
    assert "requested_time" in info["fields_missing"]


def test_trace_info_empty_trace(tmp_path):
    info = trace_info(read_swf(write_swf(tmp_path, "e.swf", HEADER, compress=False)))
    json.dumps(info)
    assert info["jobs"] == 0
    assert info["first_submit"] is None
    assert info["span_s"] is None
    assert info["fields_present"] == []


# --- small files: values, compression detection, comments --------------------------------------


@pytest.mark.parametrize("compress", [False, True])
def test_values_dtypes_and_missing(tmp_path, compress):
    lines = [*HEADER, job_line(1), job_line(2, wait_time="7", used_memory="1.5"), job_line(3)]
    trace = read_swf(write_swf(tmp_path, "t.swf", lines, compress=compress))
    frame = trace.frame
    assert {name: str(dtype) for name, dtype in frame.dtypes.items()} == DTYPES
    assert frame["job_id"].tolist() == [1, 2, 3]
    assert frame["wait_time"].isna().tolist() == [True, False, True]
    assert frame.loc[1, "used_memory"] == 1.5
    assert frame.loc[0, "avg_cpu_time"] == 95.5
    assert trace.header.max_jobs == 3
    assert trace.header.unix_start_time == 1_000_000_000


def test_gzip_detected_by_content_not_name(tmp_path):
    lines = [*HEADER, job_line(1)]
    gz_named_plain = write_swf(tmp_path, "a.swf", lines, compress=True)
    plain_named_gz = write_swf(tmp_path, "b.swf.gz", lines, compress=False)
    assert len(read_swf(gz_named_plain).frame) == 1
    assert len(read_swf(plain_named_gz).frame) == 1


@pytest.mark.parametrize("compress", [False, True])
def test_comments_in_the_body_are_allowed(tmp_path, compress):
    lines = [
        *HEADER,
        job_line(1),
        "; a comment between jobs",
        "   ; an indented comment",
        "",
        "   ",
        f"{job_line(2)} ; trailing comment",
        "\t" + job_line(3),
    ]
    trace = read_swf(write_swf(tmp_path, "c.swf", lines, compress=compress))
    assert trace.frame["job_id"].tolist() == [1, 2, 3]
    assert trace.skipped == 0


def test_header_only_and_empty_files(tmp_path):
    for name, lines in (("h.swf", HEADER), ("e.swf", [])):
        path = tmp_path / name
        path.write_text("\n".join(lines))
        frame = read_swf(path).frame
        assert frame.empty
        assert {n: str(dtype) for n, dtype in frame.dtypes.items()} == DTYPES


def test_crlf_and_tabs(tmp_path):
    path = tmp_path / "w.swf"
    path.write_bytes(("; MaxProcs: 8\r\n" + job_line(1).replace(" ", "\t") + "\r\n").encode())
    trace = read_swf(path)
    assert trace.frame["job_id"].tolist() == [1]
    assert trace.header.max_procs == 8


def test_integral_floats_and_exponents_in_integer_columns(tmp_path):
    lines = [job_line(1, run_time="100.0", requested_time="1e3")]
    frame = read_swf(write_swf(tmp_path, "f.swf", lines, compress=False)).frame
    assert frame.loc[0, "run_time"] == 100
    assert frame.loc[0, "requested_time"] == 1000


def test_parse_header_joins_repeated_keys_and_continuations():
    header = parse_header(
        [
            " Version: 2.2",
            " Partition: 1 a",
            " Partition: 2 b   ",
            " Note: first",
            "       continued: with a colon",
            "",
            "   orphan text is ignored",
            " MaxNodes: 70  (dual)",
            " Information: http://example.org/",
            "              http://example.org/other",
            " TimeZone: 3600\t # DEPRECATED; use TimeZoneString",
            " Copyright: The agreement:",
            "   first clause",
            "   second clause",
            " Partition: 3 c",
            "    #   sub   runtime   (a column legend, less indented than the value)",
        ]
    )
    assert header.fields["Partition"] == "1 a\n2 b\n3 c"
    assert header.fields["Copyright"] == "The agreement:\nfirst clause\nsecond clause"
    assert header.fields["Note"] == "first\ncontinued: with a colon"
    assert header.fields["Information"] == "http://example.org/\nhttp://example.org/other"
    assert header.max_nodes == 70
    assert header.max_procs is None
    assert header.time_zone_string is None
    assert "orphan" not in "".join(header.fields.values())
    assert "legend" not in "".join(header.fields.values())


# --- malformed input ----------------------------------------------------------------------------

BAD_LINES = [
    pytest.param(
        " ".join(job_line(2).split()[:17]), "expected 18 fields, found 17", id="short-line"
    ),
    pytest.param(job_line(2) + " 7", "expected 18 fields, found 19", id="long-line"),
    pytest.param(
        job_line(2, run_time="abc"), "field 4 (run_time): 'abc' is not a number", id="not-a-number"
    ),
    pytest.param(
        job_line(2, status="nan"), "field 11 (status): 'nan' is not a number", id="nan-token"
    ),
    pytest.param(
        job_line(2, think_time="1,5"), "field 18 (think_time): '1,5' is not a number", id="comma"
    ),
]


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize(("bad", "reason"), BAD_LINES)
def test_malformed_line_names_file_line_and_field(tmp_path, compress, bad, reason):
    # line numbers count the 3 header lines and the comment: the bad line is line 6
    lines = [*HEADER, job_line(1), "; comment", bad, job_line(3)]
    path = write_swf(tmp_path, "bad.swf", lines, compress=compress)
    with pytest.raises(SwfFormatError) as caught:
        read_swf(path)
    assert str(caught.value) == f"bad.swf:6: {reason} (--lenient skips such lines and counts them)"
    assert caught.value.line == 6
    assert caught.value.path == path
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("compress", [False, True])
def test_lenient_mode_skips_and_counts_bad_lines(tmp_path, compress, caplog):
    lines = [
        *HEADER,
        job_line(1),
        job_line(2, run_time="abc"),
        job_line(3),
        " ".join(job_line(4).split()[:17]),
        job_line(5, status="x"),
        job_line(6),
    ]
    path = write_swf(tmp_path, "bad.swf", lines, compress=compress)
    with caplog.at_level(logging.WARNING, logger="workloads.swf"):
        trace = read_swf(path, lenient=True)
    assert trace.frame["job_id"].tolist() == [1, 3, 6]
    assert trace.skipped == 3
    assert [line for line, _ in trace.skipped_examples] == [5, 7, 8]
    assert trace.skipped_examples[0][1] == "field 4 (run_time): 'abc' is not a number"
    assert trace.skipped_by_reason == {"not a number": 2, "wrong number of fields": 1}
    assert {n: str(dtype) for n, dtype in trace.frame.dtypes.items()} == DTYPES
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "skipped 3 malformed line(s)" in warnings[0].getMessage()


@pytest.mark.parametrize("compress", [False, True])
def test_fractional_seconds_are_rounded_half_up_counted_and_kept_when_strict(tmp_path, compress):
    # SWF permits fractional times: 12.5 s rounds to 13, 0.4 s to 0 (the archive's own rounding), counted per field
    lines = [*HEADER, job_line(1, run_time="12.5"), job_line(2, run_time="0.4", wait_time="3.49"), job_line(3)]
    path = write_swf(tmp_path, "frac.swf", lines, compress=compress)
    for strict in (False, True):
        trace = read_swf(path, strict=strict)
        assert trace.frame["run_time"].tolist() == [13, 0, 100]
        assert trace.frame["wait_time"].tolist()[1] == 3
        assert trace.flagged == {"run_time: fractional seconds, rounded to the nearest second": 2,
                                 "wait_time: fractional seconds, rounded to the nearest second": 1}
        assert trace.flagged_examples == ((4, "run_time: fractional seconds, rounded to the nearest second"),
                                          (5, "wait_time: fractional seconds, rounded to the nearest second"))


def test_lenient_examples_are_capped(tmp_path):
    lines = [job_line(1)] + [job_line(i, run_time="x") for i in range(2, 30)]
    trace = read_swf(write_swf(tmp_path, "many.swf", lines, compress=False), lenient=True)
    assert trace.skipped == 28
    assert len(trace.skipped_examples) == 5
    assert len(trace.frame) == 1


def test_bad_line_located_in_a_real_trace(tmp_path):
    text = gzip.decompress(trace_path(KTH).read_bytes()).decode("ascii").split("\n")
    fields = text[1233].split()  # file line 1234
    assert not text[1233].startswith(";")
    fields[3] = "abc"
    text[1233] = " ".join(fields)
    path = tmp_path / "KTH.swf"
    path.write_bytes(gzip.compress("\n".join(text).encode(), compresslevel=1, mtime=0))
    with pytest.raises(SwfFormatError, match=r"^KTH\.swf:1234: field 4 \(run_time\): 'abc' is"):
        read_swf(path)
    lenient = read_swf(path, lenient=True)
    assert lenient.skipped == 1
    assert len(lenient.frame) == SHARED_JOBS[KTH] - 1


def test_truncated_gzip_is_reported(tmp_path):
    data = gzip.compress(("\n".join([*HEADER] + [job_line(i) for i in range(1, 2000)])).encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SwfFormatError, match=r"cut\.swf\.gz: gzip stream is truncated"):
        read_swf(path)


def test_frame_is_a_dataframe_with_schema_columns(tmp_path):
    frame = read_swf(write_swf(tmp_path, "t.swf", [job_line(1)], compress=False)).frame
    assert isinstance(frame, pd.DataFrame)
    assert tuple(frame.columns) == COLUMN_NAMES


# The SWF reader on hand-written files: edges, refusals and the exact messages (issue 19).
#
# Every file here is a few lines typed by hand, and every expected value is read off those lines (SWF v2.2: 18
# whitespace-separated fields, ``-1`` unknown, ``;`` comments, ``; Key: value`` header lines). Messages follow the
# reader's convention ``<file name>:<line>: field <n> (<column>): '<token>' <problem>``, lines counted from 1 with
# the header lines included. Since issue 31 only a line that cannot be parsed is refused (``--lenient`` named);
# a value that parses but is odd is read by its rule and counted (``--strict`` refuses it).


#: Job 1: submitted at 0, waited 5 s, ran 100 s on 4 processors, 95.5 s CPU each; asked for 4 procs and 120 s;
#: completed (status 1); user 3, group 1, queue 1; no executable, partition, preceding job or think time.
JOB1 = "1 0 5 100 4 95.5 -1 4 120 -1 1 3 1 -1 1 -1 -1 -1"
#: Job 2: submitted at 10, no wait, ran 50 s on 8 processors, CPU time unknown; asked for 8 procs and 60 s;
#: failed (status 0); user 3, group 1, queue 1; follows job 1 (field 17).
JOB2 = "2 10 0 50 8 -1 -1 8 60 -1 0 3 1 -1 1 -1 1 -1"
#: What a refusal of a line that cannot be parsed ends with.
LENIENT = " (--lenient skips such lines and counts them)"
MAX_EXACT_INT = 9_007_199_254_740_992  # 2**53
MAX_UNIX_TIME = 253_402_300_799  # 9999-12-31T23:59:59Z


def with_field(line: str, number: int, token: str) -> str:
    """``line`` with field ``number`` (1-based) replaced by ``token``."""
    tokens = line.split()
    tokens[number - 1] = token
    return " ".join(tokens)


def write(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def refusal(path: Path, *, lenient: bool = False) -> SwfFormatError:
    with pytest.raises(SwfFormatError) as caught:
        read_swf(path, lenient=lenient)
    return caught.value


# --- the fast path ---------------------------------------------------------------------------------------------


def test_a_clean_file_is_read_without_the_line_by_line_checks(tmp_path, monkeypatch):
    # the module's contract: only a file the fast (pandas) path cannot take is read again line by line
    def no_checked_path(*args, **kwargs):
        raise AssertionError("a clean file went to the line-by-line path")

    monkeypatch.setattr(swf, "_checked_values", no_checked_path)
    text = f"; MaxProcs: 128\n; UnixStartTime: 1000000000\n{JOB1}\n{JOB2} \t\r\n"  # trailing blanks and CRLF
    trace = read_swf(write(tmp_path, "clean.swf", text))
    frame = trace.frame
    assert frame["job_id"].tolist() == [1, 2]
    assert frame["submit_time"].tolist() == [0, 10]
    assert frame["run_time"].tolist() == [100, 50]
    assert frame["avg_cpu_time"].tolist() == [95.5, pd.NA]
    assert frame["status"].tolist() == [1, 0]
    assert frame["preceding_job"].tolist() == [pd.NA, 1]
    assert (trace.header.max_procs, trace.header.unix_start_time) == (128, 1_000_000_000)
    assert (trace.skipped, trace.skipped_examples) == (0, ())


# --- values on the edges ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("checked_path", [False, True], ids=["fast-path", "checked-path"])
def test_minus_one_is_unknown_and_zero_is_a_value(tmp_path, checked_path):
    line = with_field(with_field(with_field(with_field(JOB1, 3, "0"), 4, "-1"), 6, "-1.0"), 18, "-0")
    line = with_field(line, 9, "-1.0")  # an integer column holding the integral decimal -1.0
    lines = [line, with_field(JOB2, 4, "x")] if checked_path else [line]  # a bad line forces the checked path
    trace = read_swf(write(tmp_path, "edge.swf", "\n".join(lines) + "\n"), lenient=True)
    row = trace.frame.iloc[0]
    assert len(trace.frame) == 1
    assert row["wait_time"] == 0
    assert pd.isna(row["run_time"])
    assert pd.isna(row["avg_cpu_time"])
    assert pd.isna(row["requested_time"])
    assert row["think_time"] == 0
    assert trace.skipped == (1 if checked_path else 0)


@pytest.mark.parametrize(
    ("number", "token", "reason", "problem"),
    [
        pytest.param(4, "-2", "run_time: negative, read as unknown",
                     "-2 is negative (-1 is unknown; no other value is below 0)", id="integer-below-minus-one"),
        pytest.param(6, "-1.5", "avg_cpu_time: negative, read as unknown",
                     "-1.5 is negative (-1 is unknown; no other value is below 0)", id="real-below-minus-one"),
        pytest.param(6, "-0.5", "avg_cpu_time: negative, read as unknown",
                     "-0.5 is negative (-1 is unknown; no other value is below 0)", id="negative-fraction"),
        pytest.param(6, "1e999", "avg_cpu_time: too large to hold, read as unknown", "inf is too large to hold",
                     id="infinite"),
    ],
)
def test_a_negative_or_overflowing_value_is_read_as_unknown_counted_and_refused_when_strict(
        tmp_path, number, token, reason, problem):
    text = f"; MaxProcs: 128\n; MaxJobs: 2\n{JOB1}\n{with_field(JOB2, number, token)}\n"
    path = write(tmp_path, "neg.swf", text)
    trace = read_swf(path)
    column = trace.frame.iloc[:, number - 1]
    assert pd.isna(column.iat[1]) and not pd.isna(column.iat[0])
    assert (trace.flagged, trace.flagged_examples) == ({reason: 1}, ((4, reason),))
    with pytest.raises(SwfFormatError) as caught:
        read_swf(path, strict=True)
    name = reason.split(":")[0]
    rule = reason.split(", ")[-1]
    assert str(caught.value) == (f"neg.swf:4: field {number} ({name}): {problem} (--strict refuses it; without "
                                 f"--strict such a value is {rule} and counted)")
    assert (caught.value.path, caught.value.line) == (path, 4)


def test_largest_exact_integer_is_kept_and_the_next_one_read_as_unknown(tmp_path):
    lines = [with_field(JOB1, 1, str(MAX_EXACT_INT)), with_field(JOB1, 1, str(MAX_EXACT_INT + 2))]
    lines.append(with_field(JOB2, 4, "x"))  # a bad line: the file goes to the line-by-line checks
    trace = read_swf(write(tmp_path, "big.swf", "\n".join(lines) + "\n"), lenient=True)
    assert trace.frame["job_id"].tolist() == [MAX_EXACT_INT, pd.NA]
    assert trace.skipped_examples == ((3, "field 4 (run_time): 'x' is not a number"),)
    assert trace.flagged == {"job_id: too large to hold, read as unknown": 1}
    assert trace.flagged_examples == ((2, "job_id: too large to hold, read as unknown"),)


# --- line ends and comments on the checked path ------------------------------------------------------------------


def test_only_the_first_semicolon_starts_a_comment(tmp_path):
    text = f"{JOB1} ; a note; with a second semicolon\n{with_field(JOB2, 4, 'x')}\n"
    error = refusal(write(tmp_path, "semi.swf", text))
    assert str(error) == "semi.swf:2: field 4 (run_time): 'x' is not a number" + LENIENT


def test_letters_at_the_end_of_a_line_are_part_of_the_last_field(tmp_path):
    error = refusal(write(tmp_path, "x.swf", f"{JOB1}X\n"))
    assert str(error) == "x.swf:1: field 18 (think_time): '-1X' is not a number" + LENIENT
    assert error.line == 1


def test_form_feed_is_not_a_separator_on_the_checked_path(tmp_path):
    # fields are separated by spaces and tabs only; the bad line 2 sends the file to the line-by-line checks
    text = f"{JOB1}\x0c\n{with_field(JOB2, 4, 'x')}\n"
    error = refusal(write(tmp_path, "ff.swf", text))
    assert str(error) == "ff.swf:1: field 18 (think_time): '-1\\x0c' is not a number" + LENIENT


# --- lenient mode and gzip ---------------------------------------------------------------------------------------


def test_lenient_warning_names_file_count_and_first_bad_line(tmp_path, caplog):
    text = f"; MaxProcs: 128\n{JOB1}\n{with_field(JOB1, 4, 'abc')}\n{JOB2}\n{' '.join(JOB2.split()[:17])}\n"
    with caplog.at_level(logging.WARNING, logger="workloads.swf"):
        trace = read_swf(write(tmp_path, "lenient.swf", text), lenient=True)
    assert trace.frame["job_id"].tolist() == [1, 2]
    assert trace.skipped_examples == (
        (3, "field 4 (run_time): 'abc' is not a number"),
        (5, "expected 18 fields, found 17"),
    )
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "lenient.swf: skipped 2 malformed line(s); first at line 3: field 4 (run_time): 'abc' is not a number"
    ]


def test_truncated_gzip_error_names_the_path(tmp_path):
    data = gzip.compress(("\n".join([JOB1] * 500) + "\n").encode(), mtime=0)
    path = write(tmp_path, "cut.swf.gz", data[: len(data) // 2])
    error = refusal(path)
    assert str(error).startswith("cut.swf.gz: gzip stream is truncated or corrupt (")
    assert (error.path, error.line) == (path, None)


# --- header ------------------------------------------------------------------------------------------------------


def test_text_before_the_first_key_is_not_kept():
    header = parse_header([" A hand-written trace", " MaxProcs: 128"])
    assert header.fields == {"MaxProcs": "128"}
    assert header.max_procs == 128


def test_key_without_value_takes_the_lines_indented_past_it():
    header = parse_header([" Note:", "  first item", "  second item", " back at the key's column", " MaxNodes: 64"])
    assert header.fields == {"Note": "first item\nsecond item", "MaxNodes": "64"}
    assert header.max_nodes == 64


def test_time_zone_string_is_its_first_line():
    header = parse_header([" TimeZoneString: Europe/Berlin", " " * 17 + "(CET)"])  # aligned under "Europe"
    assert header.fields == {"TimeZoneString": "Europe/Berlin\n(CET)"}
    assert header.time_zone_string == "Europe/Berlin"
    assert parse_header([" TimeZoneString:"]).time_zone_string is None


def test_header_without_space_after_semicolon_and_with_bad_utf8(tmp_path):
    data = b";MaxProcs: 128\n; Note: caf\xe9 cr\xe8me\n" + JOB1.encode() + b"\n"
    trace = read_swf(write(tmp_path, "h.swf", data))
    assert trace.header.max_procs == 128
    assert trace.header.fields == {"MaxProcs": "128", "Note": "caf\ufffd cr\ufffdme"}
    assert trace.frame["job_id"].tolist() == [1]


def test_header_values_on_the_edge_of_their_range_are_kept(tmp_path):
    text = f"; MaxProcs: 0\n; MaxJobs: {MAX_EXACT_INT}\n; UnixStartTime: {MAX_UNIX_TIME}\n{JOB1}\n"
    header = read_swf(write(tmp_path, "edge.swf", text)).header
    assert (header.max_procs, header.max_jobs, header.unix_start_time) == (0, MAX_EXACT_INT, MAX_UNIX_TIME)


OUT_OF_RANGE = [
    pytest.param("; MaxProcs: -5", f"header field MaxProcs: -5 is out of range (0 to {MAX_EXACT_INT})", id="negative"),
    pytest.param(
        f"; UnixStartTime: {MAX_UNIX_TIME + 1}",
        f"header field UnixStartTime: {MAX_UNIX_TIME + 1} is out of range (0 to {MAX_UNIX_TIME})",
        id="after-9999",
    ),
]


@pytest.mark.parametrize(("line", "problem"), OUT_OF_RANGE)
def test_header_value_out_of_range_is_refused_with_its_line_when_strict(tmp_path, line, problem):
    path = write(tmp_path, "hdr.swf", f"; Version: 2.2\n{line}\n{JOB1}\n")
    with pytest.raises(SwfFormatError) as caught:
        read_swf(path, strict=True)
    assert str(caught.value) == (f"hdr.swf:2: {problem}, ignored (--strict refuses it; without --strict the field is "
                                 "ignored and counted)")
    assert (caught.value.path, caught.value.line) == (path, 2)


@pytest.mark.parametrize(("line", "problem"), OUT_OF_RANGE)
def test_header_value_out_of_range_is_ignored_and_counted(tmp_path, line, problem):
    trace = read_swf(write(tmp_path, "hdr.swf", f"; Version: 2.2\n{line}\n{JOB1}\n"))
    assert (trace.skipped, trace.flagged, trace.flagged_examples) == (
        0, {f"{problem}, ignored": 1}, ((2, f"{problem}, ignored"),))
    assert (trace.header.max_procs, trace.header.unix_start_time) == (None, None)
    assert trace.frame["job_id"].tolist() == [1]


# --- trace_info ----------------------------------------------------------------------------------------------------


def test_trace_info_of_a_two_job_trace_starting_at_the_epoch(tmp_path):
    path = write(tmp_path, "epoch.swf", f"; UnixStartTime: 0\n; TimeZoneString: UTC\n{JOB1}\n{JOB2}\n")
    assert trace_info(read_swf(path)) == {
        "path": str(path),
        "jobs": 2,
        "skipped": 0,
        "skipped_by_reason": {},
        "skipped_examples": [],
        "flagged": {},
        "flagged_examples": [],
        "first_submit": 0,
        "last_submit": 10,
        "span_s": 10,
        "first_submit_utc": "1970-01-01T00:00:00+00:00",
        "last_submit_utc": "1970-01-01T00:00:10+00:00",
        "unix_start_time": 0,
        "time_zone_string": "UTC",
        "max_procs": 8,  # no MaxProcs in the header: job 2's 8 processors
        "max_nodes": None,
        "fields_present": ["job_id", "submit_time", "wait_time", "run_time", "allocated_procs", "avg_cpu_time",
                           "requested_procs", "requested_time", "status", "user_id", "group_id", "queue",
                           "preceding_job"],
        "fields_missing": ["used_memory", "requested_memory", "executable", "partition", "think_time"],
        "header": {"UnixStartTime": "0", "TimeZoneString": "UTC"},
    }


@pytest.mark.parametrize(
    ("start", "first_utc", "last_utc"),
    [
        pytest.param(MAX_UNIX_TIME - 10, "9999-12-31T23:59:49+00:00", "9999-12-31T23:59:59+00:00", id="last-second"),
        pytest.param(MAX_UNIX_TIME - 9, "9999-12-31T23:59:50+00:00", None, id="one-past"),
    ],
)
def test_trace_info_utc_times_end_at_year_9999(tmp_path, start, first_utc, last_utc):
    info = trace_info(read_swf(write(tmp_path, "end.swf", f"; UnixStartTime: {start}\n{JOB1}\n{JOB2}\n")))
    assert (info["first_submit_utc"], info["last_submit_utc"]) == (first_utc, last_utc)


# --- the last defence: job lines the checks passed but pandas would not parse --------------------------------------


def test_parse_block_refuses_lines_the_checks_should_have_caught():
    with pytest.raises(SwfFormatError) as caught:
        _parse_block(b"1 2 3\n", Path("p.swf"))
    assert str(caught.value) == "p.swf: cannot parse job lines"
    assert (caught.value.path, caught.value.line) == (Path("p.swf"), None)


def test_parse_block_reports_what_pandas_could_not_parse():
    with pytest.raises(SwfFormatError) as caught:
        _parse_block(b"1 x\n", Path("p.swf"))
    assert str(caught.value).startswith("p.swf: cannot parse job lines: ")
    assert (caught.value.path, caught.value.line) == (Path("p.swf"), None)


# --- a file is read the same whatever its other lines ------------------------------------------------------------


@pytest.mark.parametrize(("name", "text", "message"), [
    # pandas skips a vertical tab or form feed beside a number; the line-by-line checks do not, and a file was
    # accepted or refused depending on whether another of its lines was bad
    ("vt.swf", f"{JOB1}\x0b\n{JOB2}\n", "vt.swf:1: field 18 (think_time): '-1\\x0b' is not a number" + LENIENT),
    ("ff.swf", f"{JOB1}\x0c\n{JOB2}\n", "ff.swf:1: field 18 (think_time): '-1\\x0c' is not a number" + LENIENT),
    # pandas ends a line at a lone carriage return: two jobs were read from one line
    ("cr.swf", f"{JOB1}\r{JOB2}\n", "cr.swf:1: expected 18 fields, found 35" + LENIENT),
])
def test_a_byte_that_is_no_separator_is_refused_even_when_every_other_line_is_clean(tmp_path, name, text, message):
    error = refusal(write(tmp_path, name, text))
    assert str(error) == message and error.line == 1


def test_a_header_with_old_mac_line_endings_is_refused_not_read_as_one_comment(tmp_path):
    # every line ends with a lone carriage return: the whole file was one comment line, and no job was read
    error = refusal(write(tmp_path, "mac.swf", f"; MaxProcs: 128\r{JOB1}\r{JOB2}\r"))
    assert str(error) == ("mac.swf:1: a carriage return inside the line (SWF lines end with a line feed; "
                          "old Mac line endings?)")
    assert error.line == 1 and error.path == tmp_path / "mac.swf"
