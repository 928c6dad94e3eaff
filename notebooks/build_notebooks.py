"""Write the notebooks from their cell sources (outputs stripped), so they diff as code.

    python notebooks/build_notebooks.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

IPP_TIME_LIMITS = [
    new_markdown_cell(
        "# IPP time limits: what the integer program adds to CoH's portfolio\n\n"
        "For LCG and a generated (Lublin-Feitelson) workload: total cost against the IPP's time limit "
        "(heuristics only, 0.1, 0.5, 1, 2, 5 s) for both backends; the IPP's win rate and gap by number "
        "of new jobs per tick; time per tick. CI runs a small slice; set `FULL = True` for the whole "
        "traces (hours)."
    ),
    new_code_cell(
        "# Parameters (papermill-style): FULL runs the whole traces and every limit.\n"
        "FULL = False\n"
        "SLICE_JOBS = 600\n"
        "LIMITS = [None, 0.1, 0.5, 1.0, 2.0, 5.0] if FULL else [None, 0.1, 0.5]\n"
        "BACKENDS = ['cpsat', 'cbc']\n"
        "SEED = 1",
        metadata={"tags": ["parameters"]},
    ),
    new_code_cell(
        "from pathlib import Path\n\n"
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "import pandas as pd\n\n"
        "from broker.recorder import MemoryRecorder\n"
        "from broker.simulate import SimulationConfig, simulate\n"
        "from workloads.cache import load_trace\n"
        "from workloads.jobs import job_view\n"
        "from workloads.lublin import default_workload\n"
        "from workloads.pricebooks import load_price_book\n\n"
        "catalog = load_price_book().catalog()\n"
        "lcg_path = Path('..').resolve().parent / 'shared' / 'traces' / 'LCG-2005-1.swf.gz'\n"
        "swf = load_trace(lcg_path)\n"
        "lcg, _ = job_view(swf.frame, reqs='heterogeneous', seed=SEED, origin=swf.header.unix_start_time or 0)\n"
        "synthetic, _ = job_view(default_workload(seed=SEED, n_jobs=2000), reqs='heterogeneous', seed=SEED)\n"
        "workloads = {'LCG': lcg if FULL else lcg.head(SLICE_JOBS),\n"
        "             'Lublin': synthetic if FULL else synthetic.head(SLICE_JOBS)}\n"
        "{name: len(jobs) for name, jobs in workloads.items()}"
    ),
    new_code_cell(
        "rows, ticks = [], []\n"
        "for name, jobs in workloads.items():\n"
        "    for backend in BACKENDS:\n"
        "        for limit in LIMITS:\n"
        "            if limit is None and backend != BACKENDS[0]:\n"
        "                continue\n"
        "            config = SimulationConfig(policy='coh', solver=None if limit is None else backend,\n"
        "                                      time_limit=limit or 1.0)\n"
        "            recorder = MemoryRecorder()\n"
        "            result = simulate(jobs, catalog, config=config, seed=SEED, recorder=recorder)\n"
        "            s = result.summary\n"
        "            label = 'heuristics only' if limit is None else backend\n"
        "            rows.append({'workload': name, 'members': label, 'limit_s': limit, 'cost': s.cost,\n"
        "                         'cost_over_lb': s.cost_over_lb, 'ipp_wins': s.policy_stats.get('ipp_wins', 0),\n"
        "                         'ipp_wall_s': s.policy_stats.get('ipp_wall_s', 0.0)})\n"
        "            frame = recorder.frame('portfolio').assign(workload=name, members=label, limit_s=limit)\n"
        "            ticks.append(frame)\n"
        "costs = pd.DataFrame(rows)\n"
        "per_tick = pd.concat(ticks, ignore_index=True)\n"
        "costs"
    ),
    new_markdown_cell("## Cost against the time limit"),
    new_code_cell(
        "fig, axes = plt.subplots(1, len(workloads), figsize=(11, 4), squeeze=False)\n"
        "for ax, (name, group) in zip(axes[0], costs.groupby('workload')):\n"
        "    base = group[group.members == 'heuristics only'].cost.iloc[0]\n"
        "    ax.axhline(base, color='grey', ls='--', label='heuristics only')\n"
        "    for backend, g in group[group.members != 'heuristics only'].groupby('members'):\n"
        "        ax.plot(g.limit_s, g.cost, marker='o', label=backend)\n"
        "    ax.set(title=name, xlabel='IPP time limit (s)', ylabel='total cost ($)', xscale='log')\n"
        "    ax.legend()\n"
        "fig.tight_layout()"
    ),
    new_markdown_cell("## IPP win rate and gap by number of new jobs per tick"),
    new_code_cell(
        "with_ipp = per_tick[per_tick.members != 'heuristics only'].copy()\n"
        "with_ipp['bucket'] = pd.cut(with_ipp.jobs, [0, 1, 2, 5, 10, 20, 49, 10**6],\n"
        "                            labels=['1', '2', '3-5', '6-10', '11-20', '21-49', '50+'])\n"
        "by_jobs = with_ipp.groupby(['workload', 'members', 'bucket'], observed=True).agg(\n"
        "    ticks=('jobs', 'size'), ipp_win_rate=('winner', lambda w: (w == 'IPP').mean()),\n"
        "    mean_gap=('ipp_gap', 'mean'), mean_ipp_s=('ipp_wall_s', 'mean'))\n"
        "by_jobs"
    ),
    new_markdown_cell("## Time per tick"),
    new_code_cell(
        "time_per_tick = with_ipp.groupby(['workload', 'members', 'limit_s']).ipp_wall_s.describe(\n"
        "    percentiles=[0.5, 0.95, 0.99])[['count', 'mean', '50%', '95%', '99%', 'max']]\n"
        "time_per_tick"
    ),
]


def main() -> None:
    nb = new_notebook(cells=IPP_TIME_LIMITS, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                    "language": "python"}})
    nbformat.write(nb, HERE / "ipp_time_limits.ipynb")


if __name__ == "__main__":
    main()
