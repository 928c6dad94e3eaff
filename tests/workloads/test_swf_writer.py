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
