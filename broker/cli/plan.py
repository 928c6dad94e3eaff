"""``cloudbroker plan-reservations``: reserved-instance purchases from a trace's CoH replay or a demand file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import numpy as np
import typer
from rich.table import Table

from broker.cli import inputs, spot_options
from broker.cli.console import out
from broker.cli.files import MAX_DEMAND_CELLS, read_demand
from broker.cli.simulate import configuration
from broker.coh.config import SimulationConfig
from broker.coh.metrics import RunResult
from broker.coh.spot import SpotConfig
from broker.planning.demand import Demand, distribution, replay_demand
from broker.planning.market import market_price
from broker.planning.mix import REPLAYS, cheaper, replay_mix
from broker.planning.planner import Mode, PlanReport, Prices, bounded_peak, plan_reservations
from broker.pricing.book import DEFAULT_PRICE_BOOK, RESERVED_OPTIONS, PriceBook
from broker.pricing.spot import NOTICE_S
from broker.pricing.spot_offer import PAPER_SPOT_FRACTION, R5_16XLARGE_ON_DEMAND
from heuristics.registry import PAPER_TRIO
from solvers.base import list_solvers
from workloads.errors import ConfigError
from workloads.jobs import JobTable
from workloads.requirements import MODELS


def plan_reservations_cmd(
    trace: Annotated[str | None, typer.Option(help="Replay this SWF file or registry name for the demand.")] = None,
    demand_file: Annotated[Path | None, typer.Option("--demand", help="Demand CSV (VMs per type, interval).")] = None,
    synthetic_jobs: Annotated[int, typer.Option(min=1,
                                                help="Jobs in the generated workload (the default input).")] = 2000,
    reqs: Annotated[str, typer.Option(help=f"Requirement model: {', '.join(MODELS)}.")] = "heterogeneous",
    term: Annotated[str, typer.Option(help="Reservation term: 1y or 3y.")] = "1y",
    mode: Annotated[str, typer.Option(help="per-type (CoH-R's cover, closed form) or capacity (formula 6, an "
                                           "integer program).")] = "per-type",
    options: Annotated[str, typer.Option(help="Reservation options to consider, comma separated.")] = ",".join(
        RESERVED_OPTIONS),
    solver: Annotated[str, typer.Option(help="Solver of the capacity-mode program: cbc or cpsat.")] = "cbc",
    growth: Annotated[float, typer.Option(min=0, max=1000, callback=inputs.finite,
                                          help="Scale the demand by this factor before planning.")] = 1.0,
    interval: Annotated[float, typer.Option(min=1, callback=inputs.finite,
                                            help="Demand interval (s), at least 1.")] = 3600.0,
    heuristics: Annotated[str, typer.Option(help="CoH members of the demand replay.")] = ",".join(PAPER_TRIO),
    replay_solver: Annotated[str | None, typer.Option(help="Add CoH's integer program (cbc, cpsat, or a race of both "
                                                           "such as cbc,cpsat; deterministic work limit of 1) to "
                                                           "the demand replay.")] = None,
    capacity: Annotated[str, typer.Option(help="Capacity rule of the demand replay: interval or tick.")] = "interval",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the workload and the replay.")] = 0,
    limit_jobs: Annotated[int | None, typer.Option(min=1, help="Use only the first N jobs (by arrival).")] = None,
    price_book: Annotated[str, typer.Option(help="Bundled price book name or a .toml path.")] = DEFAULT_PRICE_BOOK,
    lenient: inputs.Lenient = False,
    strict: inputs.Strict = False,
    save_demand: Annotated[Path | None, typer.Option(help="Write the demand series here (CSV).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite --save-demand's file.")] = False,
    spot: spot_options.File = None,
    spot_notice_s: spot_options.Notice = NOTICE_S["aws"],
    checkpoint_s: spot_options.Checkpoint = None,
    restart_overhead_s: spot_options.RestartOverhead = 0.0,
    spot_on_demand_price: spot_options.OnDemandPrice = R5_16XLARGE_ON_DEMAND,
    spot_fraction: spot_options.Fraction = PAPER_SPOT_FRACTION,
    spot_return: spot_options.Return = False,
    spot_max_preemptions: spot_options.MaxPreemptions = None,
    spot_expected_cost: spot_options.ExpectedCost = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Plan reserved-instance purchases from a trace's CoH replay or a demand file (CoH formula 6).

    With ``--spot FILE`` the plan is a reserved / spot / on-demand mix, replayed on the trace beside
    the on-demand-only and the reserved-only plans.
    """
    if trace is not None and demand_file is not None:
        raise typer.BadParameter("give --trace or --demand, not both")
    market = spot_options.spot_config(spot, {"notice_s": spot_notice_s, "checkpoint_s": checkpoint_s,
                                             "restart_overhead_s": restart_overhead_s,
                                             "on_demand": spot_on_demand_price, "fraction": spot_fraction,
                                             "spot_return": spot_return, "max_preemptions": spot_max_preemptions,
                                             "expected_cost": spot_expected_cost})
    if market is not None and demand_file is not None:
        raise typer.BadParameter("--spot goes with --trace or the generated workload (the mix is replayed on its "
                                 "jobs), not with --demand")
    if market is not None and growth != 1.0:
        raise typer.BadParameter("--growth goes without --spot (the mix is replayed on the trace as it is)")
    inputs.output_file(save_demand, "--save-demand", force=force)
    book = inputs.book(price_book)
    prices = _prices(book, term, options, mode, solver)
    members = tuple(h.strip() for h in heuristics.split(",") if h.strip())
    ipp = {"solver": replay_solver, "time_limit": 1.0, "deterministic": True} if replay_solver is not None else None
    config = configuration({"policy": "coh", "heuristics": members}, {"capacity": capacity}, ipp, None, REPLAY_WORDS)
    reading = {"lenient": lenient, "strict": strict}
    demand, source, counts, basis = _demand(book, trace, demand_file, synthetic_jobs, reqs, config, seed,
                                            limit_jobs, interval, reading)
    if demand is None:
        inputs.nothing_to_run(counts, source, as_json=as_json)
        return
    if growth != 1.0:
        demand = demand.scaled(growth)
    bounded_peak(demand, prices)  # before the plan's slots are made
    if save_demand is not None:
        with inputs.writing("--save-demand", save_demand):
            demand.frame().to_csv(save_demand, index=False)
    cover: Mode = "capacity" if mode == "capacity" else "per-type"
    report = plan_reservations(demand, prices, mode=cover, solver=solver)
    payload = {**report.to_dict(), "demand": _demand_summary(demand, source, growth), **counts}
    if market is not None and basis is not None:
        payload.update(_mix(demand, prices, report, market, basis, book, config, (cover, solver)))
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True))
    else:
        _print_plan(payload)


