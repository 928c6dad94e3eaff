"""The rules of ``workloads/oddities.py`` case by case, on hand-made rows.

Each rule's words in a refusal, each undocumented status code its own count, the input left as read, an overflow
that is not also counted as a negative, ids compared with the nearest known one before.
"""

from __future__ import annotations

import numpy as np
import pytest

from workloads.oddities import Oddity, settle
from workloads.schema import COLUMN_NAMES

COL = {name: j for j, name in enumerate(COLUMN_NAMES)}


def rows(n: int, **columns: list[float]) -> np.ndarray:
    """``n`` ordinary job lines (ids 1..n, submits 0, 10, ..., status 1, every other field unknown) with ``columns``."""
    values = np.full((n, len(COLUMN_NAMES)), -1.0)
    values[:, COL["job_id"]] = np.arange(1, n + 1)
    values[:, COL["submit_time"]] = 10.0 * np.arange(n)
    values[:, COL["status"]] = 1
    for name, column in columns.items():
        values[:, COL[name]] = column
    return values


def found(values: np.ndarray) -> dict[str, Oddity]:
    return {o.reason: o for o in settle(values)[1]}


def test_settle_leaves_its_input_as_read() -> None:
    values = rows(2, status=[-4, 1], run_time=[1.5, 2])
    before = values.copy()
    out, _ = settle(values)
    np.testing.assert_array_equal(values, before)
    assert out[0, COL["status"]] == -1 and out[0, COL["run_time"]] == 2


def test_a_large_real_value_is_kept_and_an_overflow_is_one_oddity_not_also_a_negative() -> None:
    out, odd = settle(rows(3, used_memory=[1e20, -np.inf, np.inf]))
    assert out[:, COL["used_memory"]].tolist() == [1e20, -1.0, -1.0]
    assert [(o.reason, o.rows.tolist()) for o in odd] == [("used_memory: too large to hold, read as unknown", [1, 2])]


def test_each_undocumented_status_code_is_its_own_count_and_reads_as_unknown() -> None:
    out, _ = settle(rows(5, status=[-4, 1, -2, -4, -1]))
    assert out[:, COL["status"]].tolist() == [-1.0, 1.0, -1.0, -1.0, -1.0]
    odd = found(rows(5, status=[-4, 1, -2, -4, -1]))
    assert {why: o.rows.tolist() for why, o in odd.items()} == {
        "status: undocumented code -4, read as unknown": [0, 3], "status: undocumented code -2, read as unknown": [2]}
    assert odd["status: undocumented code -4, read as unknown"].refusal() == (
        "field 11 (status): -4 is not a documented status code (0 failed, 1 completed, 2-4 partial, 5 cancelled; "
        "-1 unknown) (--strict refuses it; without --strict such a value is read as unknown and counted)")


def test_negative_values_read_as_unknown_with_the_value_in_the_refusal() -> None:
    out, odd = settle(rows(2, wait_time=[-5, 3]))
    assert out[:, COL["wait_time"]].tolist() == [-1.0, 3.0]
    assert odd[0].refusal() == ("field 3 (wait_time): -5 is negative (-1 is unknown; no other value is below 0) "
                                "(--strict refuses it; without --strict such a value is read as unknown and counted)")


@pytest.mark.parametrize(("name", "value", "settled", "problem", "documented"), [
    ("run_time", 100.4, 100.0, "100.40000000000001 is a fraction of a second", True),
    ("run_time", 100.5, 101.0, "100.5 is a fraction of a second", True),
    ("allocated_procs", 2.5, 3.0, "2.5 is not a whole number", False),
    ("user_id", 7.5, -1.0, "7.5 is not a whole number", False),
])
def test_a_fraction_is_rounded_by_its_fields_rule_and_named_in_the_refusal(name: str, value: float, settled: float,
                                                                          problem: str, documented: bool) -> None:
    out, odd = settle(rows(1, **{name: [value]}))
    assert out[0, COL[name]] == settled
    assert len(odd) == 1 and odd[0].documented is documented
    assert odd[0].refusal().startswith(f"field {COL[name] + 1} ({name}): {problem} (--strict refuses it")


def test_ids_are_compared_with_the_nearest_known_one_before() -> None:
    # 3 after 5 is out of order even with unknown ids between; the second line is compared with the first
    for ids, lower in (([5, 3], [1]), ([5, -1, 3], [2]), ([5, -1, -1, 3], [3]), ([-1, 5, 6], [])):
        odd = found(rows(len(ids), job_id=ids))
        got = odd.get("job_id: lower than the line before's, kept")
        assert (got.rows.tolist() if got else []) == lower, ids
    odd = found(rows(2, job_id=[5, 3]))["job_id: lower than the line before's, kept"]
    assert odd.refusal().startswith("field 1 (job_id): 3 is lower than the line before's (--strict")


def test_submits_going_backwards_are_named_with_the_format_s_order() -> None:
    odd = found(rows(3, submit_time=[10, 5, 20]))["submit_time: earlier than the line before's, kept"]
    assert odd.rows.tolist() == [1]
    assert odd.refusal().startswith("field 2 (submit_time): 5 is earlier than the line before's (lines are sorted by "
                                    "submit time) (--strict")


def test_a_repeated_number_counts_whole_job_lines_only_and_never_unknown_numbers() -> None:
    # job 1 twice (whole lines): the second is a repeat; unknown numbers (-1) repeat freely; a partial line
    # (status 3) repeats its job's number by design
    odd = found(rows(5, job_id=[1, 1, -1, -1, 1], status=[1, 1, 1, 1, 3]))
    repeat = odd["job_id: repeats an earlier whole-job line's, kept"]
    assert repeat.rows.tolist() == [1]
    assert repeat.refusal().startswith("field 1 (job_id): 1 repeats the job number of an earlier line (--strict")
