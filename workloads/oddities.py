"""What an SWF log holds that its format does not document, and the rule the reader applies to each.

Archive logs run to years and carry values the format's documentation does not list: status codes
such as -4 or 7, negative fractions in real-valued fields, processor counts of 2.5, ids out of
order. The reader refuses only what it cannot parse (:mod:`workloads.swf`); a value that parses
but is odd is settled here by a stated rule per field, and counted by reason, so that one odd
field on three lines never rejects a log of 85,000 good jobs. ``--strict`` refuses at the first
such value instead (:attr:`Oddity.documented` values, which the format allows, excepted).

The rules, per field (SWF v2.2 field numbers; ``-1`` is "unknown" everywhere, as documented):

- any field: a value that overflowed (``1e999``) or is beyond 2**53 in an integer field, or is
  negative other than -1: read as unknown;
- status (11): codes other than 0, 1, 5 (completed, failed, cancelled) and 2, 3, 4 (partial
  executions, documented for logs with checkpointing): read as unknown;
- times (2, 3, 4, 9, 18): the format permits fractional seconds; they are rounded to the nearest
  second (half up: the archive's own rounding, where a run time of 0 means under half a second).
  Counted, but documented, so ``--strict`` keeps them;
- processor counts (5, 8): a fraction is rounded up (a job holding 2.5 processors held 3);
- ids and codes (1, 12-17): a fraction is no id: read as unknown;
- real-valued fields (6, 7, 10): any non-negative value is documented.

And per line, kept as they are and counted: a job number lower than the line before's (ids out
of order), a submit time earlier than the line before's (the format sorts lines by submit time),
a job number already used by an earlier whole-job line (a line of status 2, 3 or 4 is a partial
execution of a job listed whole: its number repeats by design; the job views decide what to do
with it, :func:`workloads.jobs.partial_executions`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workloads.schema import COLUMN_NAMES

#: Status codes the format documents: failed, completed, partial (to be continued, last and completed,
#: last and failed), cancelled. -1 is unknown.
DOCUMENTED_STATUS = (0, 1, 2, 3, 4, 5)
#: Status codes of a partial execution's line (a job checkpointed or swapped: it also has a whole-job line).
PARTIAL_STATUS = (2, 3, 4)
TIME_COLUMNS = ("submit_time", "wait_time", "run_time", "requested_time", "think_time")
COUNT_COLUMNS = ("allocated_procs", "requested_procs")
ID_COLUMNS = ("job_id", "user_id", "group_id", "executable", "queue", "partition", "preceding_job")
#: float64 represents every integer up to this magnitude exactly.
MAX_EXACT_INT = 2.0**53

_COLUMN = {name: j for j, name in enumerate(COLUMN_NAMES)}
_INTEGRAL = frozenset(TIME_COLUMNS + COUNT_COLUMNS + ID_COLUMNS + ("status",))


@dataclass(frozen=True, slots=True, eq=False)
class Oddity:
    """One kind of odd value on some rows of a log: where, what, and what the reader did with it.

    Attributes
    ----------
    what : str
        What is odd (``"undocumented code -4"``).
    rule : str
        What the reader did with it (``"read as unknown"``).
    field : int
        The 1-based SWF field number.
    rows : np.ndarray
        The rows (0-based positions among the job lines read) that hold it, ascending.
    values : np.ndarray
        The values as read on those rows (for a refusal's message).
    problem : str
        What is wrong with a value, to follow it in a refusal (``"is not a documented status code"``).
    documented : bool
        The format allows it (fractional seconds): counted, but ``--strict`` does not refuse it.
    """

    what: str
    rule: str
    field: int
    rows: np.ndarray
    values: np.ndarray
    problem: str
    documented: bool = False

    @property
    def name(self) -> str:
        """The field's column name."""
        return COLUMN_NAMES[self.field - 1]

    @property
    def reason(self) -> str:
        """The count's key: field, what is odd, rule (``"status: undocumented code -4, read as unknown"``)."""
        return f"{self.name}: {self.what}, {self.rule}"

    def refusal(self, index: int = 0) -> str:
        """The message of ``--strict``'s refusal at the ``index``-th row (without the file and line)."""
        value = self.values[index]
        shown = f"{value:.17g}" if np.isfinite(value) else str(value)
        return (f"field {self.field} ({self.name}): {shown} {self.problem} (--strict refuses it; without --strict "
                f"such a value is {self.rule} and counted)")


def settle(values: np.ndarray) -> tuple[np.ndarray, list[Oddity]]:
    """Apply the rules of the module docstring to a ``(rows, 18)`` float64 array of job lines.

    Returns the settled values (a copy where anything changed; ``-1`` for unknown) and the oddities
    found, each with its rows.
    """
    out = values
    found: list[Oddity] = []
    for j, name in enumerate(COLUMN_NAMES):
        column = values[:, j]
        rules = _field_rules(name, column)
        if not rules:
            continue
        if out is values:
            out = values.copy()
        for oddity, settled in rules:
            out[oddity.rows, j] = settled
            found.append(oddity)
    found += _line_checks(out)
    return out, found


def _field_rules(name: str, column: np.ndarray) -> list[tuple[Oddity, np.ndarray]]:
    """The oddities of one column and the value each of their rows takes (-1: unknown)."""
    field = _COLUMN[name] + 1
    rules: list[tuple[Oddity, np.ndarray]] = []
    finite = np.isfinite(column)
    integral = name in _INTEGRAL
    huge = finite & (np.abs(column) > MAX_EXACT_INT) if integral else np.zeros(len(column), dtype=bool)
    odd_number = ~finite | huge
    if odd_number.any():
        rules.append(_unknown(field, column, odd_number, "too large to hold", "is too large to hold"))
    plain = finite & ~huge
    if name == "status":
        return rules + _status_rules(field, column, plain)
    negative = plain & (column < 0) & (column != -1)
    if negative.any():
        rules.append(_unknown(field, column, negative, "negative",
                              "is negative (-1 is unknown; no other value is below 0)"))
    if not integral:
        return rules
    fraction = plain & (column >= 0) & (column != np.floor(column))
    if fraction.any():
        rules.append(_fraction_rule(name, field, column, fraction))
    return rules


def _unknown(field: int, column: np.ndarray, mask: np.ndarray, what: str, problem: str) -> tuple[Oddity, np.ndarray]:
    rows = np.flatnonzero(mask)
    return Oddity(what, "read as unknown", field, rows, column[rows], problem), np.full(len(rows), -1.0)


def _fraction_rule(name: str, field: int, column: np.ndarray, mask: np.ndarray) -> tuple[Oddity, np.ndarray]:
    """Fractional seconds rounded (half up), fractional processor counts rounded up, fractional ids unknown."""
    rows = np.flatnonzero(mask)
    read = column[rows]
    if name in TIME_COLUMNS:
        oddity = Oddity("fractional seconds", "rounded to the nearest second", field, rows, read,
                        "is a fraction of a second", documented=True)
        return oddity, np.floor(read + 0.5)
    if name in COUNT_COLUMNS:
        return Oddity("fractional", "rounded up", field, rows, read, "is not a whole number"), np.ceil(read)
    return _unknown(field, column, mask, "fractional", "is not a whole number")


def _status_rules(field: int, column: np.ndarray, plain: np.ndarray) -> list[tuple[Oddity, np.ndarray]]:
    """One oddity per undocumented status code (-4, 7, 1.5, ...), each read as unknown."""
    odd = plain & ~np.isin(column, (-1, *DOCUMENTED_STATUS))
    rules = []
    for code in np.unique(column[odd]):
        rows = np.flatnonzero(odd & (column == code))
        oddity = Oddity(f"undocumented code {code:g}", "read as unknown", field, rows, column[rows],
                        "is not a documented status code (0 failed, 1 completed, 2-4 partial, 5 cancelled; "
                        "-1 unknown)")
        rules.append((oddity, np.full(len(rows), -1.0)))
    return rules


def _line_checks(values: np.ndarray) -> list[Oddity]:
    """Job numbers out of order or repeated on whole-job lines, submit times going backwards: kept, counted."""
    found = []
    job, submit, status = (values[:, _COLUMN[name]] for name in ("job_id", "submit_time", "status"))
    for name, column, what, problem in (
        ("job_id", job, "lower than the line before's", "is lower than the line before's"),
        ("submit_time", submit, "earlier than the line before's",
         "is earlier than the line before's (lines are sorted by submit time)"),
    ):
        known = column != -1
        previous = _previous_known(column, known)
        rows = np.flatnonzero(known & (column < previous))
        if len(rows):
            found.append(Oddity(what, "kept", _COLUMN[name] + 1, rows, column[rows], problem))
    whole = (job != -1) & ~np.isin(status, PARTIAL_STATUS)
    ids = job[whole]
    _, first = np.unique(ids, return_index=True)
    repeated = np.ones(len(ids), dtype=bool)
    repeated[first] = False
    rows = np.flatnonzero(whole)[repeated]
    if len(rows):
        found.append(Oddity("repeats an earlier whole-job line's", "kept", 1, rows, job[rows],
                            "repeats the job number of an earlier line"))
    return found


def _previous_known(column: np.ndarray, known: np.ndarray) -> np.ndarray:
    """For each row, the value of the nearest earlier row whose value is known (-inf when none)."""
    index = np.where(known, np.arange(len(column)), -1)
    last = np.maximum.accumulate(index) if len(index) else index
    before = np.concatenate(([-1], last[:-1])) if len(last) else last
    return np.where(before >= 0, column[np.maximum(before, 0)], -np.inf)
