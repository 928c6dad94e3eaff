"""Per-job volumes from a file: read, joined by job number, errors naming file, line and field."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import workloads.volumes
from tests.conftest import cloudbroker, trace_path
from workloads.htc import htc_view
from workloads.lublin import generate_lublin
from workloads.volumes import VolumesFormatError, read_volumes, with_volumes


def test_volumes_are_joined_by_job_number_and_missing_ones_are_counted(tmp_path):
    frame = generate_lublin(50, nodes=16, seed=1)
    path = tmp_path / "v.csv"
    rows = [f"{j},{1000 * j},{2000 * j}" for j in frame.job_id if j != 7]  # job 7 has no row
    path.write_text("output_bytes,job_id,input_bytes\n" + "\n".join(",".join(r.split(",")[i] for i in (2, 0, 1))
                                                                for r in rows) + "\n\n")
    table = read_volumes(path)
    assert len(table) == 49 and table.loc[3, "output_bytes"] == 6000
    jobs, report = htc_view(with_volumes(frame, table))
    assert len(jobs) == 49 and report.removed["no data volume (or < 0)"] == 1
    assert set(jobs.input_bytes * 2) == set(jobs.output_bytes)


@pytest.mark.parametrize(("text", "where"), [
    ("job_id,input_bytes\n1,2\n", ":1: header"),
    ("job_id,input_bytes,output_bytes\n1,2,3\n2,x,3\n", ":3: field 'input_bytes'"),
    ("job_id,input_bytes,output_bytes\n1,2,-3\n", ":2: field 'output_bytes'"),
    ("job_id,input_bytes,output_bytes\n1,2,3\n1,2,3\n", ":3: field 'job_id': job 1 already on line 2"),
    ("job_id,input_bytes,output_bytes\n1.5,2,3\n", ":2: field 'job_id'"),
    ("job_id,input_bytes,output_bytes\n1,2\n", ":2: 2 fields"),
])
def test_errors_name_file_line_and_field(tmp_path, text, where):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(VolumesFormatError, match=str(path).replace(".", r"\.") + where):
        read_volumes(path)


def test_cli_reads_a_volumes_file(tmp_path):
    trace = str(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz"))
    path = tmp_path / "v.csv"
    path.write_text("job_id,input_bytes,output_bytes\n" + "\n".join(f"{j},0,{2**30}" for j in range(1, 60000)))
    result = cloudbroker(*["cluster", "--trace", trace, "--limit-jobs", "300", "--volumes", str(path), "--json"])
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    months = payload["egress_by_month"]
    # 1 GiB per job; each month's first GB free, the rest at 0.12 $/GB
    assert np.isclose(payload["egress_cost"], 0.12 * (300 - len(months)))
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,input_bytes,output_bytes\n1,2,x\n")
    result = cloudbroker(*["cluster", "--trace", trace, "--limit-jobs", "300", "--volumes", str(bad)])
    assert result.code == 2 and "bad.csv:2" in result.err


# The volumes reader on hand-written CSV files: edges, refusals and exact messages.
#
# A volumes file has the header ``job_id,input_bytes,output_bytes`` (any order), one row per job; blank rows are
# skipped; job numbers are ASCII integers with ``|job| <= 2**53``. Messages read ``<file>:<line>: ...``, lines
# counted from 1 with the header as line 1.


HEADER = "job_id,input_bytes,output_bytes\n"


def write(folder: Path, text: str) -> Path:
    path = folder / "v.csv"
    path.write_bytes(text.encode("utf-8"))
    return path


def refused(path: Path, message: str) -> None:
    with pytest.raises(VolumesFormatError, match=re.escape(f"{path}:{message}")):
        read_volumes(path)


def test_the_frame_is_indexed_by_a_job_id_index(tmp_path):
    table = read_volumes(write(tmp_path, HEADER + "4,10,20\n2,30,40\n"))
    assert table.index.name == "job_id"
    assert table.reset_index().columns.tolist() == ["job_id", "input_bytes", "output_bytes"]
    assert table.index.tolist() == [4, 2]
    assert table["input_bytes"].tolist() == [10.0, 30.0]


def test_an_empty_file_is_refused_for_its_missing_header(tmp_path):
    path = write(tmp_path, "")
    refused(path, "1: header []; expected the columns ['job_id', 'input_bytes', 'output_bytes']")


def test_blank_rows_anywhere_are_skipped_and_reading_goes_on(tmp_path):
    # line 2 job 1, line 3 empty, line 4 only blanks between the commas, line 5 job 2, line 6 job 3
    table = read_volumes(write(tmp_path, HEADER + "1,5,6\n\n  , ,\t\n2,7,8\n3,9,10\n"))
    assert table.index.tolist() == [1, 2, 3]
    assert table["output_bytes"].tolist() == [6.0, 8.0, 10.0]


def test_a_duplicate_after_a_blank_row_is_found_on_its_line(tmp_path):
    path = write(tmp_path, HEADER + "1,5,6\n\n1,7,8\n")  # line 4 repeats job 1 of line 2
    refused(path, "4: field 'job_id': job 1 already on line 2")


def test_job_numbers_up_to_2_to_the_53_are_taken_and_beyond_are_refused(tmp_path):
    edge = 2**53  # 9007199254740992: the largest exact SWF integer, allowed on both signs
    table = read_volumes(write(tmp_path, HEADER + f"{edge},1,2\n-{edge},3,4\n"))
    assert table.index.tolist() == [edge, -edge]
    path = write(tmp_path, HEADER + f"{edge + 1},1,2\n")
    refused(path, "2: field 'job_id': '9007199254740993' is out of range (at most 2**53)")


def test_a_carriage_return_inside_a_quoted_field_is_kept_as_written(tmp_path):
    # the csv module reads files opened with newline="": a quoted "1<CR>2" stays 1\r2 (not translated to \n)
    path = write(tmp_path, HEADER + '"1\r2",1,2\n')
    refused(path, "2: field 'job_id': '1\\r2' is not an integer")


def test_a_utf8_file_reads_the_same_under_an_ascii_locale(tmp_path):
    # a job number in full-width digits (U+FF11 U+FF12): UTF-8 on disk; an ASCII locale must not change the answer
    path = write(tmp_path, HEADER + "\uff11\uff12,1,2\n")
    expected = f"{path}:2: field 'job_id': '\uff11\uff12' is not an integer"
    refused(path, "2: field 'job_id': '\uff11\uff12' is not an integer")  # here, in this process's locale
    package_root = Path(workloads.volumes.__file__).resolve().parents[1]
    code = (
        "import sys\n"
        "from workloads.volumes import VolumesFormatError, read_volumes\n"
        "try:\n"
        "    read_volumes(sys.argv[1])\n"
        "except VolumesFormatError as error:\n"
        "    print(ascii(str(error)))\n"
    )
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(package_root)}
    done = subprocess.run([sys.executable, "-c", code, str(path)], env=env, cwd=package_root,
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ascii(expected)  # the same answer under an ASCII locale


def test_joined_volumes_replace_old_columns_and_come_last(tmp_path):
    trace = pd.DataFrame({"job_id": pd.array([1, 2, None], dtype="Int64"), "input_bytes": [0.0, 0.0, 0.0],
                          "output_bytes": [0.0, 0.0, 0.0], "run_time": [5, 6, 7]})
    volumes = pd.DataFrame({"input_bytes": [10.0], "output_bytes": [20.0]}, index=pd.Index([2], name="job_id"))
    joined = with_volumes(trace, volumes)
    assert joined.columns.tolist() == ["job_id", "run_time", "input_bytes", "output_bytes"]
    assert joined["input_bytes"].tolist()[1] == 10.0  # job 2 has a row; jobs 1 and unknown have none
    assert joined["input_bytes"].isna().tolist() == [True, False, True]
    assert joined["output_bytes"].isna().tolist() == [True, False, True]
    assert str(joined["output_bytes"].dtype) == "float64"
