"""Mutation score of the core, module by module (issue 19; docs/TESTING.md).

For each module of ``mutation/core.toml`` (or those given with ``--modules``), in a copy of the
committed tree under ``--workdir`` (the working tree is never touched): mutmut mutates the module
and runs only the module's tests against each mutant, on ``--max-children`` processes. The copy is
kept, so a stopped run resumes where it stopped. Then the mutants' statuses are counted and the
score written: detected (killed or timed out) over all mutants but those judged equivalent in
``mutation/equivalent.toml``.

    python mutation/run.py [--modules broker/sim/kernel.py,...] [--max-children 2] [--out mutation/scores.json]
    python mutation/run.py --table        # only rewrite docs/TESTING.md's table from the scores and the judgements
    python mutation/run.py --modules ... --count-only   # recount the copies (after re-running mutants by hand)
    python mutation/run.py --modules ... --recheck-timeouts   # run the timed-out and crashed mutants again
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: In the copy only: mutmut forks one child per mutant from a parent that may hold joblib's worker pool.
CONFTEST = '''
import pytest


@pytest.fixture(autouse=True, scope="session")
def _no_inherited_loky_executor():
    yield
    from joblib.externals.loky import reusable_executor
    if reusable_executor._executor is not None:
        reusable_executor._executor.shutdown(wait=True, kill_workers=True)
        reusable_executor._executor = None
'''
DETECTED = {"killed", "timeout"}
#: mutmut times a mutant out at half its CPU-time limit in wall time: native thread pools (OpenMP in
#: scikit-learn's boosting, BLAS) that spin on a busy machine would stretch it, so each mutant runs on one.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: TESTING.md's generated part lies between these two lines.
BEGIN, END = "<!-- mutation table: begin (python mutation/run.py --table) -->", "<!-- mutation table: end -->"
_LINE = re.compile(r"^\s*(\S+): (.+)$")


def module_name(path: str) -> str:
    """``broker/sim/kernel.py`` -> ``broker.sim.kernel``."""
    return path.removesuffix(".py").replace("/", ".")


def config_block(path: str, tests: list[str], deselect: list[str]) -> str:
    """The ``[tool.mutmut]`` block of one module's run."""
    args = ["-p", "no:randomly", "-x", "-q"] + [a for d in deselect for a in ("--deselect", d)]
    return ("\n[tool.mutmut]\n"
            'source_paths = ["broker", "heuristics", "solvers", "workloads"]\n'
            f"only_mutate = {json.dumps([path])}\n"
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
            "timeout_multiplier = 6.0\n"
            f"pytest_add_cli_args = {json.dumps(args)}\n")


def prepare(path: str, spec: dict, workdir: Path) -> Path:
    """The copy for one module (the committed tree, ``../shared`` linked), made once."""
    copy = workdir / module_name(path)
    if (copy / "pyproject.toml").exists():
        return copy
    copy.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
    (copy / "shared").symlink_to(ROOT.parent / "shared")
    (copy / "tests" / "conftest_mutation.py").write_text(CONFTEST)
    conftest = copy / "tests" / "conftest.py"
    hook = "\nfrom tests.conftest_mutation import _no_inherited_loky_executor  # noqa: F401\n"
    conftest.write_text(conftest.read_text() + hook)
    with (copy / "pyproject.toml").open("a") as f:
        f.write(config_block(path, spec["tests"], spec.get("deselect", [])))
    return copy


def statuses(copy: Path, mutmut: str) -> dict[str, str]:
    """Every mutant's status, by name (``mutmut results --all true``)."""
    out = subprocess.run([mutmut, "results", "--all", "true"], cwd=copy, check=True, capture_output=True, text=True)
    return {m[1]: m[2].strip() for line in out.stdout.splitlines() if (m := _LINE.match(line))}


def recheck(found: dict[str, str]) -> list[str]:
    """The mutants to run again: timed out or crashed (a run before :data:`ONE_THREAD`, or a busy machine)."""
    return sorted(name for name, status in found.items() if status in ("timeout", "segfault"))


def score(found: dict[str, str], equivalent: set[str]) -> dict:
    """Counts by status and the score over the mutants not judged equivalent."""
    counts = Counter(found.values())
    judged = [name for name in found if name in equivalent and found[name] not in DETECTED]
    considered = len(found) - len(judged)
    detected = sum(counts[s] for s in DETECTED)
    open_ = sorted(n for n, s in found.items() if s not in DETECTED and n not in equivalent)
    # mutmut numbers a function's mutants in order: editing the function renumbers them, so a judgement
    # whose mutant is now detected is stale and must be judged again under its new name
    stale = sorted(n for n in equivalent if n in found and found[n] in DETECTED)
    return {"mutants": len(found), "by_status": dict(sorted(counts.items())), "equivalent": len(judged),
            "detected": detected, "score": detected / considered if considered else None, "open": open_,
            "stale_judgements": stale}


