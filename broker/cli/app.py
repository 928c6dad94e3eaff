"""The ``cloudbroker`` command line: one module per command, imported only when its command runs.

The modules: :mod:`broker.cli.trace`, :mod:`~broker.cli.simulate`, :mod:`~broker.cli.plan`,
:mod:`~broker.cli.leasing`, :mod:`~broker.cli.cluster`, :mod:`~broker.cli.advise`,
:mod:`~broker.cli.elastic`, :mod:`~broker.cli.spot` and :mod:`~broker.cli.report`.
``cloudbroker --help`` lists the commands from :data:`COMMANDS` without importing numpy, a solver or a
plotting library. Output goes to stdout (a table, or one JSON object with ``--json``); progress bars and
log messages go to stderr, and a progress bar is shown only on a terminal.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from typer.core import TyperGroup


@dataclass(frozen=True)
class CommandRef:
    """Where a command lives (``"module:attribute"``, a Typer app or a command function) and its one-line help."""

    target: str
    summary: str

    def load(self, name: str) -> Any:
        """The command as click runs it."""
        module, attribute = self.target.split(":")
        obj = getattr(importlib.import_module(module), attribute)
        command: Any
        if isinstance(obj, typer.Typer):
            command = typer.main.get_group(obj)
        else:
            single = typer.Typer(add_completion=False)
            single.command(name)(obj)
            command = typer.main.get_command(single)
        command.name = name
        return command


#: Every command, in the order ``--help`` lists them; a test checks each summary against its docstring.
COMMANDS: dict[str, CommandRef] = {
    "trace": CommandRef("broker.cli.trace:trace_app", "Inspect workload traces."),
    "simulate": CommandRef("broker.cli.simulate:simulate_cmd",
                           "Replay a trace (or the generated default) through CoH, CoH-R or one heuristic."),
    "plan-reservations": CommandRef("broker.cli.plan:plan_reservations_cmd",
                                    "Plan reserved-instance purchases from a trace's CoH replay or a demand file "
                                    "(CoH formula 6)."),
    "leasing": CommandRef("broker.cli.leasing:leasing_app",
                          "A local cluster that leases cloud nodes (the Q-learning paper)."),
    "cluster": CommandRef("broker.cli.cluster:cluster_app",
                          "A cluster run wholly on the cloud (the cloud-cluster paper, P1-P6)."),
    "advise": CommandRef("broker.cli.advise:advise_app",
                         "Run here or in the cloud: the placement advisor over a trace, against the oracle."),
    "elastic": CommandRef("broker.cli.elastic:elastic_app",
                          "A pool of cores for grid jobs: which job runs next and how many cores to rent "
                          "(the elastic RL paper)."),
    "spot": CommandRef("broker.cli.spot:spot_cmd",
                       "A job with a deadline on spot instances from real availability timelines (Can't Be Late)."),
    "report": CommandRef("broker.cli.report:report_cmd", "A site report for a trace: what to reserve, which policy "
                                                         "to run, what it costs, in one page."),
}


class LazyGroup(TyperGroup):
    """A group whose commands are imported when one is run; its help lists :data:`COMMANDS` alone."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._listing = False
        # placeholders: the names an unknown command's suggestions come from
        self.commands = {name: typer.core.TyperCommand(name, short_help=ref.summary) for name, ref in COMMANDS.items()}

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, imported now (a placeholder with its summary while the help is drawn)."""
        if cmd_name not in COMMANDS:
            return None
        if self._listing:
            return self.commands[cmd_name]
        return COMMANDS[cmd_name].load(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The group's help, listing :data:`COMMANDS` without importing them."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(cls=LazyGroup, help="Replay job traces through a simulated cloud broker.", no_args_is_help=True,
                  add_completion=False)


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log to stderr.")] = False) -> None:
    level = logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
