"""The SWF writer on its edges: header keys, integers at 2**53, float columns, the gzip header's bytes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workloads.lublin import default_workload
from workloads.swf_writer import swf_text, write_swf


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