def table(results: dict, equivalent: dict[str, str], pending: list[str] | None = None) -> str:
    """TESTING.md's generated part: scores per module and in all, equivalents and why, modules not run yet.

    ``pending`` lists the modules of ``core.toml`` with no score yet.
    """
    rows = ["| module | mutants | detected | equivalent | open | score |", "|---|---:|---:|---:|---:|---:|"]
    for path, r in sorted(results.items()):
        shown = "-" if r["score"] is None else f"{r['score']:.1%}"
        rows.append(f"| `{path}` | {r['mutants']:,} | {r['detected']:,} | {r['equivalent']:,} | {len(r['open']):,} "
                    f"| {shown} |")
    mutants, judged, detected, opened = whole(results)
    considered = mutants - judged
    total = f"{detected / considered:.1%}" if considered else "-"
    rows.append(f"| **all** | {mutants:,} | {detected:,} | {judged:,} | {opened:,} | **{total}** |")
    lines = [*rows, "", "Equivalent survivors (left out of the score) and why:", ""]
    for path in sorted(results):
        prefix = module_name(path) + "."
        names = sorted(n for n in equivalent if n.startswith(prefix))
        if names:
            lines += [f"- `{path}`:", *(f"  - `{n.removeprefix(prefix)}`: {equivalent[n]}" for n in names)]
    open_ = [n for _, r in sorted(results.items()) for n in r["open"]]
    lines += ["", "Open (neither detected nor judged equivalent):", ""]
    lines += [f"- `{n}`" for n in open_] if open_ else ["- none"]
    if pending:
        lines += ["", "Core modules not run through this script yet: " + ", ".join(f"`{m}`" for m in pending) + "."]
    return "\n".join(lines)


def whole(results: dict) -> tuple[int, int, int, int]:
    """Mutants, judged equivalent, detected and open over every module of ``results``."""
    rows = results.values()
    return (sum(r["mutants"] for r in rows), sum(r["equivalent"] for r in rows), sum(r["detected"] for r in rows),
            sum(len(r["open"]) for r in rows))


def with_table(text: str, block: str) -> str:
    """``text`` with its generated part replaced by ``block`` (the markers kept)."""
    head, found, rest = text.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"TESTING.md lacks the markers {BEGIN!r} and {END!r}")
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def _at_least_one(text: str) -> int:
    """``--max-children``: a whole number of processes, at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)


def main() -> None:
    """Run the modules asked for, one copy each, and write their scores."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modules", default=None, help="comma-separated paths (default: all of core.toml)")
    parser.add_argument("--workdir", default="/tmp/cloudbroker-mutation")
    parser.add_argument("--max-children", type=_at_least_one, default=2)
    parser.add_argument("--out", default=str(ROOT / "mutation" / "scores.json"))
    parser.add_argument("--table", action="store_true", help="only rewrite docs/TESTING.md's table")
    parser.add_argument("--recheck-timeouts", action="store_true",
                        help="run again, one native thread each, only the mutants that timed out or crashed")
    parser.add_argument("--count-only", action="store_true",
                        help="count the statuses already in the modules' copies without running mutmut")
    args = parser.parse_args()
    core = tomllib.loads((ROOT / "mutation" / "core.toml").read_text())["modules"]
    reasons = tomllib.loads((ROOT / "mutation" / "equivalent.toml").read_text()).get("equivalent", {})
    out_path = Path(args.out)
    if args.table:
        testing = ROOT / "docs" / "TESTING.md"
        results = json.loads(out_path.read_text())
        pending = [m for m in core if m not in results]
        testing.write_text(with_table(testing.read_text(), table(results, reasons, pending)))
        return
    if args.modules is not None and not args.modules.strip(","):
        parser.error("--modules needs one or more paths (leave it out for all of mutation/core.toml)")
    paths = args.modules.split(",") if args.modules is not None else list(core)
    unknown = [p for p in paths if p not in core]
    if unknown:
        parser.error(f"not in mutation/core.toml: {', '.join(unknown)}")
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).with_name("mutmut"))
    results: dict = {}
    for path in paths:
        copy = prepare(path, core[path], Path(args.workdir))
        names = recheck(statuses(copy, mutmut)) if args.recheck_timeouts else []
        if not args.count_only and (names or not args.recheck_timeouts):
            subprocess.run([mutmut, "run", "--max-children", str(args.max_children), *names], cwd=copy, check=False,
                           env=os.environ | ONE_THREAD)
        results = json.loads(out_path.read_text()) if out_path.exists() else {}  # other runs may have written
        results[path] = score(statuses(copy, mutmut), set(reasons))
        out_path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        r = results[path]
        print(f"{path}: {r['detected']} of {r['mutants'] - r['equivalent']} detected "
              f"({r['score']:.1%}), {r['equivalent']} equivalent, {len(r['open'])} open")
        if r["stale_judgements"]:
            print(f"  judged equivalent but now detected (renumbered?): {', '.join(r['stale_judgements'])}")
    mutants, judged, detected, _ = whole(results)
    total = mutants - judged
    print(f"all: {detected} of {total} ({detected / total:.1%})" if total else "no mutant")


if __name__ == "__main__":
    main()
