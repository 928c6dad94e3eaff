"""The report as one self-contained HTML page: styles inline, figures as data URIs, no script, no fetch."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Any

import pandas as pd

from broker.report import units
from broker.report.model import Section

#: Rows of a table shown on the page (every row is in its Parquet file).
MAX_ROWS = 25

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
main { max-width: 1040px; margin: 0 auto; padding: 1em 1.5em 3em; background: #fff; }
nav { font-size: 0.9em; margin-bottom: 1em; }
nav a { margin-right: 0.9em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
.status { font-size: 0.75em; padding: 0.1em 0.5em; border-radius: 0.6em; margin-left: 0.5em; vertical-align: middle; }
.done { background: #e3f4e1; } .skipped, .not-applicable { background: #fbe9d6; }
.advice { border-left: 4px solid #2a7ae2; background: #eef4fc; padding: 0.5em 0.9em; }
#summary h2 { margin-top: 0.3em; }
figure { margin: 1em 0; } figure img { width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #555; }
table.data { border-collapse: collapse; font-size: 0.8em; margin: 0.5em 0; display: block; overflow-x: auto; }
table.data th, table.data td { border: 1px solid #ddd; padding: 0.2em 0.45em; text-align: right; white-space: nowrap; }
pre { background: #f3f3f3; padding: 0.5em; font-size: 0.8em; white-space: pre-wrap; word-break: break-all; }
.note { font-size: 0.85em; color: #555; }
"""


def render(title: str, subtitle: str, sections: Sequence[Section], footer: dict[str, Any],
           lead: Sequence[tuple[str, str]] = (), prices: str = "") -> str:
    """The page's HTML; ``lead``: the summary's ``(what, answer)`` lines, ``prices``: the price books in a sentence."""
    nav = " ".join(f'<a href="#{s.key}">{html.escape(s.title)}</a>' for s in sections)
    body = "\n".join(_section(s) for s in sections)
    skipped = "".join(f"<li>{html.escape(s)}</li>" for s in footer.get("skipped", []))
    notes = (f"<p class=note>Budget {footer['budget_s'] / 60:.0f} min, planned {footer['planned_s']:.0f} s from "
             f"estimates, {footer['wall_s']:.0f} s spent. Seed {footer['seed']}. Run the commands from this "
             f"report's folder (they read <code>reservation_plan.json</code> and <code>cluster_grid.toml</code> "
             f"beside this page).</p>")
    left = f"<h2 id=skipped>Left out to stay within the budget</h2><ul>{skipped}</ul>" if skipped else ""
    return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><link rel=icon href='data:,'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n"
            f"<body><main><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p>{_lead(lead, prices)}"
            f"<nav>{nav}</nav>\n{body}\n{left}\n{notes}\n<p class=note>Every figure is in <code>report.json</code>, "
            f"every table in <code>tables/</code> (Parquet).</p></main></body></html>\n")


def _lead(lines: Sequence[tuple[str, str]], prices: str) -> str:
    """The summary at the top: one line per answer, then the price books."""
    if not lines and not prices:
        return ""
    items = "".join(f"<li><b>{html.escape(what)}:</b> {html.escape(answer)}</li>" for what, answer in lines)
    return (f"<div class=advice id=summary><h2>Summary</h2><ul>{items}</ul>"
            + (f"<p class=note>{html.escape(prices)}</p>" if prices else "") + "</div>")


def _section(s: Section) -> str:
    status = s.status.replace(" ", "-")
    parts = [f'<section id="{s.key}"><h2>{html.escape(s.title)}<span class="status {status}">'
             f"{html.escape(s.status)}</span></h2>"]
    if s.why:
        parts.append(f"<p><b>Did not run:</b> {html.escape(s.why)}</p>")
    if s.summary:
        parts.append(f"<p>{html.escape(s.summary)}</p>")
    if s.recommendation:
        parts.append(f"<p class=advice><b>Recommendation.</b> {html.escape(s.recommendation)}</p>")
    for f in s.figures:
        data = base64.b64encode(f.svg.encode("utf-8")).decode("ascii")
        parts.append(f'<figure><img alt="{html.escape(f.caption)}" src="data:image/svg+xml;base64,{data}">'
                     f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
    for name, table in s.tables.items():
        parts.append(_table(name, table) if not name.endswith("_hourly") else
                     f"<p class=note>The series: <code>tables/{name}.parquet</code> ({len(table):,} rows).</p>")
    if s.skipped_parts:
        parts.append("<p class=note>Left out: " + "; ".join(html.escape(p) for p in s.skipped_parts) + "</p>")
    if s.commands:
        lines = "\n".join(f"# {what}\n{command}" for what, command in s.commands)
        parts.append(f"<p class=note>The commands behind these numbers:</p><pre>{html.escape(lines)}</pre>")
    parts.append("</section>")
    return "\n".join(parts)


def _table(name: str, table: pd.DataFrame) -> str:
    shown = table.head(MAX_ROWS).copy()
    headings = {}
    for col in shown.columns:
        heading, factor = units.column(str(col))
        if factor != 1.0:
            shown[col] = shown[col].astype(float) * factor
        headings[col] = heading
    shown = shown.rename(columns=headings)
    more = (f"<p class=note>{len(table) - MAX_ROWS:,} more rows in <code>tables/{name}.parquet</code>.</p>"
            if len(table) > MAX_ROWS else "")
    text = shown.to_html(index=False, border=0, classes="data", na_rep="-", float_format=_number)
    return text + more


def _number(x: float) -> str:
    return f"{x:,.3f}" if abs(x) < 1000 else f"{x:,.0f}"


def nothing_page(label: str, counts: dict[str, Any]) -> str:
    """The page of a trace with no job left to run: the jobs read, removed by reason, kept (none)."""
    removed = "".join(f"<tr><td>{html.escape(why)}</td><td>{c:,}</td></tr>" for why, c in
                      counts.get("jobs_removed", {}).items())
    flagged = "".join(f"<tr><td>{html.escape(why)}</td><td>{c:,}</td></tr>" for why, c in
                      counts.get("jobs_flagged", {}).items())
    skipped = sum(counts.get("lines_skipped", {}).values())
    title = f"Site report: {label}"
    return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><link rel=icon href='data:,'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body><main>"
            f"<h1>{html.escape(title)}</h1><p class=advice><b>Nothing to run.</b> Of the {counts['jobs_in']:,} "
            f"job(s) read, none is left to replay: there is nothing to cost, reserve, lease or schedule.</p>"
            f"<table class=data><tr><th>removed, by reason</th><th>jobs</th></tr>{removed}</table>"
            + (f"<table class=data><tr><th>flagged, by reason</th><th>jobs</th></tr>{flagged}</table>" if flagged
               else "")
            + (f"<p class=note>{skipped:,} malformed line(s) skipped (--lenient).</p>" if skipped else "")
            + "<p class=note>The counts are in <code>summary.json</code>.</p></main></body></html>\n")
