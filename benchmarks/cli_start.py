"""How fast ``cloudbroker`` starts, against importing numpy and pandas, in the same run.

Each command is a fresh process (as a user starts it), run ``--repeat`` times in turn with the
baseline ``python -c "import numpy, pandas"``; the median and the best wall time of each are printed,
with the ratio to the baseline's median. The commands are the ones a user types first:
``cloudbroker --help``, a command's ``--help`` and ``cloudbroker trace info`` on KTH-SP2 (a real
trace, read whole). Each command's process also reports which heavy libraries it imported: ``--help``
must import none, ``trace info`` only numpy and pandas (no solver, matplotlib, dask or ray).

    python benchmarks/cli_start.py [--repeat K] [--trace PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("numpy", "pandas", "ortools", "pulp", "matplotlib", "dask", "distributed", "ray", "scipy", "sklearn")
TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"

#: The same ``cloudbroker`` entry point, then the heavy libraries it left in ``sys.modules`` (on stderr).
RUN = ("import json, sys\n"
       "from broker.cli import main\n"
       "status = main(sys.argv[1:])\n"
       "print(json.dumps([m for m in {heavy!r} if m in sys.modules]), file=sys.stderr)\n"
       "sys.exit(status)\n")


def timed(argv: list[str]) -> tuple[float, str]:
    """Wall seconds of one fresh process, and its stderr."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--trace", type=Path, default=TRACE)
    args = parser.parse_args()
    baseline = [sys.executable, "-c", "import numpy, pandas"]
    cli = [sys.executable, "-c", RUN.format(heavy=HEAVY)]
    commands = {"cloudbroker --help": ["--help"], "cloudbroker simulate --help": ["simulate", "--help"],
                "cloudbroker trace info KTH-SP2 --json": ["trace", "info", str(args.trace), "--json"]}
    walls: dict[str, list[float]] = {"python -c 'import numpy, pandas'": [], **{name: [] for name in commands}}
    imported: dict[str, list[str]] = {}
    for _ in range(args.repeat):
        walls["python -c 'import numpy, pandas'"].append(timed(baseline)[0])
        for name, argv in commands.items():
            wall, err = timed(cli + argv)
            walls[name].append(wall)
            imported[name] = json.loads(err.strip().splitlines()[-1])
    base = statistics.median(walls["python -c 'import numpy, pandas'"])
    print(f"{'command':40} {'median s':>9} {'best s':>7} {'/ baseline':>10}  heavy imports")
    for name, times in walls.items():
        median = statistics.median(times)
        print(f"{name:40} {median:9.3f} {min(times):7.3f} {median / base:10.2f}  "
              f"{', '.join(imported.get(name, [])) or '-'}")


if __name__ == "__main__":
    main()