#: The words of the demand replay's refusals and the options that set them.
REPLAY_WORDS = {"heuristic": "--heuristics", "capacity": "--capacity",
                "solver": "--replay-solver"}


def _demand_summary(demand: Demand, source: str, growth: float) -> dict[str, Any]:
    """Where the demand came from, its size and, per type, its peak and ``Pr(D = i)``."""
    per_type = {}
    for name in demand.types:
        levels, probs = distribution(demand.column(name))
        per_type[name] = {"peak": int(levels.max()), "levels": levels.tolist(), "probability": probs.tolist()}
    return {"source": source, "intervals": len(demand), "interval_s": demand.interval_s, "growth": growth,
            "peak": {name: d["peak"] for name, d in per_type.items()}, "distribution": per_type}


def _prices(book: PriceBook, term: str, options: str, mode: str, solver: str) -> Prices:
    if term not in ("1y", "3y"):
        raise typer.BadParameter("--term must be 1y or 3y")
    if mode not in ("per-type", "capacity"):
        raise typer.BadParameter("--mode must be per-type or capacity")
    if solver not in list_solvers():
        raise typer.BadParameter(f"--solver must be one of {', '.join(list_solvers())}")
    chosen = [o.strip() for o in options.split(",") if o.strip()]
    try:
        return Prices.from_book(book, int(term[0]), options=chosen)
    except ValueError as exc:
        raise inputs.in_options(exc, {"option": "--options", "terms": "--term", "price book": "--price-book"}) from exc


class Basis(NamedTuple):
    """The demand replay: its jobs, its result (the on-demand-only replay) and its seed."""

    jobs: JobTable
    result: RunResult
    seed: int


def _mix(demand: Demand, prices: Prices, reserved: PlanReport, market: SpotConfig, basis: Basis, book: PriceBook,
         config: SimulationConfig, planning: tuple[Mode, str]) -> dict[str, Any]:
    """The mix's plan (it replaces the payload's plan), the candidates, the reserved-only plan and the replays."""
    price = market_price(market.offer, basis.jobs.runtime, checkpoint_s=market.checkpoint_s,
                         restart_overhead_s=market.restart_overhead_s)
    priced = plan_reservations(demand, prices.with_market(price.factor), mode=planning[0], solver=planning[1])
    replays = 2 if priced.plan == reserved.plan else 3
    with inputs.progress("replaying the plans", replays * len(basis.jobs)) as recorder:
        runs = replay_mix(basis.jobs, book, config=config, seed=basis.seed, on_demand=basis.result,
                          reserved_only=reserved.plan, mix=priced.plan, spot=market, recorder=recorder)
    chosen = cheaper(runs)
    keys = ("plan", "expected_cost", "savings", "savings_fraction", "horizon")
    only, model = reserved.to_dict(), priced.to_dict()
    return {**(model if chosen == "market_priced" else only), "market": price.to_dict(), "spot": market.to_dict(),
            "mix_chosen": chosen, "market_priced": {k: model[k] for k in keys},
            "reserved_only": {k: only[k] for k in keys},
            "replays": {name: runs[name].to_dict() for name in REPLAYS}}


