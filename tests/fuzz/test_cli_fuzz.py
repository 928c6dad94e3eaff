"""Fuzz the options of every command: random ints (0, negatives, huge), floats (nan, inf, -0.0) and strings.

Every run either succeeds (exit 0; with --json, stdout is JSON) or is refused (exit 2, one line ``error: ...``, no
file left behind in its scratch directory); never a traceback, never a hang. Inputs stay small: a tiny SWF trace,
20-60 generated jobs, one worker, at most two random runs.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.fuzz.support import fuzz_pair, refused, run_cli, scratch, tiny_trace
from workloads.registry import registry

REGISTERED = {name.lower() for name in registry()}

INTS = st.one_of(st.sampled_from([0, -1, 1, 2, -(2**63), 2**63, 10**20]), st.integers(-5, 50))
FLOATS = st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-300, 1e308, 5e-324]),
                   st.floats(-10, 3600, allow_nan=False))
TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=8).filter(
    lambda t: t.lower() not in REGISTERED)


def bounded(*values: Any) -> st.SearchStrategy[str]:
    """A duration-like option: moderate numbers, refused ones and non-numbers (a run with a huge one is long, not
    wrong; the extremes are in test_what_the_fuzz_found_is_refused_in_one_line)."""
    return st.one_of(st.sampled_from([str(v) for v in values]), st.sampled_from(["0", "-1", "-0.0", "nan", "inf",
                                                                                "-inf", "x", "", "1e3"]),
                     st.floats(0.5, 600).map(repr))


def spell(value: Any) -> str:
    return repr(value) if isinstance(value, float) and math.isfinite(value) else str(value)


def anything(*special: Any) -> st.SearchStrategy[str]:
    """A value for any option: its meaningful ones, numbers of all sorts or random text."""
    return st.one_of(st.sampled_from([str(s) for s in special]) if special else st.nothing(), INTS.map(spell),
                     FLOATS.map(spell), TEXT)


def small_int(*special: Any, low: int = -2, high: int = 3) -> st.SearchStrategy[str]:
    """An option whose big values would make a case expensive: only small numbers or non-numbers."""
    return st.one_of(st.integers(low, high).map(str), st.sampled_from([str(s) for s in special] or ["x"]),
                     st.sampled_from(["nan", "inf", "1.5", "", "-0", "x"]))


def options(draw: st.DrawFn, pool: dict[str, st.SearchStrategy[str]]) -> list[str]:
    """Some of ``pool``'s options, each with a drawn value (``--name=value``; flags as they are)."""
    chosen = draw(st.lists(st.sampled_from(sorted(pool)), unique=True, max_size=4))
    args = []
    for name in chosen:
        value = draw(pool[name])
        args.append(name if value == "FLAG" else f"{name}={value}")
    return args


FLAG = st.just("FLAG")


@st.composite
def simulate_args(draw: st.DrawFn) -> list[str]:
    pool = {"--tick": bounded(10, 60, 1), "--boot": bounded(0, 120), "--charging": anything("exact", "wall-clock"),
            "--seed": anything(3), "--limit-jobs": anything(5, 30), "--drop-status": anything("failed", "cancelled"),
            "--reqs": anything("constant-100", "constant-10", "heterogeneous"),
            "--policy": anything("coh", "ipp", "FCFS-SM", "coh-r", "coh-onetype", "FCFS-LD"),
            "--heuristics": anything("FCFS-SM", "FCFS-SM,FCFS-LD", ",", "nope"),
            "--price-book": anything("ec2-2013"), "--time-limit": anything(1),
            "--ipp-max-jobs": anything(0, 10), "--ipp-max-vms": anything(1, 3), "--solver": TEXT,
            "--format": anything("csv", "parquet"), "--paper-scoring": FLAG, "--heuristic-wins-ties": FLAG,
            "--deterministic": FLAG, "--validate": FLAG, "--lenient": FLAG, "--force": FLAG, "--no-warm-start": FLAG}
    return options(draw, pool)


@st.composite
def simulate_cases(draw: st.DrawFn) -> tuple[list[str], str, str]:
    return (draw(simulate_args()), draw(st.sampled_from(["synthetic", "trace", "both", "jobs"])),
            draw(st.sampled_from(["none", "new", "file", "full"])))


def out_option(folder: Any, kind: str, option: str = "--out") -> list[str]:
    """``--out`` to a new directory, to a file, to a directory with a file in it, or none."""
    if kind == "none":
        return []
    target = folder / "out"
    if kind == "file":
        target.write_text("x")
    elif kind == "full":
        target.mkdir()
        (target / "keep.txt").write_text("x")
    return [option, str(target)]


