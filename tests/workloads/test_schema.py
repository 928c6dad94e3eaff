"""The SWF columns as declared: the names and dtypes of SWF v2.2's 18 fields, written out here by hand."""

from __future__ import annotations

import pandas as pd

from workloads.schema import empty_frame, from_float_columns

#: SWF v2.2, fields 1-18, with the three real-valued ones (average CPU time, used and requested memory).
FIELDS = ["job_id", "submit_time", "wait_time", "run_time", "allocated_procs", "avg_cpu_time", "used_memory",
          "requested_procs", "requested_time", "requested_memory", "status", "user_id", "group_id", "executable",
          "queue", "partition", "preceding_job", "think_time"]
REAL = {"avg_cpu_time", "used_memory", "requested_memory"}


def test_the_empty_frame_has_the_eighteen_fields_in_order_with_their_dtypes_and_no_row() -> None:
    frame = empty_frame()
    assert list(frame.columns) == FIELDS and len(frame) == 0
    assert [str(t) for t in frame.dtypes] == ["Float64" if name in REAL else "Int64" for name in FIELDS]


def test_minus_one_becomes_unknown_and_other_values_keep_their_type() -> None:
    columns = {name: [-1.0, 2.0] for name in FIELDS}
    columns["avg_cpu_time"] = [-1.0, 2.5]
    frame = from_float_columns(columns)
    assert list(frame.columns) == FIELDS and frame.iloc[0].isna().all()
    assert frame.loc[1, "avg_cpu_time"] == 2.5 and frame.loc[1, "job_id"] == 2
    assert str(frame["job_id"].dtype) == "Int64" and str(frame["avg_cpu_time"].dtype) == "Float64"
    assert frame.loc[1].notna().all() and isinstance(frame, pd.DataFrame)
