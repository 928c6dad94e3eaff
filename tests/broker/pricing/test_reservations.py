"""Reserved instances in a run (CoH-R): hand-worked heavy / medium / light / on-demand ledgers, plans as data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from broker.cli.files import read_plan
from broker.coh.config import CohConfig, EngineConfig, SimulationConfig
from broker.coh.simulate import simulate
from broker.pricing.book import HEAVY, HOURS_PER_YEAR, LIGHT, MEDIUM, PriceBookError, load_price_book
from broker.pricing.reservations import PlanError, ReservationPlan
from workloads.jobs import JobTable

BOOK = load_price_book()
CATALOG = BOOK.catalog()


def jobs(arrival, runtime, r) -> JobTable:
    return JobTable.from_arrays(arrival=np.asarray(arrival, float), runtime=np.asarray(runtime, float),
                                r=np.asarray(r, float))


def run(table: JobTable, counts: dict, policy: str = "coh-r"):
    plan = ReservationPlan(1, counts)
    config = SimulationConfig(CohConfig(policy, heuristics=("FCFS-SM",)), EngineConfig(validate=True),
                              reservations=plan)
    return simulate(table, CATALOG, config=config, seed=1, book=BOOK)


def test_price_book_has_both_terms_and_amortizes_upfront() -> None:
    assert BOOK.terms() == (1, 3)
    heavy1, heavy3 = BOOK.offer("large", HEAVY, 1), BOOK.offer("large", HEAVY, 3)
    assert heavy1 is not None and heavy3 is not None
    assert (heavy1.hourly, heavy1.upfront) == (0.064, 780.0)
    assert heavy3.term_hours == 3 * 8760 and heavy3.upfront_per_hour == pytest.approx(heavy3.upfront / 26280)
    assert heavy1.always_billed and not BOOK.offer("large", MEDIUM, 1).always_billed  # type: ignore[union-attr]
    assert len(BOOK.reserved(3)) == 6


def test_price_book_refuses_a_duplicate_offer(tmp_path: Path) -> None:
    path = tmp_path / "dup.toml"
    offer = '[[offers]]\ninstance_type = "a"\noption = "reserved-heavy"\nhourly = 0.1\nupfront = 5\nterm_years = 1\n'
    path.write_text('[[instance_types]]\nname = "a"\ncapacity = 8\n'
                    '[[offers]]\ninstance_type = "a"\noption = "on-demand"\nhourly = 0.5\n' + offer + offer)
    with pytest.raises(PriceBookError, match=r"dup\.toml: offers\[2\]: a second offer"):
        load_price_book(path)


def test_heavy_reservation_is_always_on_and_billed_every_hour() -> None:
    # first tick at 870 (130 s look-ahead); the heavy VM runs from 870 already booted and takes both
    # jobs, idle through the gap; it goes at its first deadline after the last departure (20,100):
    # 870 + 6 * 3600 - 10 = 22,460, six units.
    res = run(jobs([1000, 20000], [1000, 100], [50, 50]), {("large", HEAVY): 1})
    assert len(res.instances) == 1
    vm = res.instances.iloc[0]
    assert (vm.option, vm.hired_at, vm.ready_at, vm.released_at, vm.units) == (HEAVY, 870.0, 870.0, 22460.0, 6)
    assert vm.jobs_hosted == 2 and vm.hourly == 0.064
    assert res.jobs.start.tolist() == [1000.0, 20000.0]
    upfront = 780.0 * (22460 - 870) / 3600 / HOURS_PER_YEAR
    assert res.summary.upfront_amortized == pytest.approx(upfront)
    assert res.summary.cost == pytest.approx(6 * 0.064 + upfront)
    assert res.summary.cost_by_option == {HEAVY: pytest.approx(0.384)}


def test_new_vms_take_medium_then_light_then_on_demand() -> None:
    # three full-size jobs at once need three new large VMs: medium, light, on-demand; each runs one
    # unit and is released idle at 870 + 3590; the medium reservation is free again for the fourth job.
    table = jobs([1000, 1000, 1000, 10000], [1800, 1800, 1800, 100], [410, 410, 410, 50])
    res = run(table, {("large", MEDIUM): 1, ("large", LIGHT): 1})
    vms = res.instances.sort_values("instance_id")
    assert vms.option.tolist() == [MEDIUM, LIGHT, "on-demand", MEDIUM]
    assert vms.hourly.tolist() == [0.096, 0.156, 0.26, 0.096]
    assert vms.units.tolist() == [1, 1, 1, 1]
    assert vms.released_at.tolist() == [4460.0, 4460.0, 4460.0, 9870.0 + 3590]
    upfront = (640.0 + 276.0) * (13460 - 870) / 3600 / HOURS_PER_YEAR
    assert res.summary.cost == pytest.approx(0.096 * 2 + 0.156 + 0.26 + upfront)


def test_reserved_type_must_match_the_vm_type() -> None:
    # a small medium reservation does not serve the large VM CoH starts
    res = run(jobs([1000], [100], [300]), {("small", MEDIUM): 1})
    assert res.instances.option.tolist() == ["on-demand"] and res.instances.instance_type.tolist() == ["large"]


def test_coh_r_scores_heavy_vms_as_paid_and_fills_them_first() -> None:
    # with two heavy VMs idle, CoH puts two 400-unit jobs on them rather than starting anything
    res = run(jobs([1000, 1000], [5000, 5000], [400, 400]), {("large", HEAVY): 2})
    assert set(res.instances.option) == {HEAVY} and len(res.instances) == 2


def test_policies_need_their_plan() -> None:
    with pytest.raises(ValueError, match="reservations are required"):
        SimulationConfig(CohConfig("coh-r"))
    with pytest.raises(ValueError, match="only for coh-r"):
        SimulationConfig(CohConfig("coh"), reservations=ReservationPlan(1, {("large", HEAVY): 1}))
    with pytest.raises(ValueError, match="heavy reservations only"):
        SimulationConfig(CohConfig("coh-onetype"), reservations=ReservationPlan(1, {("large", LIGHT): 1}))
    res = run(jobs([1000], [100], [50]), {("large", HEAVY): 1}, policy="coh-onetype")
    assert res.summary.policy == "coh-onetype"


def test_plan_round_trips_and_reads_the_cli_output(tmp_path: Path) -> None:
    plan = ReservationPlan(3, {("large", HEAVY): 2, ("small", LIGHT): 1, ("small", MEDIUM): 0})
    assert plan.counts == {("large", HEAVY): 2, ("small", LIGHT): 1}
    assert ReservationPlan.from_dict(plan.to_dict()) == plan
    full = tmp_path / "out.json"
    full.write_text(json.dumps({"plan": plan.to_dict(), "expected_cost": 1.0}))
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(plan.to_dict()))
    assert read_plan(full) == plan == read_plan(bare)
    assert plan.upfront(BOOK) == 2 * 1200.0 + 106.0


@pytest.mark.parametrize(("content", "match"), [
    ('{"term_years": 1, "reservations": [{"instance_type": "large", "option": "reserved-heavy"}]}',
     r"bad\.json: reservations\[0\]: needs fields"),
    ('{"term_years": 1, "reservations": [{"instance_type": "large", "option": "heavy", "count": 1}]}',
     r"bad\.json: .*option 'heavy' is not one of"),
    ('{"term_years": 1, "reservations": [{"instance_type": "large", "option": "reserved-heavy", "count": -1}]}',
     r"bad\.json: reservations\[0\]: field 'count'"),
    ('{"term_years": "1y", "reservations": []}', r"bad\.json: field 'term_years'"),
    ('{"term_years": 1,\n "reservations": [}', r"bad\.json:2: not valid JSON"),
])
def test_bad_plan_files_name_file_and_field(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(PlanError, match=match):
        read_plan(path)


def test_plan_must_fit_the_price_book() -> None:
    with pytest.raises(PlanError, match="no reserved-heavy offer for 'large' with a 5-year term"):
        ReservationPlan(5, {("large", HEAVY): 1}).check(BOOK)


def test_validator_catches_a_reservation_taken_twice() -> None:
    from broker.coh.policies import build_policy
    from broker.coh.world import CohWorld, run
    from broker.pricing.reservations import LIGHT_CODE, ReservedCapacity
    from broker.sim.validate import InvariantError

    class Leaky(ReservedCapacity):
        def acquire(self, vm_type: int, *, heavy: bool = False) -> tuple[int, float]:
            return LIGHT_CODE, float(self.rate[vm_type, LIGHT_CODE])  # never counts, never runs out

    plan = ReservationPlan(1, {("large", LIGHT): 1})
    config = SimulationConfig(CohConfig("coh-r", heuristics=("FCFS-SM",)), EngineConfig(validate=True),
                              reservations=plan)
    policy = build_policy(config, seed=1, billing=config.engine.billing(), catalog=CATALOG)
    world = CohWorld(jobs([1000, 1000], [100, 100], [410, 410]), CATALOG, config.engine, lookahead=policy.lookahead,
                     reservations=Leaky(plan, BOOK, CATALOG))
    with pytest.raises(InvariantError, match="VMs per \\(type, option\\)"):
        run(world, policy)
