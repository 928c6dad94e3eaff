"""The settings an IPP member reports (``stats()["ipp"]`` of a CoH run), typed out by hand.

A mutation run of ``broker/coh/ipp_member.py`` found ``IppMember.describe`` read by no test: every key and
value below is what the member was given (or its documented default), not a second call of the code.
"""

from __future__ import annotations

import numpy as np

from broker.coh.ipp_member import IppMember
from broker.pricing.billing import Billing
from solvers.base import Limit
from solvers.cbc import CbcSolver
from solvers.cpsat import CpSatSolver

HOURLY = np.array([0.065, 0.26])


def test_a_race_of_two_solvers_reports_each_setting_as_given() -> None:
    member = IppMember((CbcSolver(), CpSatSolver()), (Limit.deterministic(5000.0), Limit.wall(2.5, threads=3)),
                       billing=Billing(), hourly=HOURLY, max_jobs=7, max_vms=4, warm_start=False, fast_path=False,
                       symmetry="assign", paid=False, exact_jobs=3, workers=2, race_jobs=9)
    assert member.describe() == {
        "solver": "cbc,cpsat",  # the backends in the order given, comma separated
        "limit": "work 5000, 2.5 s on 3 thread(s)",  # each entrant's limit, in the same order
        "max_jobs": 7, "exact_jobs": 3, "workers": 2, "race_jobs": 9, "retries_without_start": 0, "max_vms": 4,
        "warm_start": False, "fast_path": False, "symmetry": "assign", "paid": False}


def test_one_solver_reports_the_documented_defaults() -> None:
    # one limit for the one solver; defaults: 50 jobs at most, the exact path up to 2 jobs (MAX_JOBS of
    # broker.coh.exact), one worker, no race, no VM cap, warm start, fast path, order symmetry, paid units sunk
    member = IppMember(CpSatSolver(), Limit.wall(2), billing=Billing(), hourly=HOURLY)
    assert member.describe() == {
        "solver": "cpsat", "limit": "2 s on 1 thread(s)", "max_jobs": 50, "exact_jobs": 2, "workers": 1,
        "race_jobs": 0, "retries_without_start": 0, "max_vms": None, "warm_start": True, "fast_path": True,
        "symmetry": "order", "paid": True}
