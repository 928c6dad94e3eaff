"""Every world reproduces the values recorded before the one-kernel redesign, to the last bit.

The CoH cases of then run under the tick capacity rule they were recorded with; the cases named
``.../interval`` were recorded when the interval rule came in (issue 16), and the IPP cases named
``exact12``, ``race`` and ``chunks`` with the rules of issue 17 (the cases before it solve at most two
jobs without a solver and leave batches of 50 jobs or more to the heuristics).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.golden.cases import CASES

VALUES = json.loads(Path(__file__).with_name("values.json").read_text())


def test_every_case_is_recorded() -> None:
    assert sorted(VALUES) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    observed = json.loads(json.dumps(CASES[name]()))  # the same JSON round trip as the record
    expected = VALUES[name]
    assert sorted(observed) == sorted(expected)
    differ = {k: (observed[k], expected[k]) for k in expected
              if observed[k] != expected[k] and not (isinstance(expected[k], float) and math.isnan(expected[k])
                                                     and math.isnan(observed[k]))}
    assert not differ, f"{name}: {differ}"
