"""``cloudbroker trace info``: jobs, time span, processors and fields present in a trace."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from broker.cli import inputs
from broker.cli.console import out
from workloads.swf import trace_info

trace_app = typer.Typer(help="Inspect workload traces.", no_args_is_help=True)


@trace_app.command("info")
def trace_info_cmd(
    path_or_name: Annotated[str, typer.Argument(help="An SWF file (plain or gzip) or a registry name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
) -> None:
    """Jobs, time span, processors and fields present in a trace; the lines skipped and the odd values, by reason."""
    info = trace_info(inputs.trace(path_or_name, lenient, strict))
    if as_json:
        typer.echo(json.dumps(info, sort_keys=True, default=str))
        return
    table = Table(title=str(info.get("path", path_or_name)), show_header=False)
    for key in ("jobs", "first_submit", "last_submit", "span_s", "first_submit_utc", "last_submit_utc",
                "max_procs", "max_nodes", "skipped"):
        table.add_row(key, str(info.get(key)))
    for why, count in info["skipped_by_reason"].items():
        table.add_row("  skipped", f"{count:,} {why}")
    first = {reason: line for line, reason in ((e["line"], e["reason"]) for e in info["flagged_examples"])}
    for why, count in info["flagged"].items():
        table.add_row("flagged", f"{count:,} line(s): {why} (first at line {first[why]})")
    table.add_row("fields present", ", ".join(info.get("fields_present", [])))
    table.add_row("fields missing", ", ".join(info.get("fields_missing", [])))
    out.print(table)
