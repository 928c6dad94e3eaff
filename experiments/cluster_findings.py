"""The cloud-cluster paper's §6 comparisons, read from the tables of ``cloudbroker cluster sweep``.

    for n in lpc-egee sdsc-sp2 synthetic; do
        cloudbroker cluster sweep experiments/cluster/$n.toml --out results/cluster/$n --store results/cluster/store-$n
    done
    python experiments/cluster_findings.py results/cluster/lpc-egee results/cluster/sdsc-sp2 results/cluster/synthetic

Prints, per table: the no-cap run; what wall-clock charging and per-user pools add; keep-alive's
cost at zero boot time and its overhead saving at 10 minutes; P4, P5 and P6 against their
no-delay runs; the idle-timeout baseline against the end-of-period release; the Pareto front.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def pick(t: pd.DataFrame, family: str, **settings: object) -> pd.Series:
    rows = t[t["family"].str.startswith(family)]
    for key, value in settings.items():
        col = rows[key].astype(str)
        rows = rows[col == str(value)]
    if len(rows) != 1:
        raise LookupError(f"{family} {settings}: {len(rows)} rows")
    return rows.iloc[0]


def pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f}%"


def report(folder: Path) -> None:
    t = pd.read_csv(folder / "table.csv")
    cap = str(int(t[t["family"].str.startswith("P4")]["cap"].iloc[0]))
    base = pick(t, "P1", cap="none", merge=True, charging="exact")
    wall = pick(t, "P1", cap="none", merge=True, charging="wall-clock")
    user = pick(t, "P1", cap="none", merge=False, charging="exact")
    user_cap = pick(t, "P1", cap=cap, merge=False, charging="exact")
    merged_cap = pick(t, "P1", cap=cap, merge=True, charging="exact")
    print(f"## {folder.name}: no cap, merged, exact: cost ${base.cost:,.0f} (instances ${base.instance_cost:,.0f}, "
          f"egress ${base.egress_cost:,.0f}), mean overhead {base.overhead_mean_s:.1f} s")
    print(f"- wall-clock charging: instances {pct(wall.instance_cost, base.instance_cost)}; per-user pools: "
          f"{pct(user.instance_cost, base.instance_cost)} (no cap), "
          f"{pct(user_cap.instance_cost, merged_cap.instance_cost)} (cap {cap})")
    for boot in (0, 600):
        k0 = pick(t, "P3 keep-alive (fixed)", keepalive="fixed:0", boot_s=boot)
        k5 = pick(t, "P3 keep-alive (fixed)", keepalive="fixed:0.5", boot_s=boot)
        print(f"- keep-alive p = 0.5, boot {boot} s: cost {pct(k5.cost, k0.cost)} (${k5.cost - k0.cost:,.0f}), "
              f"mean overhead {k0.overhead_mean_s:.1f} -> {k5.overhead_mean_s:.1f} s")
    p4 = {d: pick(t, "P4", delay_min=d, merge=True) for d in (0.0, 5.0, 30.0)}
    print(f"- P4 (cap {cap}, merged): delay 5 min: cost {pct(p4[5.0].cost, p4[0.0].cost)}, overhead "
          f"{p4[0.0].overhead_mean_s:.0f} -> {p4[5.0].overhead_mean_s:.0f} s; 30 min: cost "
          f"{pct(p4[30.0].cost, p4[0.0].cost)}, overhead {p4[30.0].overhead_mean_s:.0f} s")
    for d in (10.0, 30.0):
        lifted = [pick(t, "P5", delay_min=d, burst_ratio=r) for r in (0.1, 0.5)]
        alone = pick(t, "P4", delay_min=d, merge=True)
        print(f"- P5, delay {d:.0f} min lifted while > r x cap wait: r = 0.1: cost {pct(lifted[0].cost, p4[0.0].cost)},"
              f" overhead {lifted[0].overhead_mean_s:.0f} s; r = 0.5: cost {pct(lifted[1].cost, p4[0.0].cost)}, "
              f"overhead {lifted[1].overhead_mean_s:.0f} s (P4 alone: {pct(alone.cost, p4[0.0].cost)}, "
              f"{alone.overhead_mean_s:.0f} s)")
    for charging in ("exact", "wall-clock"):
        p0 = pick(t, "P6", wait_next_hour_min=0.0, charging=charging, merge=True)
        p30 = pick(t, "P6", wait_next_hour_min=30.0, charging=charging, merge=True)
        print(f"- P6 (cap {cap}, merged, {charging}): 30 min: cost {pct(p30.cost, p0.cost)}, overhead "
              f"{p0.overhead_mean_s:.0f} -> {p30.overhead_mean_s:.0f} s")
    timeouts = t[t["family"].str.startswith("baseline")]
    for boot in (0, 120):
        rows = timeouts[timeouts["boot_s"] == boot]
        best = rows.loc[rows["cost"].idxmin()]
        ref = pick(t, "P3 keep-alive (fixed)", keepalive="fixed:0", boot_s=boot)
        print(f"- idle timeout, boot {boot} s: cheapest {best.idle_timeout_min:g} min at {pct(best.cost, ref.cost)} "
              f"against the end-of-period release (overhead {best.overhead_mean_s:.1f} vs "
              f"{ref.overhead_mean_s:.1f} s); "
              f"60 min: {pct(pick(t, 'baseline', idle_timeout_min=60.0, boot_s=boot).cost, ref.cost)}")
    front = t[t["pareto"]].sort_values("cost")
    print(f"- Pareto front: {len(front)} of {len(t)} cells: " + "; ".join(
        f"{fam} ({n})" for fam, n in front["family"].value_counts().items()))
    print()


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        report(Path(arg))
