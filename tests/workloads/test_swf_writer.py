"""The SWF writer: what it writes reads back as the same frame and header."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import trace_path
from workloads.lublin import default_workload
from workloads.swf import read_swf
from workloads.swf_writer import swf_text, write_swf


def test_a_generated_workload_reads_back_unchanged(tmp_path: Path) -> None:
    frame = default_workload(seed=3, n_jobs=300)
    path = write_swf(frame, tmp_path / "w.swf", {"Computer": "Lublin-Feitelson model", "MaxProcs": 256})
    back = read_swf(path)
    pd.testing.assert_frame_equal(back.frame, frame)
    assert back.header.max_procs == 256 and back.header.fields["Computer"] == "Lublin-Feitelson model"


def test_a_real_trace_reads_back_unchanged_through_gzip_and_the_same_frame_gives_the_same_bytes(tmp_path: Path) -> None:
    trace = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz"))
    frame = trace.frame.head(2000)  # avg_cpu_time and used_memory hold fractions here
    assert (frame["avg_cpu_time"].dropna() % 1 != 0).any()
    one, two = write_swf(frame, tmp_path / "a.swf.gz"), write_swf(frame, tmp_path / "b.swf.gz")
    assert one.read_bytes()[:2] == b"\x1f\x8b" and one.read_bytes() == two.read_bytes()
    pd.testing.assert_frame_equal(read_swf(one).frame, frame)


def test_unknown_values_are_minus_one_and_integers_have_no_decimal_point() -> None:
    frame = default_workload(seed=0, n_jobs=1)
    frame.loc[0, "avg_cpu_time"] = 2.5
    text = swf_text(frame, {"MaxProcs": 8})
    assert text.splitlines()[:2] == ["; Version: 2.2", "; MaxProcs: 8"]
    fields = text.splitlines()[2].split()
    assert len(fields) == 18 and fields[2] == "-1" and fields[5] == "2.5"
    assert fields[0] == "1" and "." not in fields[3]


@pytest.mark.parametrize(("header", "message"), [({"max procs": 1}, "capitalised"), ({"Note": "a\nb"}, "spans")])
def test_a_header_that_would_not_read_back_is_refused(header: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        swf_text(default_workload(seed=0, n_jobs=2), header)


def test_a_frame_without_the_swf_columns_is_refused() -> None:
    with pytest.raises(ValueError, match="wait_time"):
        swf_text(default_workload(seed=0, n_jobs=2).drop(columns=["wait_time"]))


# The SWF writer on its edges: header keys, integers at 2**53, float columns, the gzip header's bytes.


def one_job() -> pd.DataFrame:
    return default_workload(seed=0, n_jobs=1)


def test_every_missing_column_is_named_in_order() -> None:
    frame = one_job().drop(columns=["wait_time", "run_time"])
    with pytest.raises(ValueError, match=r"lacks the SWF column\(s\) wait_time, run_time$"):
        swf_text(frame)


@pytest.mark.parametrize("key", ["Max procs", "maxprocs", "Max-Procs", ""])
def test_a_key_that_is_not_a_capitalised_word_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="capitalised word"):
        swf_text(one_job(), {key: 1})


def test_a_key_with_underscores_is_a_word() -> None:
    text = swf_text(one_job(), {"Max_Procs": 8, "Note": "a b"})
    assert text.splitlines()[:3] == ["; Version: 2.2", "; Max_Procs: 8", "; Note: a b"]


def test_integer_columns_stay_integers_at_and_past_2_53_and_float_columns_switch_to_repr_there() -> None:
    frame = one_job()
    frame.loc[0, "job_id"] = 2**53  # an integer column: always without a decimal point
    frame.loc[0, "avg_cpu_time"] = 3.0  # integral float below 2**53: no decimal point
    frame.loc[0, "used_memory"] = float(2**53)  # exactly 2**53: repr
    frame.loc[0, "requested_memory"] = 200.0
    fields = swf_text(frame).splitlines()[1].split()
    assert fields[0] == "9007199254740992"
    assert fields[5] == "3"
    assert fields[6] == "9007199254740992.0"
    assert fields[9] == "200"


def test_float_columns_just_below_2_53_are_integers() -> None:
    frame = one_job()
    frame.loc[0, "avg_cpu_time"] = float(2**53 - 1)
    frame.loc[0, "used_memory"] = -float(2**53 - 1)
    fields = swf_text(frame).splitlines()[1].split()
    assert fields[5:7] == ["9007199254740991", "-9007199254740991"]


def test_the_gzip_header_has_no_file_name_and_a_zero_time(tmp_path: Path) -> None:
    data = write_swf(one_job(), tmp_path / "a.swf.gz").read_bytes()
    # RFC 1952: ID1 ID2 CM FLG MTIME(4) XFL OS; FLG 0 means no FNAME field
    assert data[:4] == b"\x1f\x8b\x08\x00"
    assert data[4:8] == b"\x00\x00\x00\x00"


def test_a_plain_path_is_written_as_latin_1_text(tmp_path: Path) -> None:
    path = write_swf(one_job(), tmp_path / "a.swf", {"Note": "café"})
    assert path == tmp_path / "a.swf"
    assert path.read_bytes().splitlines()[1] == b"; Note: caf\xe9"
