"""The CoH configuration: defaults of the papers' settings, the bounds each field is checked against, the limits."""

from __future__ import annotations

import math

import pytest

from broker.coh.config import COH_POLICIES, CohConfig, EngineConfig, IppConfig, SimulationConfig
from broker.pricing.book import HEAVY, LIGHT
from broker.pricing.reservations import ReservationPlan
from heuristics.registry import PAPER_TRIO
from solvers.base import Limit
from workloads.errors import ConfigError

HEAVY_PLAN = ReservationPlan(1, {("m1.small", HEAVY): 2})
MIXED_PLAN = ReservationPlan(1, {("m1.small", HEAVY): 2, ("m1.large", LIGHT): 1})


def test_engine_defaults_are_the_coh_papers_settings() -> None:
    # CoH: a 10 s tick, VMs boot in 120 s, exact charging, idle VMs released 10 s before their hour ends
    e = EngineConfig()
    assert (e.tick, e.boot_time, e.charging, e.release_margin, e.validate) == (10.0, 120.0, "exact", 10.0, False)
    b = e.billing()
    assert (b.charging, b.btu, b.release_margin, b.clock_offset) == ("exact", 3600.0, 10.0, 0.0)


@pytest.mark.parametrize(("field", "value"), [
    ("tick", 0.0), ("tick", -1.0), ("tick", math.inf), ("tick", math.nan),
    ("boot_time", -1.0), ("boot_time", -1e-9), ("boot_time", math.inf), ("boot_time", math.nan),
    ("charging", "hourly"), ("release_margin", -1.0), ("release_margin", 3600.0),
])
def test_engine_refuses(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        EngineConfig(**{field: value})  # type: ignore[arg-type]


def test_engine_accepts_the_edges() -> None:
    e = EngineConfig(tick=1e-3, boot_time=0.0, charging="wall-clock", release_margin=0.0)
    assert (e.tick, e.boot_time, e.charging, e.release_margin) == (1e-3, 0.0, "wall-clock", 0.0)
    assert EngineConfig(tick=0.5, boot_time=0.5).tick == 0.5


def test_billing_follows_the_trace_origin_on_the_wall_clock() -> None:
    e = EngineConfig(charging="wall-clock", release_margin=5.0)
    # 1e9 s = 277777 h + 2800 s: the trace starts 2800 s past an hour
    b = e.billing(1_000_000_000)
    assert (b.charging, b.release_margin, b.clock_offset) == ("wall-clock", 5.0, 2800.0)
    assert b.anchor(0.0) == -2800.0 and b.anchor(800.0) == 800.0
    assert e.billing(3700.5).clock_offset == 100.5 and e.billing(7200).clock_offset == 0.0


def test_ipp_defaults() -> None:
    ipp = IppConfig("cbc")
    assert (ipp.solver, ipp.time_limit, ipp.deterministic, ipp.threads, ipp.max_jobs, ipp.max_vms) == (
        "cbc", 2.0, False, 2, 50, None)
    assert (ipp.warm_start, ipp.fast_path, ipp.symmetry, ipp.presolve) == (True, True, "order", True)


@pytest.mark.parametrize("kw", [
    {"solver": "gurobi"}, {"time_limit": 0.0}, {"time_limit": -1.0}, {"time_limit": math.inf},
    {"time_limit": math.nan}, {"threads": 0}, {"max_jobs": -1}, {"max_vms": 0}, {"symmetry": "lex"},
])
def test_ipp_refuses(kw: dict[str, object]) -> None:
    args = {"solver": "cbc", **kw}
    with pytest.raises(ValueError):
        IppConfig(**args)  # type: ignore[arg-type]


def test_ipp_accepts_the_edges() -> None:
    ipp = IppConfig("cpsat", time_limit=1e-3, threads=1, max_jobs=0, max_vms=1, symmetry="none")
    assert (ipp.threads, ipp.max_jobs, ipp.max_vms, ipp.symmetry) == (1, 0, 1, "none")
    assert IppConfig("cbc", symmetry="assign").symmetry == "assign"


def test_ipp_limits_wall_and_deterministic() -> None:
    assert IppConfig("cbc", time_limit=3.0, threads=4).limit() == Limit(seconds=3.0, threads=4)
    assert IppConfig("cpsat").limit() == Limit(seconds=2.0, threads=2)
    # deterministic: CP-SAT deterministic seconds = the time limit; CBC nodes = 1000 x the limit, at least 1
    assert IppConfig("cpsat", time_limit=1.5, deterministic=True).limit() == Limit(work=1.5)
    assert IppConfig("cbc", time_limit=1.5, deterministic=True).limit() == Limit(work=1500.0)
    assert IppConfig("cbc", time_limit=2.3, deterministic=True).limit() == Limit(work=2300.0)
    assert IppConfig("cbc", time_limit=0.0004, deterministic=True).limit() == Limit(work=1.0)
    assert IppConfig("cbc", time_limit=0.0016, deterministic=True).limit() == Limit(work=2.0)
    assert IppConfig("cbc", time_limit=1.5, deterministic=True).limit().threads == 1
    # the same figures, asked of each backend (no name switch in the configuration)
    assert IppConfig("cpsat", time_limit=2.0, deterministic=True).limit() == Limit(work=2.0)
    assert IppConfig("cbc", time_limit=2.0, deterministic=True).limit() == Limit(work=2000.0)
    assert IppConfig("cpsat", time_limit=0.0004, deterministic=True).limit() == Limit(work=0.0004)
    both = IppConfig("cpsat,cbc", time_limit=0.0004, deterministic=True)
    assert (both.limit(), both.limit("cpsat"), both.limit("cbc")) == (Limit(work=0.0004),) * 2 + (Limit(work=1.0),)
    wall = IppConfig("cpsat,cbc", time_limit=2.0, threads=3)
    assert wall.limit("cpsat") == wall.limit("cbc") == Limit.wall(2.0, threads=3)


def test_coh_defaults_and_refusals() -> None:
    c = CohConfig()
    assert (c.policy, c.heuristics, c.lookahead, c.paid_scoring, c.ipp_wins_ties) == ("coh", PAPER_TRIO, None, True,
                                                                                         True)
    assert CohConfig(lookahead=0.0).lookahead == 0.0 and CohConfig(heuristics=("FCFS-SM",)).heuristics == ("FCFS-SM",)
    with pytest.raises(KeyError, match="CoH policy"):
        CohConfig("nope")
    with pytest.raises(ValueError, match="at least one heuristic"):
        CohConfig(heuristics=())
    with pytest.raises(KeyError):
        CohConfig(heuristics=("FCFS-SM", "nope"))
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="lookahead"):
            CohConfig(lookahead=bad)


