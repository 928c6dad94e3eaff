"""A site report in one call: what to reserve, which policy to run, what it costs and how long jobs wait.

:func:`build_report` runs, within a time budget, the analyses that fit a trace (its summary; CoH
against its heuristics and the lower bound; a reservation plan and CoH-R replayed on it; with a
spot market, CoH with and without spot VMs; the cloud-cluster policies' Pareto front; leasing
beside the site's own cluster; the placement advisor; an elastic pool of cores) and writes one
self-contained HTML page, a JSON file with every figure and the tables as Parquet
(``cloudbroker report``).
"""

from broker.report.build import Report, build_report
from broker.report.model import ReportConfig, Section

__all__ = ["Report", "ReportConfig", "Section", "build_report"]
