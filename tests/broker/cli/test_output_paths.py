"""Every output path a command cannot write is refused in one line before any work (issue 31, item 5).

An output under a regular file, or in a directory nothing can be created in, used to end in a
traceback that called itself a bug once the results were ready (``cluster sweep`` after the whole
grid). Each command's every output option is tried here while every function that reads a trace,
simulates or sweeps is replaced by one that fails the test.
"""

from __future__ import annotations

import errno
import importlib
import os
from pathlib import Path
from typing import Any

import pytest

from broker.cli import inputs
from tests.broker.cli.test_help_ranges import TINY
from tests.broker.cli.test_refusals import BASE, KTH, commands, one_line
from tests.conftest import SPOT_DIR, cloudbroker
from workloads.errors import ConfigError

#: The options through which each command writes (a directory unless said); a test checks none is missing.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "simulate": ("--out",), "plan-reservations": ("--save-demand",), "leasing": ("--out",),
    "leasing sweep": ("--store", "--plot"), "cluster": ("--out",), "cluster sweep": ("--out", "--store"),
    "advise": ("--out",), "advise sweep": ("--out",), "elastic": ("--out",), "elastic sweep": ("--out", "--store"),
    "report": ("--out",), "spot": ("--out", "--store"),
}
#: The path options and arguments that are read, not written.
READ = {("simulate", "--reservations"), ("simulate", "--spot"), ("plan-reservations", "--demand"),
        ("plan-reservations", "--spot"), ("report", "--spot"),
        ("cluster", "--volumes"), ("cluster sweep", "spec"), ("spot", "--availability"), ("spot", "files")}
#: Besides :data:`tests.broker.cli.test_refusals.BASE`: what gets a command past its other checks.
EXTRA = {"advise sweep": ("--trace", KTH), "leasing sweep": ("--trace", KTH),
         "spot": ("--availability", str(SPOT_DIR / "skypilot-spot-traces" / "availability" / "1-node"
                                       / "aws-10-26-2022" / "us-west-2a_k80_1.json"), "--sweep", "4")}
#: Everything a command could do after its checks: read a trace, build a workload, simulate, sweep, report.
WORK = ("broker.cli.inputs.trace", "broker.cli.inputs.workload", "broker.cli.cluster.workload_of",
        "broker.cli.simulate.simulate", "broker.cli.plan.replay_demand", "broker.cli.plan.plan_reservations",
        "broker.cli.leasing.run_leasing", "broker.cli.leasing.run_constant", "broker.cli.cluster.simulate_cluster",
        "broker.cli.backends.sweep", "broker.sweep.run_sweep", "broker.cli.elastic.run_elastic",
        "broker.report.build_report", "broker.cli.spot._timelines", "broker.cli.spot.run_spot",
        "broker.cli.spot.run_sweep")
CASES = [(command, option) for command, options in OUTPUTS.items() for option in options]


def _boom(*_: Any, **__: Any) -> Any:
    raise AssertionError("work started before the output path was refused")


@pytest.fixture
def idle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the regular file ``taken``, in which no command can do any work."""
    (tmp_path / "taken").write_text("a regular file\n")
    monkeypatch.chdir(tmp_path)
    for target in WORK:  # every module imported first: one importing a target by name while it is patched
        importlib.import_module(target.rsplit(".", 1)[0])  # would keep the stand-in for good
    for target in WORK:
        monkeypatch.setattr(target, _boom)
    return tmp_path


def _refused(command: str, option: str, value: str) -> str:
    run = cloudbroker(*command.split(), *BASE.get(command, ()), *EXTRA.get(command, ()), option, value)
    line = one_line(run)  # exit status 2, one line "error: ...", nothing on stdout
    assert "Traceback" not in run.err and f"{option} {value}: cannot write there" in line, line
    return line


def path_options(command: Any) -> list[str]:
    """The options (and argument names) of ``command`` that take a file system path."""
    def kinds(param: Any) -> set[Any]:
        annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
        return set(getattr(annotation, "__args__", (annotation,))) - {type(None)}

    return [p.opts[0] if p.opts[0].startswith("-") else p.name for p in command.params if kinds(p) == {Path}]


def test_every_path_a_command_takes_is_known_as_read_or_written() -> None:
    found = {(path, option) for path, command in commands() for option in path_options(command)}
    assert found == READ | set(CASES)


@pytest.mark.parametrize(("command", "option"), CASES, ids=[f"{c} {o}" for c, o in CASES])
def test_an_output_under_a_regular_file_is_refused_before_any_work(idle: Path, command: str, option: str) -> None:
    line = _refused(command, option, "taken/out")
    assert f"{idle / 'taken'} is a file, not a directory" in line
    assert sorted(p.name for p in idle.iterdir()) == ["taken"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc (nothing can be created in it)")
@pytest.mark.parametrize(("command", "option"), CASES, ids=[f"{c} {o}" for c, o in CASES])
def test_an_output_where_nothing_can_be_created_is_refused_even_for_root(idle: Path, command: str,
                                                                         option: str) -> None:
    line = _refused(command, option, "/proc/cloudbroker-out/results")
    assert "/proc is a directory in which nothing can be created" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a directory whatever its permission bits")
@pytest.mark.parametrize(("command", "option"), CASES, ids=[f"{c} {o}" for c, o in CASES])
def test_an_output_in_a_read_only_directory_is_refused_before_any_work(idle: Path, command: str, option: str) -> None:
    (idle / "read-only").mkdir(mode=0o555)
    try:
        line = _refused(command, option, "read-only/out")
    finally:
        (idle / "read-only").chmod(0o755)
    assert f"{idle / 'read-only'} is a directory that is not writable" in line


def test_a_path_that_can_be_written_passes_and_the_check_leaves_nothing_behind(tmp_path: Path) -> None:
    inputs.writable(tmp_path / "new" / "deeper", "--out")
    inputs.output_dir(tmp_path, "--out", force=False)
    inputs.output_file(tmp_path / "demand.csv", "--save-demand", force=False)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_store_on_a_read_only_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--store /proc/self: cannot write there: /proc/self is a "):
        inputs.store_dir(Path("/proc/self"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a file whatever its permission bits")
def test_an_existing_output_file_that_is_not_writable_is_refused_with_force(tmp_path: Path) -> None:
    (tmp_path / "demand.csv").write_text("x\n")
    (tmp_path / "demand.csv").chmod(0o444)
    with pytest.raises(ConfigError, match="is a file that is not writable"):
        inputs.output_file(tmp_path / "demand.csv", "--save-demand", force=True)


def _full(*_: Any, **__: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(("command", "target"), [("simulate", "broker.cli.simulate.write_result"),
                                                 ("cluster", "broker.cli.cluster.write_result"),
                                                 ("leasing --policy constant:1", "broker.cli.leasing.write_result"),
                                                 ("elastic --policy fcfs", "broker.cli.elastic.write_result"),
                                                 ("report", "broker.report.build_report")])
def test_a_write_that_fails_after_the_run_is_one_line_naming_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       command: str, target: str) -> None:
    (tmp_path / "tiny.swf").write_text(TINY)
    monkeypatch.setattr(target, _full)  # the disk fills up while the run goes on
    run = cloudbroker(*command.split(), "--trace", str(tmp_path / "tiny.swf"), "--out", str(tmp_path / "out"))
    assert run.code == 2 and "Traceback" not in run.err
    assert run.err.splitlines() == [f"error: --out {tmp_path / 'out'}: writing failed (No space left on device)"]
