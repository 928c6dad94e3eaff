"""``cloudbroker report``: the analyses that fit a trace, within a time budget, as one HTML page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from broker.cli import inputs, spot_options
from broker.cli.console import bar, err, out
from broker.hybrid.policies import MAX_NODES
from broker.pricing.spot import NOTICE_S
from broker.pricing.spot_offer import PAPER_SPOT_FRACTION, R5_16XLARGE_ON_DEMAND


def report_cmd(
    out_dir: Annotated[Path, typer.Option("--out", help="Directory of the report: index.html, report.json, "
                                          "tables/ (Parquet) and figures/.")],
    trace: Annotated[str | None, typer.Option(help="SWF file or registry name (default: the generated workload, "
                                                   "written as workload.swf beside the report).")] = None,
    nodes: Annotated[int | None, typer.Option(min=1, max=MAX_NODES, help="The site's own nodes M (default: the "
                                                                         "trace header's MaxProcs).")] = None,
    budget_min: Annotated[float, typer.Option(callback=inputs.positive, help="Minutes the analyses may take "
                                                                             "(planned from estimates).")] = 10.0,
    seed: Annotated[int, typer.Option(min=0, help="Seed of every random choice (as the other commands').")] = 0,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the first N jobs (by arrival), written "
                                                               "beside the report as trace.swf.")] = None,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    force: Annotated[bool, typer.Option(help="Overwrite the files of an earlier report in --out.")] = False,
    spot: spot_options.File = None,
    spot_notice_s: spot_options.Notice = NOTICE_S["aws"],
    checkpoint_s: spot_options.Checkpoint = None,
    restart_overhead_s: spot_options.RestartOverhead = 0.0,
    spot_on_demand_price: spot_options.OnDemandPrice = R5_16XLARGE_ON_DEMAND,
    spot_fraction: spot_options.Fraction = PAPER_SPOT_FRACTION,
    spot_return: spot_options.Return = False,
    spot_max_preemptions: spot_options.MaxPreemptions = None,
    spot_expected_cost: spot_options.ExpectedCost = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print report.json.")] = False,
) -> None:
    """A site report for a trace: what to reserve, which policy to run, what it costs, in one page.

    With ``--spot FILE`` (and the spot options of ``simulate``) it also says what spot VMs would save.
    """
    from broker.report import ReportConfig, build_report  # the worlds and matplotlib, imported when run
    from broker.report.build import usable_jobs
    from broker.report.model import SpotSetting
    from broker.report.page import nothing_page

    given = {"notice_s": spot_notice_s, "checkpoint_s": checkpoint_s, "restart_overhead_s": restart_overhead_s,
             "on_demand": spot_on_demand_price, "fraction": spot_fraction, "spot_return": spot_return,
             "max_preemptions": spot_max_preemptions, "expected_cost": spot_expected_cost}
    market = spot_options.spot_config(spot, given)  # the timeline read and checked: refused before work
    inputs.output_dir(out_dir, "--out", force=force)
    swf = inputs.trace(trace, lenient, strict) if trace is not None else None  # refused before work
    config = ReportConfig(trace=trace, nodes=nodes, budget_min=budget_min, seed=seed, limit_jobs=limit_jobs,
                          lenient=lenient, strict=strict, spot=None if market is None or spot is None else
                          SpotSetting(market, str(spot), spot_options.spot_flags(given)))
    counts: dict[str, object] = {}
    if swf is not None and trace is not None:
        counts = inputs.kept(usable_jobs(swf, config), trace, swf)
        if not counts["jobs_kept"]:  # before the site's size is asked for: there is nothing to size it for
            inputs.nothing_to_run(counts, trace, as_json=as_json, out_dir=out_dir)
            with inputs.writing("--out", out_dir):
                (out_dir / "index.html").write_text(nothing_page(trace, counts), encoding="utf-8")
            return
    from broker.report.sections import SECTIONS, wanted

    total = sum(wanted(key, spot=market is not None) for key, _, _ in SECTIONS)
    with bar("report", total, quiet=not err.is_terminal) as update, inputs.writing("--out", out_dir):
        report = build_report(config, out_dir, swf=swf, progress=None if update is None else
                              lambda done, total, _title: update(done, total))
    if as_json:
        typer.echo(json.dumps({**report.to_dict(), **counts}, sort_keys=True, default=str))
        return
    table = Table(title=f"report on {report.label} -> {out_dir / 'index.html'}")
    for col in ("section", "status", "s", "recommendation or reason"):
        table.add_column(col, justify="right" if col == "s" else "left")
    for s in report.sections:
        table.add_row(s.title, s.status, f"{s.seconds:.1f}", s.recommendation or s.why)
    out.print(table)
    for reason in report.budget["skipped"]:
        out.print(f"left out to stay within {budget_min:g} min: {reason}")
