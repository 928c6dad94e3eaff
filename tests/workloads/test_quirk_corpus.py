"""The reader on the corpus of archive quirks (``tests/quirks.py``): every line accounted for by reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.quirks import QUIRKS, YEAR, Quirk
from workloads.swf import SwfFormatError, read_swf, trace_info


def _log(tmp_path: Path, quirk: Quirk) -> Path:
    path = tmp_path / (quirk.name.replace(" ", "_") + ".swf")
    path.write_text(quirk.build())
    return path


def _refused(path: Path, strict: bool, parts: tuple[str, ...]) -> None:
    """Reading ``path`` is one refusal, a line that starts with the file's name and holds every one of ``parts``."""
    with pytest.raises(SwfFormatError) as refused:
        read_swf(path, strict=strict)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(path.name + ":")
    assert all(part in message for part in parts), (message, parts)


def _job_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.split(";", 1)[0].strip())


@pytest.mark.parametrize("quirk", QUIRKS, ids=lambda q: q.name)
def test_every_line_of_a_quirk_is_read_skipped_or_flagged_by_its_reason(tmp_path: Path, quirk: Quirk) -> None:
    path = _log(tmp_path, quirk)
    trace = read_swf(path, lenient=bool(quirk.refusal))
    assert len(trace.frame) == quirk.jobs
    assert trace.skipped_by_reason == quirk.skipped
    assert trace.flagged == quirk.flagged
    assert len(trace.frame) + trace.skipped == _job_lines(path)  # nothing dropped silently
    info = trace_info(trace)
    assert info["flagged"] == quirk.flagged and info["skipped_by_reason"] == quirk.skipped


@pytest.mark.parametrize("quirk", [q for q in QUIRKS if q.refusal], ids=lambda q: q.name)
def test_a_line_that_cannot_be_parsed_is_one_refusal_naming_file_line_field_and_lenient(
        tmp_path: Path, quirk: Quirk) -> None:
    path = _log(tmp_path, quirk)
    for strict in (False, True):
        _refused(path, strict, quirk.refusal)


@pytest.mark.parametrize("quirk", [q for q in QUIRKS if not q.refusal], ids=lambda q: q.name)
def test_strict_refuses_the_first_undocumented_value_by_line_or_reads_a_clean_log(tmp_path: Path,
                                                                                   quirk: Quirk) -> None:
    path = _log(tmp_path, quirk)
    if not quirk.strict:
        assert len(read_swf(path, strict=True).frame) == quirk.jobs
        return
    _refused(path, True, quirk.strict)


def test_the_ten_year_log_spans_ten_years() -> None:
    quirk = next(q for q in QUIRKS if q.name.startswith("ten years"))
    submits = [int(line.split()[1]) for line in quirk.build().splitlines() if not line.startswith(";")]
    assert 9.5 * YEAR < submits[-1] - submits[0] < 10.5 * YEAR and len(submits) == 300