def _simulate_options(case: tuple[list[str], str, str]) -> None:
    fuzzed, source, out = case
    with scratch() as tmp:
        trace = str(tiny_trace(tmp, n_jobs=15))
        workload = {"synthetic": ["--synthetic"], "trace": ["--trace", trace],
                    "both": ["--synthetic", "--trace", trace],
                    "jobs": ["--synthetic-jobs=" + str(20 + len(fuzzed) * 10)]}[source]
        run_cli(["simulate", "--synthetic-jobs=20", *workload, *fuzzed, *out_option(tmp, out), "--json"], tmp=tmp)


test_simulate_options, test_simulate_options_slow = fuzz_pair(simulate_cases(), _simulate_options, fast=25, slow=500)


@st.composite
def plan_cases(draw: st.DrawFn) -> tuple[list[str], str, str]:
    pool = {"--term": anything("1y", "3y", "2y"), "--mode": anything("per-type", "capacity"),
            "--options": anything("reserved-light", "reserved-heavy,reserved-light", "on-demand", ","),
            "--solver": anything("cbc", "cpsat"), "--growth": bounded(0, 1, 2.5), "--interval": anything(1, 60, 3600),
            "--heuristics": anything("FCFS-SM", "nope"), "--seed": anything(1),
            "--limit-jobs": anything(5, 30), "--reqs": anything("constant-100", "heterogeneous"),
            "--price-book": anything("ec2-2013", "ec2-2013-cluster"), "--force": FLAG,
            "--synthetic-jobs": small_int(20, 40, low=-1, high=60)}
    return (options(draw, pool), draw(st.sampled_from(["synthetic", "trace", "demand", "both"])),
            draw(st.sampled_from(["none", "new", "file"])))


def _plan_options(case: tuple[list[str], str, str]) -> None:
    fuzzed, source, save = case
    with scratch() as tmp:
        trace = str(tiny_trace(tmp, n_jobs=15))
        demand = tmp / "demand.csv"
        demand.write_text("small,large\n1,0\n2,1\n0,0\n3,1\n")
        inputs = {"synthetic": [], "trace": ["--trace", trace], "demand": ["--demand", str(demand)],
                  "both": ["--trace", trace, "--demand", str(demand)]}[source]
        target = tmp / "saved.csv"
        if save == "file":
            target.write_text("x")
        saving = [] if save == "none" else ["--save-demand", str(target)]
        run_cli(["plan-reservations", "--synthetic-jobs=20", *inputs, *fuzzed, *saving, "--json"], tmp=tmp)


test_plan_options, test_plan_options_slow = fuzz_pair(plan_cases(), _plan_options, fast=25, slow=500)


@st.composite
def leasing_cases(draw: st.DrawFn) -> tuple[list[str], str, int]:
    pool = {"--policy": anything("qlearning", "random", "egreedy", "constant:2", "constant:-1", "constant:x",
                                 "constant:99999999999999999999"),
            "--nodes": small_int(4, 8, 100, high=16), "--span": anything(86400, 3600, 600),
            "--limit-jobs": anything(3, 10), "--epsilon-k": small_int(1, 3), "--discipline": anything("easy",
                                                                                                      "conservative"),
            "--seed": anything(2), "--format": anything("csv", "parquet"), "--lenient": FLAG, "--force": FLAG}
    return options(draw, pool), draw(st.sampled_from(["none", "new", "file", "full"])), draw(st.sampled_from([8, 0]))


def _leasing_options(case: tuple[list[str], str, int]) -> None:
    fuzzed, out, procs = case
    with scratch() as tmp:
        trace = str(tiny_trace(tmp, n_jobs=15, max_procs=procs or None))
        run_cli(["leasing", "--trace", trace, *fuzzed, *out_option(tmp, out), "--json"], tmp=tmp)


test_leasing_options, test_leasing_options_slow = fuzz_pair(leasing_cases(), _leasing_options, fast=25, slow=500)


@st.composite
def leasing_sweep_cases(draw: st.DrawFn) -> tuple[list[str], str]:
    v = st.one_of(st.sampled_from(["0:M", "0:2", "1:1", "2:1", "-1:2", "0:x", ":", "", "3", "0:9"]),
                  st.tuples(st.integers(-2, 9), st.integers(-2, 9)).map(lambda t: f"{t[0]}:{t[1]}"), TEXT)
    pool = {"--nodes": small_int(4, 8, high=8), "--limit-jobs": anything(3, 10), "--v": v,
            "--random-runs": small_int(0, 1, 2, low=-1, high=2), "--backend": st.one_of(st.just("loky"), TEXT),
            "--scheduler": TEXT, "--seed": anything(4), "--plot-random": small_int(0, 1, high=2), "--force": FLAG,
            "--n-jobs": small_int(1, -1, low=-1, high=1)}
    return options(draw, pool), draw(st.sampled_from(["none", "store", "store-file", "plot", "plot-file"]))


