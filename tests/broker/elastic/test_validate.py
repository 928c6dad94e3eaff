"""The elastic validator (:mod:`broker.elastic.validate`) by hand on broken pool states: each check alone, with
the message it gives, and on its boundary."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from broker.elastic.validate import ElasticValidator
from broker.elastic.world import ElasticWorld, PoolConfig
from broker.sim.validate import InvariantError
from tests.broker.elastic.test_world import core_jobs

TWO = core_jobs([0, 5], [10, 10], [0, 0])


def _state(**fields) -> SimpleNamespace:
    """Two jobs on an elastic pool of 1..4 cores (60 s hold), both ended at 10 and 15, one size 2 from 0."""
    base = {"jobs": TWO, "pool": PoolConfig(2, elastic=True, min_cores=1, max_cores=4, hold_s=60.0), "size": 2,
            "submitted": 2, "done": 2, "running": {}, "queue": [], "sizes": [(0.0, 2)],
            "start": np.array([0.0, 5.0]), "end": np.array([10.0, 15.0]), "core_seconds": lambda t: 2 * t}
    return SimpleNamespace(**{**base, **fields})


def test_a_sound_end_passes() -> None:
    ElasticValidator(_state()).at_end()


@pytest.mark.parametrize(("fields", "message"), [
    # a job gone: one terminated, none running or waiting
    ({"done": 1}, r"^2 jobs, 2 submitted, 1 terminated, 0 running, 0 waiting at the end$"),
    ({"submitted": 1}, r"^2 jobs, 1 submitted, 2 terminated"),
    ({"queue": [1]}, r"1 waiting at the end$"),
    ({"running": {1: 5.0}}, r"1 running, 0 waiting at the end$"),
])
def test_every_job_must_have_run_and_ended(fields, message) -> None:
    with pytest.raises(InvariantError, match=message):
        ElasticValidator(_state(**fields)).at_end()


def test_a_job_may_not_end_before_it_started() -> None:
    with pytest.raises(InvariantError, match=r"^a job started before its submission or ended before it started$"):
        ElasticValidator(_state(end=np.array([10.0, 4.0]))).at_end()


def test_the_core_seconds_are_checked_at_the_last_termination() -> None:
    # right at 0, one core-second too many at the last termination (15): 30 from the sizes, 31 counted
    with pytest.raises(InvariantError, match=r"^the pool's core-seconds are 31.0, its sizes give 30.0$"):
        ElasticValidator(_state(core_seconds=lambda t: 2 * t + (1.0 if t >= 15 else 0.0))).at_end()


def test_the_core_seconds_tolerance_is_relative_above_one() -> None:
    # 1000 cores for 1000 s: half a core-second off is within 1e-6 of 10^6
    big = _state(size=1000, sizes=[(0.0, 1000)], end=np.array([10.0, 1000.0]), core_seconds=lambda t: 1000 * t + 0.5)
    ElasticValidator(big).at_end()
    # under one core-second the tolerance is 1e-6 absolute: 1.5e-6 off at 0.5 s is too much
    small = _state(jobs=core_jobs([0, 0], [0.25, 0.5], [0, 0]), sizes=[(0.0, 1)], start=np.zeros(2),
                   end=np.array([0.25, 0.5]), core_seconds=lambda t: t + 1.5e-6)
    with pytest.raises(InvariantError, match="core-seconds"):
        ElasticValidator(small).at_end()


def test_a_world_of_no_job_ends_at_once() -> None:
    empty = core_jobs([], [], [], groups=1)
    world = ElasticWorld(empty, PoolConfig(2, elastic=True, min_cores=1, max_cores=4), validate=True)
    assert world.advance() is None and world.sizes == [(0.0, 2)]


def test_the_hold_is_checked_between_the_last_two_changes() -> None:
    # sizes 2 from 0, 3 from 0 (the first decision), 4 from 100, then 2 from 130: only 30 s after 100
    state = _state(sizes=[(0.0, 2), (0.0, 3), (100.0, 4)], size=4, done=0, submitted=0, start=np.full(2, np.nan))
    validator = ElasticValidator(state)
    validator.at_event(100.0)
    state.sizes.append((130.0, 2))
    state.size = 2
    with pytest.raises(InvariantError, match=r"^t=130.0: the pool changed to 2 cores 30.0 s after its last change, "
                                             r"before the 60.0 s hold$"):
        validator.at_event(130.0)


def test_the_instant_checks_say_when_and_what() -> None:
    with pytest.raises(InvariantError, match=r"^t=7.0: 2 job\(s\) submitted but 1 done"):
        ElasticValidator(_state(done=1)).at_event(7.0)
    with pytest.raises(InvariantError, match=r"^t=7.0: the pool has 5 cores, outside \[1, 4\]$"):
        ElasticValidator(_state(size=5)).at_event(7.0)
    early = _state(done=1, running={1: 4.0})
    with pytest.raises(InvariantError, match=r"^job 1 started at 4.0, before its submission at 5.0$"):
        ElasticValidator(early).at_event(7.0)


# --- hand-worked edges: each check on its boundary ----------------------------------------------------------------

# the broken pool states of ``_state`` above (two jobs on an elastic pool of 1..4 cores)


def test_more_running_jobs_than_cores_say_how_many() -> None:
    crowded = _state(done=0, running={0: 0.0, 1: 5.0}, size=1)
    with pytest.raises(InvariantError, match=r"^t=7.0: 2 jobs run on a pool of 1 cores$"):
        ElasticValidator(crowded).at_event(7.0)


def test_a_change_eps_before_the_hold_ends_is_tolerated() -> None:
    # sizes 2 and 3 from 0, then 4 at 60 - 1e-6: exactly the hold less the tolerance after the last change
    state = _state(sizes=[(0.0, 2), (0.0, 3)], size=3, done=0, submitted=0, start=np.full(2, np.nan))
    validator = ElasticValidator(state)
    state.sizes.append((60.0 - 1e-6, 4))
    state.size = 4
    validator.at_event(60.0 - 1e-6)


def test_core_seconds_off_by_exactly_the_tolerance_pass() -> None:
    # two jobs of 0 s at 0: the sizes give 0 core-seconds; 1e-6 counted is exactly the tolerance (1e-6 x 1)
    instant = _state(jobs=core_jobs([0, 0], [0, 0], [0, 0]), start=np.zeros(2), end=np.zeros(2),
                     core_seconds=lambda t: 2 * t + 1e-6)
    ElasticValidator(instant).at_end()


def test_a_run_of_no_job_is_checked_where_it_starts() -> None:
    # no job: the run ends at its start, 0, where the size 2 gives 0 core-seconds; one counted there is caught
    empty = _state(jobs=core_jobs([], [], [], groups=1), submitted=0, done=0, start=np.empty(0), end=np.empty(0),
                   core_seconds=lambda t: 2 * t + 1.0)
    with pytest.raises(InvariantError, match=r"^the pool's core-seconds are 1.0, its sizes give 0.0$"):
        ElasticValidator(empty).at_end()
