"""The spot market options ``simulate``, ``report`` and ``plan-reservations`` share: declarations, checks, config.

``--spot FILE`` reads one zone's timeline (``../shared/spot``); ``--spot-notice-s``,
``--checkpoint-s``, ``--restart-overhead-s``, ``--spot-on-demand-price`` and ``--spot-fraction``
set the market and how a preempted job restarts (``docs/worlds/coh-spot.md``); ``--spot-return``,
``--spot-max-preemptions`` and ``--spot-expected-cost`` are the spot rules. The three commands take
them all, so their runs stay ``simulate``'s. Every check runs when :func:`spot_config` is called,
before any work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from broker.cli import inputs
from broker.coh.spot import SpotConfig
from broker.pricing.spot import NOTICE_S, SpotMarket, load_timeline
from broker.pricing.spot_offer import PAPER_SPOT_FRACTION, R5_16XLARGE_ON_DEMAND, SpotOffer

File = Annotated[Path | None, typer.Option("--spot", help="A spot market timeline (one zone, ../shared/spot): VMs no "
                                                          "reservation covers are spot while it is open.")]
Notice = Annotated[float, typer.Option(min=0, max=3600, callback=inputs.finite,
                                       help="Seconds from the market's close to a preemption.")]
Checkpoint = Annotated[float | None, typer.Option(callback=inputs.positive, help="A preempted job keeps its work to "
                                                  "its last multiple of this (s); else it restarts.")]
RestartOverhead = Annotated[float, typer.Option(min=0, callback=inputs.finite,
                                                help="Seconds added to a job resumed from a checkpoint.")]
OnDemandPrice = Annotated[float, typer.Option(callback=inputs.positive, help="On-demand price ($/h) the timeline's "
                                              "spot prices are read against (r5.16xlarge).")]
Fraction = Annotated[float, typer.Option(callback=inputs.positive, help="Spot over on-demand price for a timeline "
                                         "without prices (the paper's p3.2xlarge).")]
Return = Annotated[bool, typer.Option(help="While the market admits spot, on-demand VMs started for want of spot take "
                                      "no new jobs (they go once idle).")]
MaxPreemptions = Annotated[int | None, typer.Option(min=1, help="A job preempted this many times runs only on VMs "
                                                    "that are not spot (default: no limit).")]
ExpectedCost = Annotated[bool, typer.Option(help="A job goes to spot only when the spot price plus the hazard times "
                                            "the work a preemption would lose is below on demand.")]

#: The spot options by the key of :func:`spot_config`'s ``given``: (option, default). A run without ``--spot`` must
#: leave them at their defaults.
SPOT_OPTIONS: dict[str, tuple[str, Any]] = {
    "notice_s": ("--spot-notice-s", NOTICE_S["aws"]), "checkpoint_s": ("--checkpoint-s", None),
    "restart_overhead_s": ("--restart-overhead-s", 0.0),
    "on_demand": ("--spot-on-demand-price", R5_16XLARGE_ON_DEMAND),
    "fraction": ("--spot-fraction", PAPER_SPOT_FRACTION),
    "spot_return": ("--spot-return", False), "max_preemptions": ("--spot-max-preemptions", None),
    "expected_cost": ("--spot-expected-cost", False)}


def spot_config(path: Path | None, given: dict[str, Any]) -> SpotConfig | None:
    """The spot market of ``--spot`` (read and checked now, before any work) and how jobs restart.

    ``given``: the options' values by the keys of :data:`SPOT_OPTIONS`. None without ``--spot``.
    """
    if path is None:
        changed = [option for key, (option, default) in SPOT_OPTIONS.items() if given[key] != default]
        if changed:
            raise typer.BadParameter(f"{', '.join(changed)} go(es) with --spot FILE (a spot market timeline)")
        return None
    if given["checkpoint_s"] is None and given["restart_overhead_s"]:
        raise typer.BadParameter("--restart-overhead-s goes with --checkpoint-s (a job restarted from scratch pays "
                                 "no overhead)")
    timeline = load_timeline(path)
    on_demand = given["on_demand"]
    market = SpotMarket((timeline,), on_demand=on_demand, spot_price=on_demand * given["fraction"],
                        notice_s=given["notice_s"])
    if timeline.prices is None and given["on_demand"] != R5_16XLARGE_ON_DEMAND:
        raise typer.BadParameter(f"--spot-on-demand-price reads a timeline's prices; {path} has none "
                                 "(use --spot-fraction)")
    if timeline.prices is not None and given["fraction"] != PAPER_SPOT_FRACTION:
        raise typer.BadParameter(f"--spot-fraction is for a timeline without prices; {path} has prices "
                                 "(use --spot-on-demand-price)")
    return SpotConfig(SpotOffer.from_market(market), checkpoint_s=given["checkpoint_s"],
                      restart_overhead_s=given["restart_overhead_s"], spot_return=given["spot_return"],
                      max_preemptions=given["max_preemptions"], expected_cost=given["expected_cost"])


def spot_flags(given: dict[str, Any]) -> str:
    """The spot options set away from their defaults, as a command line gives them (`` --checkpoint-s 600``)."""
    return "".join(f" {option}" if isinstance(default, bool) else f" {option} {given[key]!r}"
                   for key, (option, default) in SPOT_OPTIONS.items() if given[key] != default)

