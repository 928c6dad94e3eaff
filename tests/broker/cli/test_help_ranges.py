"""What ``--help`` says an option takes is what the command takes (issue 31, item 5).

For every numeric option of every command with a stated range (click's ``[0<=x<=1]``, or an interval
the help text writes: ``in (0, 1]``, ``at least 1``), the two must agree, and the command is run at
each bound: a closed bound is accepted, an open one refused, the value just outside refused, the
refusal one line naming the option. Runs use a twelve-job trace while every function that would
simulate or sweep fails: a value is accepted when the command gets past its checks to the work.
"""

from __future__ import annotations

import importlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.broker.cli.test_refusals import commands, numeric
from tests.conftest import SPOT_DIR, CliRun, cloudbroker

#: Twelve one-processor jobs with wait and run times, on a site of 4 (every job view keeps them).
TINY = "; MaxProcs: 4\n; MaxNodes: 4\n" + "".join(f"{i} {i * 100} {i * 10} {50 + i} 1 -1 -1 1 200 -1 1 1 1 -1 -1 -1 "
                                                    "-1 -1\n" for i in range(1, 13))
SPEC = '[workload]\ntrace = "tiny.swf"\n[[family]]\nname = "a"\ncap = [1]\n'
R5_TRACE = SPOT_DIR / "skypilot-spot-traces" / "preemption" / "1-node" / "aws-04-19-2023" / "us-east-1b_intel_64.json"
#: What each command needs besides the option under test to get past its other checks.
BASE = {"simulate": ("--trace", "tiny.swf", "--solver", "cpsat"), "plan-reservations": ("--trace", "tiny.swf"),
        "leasing": ("--trace", "tiny.swf"), "leasing sweep": ("--trace", "tiny.swf", "--v", "0:1"),
        "cluster": ("--trace", "tiny.swf"), "cluster sweep": ("spec.toml",),
        "advise": ("--trace", "tiny.swf", "--skip", "4", "--evaluate", "4"),
        "advise sweep": ("--trace", "tiny.swf", "--skip", "4", "--evaluate", "4"),
        "elastic": ("--trace", "tiny.swf"), "elastic sweep": ("--trace", "tiny.swf"),
        "report": ("--trace", "tiny.swf", "--out", "report"),
        "spot": ("--availability", str(SPOT_DIR / "skypilot-spot-traces" / "availability" / "1-node" / "aws-10-26-2022"
                                       / "us-west-2a_k80_1.json"))}
#: Options bound to another option, with what that other option must be for the bound to be reachable.
JOINT = {("simulate", "--ipp-max-jobs"): ("--ipp-chunk-jobs", "0"),  # a chunk is below --ipp-max-jobs
         # an elastic pool (elastic sweep runs rigid and elastic) needs 1 <= --min-cores <= --cores <= --max-cores
         ("elastic sweep", "--cores"): ("--min-cores", "1"), ("elastic sweep", "--min-cores"): ("--cores", "1000000"),
         ("elastic sweep", "--max-cores"): ("--min-cores", "1", "--cores", "1"),
         # a job's deadline lies after its work
         ("spot", "--work-h"): ("--deadline-h", "175200"), ("spot", "--deadline-h"): ("--work-h", "1e-12"),
         # the spot options of simulate, plan-reservations and report go with a market (the restart overhead with a
         # checkpoint)
         ("simulate", "--spot-notice-s"): ("--spot", str(R5_TRACE)),
         ("simulate", "--spot-max-preemptions"): ("--spot", str(R5_TRACE)),
         ("simulate", "--restart-overhead-s"): ("--spot", str(R5_TRACE), "--checkpoint-s", "60"),
         ("plan-reservations", "--spot-notice-s"): ("--spot", str(R5_TRACE)),
         ("plan-reservations", "--spot-max-preemptions"): ("--spot", str(R5_TRACE)),
         ("plan-reservations", "--restart-overhead-s"): ("--spot", str(R5_TRACE), "--checkpoint-s", "60"),
         ("report", "--spot-notice-s"): ("--spot", str(R5_TRACE)),
         ("report", "--spot-max-preemptions"): ("--spot", str(R5_TRACE)),
         ("report", "--restart-overhead-s"): ("--spot", str(R5_TRACE), "--checkpoint-s", "60")}
#: Bounds a value cannot reach on any trace, with why (the refusal is then the data's, not the option's).
UNREACHABLE = {("elastic", "--first-day", "high"): "no trace has a job a thousand years after its first",
               ("elastic sweep", "--first-day", "high"): "no trace has a job a thousand years after its first"}
