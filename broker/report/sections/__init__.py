"""The report's sections, in the order they run and appear: each ``run(input, budget) -> Section``.

The order is the order of value to a site: the trace, what CoH costs, what to reserve, what spot
would save (only with a spot market, ``--spot``), how to run a cluster wholly on the cloud, whether
to lease beside an own cluster, the advisor and the elastic pool.
Each section's share of the budget is its weight (:data:`WEIGHTS`) over the weights of the sections
still to run; a section that cannot hold the whole trace in its share runs on its first jobs, and
one that cannot hold even its smallest slice is skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.report.budget import Budget
from broker.report.model import ReportInput, Section
from broker.report.sections import advisor, cluster, coh, elastic, leasing, reservations, spot, trace

SectionRunner = Callable[[ReportInput, Budget], Section]

#: (key, title, runner) in the report's order.
SECTIONS: tuple[tuple[str, str, SectionRunner], ...] = (
    ("trace", "The trace", trace.run),
    ("coh", "CoH on on-demand instances", coh.run),
    ("reservations", "Reserved instances", reservations.run),
    ("spot", "Spot instances", spot.run),
    ("cluster", "A cluster run wholly on the cloud", cluster.run),
    ("leasing", "A site that leases cloud nodes", leasing.run),
    ("advisor", "Run here or in the cloud: the placement advisor", advisor.run),
    ("elastic", "An elastic pool of cores", elastic.run),
)

#: Each section's weight in the budget's shares. The trace's summary costs microseconds per job; the CoH
#: section's share also holds CoH-R's replay in the reservation section and CoH's replay with spot in the spot
#: section (which plan nothing of their own).
WEIGHTS: dict[str, float] = {"trace": 0.0, "coh": 2.0, "reservations": 0.0, "spot": 0.0, "cluster": 1.0,
                             "leasing": 1.0, "advisor": 1.0, "elastic": 1.0}


def wanted(key: str, *, spot: bool) -> bool:
    """Whether the section ``key`` is in a report: the spot section only with a spot market (``spot``: ``--spot``)."""
    return spot or key != "spot"
