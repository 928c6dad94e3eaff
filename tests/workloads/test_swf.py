"""Tests of the SWF reader on the shared real traces and on malformed files written to tmp_path."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import SOURCES_JOBS, trace_path
from workloads.schema import COLUMN_NAMES, DTYPES
from workloads.swf import SwfFormatError, SwfTrace, parse_header, read_swf, trace_info

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
