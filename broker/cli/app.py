"""The ``cloudbroker`` command line: ``trace info``, ``simulate``, ``plan-reservations``, ``leasing``, ``cluster``.

One module per command (:mod:`broker.cli.trace`, :mod:`~broker.cli.simulate`, :mod:`~broker.cli.plan`,
:mod:`~broker.cli.leasing`, :mod:`~broker.cli.cluster`). Output goes to stdout (a table, or one JSON
object with ``--json``); progress bars and log messages go to stderr, and a progress bar is shown only
on a terminal.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from broker.cli.cluster import cluster_app
from broker.cli.leasing import leasing_app
from broker.cli.plan import plan_reservations_cmd
from broker.cli.simulate import simulate_cmd
from broker.cli.trace import trace_app

app = typer.Typer(help="Replay job traces through a simulated cloud broker.", no_args_is_help=True,
                  add_completion=False)


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log to stderr.")] = False) -> None:
    level = logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


app.add_typer(trace_app, name="trace")
app.command("simulate")(simulate_cmd)
app.command("plan-reservations")(plan_reservations_cmd)
app.add_typer(leasing_app, name="leasing")
app.add_typer(cluster_app, name="cluster")
