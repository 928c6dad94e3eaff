"""The cloud-cluster policies by name, with the defaults the rules are documented with (typed here).

``_registry()`` is called here, not only read through ``CLUSTER_POLICIES``: the registry is built
once at import, so a test of the constant alone could not see a wrong entry written later.
"""

from __future__ import annotations

import pytest

from broker.cloudcluster.policies import (
    CLUSTER_POLICIES,
    ClusterPolicy,
    Delay,
    EndOfPeriod,
    FixedKeepAlive,
    IdleKeepAlive,
    IdleTimeout,
    LoadKeepAlive,
    Merged,
    NextHour,
    PerUser,
    _registry,
)
from workloads.errors import UnknownName

#: name -> (the policy with its defaults, the same with keyword arguments, those arguments)
EXPECTED = {
    "merged": (ClusterPolicy(cap=None, pools=Merged(), keepalive=None, start=(), release=EndOfPeriod()), None, {}),
    "per-user": (ClusterPolicy(pools=PerUser()), None, {}),
    "cap": (ClusterPolicy(cap=50), ClusterPolicy(cap=7), {"n": 7}),
    "keepalive-fixed": (ClusterPolicy(keepalive=FixedKeepAlive(0.5)), ClusterPolicy(keepalive=FixedKeepAlive(0.2)),
                        {"p": 0.2}),
    "keepalive-idle": (ClusterPolicy(keepalive=IdleKeepAlive(0.5)), ClusterPolicy(keepalive=IdleKeepAlive(0.9)),
                       {"p": 0.9}),
    "keepalive-load": (ClusterPolicy(keepalive=LoadKeepAlive(0.5, 3600.0)),
                       ClusterPolicy(keepalive=LoadKeepAlive(0.3, 600.0)), {"p": 0.3, "window": 600.0}),
    "delay": (ClusterPolicy(start=(Delay(300.0),)), ClusterPolicy(start=(Delay(60.0),)), {"seconds": 60.0}),
    "burst": (ClusterPolicy(cap=30, start=(Delay(600.0, burst_ratio=0.5),)),
              ClusterPolicy(cap=4, start=(Delay(120.0, burst_ratio=2.0),)), {"seconds": 120.0, "ratio": 2.0, "cap": 4}),
    "next-hour": (ClusterPolicy(start=(NextHour(1200.0),)), ClusterPolicy(start=(NextHour(300.0),)),
                  {"seconds": 300.0}),
    "idle-timeout": (ClusterPolicy(release=IdleTimeout(600.0)), ClusterPolicy(release=IdleTimeout(30.0)),
                     {"seconds": 30.0}),
}


def test_the_registry_names_every_rule_once_in_order() -> None:
    assert _registry().names() == list(EXPECTED) == CLUSTER_POLICIES.names()


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_policy_has_its_documented_defaults_and_takes_its_arguments(name: str) -> None:
    default, given, kwargs = EXPECTED[name]
    make = _registry().get(name)
    assert make() == default
    if given is not None:
        assert make(**kwargs) == given


def test_an_unknown_name_is_refused_naming_the_kind_and_the_known_ones() -> None:
    with pytest.raises(UnknownName) as refused:
        _registry().get("keepalive")
    assert str(refused.value) == ("unknown cloud-cluster policy 'keepalive'; known: merged, per-user, cap, "
                                  "keepalive-fixed, keepalive-idle, keepalive-load, delay, burst, next-hour, "
                                  "idle-timeout")