def _leasing_sweep_options(case: tuple[list[str], str]) -> None:
    fuzzed, extra = case
    with scratch() as tmp:
        trace = str(tiny_trace(tmp, n_jobs=12, max_procs=4))
        more: list[str] = []
        if extra.startswith("store"):
            more = ["--store", str(tmp / "store")]
        elif extra.startswith("plot"):
            more = ["--plot", str(tmp / "plots")]
        if extra.endswith("file"):
            (tmp / more[1].rsplit("/", 1)[1]).write_text("x")
        run_cli(["leasing", "sweep", "--trace", trace, "--n-jobs=1", "--random-runs=1", "--v=0:2", "--plot-random=1",
                 *fuzzed, *more, "--json"], tmp=tmp, seconds=30)


test_leasing_sweep_options, test_leasing_sweep_options_slow = fuzz_pair(
    leasing_sweep_cases(), _leasing_sweep_options, fast=15, slow=250)


@st.composite
def cluster_cases(draw: st.DrawFn) -> tuple[list[str], str, str]:
    pool = {"--limit-jobs": anything(3, 10), "--parallel": anything("one", "expand"), "--cap": anything(1, 3),
            "--merge": FLAG, "--per-user": FLAG, "--keepalive": anything("fixed:0.3", "idle:0.5", "load:0.4:3600",
                                                                         "load:0.4:0", "fixed:nan", "idle:-1"),
            "--idle-timeout": bounded(0, 5), "--delay": bounded(0, 2), "--burst-ratio": anything(0, 1.5),
            "--wait-next-hour": anything(0, 5, 59.9), "--charging": anything("exact", "wall-clock"),
            "--boot": anything(0, 60, 3600), "--price-book": anything("ec2-2013-cluster", "ec2-2013"),
            "--seed": anything(5), "--format": anything("csv", "parquet"), "--force": FLAG,
            "--scale": st.one_of(st.sampled_from(["0.01", "0.02", "0", "-1", "nan", "inf", "x", ""]))}
    return (options(draw, pool), draw(st.sampled_from(["trace", "synthetic", "both", "neither", "volumes"])),
            draw(st.sampled_from(["none", "new", "file", "full"])))


def _cluster_options(case: tuple[list[str], str, str]) -> None:
    fuzzed, source, out = case
    with scratch() as tmp:
        trace = str(tiny_trace(tmp, n_jobs=12))
        volumes = tmp / "v.csv"
        volumes.write_text("job_id,input_bytes,output_bytes\n" + "".join(f"{i},{i * 1e6},{i * 2e9}\n"
                                                                         for i in range(1, 13)))
        scale = [] if any(a.startswith("--scale") for a in fuzzed) else ["--scale=0.01"]
        inputs = {"trace": ["--trace", trace], "synthetic": ["--synthetic", *scale],
                  "both": ["--trace", trace, "--synthetic", *scale], "neither": [],
                  "volumes": ["--trace", trace, "--volumes", str(volumes)]}[source]
        run_cli(["cluster", *inputs, *fuzzed, *out_option(tmp, out), "--json"], tmp=tmp)


test_cluster_options, test_cluster_options_slow = fuzz_pair(cluster_cases(), _cluster_options, fast=25, slow=500)


@st.composite
def cluster_sweep_cases(draw: st.DrawFn) -> tuple[list[str], str]:
    pool = {"--backend": st.one_of(st.just("loky"), TEXT), "--scheduler": TEXT, "--seed": anything(2),
            "--n-jobs": small_int(1, low=-1, high=1), "--force": FLAG}
    return options(draw, pool), draw(st.sampled_from(["new", "file", "full", "store", "store-file"]))


def _cluster_sweep_options(case: tuple[list[str], str]) -> None:
    fuzzed, target = case
    with scratch() as tmp:
        trace = tiny_trace(tmp, n_jobs=10)
        spec = tmp / "spec.toml"
        spec.write_text(f'name = "s"\n[workload]\ntrace = "{trace}"\n[[family]]\nname = "F"\ncap = [1, 2]\n')
        more = out_option(tmp, target if not target.startswith("store") else "new")
        if target.startswith("store"):
            more += ["--store", str(tmp / "store")]
            if target == "store-file":
                (tmp / "store").write_text("x")
        run_cli(["cluster", "sweep", str(spec), "--n-jobs=1", *fuzzed, *more, "--json"], tmp=tmp, seconds=30)


