"""What a report is made of: its configuration, the input every section reads, and the sections' results."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from broker.coh.spot import SpotConfig
from broker.hybrid.policies import MAX_NODES
from workloads.swf import SwfHeader

#: The jobs of the generated workload a report makes when no trace is given (``simulate``'s default).
GENERATED_JOBS = 2000


@dataclass(frozen=True, slots=True)
class SpotSetting:
    """The spot market of the report's spot section: the run's :class:`SpotConfig`, its timeline file, its options.

    ``file`` is the timeline as ``--spot`` gave it; ``flags`` the spot options set away from their
    defaults, as a command line gives them (`` --checkpoint-s 600.0``), for the reproducing command.
    """

    config: SpotConfig
    file: str
    flags: str = ""


@dataclass(frozen=True, slots=True)
class ReportConfig:
    """A report's settings: the trace (``None``: the generated workload), the site's nodes, the budget, the seed.

    ``nodes`` is the site's own cluster M (default: the trace header's ``MaxProcs``); ``budget_min``
    the minutes the analyses may take, planned from each part's estimated cost (:mod:`broker.report.budget`);
    ``limit_jobs`` the first N jobs of the trace (by arrival) the report is made on; ``lenient`` and
    ``strict`` how the trace is read (:func:`workloads.swf.read_swf`), the same in every section;
    ``spot`` the spot market of the spot section (None: the report has no spot section).
    """

    trace: str | None = None
    nodes: int | None = None
    budget_min: float = 10.0
    seed: int = 0
    limit_jobs: int | None = None
    lenient: bool = False
    strict: bool = False
    spot: SpotSetting | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.budget_min) and self.budget_min > 0):
            raise ValueError(f"the budget must be a finite number of minutes > 0, got {self.budget_min}")
        if self.nodes is not None and not 1 <= self.nodes <= MAX_NODES:
            raise ValueError(f"the site's nodes must be in [1, {MAX_NODES:,}], got {self.nodes}")
        if self.seed < 0:
            raise ValueError(f"the seed must be >= 0, got {self.seed}")
        if self.limit_jobs is not None and self.limit_jobs < 1:
            raise ValueError(f"the jobs limit must be >= 1, got {self.limit_jobs}")


@dataclass(slots=True)
class ReportInput:
    """The trace every section reads, and how a command names it.

    ``path`` is the SWF file (the trace itself, or the generated workload or the trace's first jobs
    written beside the report); ``trace_arg`` the ``--trace`` value of the reproducing commands, relative
    to the report's folder (where they are run) when a file; ``nodes`` the site's M;
    ``reading`` the options every reproducing command reads the trace with (`` --lenient``, `` --strict``);
    ``spot`` the spot section's market and ``spot_arg`` its ``--spot`` value, relative to the report's folder.
    """

    path: Path
    frame: pd.DataFrame
    header: SwfHeader
    label: str
    trace_arg: str
    nodes: int
    seed: int
    shared: dict[str, Any] = field(default_factory=dict)
    reading: str = ""
    spot: SpotSetting | None = None
    spot_arg: str = ""

    @property
    def trace_cli(self) -> str:
        """The trace as a command line gives it: ``trace_arg`` quoted for a POSIX shell, and the reading options."""
        return shlex.quote(self.trace_arg) + self.reading

    @property
    def lenient(self) -> bool:
        """Whether the trace's unparsable lines are skipped (``--lenient``)."""
        return "--lenient" in self.reading.split()

    @property
    def origin(self) -> int:
        """The trace's Unix start time (0 when its header gives none)."""
        return self.header.unix_start_time or 0


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure of a section: a file name (``.svg``), its caption and the SVG text."""

    name: str
    caption: str
    svg: str


Status = Literal["done", "skipped", "not applicable"]


@dataclass(slots=True)
class Section:
    """One section of the report: its figures, tables, recommendation and the commands behind its numbers.

    ``status`` is ``done`` or says why the section did not run (``skipped``: the budget;
    ``not applicable``: the trace lacks what it needs), with the reason in ``why``; ``skipped_parts``
    lists the parts a section left out to stay in the budget; ``files`` are texts written beside the
    page (a reservation plan its command reads), by name.
    """

    key: str
    title: str
    status: Status = "done"
    why: str = ""
    summary: str = ""
    recommendation: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)
    figures: list[Figure] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    commands: list[tuple[str, str]] = field(default_factory=list)
    skipped_parts: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: everything but the figures' SVG and the tables' rows (written as files)."""
        return {"key": self.key, "title": self.title, "status": self.status, "why": self.why,
                "summary": self.summary, "recommendation": self.recommendation, "numbers": self.numbers,
                "figures": [{"file": f"figures/{f.name}", "caption": f.caption} for f in self.figures],
                "tables": {name: f"tables/{name}.parquet" for name in self.tables},
                "commands": [{"what": what, "command": command} for what, command in self.commands],
                "skipped_parts": self.skipped_parts, "files": sorted(self.files),
                "wall_s": round(self.seconds, 3)}