WORK = ("broker.cli.simulate.simulate", "broker.cli.plan.replay_demand", "broker.cli.plan.replay_mix",
        "broker.cli.leasing.run_leasing",
        "broker.cli.leasing.run_constant", "broker.cli.cluster.simulate_cluster", "broker.cli.backends.sweep",
        "broker.sweep.run_sweep", "broker.cli.elastic.run_elastic", "broker.advisor.evaluate.evaluate",
        "broker.report.build_report", "broker.cli.spot.on_demand_cost",
        # the leasing sweep's grid: 2,000,000 random runs (the bound) spawn as many seeds before the sweep starts
        "broker.cli.leasing.sweep_configs")
_NUMBER = r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)"
INTERVAL = re.compile(rf"in ([\[(])\s*{_NUMBER}\s*,\s*{_NUMBER}\s*([\])])")
AT_LEAST = re.compile(rf"at least {_NUMBER}")


@dataclass(frozen=True)
class Bound:
    """One end of an option's range."""

    value: float
    closed: bool


def help_range(text: str) -> tuple[Bound | None, Bound | None] | None:
    """The range the help text writes, if it writes one."""
    if m := INTERVAL.search(text):
        return Bound(float(m[2]), m[1] == "["), Bound(float(m[3]), m[4] == "]")
    if m := AT_LEAST.search(text):
        return Bound(float(m[1]), True), None
    return None


def click_range(param: Any) -> tuple[Bound | None, Bound | None] | None:
    """The range ``--help`` shows from click's ``min``/``max`` (always closed)."""
    if param.min is None and param.max is None:
        return None
    low = None if param.min is None else Bound(param.min, True)
    return low, (None if param.max is None else Bound(param.max, True))


RANGED = [(path, p) for path, command in commands() for p in command.params
          if p.opts and p.opts[0].startswith("--") and numeric(p) is not None
          and (help_range(p.help or "") or click_range(p))]


def test_every_command_with_numeric_options_is_tried_and_many_options_state_a_range() -> None:
    assert {path for path, _ in RANGED} == set(BASE) and len(RANGED) >= 60


@pytest.mark.parametrize(("path", "param"), RANGED, ids=[f"{path} {p.opts[0]}" for path, p in RANGED])
def test_the_range_help_shows_and_the_range_help_writes_agree(path: str, param: Any) -> None:
    written, shown = help_range(param.help or ""), click_range(param)
    if written is None or shown is None:
        return
    for end, (w, s) in enumerate(zip(written, shown, strict=True)):
        if s is not None:  # --help shows this end as "<=": the text must say the same, closed, value
            assert w is not None and w.closed and w.value == s.value, (path, param.opts[0], ["low", "high"][end], w, s)


def values(param: Any) -> list[tuple[str, str, bool]]:
    """(end, value, accepted) at each end of the option's range: the bound itself, and just outside it."""
    kind = numeric(param)
    stated = help_range(param.help or "") or click_range(param)
    assert stated is not None
    tried = []
    for end, bound, away in (("low", stated[0], -math.inf), ("high", stated[1], math.inf)):
        if bound is None:
            continue
        outside = bound.value + (1 if away > 0 else -1) if kind is int else math.nextafter(bound.value, away)
        shown = str(int(bound.value)) if kind is int else repr(float(bound.value))
        tried += [(end, shown, bound.closed), (end, str(int(outside)) if kind is int else repr(outside), False)]
    return tried


CASES = [(path, param, end, value, accepted) for path, param in RANGED for end, value, accepted in values(param)]


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tiny.swf").write_text(TINY)
    (tmp_path / "spec.toml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    for target in WORK:  # every module imported first: one importing a target by name while it is patched
        importlib.import_module(target.rsplit(".", 1)[0])  # would keep the stand-in for good
    for target in WORK:
        monkeypatch.setattr(target, _reached)
    return tmp_path


class Reached(Exception):
    """The command got past its checks to the work."""


def _reached(*_: Any, **__: Any) -> Any:
    raise Reached


def run(path: str, option: str, value: str) -> CliRun:
    return cloudbroker(*path.split(), *BASE[path], *JOINT.get((path, option), ()), f"{option}={value}")


@pytest.mark.parametrize(("path", "param", "end", "value", "accepted"), CASES,
                         ids=[f"{c[0]} {c[1].opts[0]}={c[3]}" for c in CASES])
def test_an_option_takes_its_stated_range_and_refuses_what_lies_outside(tiny: Path, path: str, param: Any, end: str,
                                                                         value: str, accepted: bool) -> None:
    option = param.opts[0]
    if accepted and (path, option, end) in UNREACHABLE:
        pytest.skip(UNREACHABLE[(path, option, end)])
    result = run(path, option, value)
    lines = result.err.splitlines()
    if accepted:
        assert result.code == 1 and "Reached" in result.err, (path, option, value, result.err[-400:])
    else:
        assert result.code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and option in lines[0], \
            (path, option, value, result)
