"""Per-job volumes from a file: read, joined by job number, errors naming file, line and field."""

from __future__ import annotations

import json

import numpy as np
import pytest

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