test_cluster_sweep_options, test_cluster_sweep_options_slow = fuzz_pair(
    cluster_sweep_cases(), _cluster_sweep_options, fast=8, slow=120)


@st.composite
def trace_info_cases(draw: st.DrawFn) -> list[str]:
    target = draw(st.one_of(st.sampled_from(["TRACE", "GZ", "DIR", "EMPTY"]), TEXT))
    flags = draw(st.lists(st.sampled_from(["--json", "--lenient", "--verbose"]), unique=True))
    return [target, *flags]


def _trace_info_arguments(case: list[str]) -> None:
    target, *flags = case
    with scratch() as tmp:
        paths = {"TRACE": tiny_trace(tmp), "DIR": tmp, "EMPTY": tmp / "empty.swf"}
        (tmp / "empty.swf").write_text("")
        gz = tmp / "t.swf.gz"
        gz.write_bytes(b"\x1f\x8b" + b"garbage")
        paths["GZ"] = gz
        verbose = ["--verbose"] if "--verbose" in flags else []
        rest = [f for f in flags if f != "--verbose"]
        run_cli([*verbose, "trace", "info", str(paths.get(target, target)), *rest], tmp=tmp)


test_trace_info_arguments, test_trace_info_arguments_slow = fuzz_pair(
    trace_info_cases(), _trace_info_arguments, fast=20, slow=400)


# --- the bugs the fuzz found in broker/, each with the refusal it now gets --------------------------------------------

FOUND = [
    # a huge boot time or a tiny tick made the replay run (practically) forever
    (["simulate", "--synthetic", "--synthetic-jobs", "20", "--boot", "1e12", "--json"], ("'--boot'", "3600")),
    # (since issue 31 the tick is bounded by its value, 1 ms to a day, not by the grid over the trace)
    (["simulate", "--synthetic", "--synthetic-jobs", "20", "--tick", "1e-300", "--json"], ("'--tick'", "0.001")),
    # a book whose largest type is smaller than a job's requirement was a ValueError (exit 1)
    (["simulate", "--synthetic", "--synthetic-jobs", "20", "--price-book", "ec2-2013-cluster", "--json"],
     ("--price-book ec2-2013-cluster", "holds 1 capacity units", "--reqs heterogeneous")),
    # --nodes was unbounded: numpy could not allocate the learner's arrays (exit 1)
    (["leasing", "--trace", "TRACE", "--nodes", "99999999999999", "--json"], ("'--nodes'", "1000000")),
    # a huge delay put times past datetime64 ('invalid value encountered in cast' in egress.py)
    (["cluster", "--trace", "TRACE", "--delay", "1e300", "--json"], ("'--delay'", "525600")),
    # a huge --growth overflowed the int64 cast, refused without the option's name
    (["plan-reservations", "--synthetic-jobs", "20", "--growth", "1e300", "--json"], ("'--growth'", "1000")),
    # the 'read N, kept M, removed K' notice went to stderr before the --span refusal (two lines)
    (["leasing", "--trace", "UNKNOWN_RUN_TIME", "--span", "1", "--json"], ("--span 1 s", "steps", "1,000,000")),
]


@pytest.mark.parametrize(("args", "words"), FOUND, ids=[" ".join(a[:1] + a[-3:-1]) for a, _ in FOUND])
def test_what_the_fuzz_found_is_refused_in_one_line(args: list[str], words: tuple[str, ...]) -> None:
    with scratch() as tmp:
        trace = str(tiny_trace(tmp, n_jobs=12))
        odd = tiny_trace(tmp, n_jobs=12, name="odd.swf", gap=10**9)
        odd.write_text(odd.read_text() + "13 1 0 -1 1 -1 -1 1 1 -1 1 1 1 -1 1 -1 -1 -1\n")
        run = run_cli([{"TRACE": trace, "UNKNOWN_RUN_TIME": str(odd)}.get(a, a) for a in args], tmp=tmp, seconds=10)
        assert len(run.err.splitlines()) == 1, run.err
        refused(run, *words)


def test_a_header_with_more_nodes_than_a_site_may_have_asks_for_nodes() -> None:
    with scratch() as tmp:
        trace = tiny_trace(tmp, n_jobs=5)
        trace.write_text("; MaxProcs: 99999999999\n" + trace.read_text())
        refused(run_cli(["leasing", "--trace", str(trace), "--json"], tmp=tmp), "99,999,999,999 nodes", "--nodes")
