"""The Standard Workload Format columns and their dtypes, declared once.

Every trace DataFrame in the project (read from a file or generated) has exactly these columns,
in this order, with these dtypes. SWF writes ``-1`` for "unknown"; here that is ``pd.NA``.
Field numbers and meanings follow SWF v2.2 (Parallel Workloads Archive; ``SPEC.md`` §1).
"""

from __future__ import annotations

import pandas as pd

#: (column name, pandas dtype) in SWF field order 1..18.
SWF_COLUMNS: tuple[tuple[str, str], ...] = (
    ("job_id", "Int64"),  # 1 job number
    ("submit_time", "Int64"),  # 2 seconds since the log's start
    ("wait_time", "Int64"),  # 3 seconds
    ("run_time", "Int64"),  # 4 seconds, wall clock
    ("allocated_procs", "Int64"),  # 5
    ("avg_cpu_time", "Float64"),  # 6 seconds per processor (real in some logs)
    ("used_memory", "Float64"),  # 7 KB per processor
    ("requested_procs", "Int64"),  # 8
    ("requested_time", "Int64"),  # 9 seconds (user estimate)
    ("requested_memory", "Float64"),  # 10 KB per processor
    ("status", "Int64"),  # 11 1 completed, 0 failed, 5 cancelled, 2/3/4 partial
    ("user_id", "Int64"),  # 12
    ("group_id", "Int64"),  # 13
    ("executable", "Int64"),  # 14
    ("queue", "Int64"),  # 15
    ("partition", "Int64"),  # 16
    ("preceding_job", "Int64"),  # 17
    ("think_time", "Int64"),  # 18 seconds
)

COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in SWF_COLUMNS)
DTYPES: dict[str, str] = dict(SWF_COLUMNS)
#: Columns whose values must be integral.
INTEGER_COLUMNS: frozenset[str] = frozenset(n for n, t in SWF_COLUMNS if t == "Int64")


def empty_frame() -> pd.DataFrame:
    """A trace DataFrame with no rows and the declared dtypes."""
    return pd.DataFrame({name: pd.Series([], dtype=dtype) for name, dtype in SWF_COLUMNS})


def from_float_columns(columns: dict[str, object]) -> pd.DataFrame:
    """Build a trace DataFrame from float arrays where ``-1`` means unknown.

    Parameters
    ----------
    columns : dict
        Column name -> array-like of floats (every SWF column must be present).

    Returns
    -------
    pd.DataFrame
        The declared columns and dtypes, ``-1`` replaced by ``pd.NA``.
    """
    frame = pd.DataFrame({name: columns[name] for name in COLUMN_NAMES})
    frame = frame.mask(frame == -1)
    return frame.astype(DTYPES)
