"""The fuzz budget: the slow variants together generate at least 10,000 inputs (issue 12 item 7).

Each fuzz test's example counts are one constant (``fuzz_pair(..., fast=N, slow=M)``), recorded when its module is
imported; ``pytest --hypothesis-show-statistics -m slow tests/fuzz`` shows how many each really generated.
"""

from __future__ import annotations

import tests.fuzz.test_cli_fuzz
import tests.fuzz.test_files_fuzz
import tests.fuzz.test_swf_fuzz  # noqa: F401  (importing the modules records their budgets)
from tests.fuzz.support import FAST_EXAMPLES, SLOW_EXAMPLES

#: Inputs the slow fuzz set must generate in total.
SLOW_TOTAL = 10_000


def test_slow_fuzz_generates_at_least_ten_thousand_inputs() -> None:
    assert len(SLOW_EXAMPLES) >= 20, sorted(SLOW_EXAMPLES)
    assert sum(SLOW_EXAMPLES.values()) >= SLOW_TOTAL, SLOW_EXAMPLES


def test_every_fuzz_test_has_a_quick_and_a_slow_count() -> None:
    assert set(FAST_EXAMPLES) == set(SLOW_EXAMPLES)
    assert all(0 < FAST_EXAMPLES[name] < SLOW_EXAMPLES[name] for name in FAST_EXAMPLES)
    assert sum(FAST_EXAMPLES.values()) <= SLOW_TOTAL // 10  # the default run stays quick
