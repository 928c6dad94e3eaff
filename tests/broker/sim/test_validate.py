"""The shared invariant checks: conservation of jobs and the error they raise."""

from __future__ import annotations

import pytest

from broker.sim.validate import EPS, InvariantError, check_conservation


def test_conservation_holds_and_fails_by_one_job_either_way() -> None:
    check_conservation(5.0, submitted=6, done=3, running=2, queued=1)
    check_conservation(0.0, submitted=0, done=0, running=0, queued=0)
    with pytest.raises(InvariantError, match=r"t=5.0: 7 job\(s\) submitted but 3 done \+ 2 running \+ 1 queued = 6"):
        check_conservation(5.0, submitted=7, done=3, running=2, queued=1)
    with pytest.raises(InvariantError, match="= 7"):
        check_conservation(5.0, submitted=6, done=3, running=2, queued=2)


def test_invariant_errors_are_assertion_errors_and_the_slack_is_a_microsecond() -> None:
    assert issubclass(InvariantError, AssertionError)
    assert EPS == 1e-6