def test_lookahead_is_boot_plus_tick_unless_set() -> None:
    assert SimulationConfig().lookahead == 130.0
    assert SimulationConfig(engine=EngineConfig(tick=5.0, boot_time=0.0)).lookahead == 5.0
    assert SimulationConfig(CohConfig(lookahead=0.0)).lookahead == 0.0  # zero is a lookahead, not "unset"
    assert SimulationConfig(CohConfig(lookahead=600.0)).lookahead == 600.0


def test_policies_and_what_they_need() -> None:
    assert COH_POLICIES.names()[:4] == ["coh", "ipp", "coh-r", "coh-onetype"] and len(COH_POLICIES.names()) == 70
    # reservations: required by coh-r and coh-onetype, refused by the others
    for name in ("coh-r", "coh-onetype"):
        with pytest.raises(ValueError, match="required"):
            SimulationConfig(CohConfig(name))
        assert SimulationConfig(CohConfig(name), reservations=HEAVY_PLAN).reservations == HEAVY_PLAN
    for name in ("coh", "FCFS-SM"):
        with pytest.raises(ValueError, match="only for coh-r and coh-onetype"):
            SimulationConfig(CohConfig(name), reservations=HEAVY_PLAN)
    # coh-onetype: heavy reservations only
    with pytest.raises(ValueError, match="heavy reservations only"):
        SimulationConfig(CohConfig("coh-onetype"), reservations=MIXED_PLAN)
    assert SimulationConfig(CohConfig("coh-r"), reservations=MIXED_PLAN).reservations == MIXED_PLAN
    # the integer program: needed by ipp, joins the portfolios, refused by a single heuristic
    with pytest.raises(ValueError, match="needs the integer program"):
        SimulationConfig(CohConfig("ipp"))
    for name, plan in (("ipp", None), ("coh", None), ("coh-r", HEAVY_PLAN), ("coh-onetype", HEAVY_PLAN)):
        assert SimulationConfig(CohConfig(name), ipp=IppConfig("cbc"), reservations=plan).ipp == IppConfig("cbc")
    assert SimulationConfig(CohConfig("coh")).ipp is None
    with pytest.raises(ValueError, match="one heuristic"):
        SimulationConfig(CohConfig("FCFS-SM"), ipp=IppConfig("cbc"))


def test_policy_builders_are_found() -> None:
    from broker.coh import policies

    assert COH_POLICIES.get("coh").build() is policies.portfolio
    assert COH_POLICIES.get("coh-onetype").build() is policies.portfolio
    assert COH_POLICIES.get("ipp").build() is policies.ipp_alone
    assert COH_POLICIES.get("FCFS-LD").build() is policies.heuristic


def test_to_dict_is_the_whole_configuration_as_json_values() -> None:
    d = SimulationConfig(CohConfig("coh-r", heuristics=("FCFS-SM",)), ipp=IppConfig("cpsat"),
                         reservations=HEAVY_PLAN).to_dict()
    assert d["coh"] == {"policy": "coh-r", "heuristics": ["FCFS-SM"], "lookahead": None, "paid_scoring": True,
                        "ipp_wins_ties": True}
    assert d["engine"] == {"tick": 10.0, "boot_time": 120.0, "charging": "exact", "release_margin": 10.0,
                           "validate": False, "capacity": "interval"}
    assert d["ipp"]["solver"] == "cpsat" and d["ipp"]["time_limit"] == 2.0
    assert d["reservations"] == {"term_years": 1, "price_book": "ec2-2013", "reservations": [
        {"instance_type": "m1.small", "option": HEAVY, "count": 2}]}
    plain = SimulationConfig().to_dict()
    assert plain["ipp"] is None and plain["reservations"] is None and plain["coh"]["heuristics"] == list(PAPER_TRIO)


def test_the_capacity_rule_is_interval_or_tick() -> None:
    assert EngineConfig().capacity == "interval"
    assert EngineConfig(capacity="tick").capacity == "tick"
    with pytest.raises(ConfigError, match="capacity must be one of interval, tick, got 'arrival'"):
        EngineConfig(capacity="arrival")  # type: ignore[arg-type]
