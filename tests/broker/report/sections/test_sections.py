"""The report's sections (:mod:`broker.report.sections`) that cannot run on a small trace or a spent budget say why."""

from __future__ import annotations

from pathlib import Path

from broker.report.budget import Budget
from broker.report.sections import advisor, cluster, coh, elastic, leasing, reservations
from tests.broker.report.hand_made import Clock, small_input
from workloads.swf import SwfHeader


def test_sections_that_do_not_fit_the_budget_or_the_trace_say_why(tmp_path: Path) -> None:
    inp = small_input(tmp_path)
    budget = Budget(0.1, clock=Clock())
    s = coh.run(inp, budget)  # four runs of 0.05 s at least without the integer program, and CoH-R
    assert (s.key, s.title, s.status) == ("coh", "CoH on on-demand instances", "skipped")
    assert s.why == "CoH on on-demand instances: needs about 0.3 s, 0.1 s of the budget left" == budget.skipped[-1]
    s = reservations.run(inp, budget)
    assert (s.key, s.title, s.status, s.why) == ("reservations", "Reserved instances", "skipped",
                                                 "the CoH replay its plan is made on did not run")
    s = cluster.run(inp, budget)
    assert (s.key, s.title, s.status) == ("cluster", "A cluster run wholly on the cloud", "skipped")
    assert s.why.startswith("the cloud-cluster grid: needs about ") and s.why == budget.skipped[-1]
    s = leasing.run(inp, budget)  # caps(4) = [0, 1, 2, 4]: 6 runs of 0.05 s at least; the third skip
    assert (s.key, s.title, s.status) == ("leasing", "A site that leases cloud nodes", "skipped")
    assert s.why == "constant caps V: needs about 0.3 s, 0.1 s of the budget left" == budget.skipped[2]
    assert budget.planned == 0.0 and len(budget.skipped) == 3
    s = elastic.run(inp, budget)  # one core-job per processor: 4 + 2 + 1, and 1 for the job that ran 0 s
    assert (s.key, s.title, s.status, s.why) == ("elastic", "An elastic pool of cores", "not applicable",
                                                 "8 core-jobs, fewer than 5,000")
    s = advisor.run(inp, budget)
    assert (s.key, s.title, s.status, s.why) == ("advisor", "Run here or in the cloud: the placement advisor",
                                                 "not applicable", "3 replayable jobs, fewer than 2,000")
    inp.header = SwfHeader()
    s = advisor.run(inp, budget)
    assert (s.status, s.why) == ("not applicable",
                                 "the trace's header gives no MaxProcs (the machine's size the features need)")
    assert len(budget.skipped) == 3
