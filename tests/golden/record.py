"""Record the golden values: ``python -m tests.golden.record [--whole] [CASE ...]`` (all cases by default).

Writes ``tests/golden/values.json`` (``whole.json`` with ``--whole``: the whole traces, compared by
hand with ``python -m tests.golden.record --whole --check``). Run it only when a number is meant to
change, and say why.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.golden.cases import CASES, WHOLE


def main(args: list[str]) -> int:
    whole, check = "--whole" in args, "--check" in args
    names = [a for a in args if not a.startswith("--")]
    cases = WHOLE if whole else CASES
    path = Path(__file__).with_name("whole.json" if whole else "values.json")
    values = json.loads(path.read_text()) if path.exists() else {}
    differ = 0
    for name in names or list(cases):
        started = time.perf_counter()
        observed = json.loads(json.dumps(cases[name]()))
        took = time.perf_counter() - started
        if check:
            bad = {k: (observed.get(k), v) for k, v in values[name].items() if observed.get(k) != v}
            differ += bool(bad)
            print(f"{name}: {'DIFFERS ' + str(bad) if bad else 'same'} ({took:.1f} s)", file=sys.stderr)
        else:
            values[name] = observed
            print(f"{name}: {took:.1f} s", file=sys.stderr)
    if not check:
        path.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