def _demand(book: PriceBook, trace: str | None, demand_file: Path | None, synthetic_jobs: int, reqs: str,
            config: SimulationConfig, seed: int, limit_jobs: int | None, interval: float,
            reading: dict[str, bool]) -> tuple[Demand | None, str, dict[str, Any], Basis | None]:
    """The demand (None: no job left to replay), where it came from, the trace's counts and the replay."""
    catalog = book.catalog()
    if demand_file is not None:
        try:
            return read_demand(demand_file, catalog.names, interval_s=interval), str(demand_file), {}, None
        except (OSError, ValueError) as exc:
            inputs.fail(exc)
    workload_seed, policy_seed = np.random.SeedSequence(seed).spawn(2)
    work = inputs.workload(trace, synthetic_jobs, reqs, workload_seed, limit_jobs, "", **reading)
    inputs.fits(work.jobs, book, reqs)
    _demand_cells(work.jobs, interval, len(catalog))
    counts = inputs.kept(work.report, work.label, work.swf)
    if not len(work.jobs):
        return None, work.label, counts, None
    replay_seed = int(policy_seed.generate_state(1)[0])
    with inputs.progress("replaying", len(work.jobs)) as recorder:
        demand, result = replay_demand(work.jobs, catalog, config=config, seed=replay_seed, recorder=recorder,
                                       interval_s=interval, source=work.label)
    return demand, f"CoH replay of {work.label}", counts, Basis(work.jobs, result, replay_seed)


def _demand_cells(jobs: JobTable, interval: float, types: int) -> None:
    """Refuse an ``--interval`` whose demand table (one count per interval and type) would not fit in memory."""
    cells = inputs.horizon(jobs.arrival, jobs.runtime) / interval * types
    if cells > MAX_DEMAND_CELLS:
        raise ConfigError(f"--interval {interval:g} s makes a demand table of about {cells:.3g} counts ({types} "
                          f"instance types over the trace's {inputs.horizon(jobs.arrival, jobs.runtime):,.0f} s), "
                          f"{cells * 8 / 1e9:.3g} GB; at most {MAX_DEMAND_CELLS:,}: a longer --interval")


def _print_plan(payload: dict[str, Any]) -> None:
    term = payload["term_years"]
    table = Table(title=f"Reservation plan, {term}-year term ({payload['mode']} cover)")
    for col in ("type", "reserved", "count", "upfront $", "hourly $", "upfront $/h", "break-even use"):
        table.add_column(col, justify="left" if col in ("type", "reserved") else "right")
    for line in payload["lines"]:
        option = line["option"].removeprefix("reserved-")
        table.add_row(line["instance_type"], option, str(line["count"]), f"{line['upfront']:,.0f}",
                      f"{line['hourly']:.3f}", f"{line['upfront_per_hour']:.4f}",
                      "never" if line["break_even_utilization"] is None else f"{line['break_even_utilization']:.0%}")
    out.print(table)
    out.print(f"demand: {payload['demand']['source']} ({payload['demand']['intervals']:,} intervals, peak "
              f"{payload['demand']['peak']})")
    out.print(f"expected cost per term ${payload['expected_cost']:,.2f}; all on-demand "
              f"${payload['on_demand_cost']:,.2f}; savings ${payload['savings']:,.2f} "
              f"({payload['savings_fraction']:.1%})")
    if "replays" in payload:
        _print_mix(payload)


def _print_mix(payload: dict[str, Any]) -> None:
    """The market's expected price and the replays (``--spot``)."""
    m = payload["market"]
    out.print(f"market {m['market']}: open {m['open_share']:.1%} of the time at {m['ratio']:.3f} of on-demand, "
              f"{m['closes_per_open_hour']:.3f} closes per open hour, loss {m['loss']:.3f}: an unreserved VM-hour "
              f"at {m['factor']:.3f} x on-demand. The plan above is the mix: the candidate whose replay costs less "
              f"({payload['mix_chosen'].replace('_', ' ')}); the plan without the market is expected to cost "
              f"${payload['reserved_only']['expected_cost']:,.2f} per term")
    table = Table(title="Replayed on the trace")
    for col in ("replay", "reserved", "cost $", "/ on-demand", "upfront $", "spot $", "preempted", "lost h",
                "mean wait s"):
        table.add_column(col, justify="left" if col == "replay" else "right")
    base = payload["replays"]["on_demand"]["cost"]
    for name, run in payload["replays"].items():
        table.add_row(name.replace("_", " "), str(run["reservations"]), f"{run['cost']:,.2f}",
                      f"{run['cost'] / base:.3f}" if base else "-", f"{run['upfront_amortized']:,.2f}",
                      f"{run['cost_by_option'].get('spot', 0.0):,.2f}", f"{run['preemptions']:,}",
                      f"{run['lost_s'] / 3600:,.1f}", f"{run['wait_mean_s']:,.1f}")
    out.print(table)
