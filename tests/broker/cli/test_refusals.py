"""Bad input is refused before any work: one line ``error: ...`` on stderr, exit status 2, no file left.

The table holds the mistakes a new user made (issue 12), each with the words its refusal must
contain. While they run, every function that simulates or sweeps is replaced by one that fails the
test: a refusal that came after work started shows as a failure, not as a pass.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from broker.cli.app import COMMANDS
from broker.cli.files import MAX_PLAN_BYTES
from broker.hybrid.sweep import summarize_sweep
from tests.conftest import CliRun, cloudbroker, trace_path

KTH = str(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
LPC = str(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
UNKNOWN = "-1 -1 1 -1 -1 -1 -1"  # SWF fields 12-18: user 1, the rest unknown

FILES = {
    "empty.swf": "; MaxProcs: 4\n",
    # every job's run time unknown: the view removes them all
    "filtered.swf": "; MaxProcs: 4\n" + "".join(f"{i} {10 * i} 0 -1 1 -1 -1 1 100 -1 1 {UNKNOWN}\n" for i in (1, 2, 3)),
    "negative.swf": f"; MaxProcs: 4\n1 0 0 10 -3 -1 -1 1 100 -1 1 {UNKNOWN}\n",
    "plan.json": json.dumps({"term_years": 1, "reservations": [{"instance_type": "huge", "option": "reserved-light",
                                                                "count": 1}]}),
    "cap-empty.toml": f'[workload]\ntrace = "{KTH}"\nlimit = 50\n[[family]]\nname = "a"\ncap = []\n',
    "no-trace.toml": '[workload]\ntrace = "nope.swf"\n[[family]]\nname = "a"\ncap = [1]\n',
    "no-family.toml": f'[workload]\ntrace = "{KTH}"\nlimit = 50\n',
    "taken": "an existing file\n",
    "peak.csv": "small,large\n3,1\n1000000000000,2\n",
    "wide.swf": (f"; MaxProcs: 4\n1 0 0 10 1000000000000 -1 -1 1 100 -1 1 {UNKNOWN}\n"
                 f"2 5 0 10 1 -1 -1 1 100 -1 1 {UNKNOWN}\n"),
    "big-grid.toml": f'[workload]\ntrace = "{KTH}"\nlimit = 50\n[[family]]\nname = "a"\n'
                     f'cap = [{", ".join(map(str, range(1, 2001)))}]\ndelay = [{", ".join(map(str, range(2000)))}]\n',
    "huge-plan.json": json.dumps({"term_years": 1, "reservations": [{"instance_type": "small",
                                                                     "option": "reserved-heavy", "count": 10**12}]}),
    "digits-plan.json": '{"term_years": 1, "reservations": [{"instance_type": "small", "option": "reserved-heavy", '
                        '"count": 1' + "0" * 5000 + "}]}",
}

#: (command line, words the one line must hold)
REFUSED: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("leasing", "--trace", KTH, "--span", "0"), ("'--span'", "> 0", "got 0")),
    (("simulate", "--limit-jobs", "0"), ("'--limit-jobs'", "greater than or equal to 1", "got '0'")),
    (("simulate", "--limit-jobs", "-5"), ("'--limit-jobs'", "greater than or equal to 1", "got '-5'")),
    (("leasing", "--trace", KTH, "--limit-jobs", "0"), ("'--limit-jobs'", "got '0'")),
    (("cluster", "--synthetic", "--limit-jobs", "0"), ("'--limit-jobs'", "got '0'")),
    (("cluster", "--synthetic", "--limit", "0"), ("No such option: --limit", "--limit-jobs")),
    (("simulate", "--synthetic-jobs", "0"), ("'--synthetic-jobs'", "got '0'")),
    (("plan-reservations", "--synthetic-jobs", "0"), ("'--synthetic-jobs'", "got '0'")),
    (("simulate", "--seed", "-1"), ("'--seed'", "greater than or equal to 0", "got '-1'")),
    (("simulate", "--tick", "0"), ("'--tick'", "greater than or equal to 0.001", "got '0'")),
    (("simulate", "--tick", "86401"), ("'--tick'", "less than or equal to 86400", "got '86401'")),
    (("simulate", "--boot", "-100"), ("'--boot'", "greater than or equal to 0", "got '-100'")),
    (("cluster", "--synthetic", "--boot", "-5"), ("'--boot'", "got '-5'")),
    (("simulate", "--policy", "ipp", "--time-limit", "nan"), ("'--time-limit'", "finite", "got nan")),
    (("simulate", "--policy", "ipp"), ("--policy ipp needs --solver", "cbc or cpsat")),
    (("simulate", "--solver", "cbc", "--policy", "FCFS-SM"), ("--solver",)),
    (("simulate", "--solver", "cbc,cbc"), ("solver must name", "each once", "'cbc,cbc'")),
    (("simulate", "--solver", "cbc,gurobi"), ("solver must name", "'cbc,gurobi'")),
    (("simulate", "--solver", "cpsat", "--portfolio-jobs", "0"), ("'--portfolio-jobs'", "got '0'")),
    (("simulate", "--solver", "cpsat", "--race-jobs", "-1"), ("'--race-jobs'", "got '-1'")),
    (("simulate", "--solver", "cpsat", "--ipp-exact-jobs", "13"), ("'--ipp-exact-jobs'", "got '13'")),
    (("simulate", "--solver", "cpsat", "--ipp-chunk-jobs", "60"),
     ("error: --ipp-max-jobs, --ipp-chunk-jobs: chunk_jobs (60)", "below max_jobs (50)")),
    # a library's refusal of what an option configured leads with the option (issue 31)
    (("simulate", "--heuristics", ","), ("error: --heuristics: a portfolio needs at least one heuristic",)),
    (("simulate", "--heuristics", "FCFS-SM,FOO"), ("error: --heuristics: unknown heuristic 'FOO'",)),
    (("simulate", "--charging", "hourly"), ("error: --charging: charging must be one of exact, wall-clock",)),
    (("simulate", "--capacity", "vm"), ("error: --capacity: capacity must be one of interval, tick",)),
    (("plan-reservations", "--capacity", "vm"), ("error: --capacity: capacity must be one of interval, tick",)),
    (("plan-reservations", "--replay-solver", "gurobi"), ("error: --replay-solver: solver must name",)),
    (("plan-reservations", "--options", "reserved-huge"), ("error: --options: unknown reservation option(s)",)),
    (("leasing", "--trace", KTH, "--policy", "sampled", "--epsilon-k", "0"),
     ("error: --epsilon-k: the sampled policy needs k >= 1",)),
    (("leasing", "--trace", KTH, "--references", "both"), ("error: --references: references must be one of",)),
    (("leasing", "--trace", KTH, "--reward", "cost"), ("error: --reward: reward must be one of",)),
    (("cluster", "--synthetic", "--keepalive", "always"), ("error: --keepalive: keep-alive 'always'",)),
    (("cluster", "--synthetic", "--keepalive", "fixed:2"), ("error: --keepalive: keep-alive probability",)),
    (("cluster", "--synthetic", "--charging", "hourly"), ("error: --charging: charging must be exact or wall-clock",)),
    (("advise", "--trace", KTH, "--skip", "30000"), ("error: --skip, --evaluate: the trace has 28,476 entries",)),
    (("leasing", "--trace", KTH, "--nodes", "-3"), ("'--nodes'", "got '-3'")),
    (("leasing", "--trace", KTH, "--nodes", "0"), ("'--nodes'", "got '0'")),
    (("plan-reservations", "--growth", "-1"), ("'--growth'", "got '-1'")),
    (("plan-reservations", "--interval", "0"), ("'--interval'", "got '0'")),
    (("leasing", "sweep", "--trace", KTH, "--random-runs", "-1"), ("'--random-runs'", "got '-1'")),
    (("simulate", "--policy", "coh-r", "--reservations", "plan.json"), ("plan.json", "'huge'", "reserved-light")),
    (("simulate", "--policy", "coh-r", "--reservations", "huge-plan.json"),
     ("--reservations huge-plan.json", "1,000,000,000,000 reservations", "at most 1,000,000")),
    (("simulate", "--policy", "coh-r", "--reservations", "digits-plan.json"),
     ("--reservations digits-plan.json", "not a plan", "5001 digits")),
    (("simulate", "--policy", "coh-r", "--reservations", "no-plan.json"),
     ("--reservations no-plan.json", "No such file or directory")),
    (("plan-reservations", "--demand", "peak.csv"),
     ("error: peak.csv: a peak of 1,000,000,000,002 VMs (summed over the types); a plan covers at most 1,000,000",)),
    # one job of 10^12 processors expanded into as many tasks ate memory (issue 31)
    (("elastic", "--trace", "wide.swf"), ("error: --parallel: parallel 'expand' makes 1,000,000,000,001 one-core "
                                         "tasks", "at most 100,000,000", "(parallel 'one')")),
    (("elastic", "sweep", "--trace", "wide.swf"), ("error: --parallel: parallel 'expand' makes 1,000,000,000,001",)),
    (("cluster", "--trace", "wide.swf", "--parallel", "expand"), ("error: --parallel: parallel 'expand' makes",)),
    # a grid of more cells than a sweep holds is refused before it is made (issue 31)
    (("cluster", "sweep", "big-grid.toml", "--out", "out"),
     ("big-grid.toml: the [[family]] grids: 4,000,000 cells; a sweep holds at most 2,000,000",)),
    (("advise", "sweep", "--trace", KTH, "--k", ",".join(map(str, range(1, 1001))),
      "--width", ",".join(str(w / 1000) for w in range(1, 3001))),
     ("--k (1,000) x --width (3,000) x --cutoff (1) x --label (1): 3,000,000 cells; a sweep holds at most "
      "2,000,000",)),
    (("elastic", "sweep", "--trace", LPC, "--seeds", "10000", "--lambda",
      ",".join(str(x / 10000) for x in range(10000))),
     ("40,000 learning runs x --seeds 10,000 and the rules: 400,000,014 cells",)),
    (("cluster", "sweep", "cap-empty.toml", "--out", "out"), ("cap-empty.toml", "'cap'", "empty list")),
    (("cluster", "sweep", "no-trace.toml", "--out", "out"), ("no-trace.toml", "[workload]", "'nope.swf'",
                                                             "registered traces")),
    (("cluster", "sweep", "no-family.toml", "--out", "out"), ("no-family.toml", "[[family]]")),
    (("simulate", "--out", "taken"), ("--out taken", "a file is there")),
    (("cluster", "--synthetic", "--out", "taken"), ("--out taken", "a file is there")),
    (("leasing", "--trace", KTH, "--out", "taken"), ("--out taken", "a file is there")),
    (("leasing", "sweep", "--trace", KTH, "--store", "taken"), ("--store taken", "a store is a directory")),
    (("leasing", "sweep", "--trace", KTH, "--plot", "taken"), ("--plot taken", "a file is there")),
    (("cluster", "sweep", "no-family.toml", "--out", "taken"), ("--out taken", "a file is there")),
    (("cluster", "--synthetic", "--scale", "0"), ("'--scale'", "> 0", "got 0")),
    (("simulate", "--trace", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)", "-3",
                                                           "is negative", "--strict refuses it")),
    (("cluster", "--trace", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)")),
    (("leasing", "--trace", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)")),
    (("plan-reservations", "--trace", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)")),
    (("advise", "--trace", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)")),
    (("trace", "info", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)")),
    (("simulate", "--policy", "foo"), ("'foo'", "coh, ipp, coh-r", "FCFS-SM")),
    (("cluster", "--synthetic", "--idle-timeout", "-5"), ("'--idle-timeout'", "got '-5'")),
    (("leasing", "sweep", "--trace", KTH, "--v", "5:2"), ("--v '5:2'", "FIRST <= LAST")),
    (("leasing", "sweep", "--trace", KTH, "--v", "0:101"), ("--v '0:101'", "M = 100")),
    (("advise", "--trace", ""), ("the trace", "not an empty string")),
    (("simulate", "--trace", "."), ("the trace .", "a directory")),
    (("trace", "info", ""), ("the trace", "not an empty string")),
    (("elastic",), ("pass exactly one of --trace or --synthetic",)),
    (("elastic", "--trace", LPC, "--synthetic", "lal"), ("pass exactly one of --trace or --synthetic",)),
    (("elastic", "--synthetic", "lublin"), ("--synthetic takes lal, got 'lublin'",)),
    (("elastic", "--trace", LPC, "--reward", "late"), ("--reward must be one of paper, wait",)),
    (("elastic", "--trace", LPC, "--mode", "elastic", "--max-cores", "many"),
     ("--max-cores takes a number of cores in [1, 1,000,000] or none, got 'many'",)),
    (("elastic", "--trace", LPC, "--mode", "elastic", "--max-cores", "0"),
     ("--max-cores takes a number of cores in [1, 1,000,000] or none, got '0'",)),
    (("elastic", "--trace", LPC, "--max-cores", "none", "--policy", "fcfs"),
     ("--max-cores none is for an elastic pool: add --mode elastic",)),
    (("elastic", "--trace", LPC, "--mode", "elastic", "--max-cores", "none"),
     ("--max-cores none: the paper's learner spreads its sizes over", "use --reward wait")),
    (("elastic", "--trace", LPC, "--policy", "threshold"), ("--policy threshold sizes an elastic pool",
                                                           "add --mode elastic")),
    (("elastic", "--trace", LPC, "--mode", "fixed"), ("--mode must be rigid or elastic",)),
    (("elastic", "--trace", LPC, "--policy", "lifo"), ("--policy must be one of fcfs, sjf, edf, greedy-w,",
                                                       "urgent, threshold, sarsa")),
    (("elastic", "--trace", LPC, "--estimate", "mean"), ("--estimate must be one of oracle, median",)),
    (("elastic", "--trace", LPC, "--parallel", "many"), ("--parallel must be expand or one",)),
    (("elastic", "--trace", LPC, "--format", "xls"), ("--format must be parquet or csv",)),
    (("elastic", "--trace", LPC, "--lambda", "1.5"), ("'--lambda'", "less than or equal to 1", "got '1.5'")),
    (("elastic", "--trace", LPC, "--first-day", "100000"), (LPC, "no job submitted in the window",
                                                            "--first-day 100000")),
    (("elastic", "--trace", LPC, "--first-day", "100000", "--out", "new"), ("no job submitted in the window",)),
    (("elastic", "--trace", LPC, "--mode", "elastic", "--min-cores", "100"),
     ("error: --cores, --min-cores, --max-cores: an elastic pool needs 1 <= min_cores <= cores <= max_cores",
      "got 100, 81, 162")),
    (("elastic", "--trace", LPC, "--mode", "elastic", "--max-cores", "10"),
     ("error: --cores, --min-cores, --max-cores: an elastic pool needs", "got 30, 81, 10")),
    (("elastic", "--trace", LPC, "--out", "taken"), ("--out taken", "a file is there")),
    (("elastic", "--trace", "negative.swf", "--strict"), ("negative.swf:2", "field 5 (allocated_procs)")),
    (("elastic", "sweep", "--trace", LPC, "--policy", "lifo"), ("--policy takes fcfs, sjf, edf, greedy-w, urgent,",
                                                                "threshold, sarsa",
                                                                "got 'lifo'")),
    (("elastic", "sweep", "--trace", LPC, "--lambda", "2"), ("--lambda takes numbers in [0, 1]", "got '2'")),
    (("elastic", "sweep", "--trace", LPC, "--lambda", "0.5,nan"), ("--lambda takes numbers in [0, 1]", "got 'nan'")),
    (("elastic", "sweep", "--trace", LPC, "--mode", "fixed"), ("--mode takes rigid, elastic", "got 'fixed'")),
    (("elastic", "sweep", "--trace", LPC, "--estimate", "mean"), ("--estimate takes oracle, median", "got 'mean'")),
    (("elastic", "sweep", "--trace", LPC, "--first-day", "100000"), ("no job submitted in the window",)),
    (("elastic", "sweep", "--trace", LPC, "--backend", "spark"), ("--backend must be one of loky, dask, ray",)),
    (("elastic", "sweep", "--trace", LPC, "--store", "taken"), ("--store taken", "a store is a directory")),
    (("elastic", "sweep", "--trace", LPC, "--out", "taken"), ("--out taken", "a file is there")),
    # a bad pool is refused before the trace is read; an empty grid is refused, not run
    (("elastic", "sweep", "--trace", LPC, "--mode", "elastic", "--min-cores", "100"),
     ("error: --cores, --min-cores, --max-cores: an elastic pool needs 1 <= min_cores <= cores <= max_cores",)),
    (("elastic", "sweep", "--trace", LPC, "--mode", "rigid", "--policy", "threshold"),
     ("no run in the grid", "threshold sizes elastic pools only")),
]


def case_id(args: tuple[str, ...]) -> str:
    return " ".join(a if len(a) < 80 else f"{a[:20]}...({len(a.split(','))} values)" for a in args).replace(
        KTH, "KTH").replace(LPC, "LPC")


def boom(*_: Any, **__: Any) -> Any:
    """Stands in for any work a refused command must not start."""
    raise AssertionError("work started before the input was refused")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding :data:`FILES`, in which no simulation can run."""
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    for target in ("broker.cli.simulate.simulate", "broker.cli.plan.replay_demand", "broker.cli.plan.plan_reservations",
                   "broker.cli.leasing.run_leasing", "broker.cli.leasing.run_constant",
                   "broker.cli.cluster.simulate_cluster", "broker.cli.backends.sweep", "broker.sweep.run_sweep",
                   "broker.cli.elastic.run_elastic"):
        monkeypatch.setattr(target, boom)
    return tmp_path


def one_line(run: CliRun) -> str:
    lines = run.err.splitlines()
    assert run.code == 2 and len(lines) == 1 and lines[0].startswith("error: "), run
    assert run.out == ""
    return lines[0]


@pytest.mark.parametrize(("args", "words"), REFUSED, ids=[case_id(a) for a, _ in REFUSED])
def test_each_mistake_is_refused_in_one_line_before_any_work(workdir: Path, args: tuple[str, ...],
                                                             words: tuple[str, ...]) -> None:
    before = sorted(p.name for p in workdir.iterdir())
    line = one_line(cloudbroker(*args))
    assert all(w in line for w in words), (line, [w for w in words if w not in line])
    assert sorted(p.name for p in workdir.iterdir()) == before  # no file or directory left behind


def test_a_plan_file_larger_than_any_plan_is_refused_before_it_is_read(workdir: Path) -> None:
    with (workdir / "big.json").open("wb") as fh:
        fh.truncate(MAX_PLAN_BYTES + 1)  # sparse: nothing is written
    line = one_line(cloudbroker("simulate", "--policy", "coh-r", "--reservations", "big.json"))
    size = f"{MAX_PLAN_BYTES + 1:,} bytes; a plan file holds at most {MAX_PLAN_BYTES:,}"
    assert f"--reservations big.json: {size}" in line


def test_a_demand_file_of_more_counts_than_the_bound_is_refused_at_the_line_that_passes_it(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("broker.cli.files.MAX_DEMAND_CELLS", 4)  # two rows of two types
    (workdir / "d.csv").write_text("small,large\n1,2\n3,4\n5,6\n")
    line = one_line(cloudbroker("plan-reservations", "--demand", "d.csv"))
    assert line == ("error: d.csv:4: more than 4 counts (rows x 2 types), the most a demand file may hold; use longer "
                    "intervals")


@pytest.mark.parametrize(("variable", "value", "words"), [
    ("CLOUDBROKER_CACHE", "taken/cache", ("cannot use the trace cache taken/cache", "CLOUDBROKER_CACHE's")),
    ("CLOUDBROKER_TRACE_MIRROR", "notaurl", ("(from CLOUDBROKER_TRACE_MIRROR) failed",
                                             "CLOUDBROKER_TRACE_MIRROR is 'notaurl'")),
])
def test_an_environment_variable_that_breaks_a_download_is_named_in_the_refusal(
        workdir: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, words: tuple[str, ...]) -> None:
    monkeypatch.setenv("CLOUDBROKER_CACHE", str(workdir / "cache"))  # KTH by name is never cached there
    monkeypatch.setenv(variable, value)
    for command in (("trace", "info", "KTH-SP2-1996-2.1-cln"), ("simulate", "--trace", "KTH-SP2-1996-2.1-cln")):
        line = one_line(cloudbroker(*command))
        assert all(w in line for w in words), (line, [w for w in words if w not in line])


def test_a_refusal_is_one_line_even_when_its_message_spans_several(workdir: Path) -> None:
    (workdir / "multi.toml").write_text('[workload]\ntrace = "nope.swf"\n[[family]]\nname = "a"\ncap = [1]\n')
    line = one_line(cloudbroker("cluster", "sweep", "multi.toml", "--out", "o"))
    assert "  " not in line


# -- a trace that can be read is run: no job left is a result, an odd value is counted ----------------------------
NOTHING = [("simulate", "empty.swf", 0, {}), ("simulate", "filtered.swf", 3, {"run time unknown or <= 0": 3}),
           ("plan-reservations", "filtered.swf", 3, {"run time unknown or <= 0": 3}),
           ("leasing", "filtered.swf", 3, {"run time unknown or < 0": 3}),
           ("cluster", "filtered.swf", 3, {"run time unknown or < 0": 3}),
           ("elastic", "filtered.swf", 3, {"run time unknown or < 0": 3}),
           ("elastic sweep", "filtered.swf", 3, {"run time unknown or < 0": 3}),
           ("advise --cancelled drop", "filtered.swf", 3, {"run time unknown": 3})]


@pytest.mark.parametrize(("command", "name", "read", "removed"), NOTHING, ids=[f"{c} {n}" for c, n, *_ in NOTHING])
def test_a_trace_with_no_job_left_is_a_result_with_its_counts_not_a_refusal(
        workdir: Path, command: str, name: str, read: int, removed: dict[str, int]) -> None:
    run = cloudbroker(*command.split(), "--trace", name, "--json")  # the workdir fixture fails any work started
    assert run.code == 0, run
    assert run.err.splitlines()[-1].startswith(f"{name}: no job left to run: {read} job(s) read"), run.err
    payload = json.loads(run.out)
    assert (payload["jobs"], payload["jobs_in"], payload["jobs_kept"], payload["jobs_removed"]) == (0, read, 0, removed)
    assert payload["nothing_to_run"].startswith("no job left to run")


def test_advise_on_entries_all_cancelled_while_queued_keeps_and_counts_them_but_has_nothing_to_place(
        workdir: Path) -> None:
    run = cloudbroker("advise", "--trace", "filtered.swf", "--json")  # each of its 3 jobs: run time -1, wait 0
    assert run.code == 0 and "no job left to run: 3 job(s) read" in run.err, run
    payload = json.loads(run.out)
    assert (payload["jobs"], payload["jobs_kept"]) == (0, 3) and not any(payload["jobs_removed"].values())
    assert payload["jobs_flagged"]["cancelled while queued (run time unknown: wait scored, no placement)"] == 3


@pytest.mark.parametrize("command", ["simulate", "cluster", "leasing --policy constant:1", "elastic",
                                     "plan-reservations"])
def test_an_undocumented_value_is_read_by_its_rule_and_counted_in_the_output(tmp_path: Path, command: str) -> None:
    trace = tmp_path / "negative.swf"
    trace.write_text(FILES["negative.swf"] + f"2 5 0 20 1 -1 -1 1 100 -1 -4 {UNKNOWN}\n")
    run = cloudbroker(*command.split(), "--trace", str(trace), "--json")
    assert run.code == 0, run
    flagged = {"allocated_procs: negative, read as unknown": 1, "status: undocumented code -4, read as unknown": 1}
    counted = json.loads(run.out)["jobs_flagged"]  # with what the command's job view flags (an unknown user, ...)
    assert {why: counted.get(why) for why in flagged} == flagged
    assert run.err.splitlines() == [f"{trace}: 2 line(s) flagged (allocated_procs: negative, read as unknown: 1; "
                                    "status: undocumented code -4, read as unknown: 1)"]


# -- undefined figures are null, with the reason -----------------------------------------------------------------
NO_WAIT = f"; MaxProcs: 4\n1 0 0 100 2 -1 -1 2 200 -1 1 {UNKNOWN}\n2 50 0 100 1 -1 -1 1 200 -1 1 {UNKNOWN}\n"


def test_leasing_with_a_reference_that_never_waits_reports_null_figures(tmp_path: Path) -> None:
    (tmp_path / "no-wait.swf").write_text(NO_WAIT)  # two jobs that fit 4 nodes together: V = 0 waits 0 s
    run = cloudbroker("leasing", "--trace", str(tmp_path / "no-wait.swf"), "--policy", "constant:1", "--json")
    out = json.loads(run.out)
    assert run.code == 0 and (out["twt_ref_s"], out["cloud_cpu_ref_s"]) == (0.0, 0.0)
    assert out["twt_imp_pct"] is None and out["cost_pct"] is None and out["balance"] is None
    assert out["undefined"]["twt_imp_pct"] == "the V = 0 reference waits 0 s: no wait to improve"
    assert out["undefined"]["cost_pct"] == "the unbounded reference uses no cloud node"


def test_leasing_sweep_with_a_reference_that_never_waits_has_no_best_v_and_draws_nothing(tmp_path: Path) -> None:
    (tmp_path / "no-wait.swf").write_text(NO_WAIT)
    run = cloudbroker("leasing", "sweep", "--trace", str(tmp_path / "no-wait.swf"), "--random-runs", "2",
                      "--n-jobs", "1", "--plot", str(tmp_path / "figs"), "--json")
    out = json.loads(run.out)
    assert run.code == 0 and out["best_v"] is None and out["best_constant"] is None
    assert all(b == {"balance": None, "cost_pct": None, "twt_imp_pct": None} for b in out["constant"].values())
    assert out["random"] == {"runs": 2, "mean": None, "std": None, "best": None}
    assert "no wait to improve" in out["undefined"]["twt_imp_pct"] and "no figure drawn" in run.err
    assert not (tmp_path / "figs").exists()


def test_leasing_sweep_with_no_random_runs_runs_the_constant_caps_alone(tmp_path: Path) -> None:
    (tmp_path / "no-wait.swf").write_text(NO_WAIT)  # --random-runs takes 0 as its help's range says
    run = cloudbroker("leasing", "sweep", "--trace", str(tmp_path / "no-wait.swf"), "--random-runs", "0", "--v", "0:1",
                      "--n-jobs", "1", "--json")
    out = json.loads(run.out)
    assert run.code == 0 and out["cells"] == 3 and set(out["constant"]) == {"0", "1"}  # V unbounded, V = 0, V = 1
    assert out["random"] == {"runs": 0, "mean": None, "std": None, "best": None}


@pytest.mark.parametrize(("local_twt", "ref_cpu", "undefined"), [(0.0, 50.0, {"twt_imp_pct", "twt_pct", "balance"}),
                                                                  (90.0, 0.0, {"cost_pct", "balance"}),
                                                                  (90.0, 50.0, set())])
def test_sweep_summary_balances_are_null_exactly_when_a_reference_is_zero(local_twt: float, ref_cpu: float,
                                                                          undefined: set[str]) -> None:
    ref, local = {"twt_s": 0.0, "cloud_cpu_s": ref_cpu}, {"twt_s": local_twt, "cloud_cpu_s": 0.0}
    half = {"twt_s": local_twt / 2, "cloud_cpu_s": ref_cpu / 5}
    summary = summarize_sweep(ref, local, {0: local, 1: half}, [half])
    assert set(summary.undefined) == undefined
    if undefined:
        assert summary.best_v is None and summary.random_balances == [None]
        assert summary.constant[1]["balance"] is None
    else:  # wait halved (50 % better) for 20 % of the unbounded cloud use
        assert summary.best_v == 1 and summary.constant[1] == {"twt_imp_pct": 50.0, "cost_pct": 20.0, "balance": 30.0}
        assert summary.random_balances == [30.0] and summary.to_dict()["random"]["mean"] == 30.0


# -- dropped jobs are counted --------------------------------------------------------------------------------------
def test_cluster_says_which_jobs_of_sdsc_sp2_it_removed_and_why() -> None:
    run = cloudbroker("cluster", "--trace", str(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")), "--limit-jobs", "50",
                      "--json")
    out = json.loads(run.out)
    removed = out["jobs_removed"]
    assert run.code == 0 and out["jobs_in"] == 59_715 and out["jobs"] == 50
    assert removed["cancelled by the user (status 5)"] > 0 and removed["run time unknown or < 0"] > 0
    assert out["jobs_in"] - sum(removed.values()) == out["jobs_kept"]
    assert run.err.count("\n") == 1 and f"removed {removed['cancelled by the user (status 5)']} (cancelled" in run.err


def test_cluster_counts_the_jobs_a_volumes_file_does_not_cover(tmp_path: Path) -> None:
    rows = "".join(f"{job},1000,2000\n" for job in range(1, 51))
    (tmp_path / "vol.csv").write_text("job_id,input_bytes,output_bytes\n" + rows)
    run = cloudbroker("cluster", "--trace", KTH, "--volumes", str(tmp_path / "vol.csv"), "--json")
    out = json.loads(run.out)
    assert run.code == 0 and out["jobs_in"] == 28_476 and out["jobs"] == out["jobs_kept"] <= 50
    assert out["jobs_removed"]["no data volume (or < 0)"] >= 28_476 - 50
    assert out["jobs_in"] - sum(out["jobs_removed"].values()) == out["jobs_kept"]


# -- every bounded option refuses a value out of its range ---------------------------------------------------------
#: What each command needs besides the option under test to get past its own checks.
BASE = {"trace info": (KTH,), "leasing": ("--trace", KTH), "leasing sweep": ("--trace", KTH),
        "cluster": ("--synthetic",), "cluster sweep": ("spec.toml",), "advise": ("--trace", KTH),
        "advise sweep": ("--trace", KTH), "elastic": ("--trace", LPC), "elastic sweep": ("--trace", LPC)}


def commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(path: str, command: Any) -> None:
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(f"{path} {name}", sub)

    for name, ref in COMMANDS.items():
        walk(name, ref.load(name))
    return found


def numeric(param: Any) -> type | None:
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    kinds = set(getattr(annotation, "__args__", (annotation,))) - {type(None)}
    return next((k for k in (int, float) if kinds == {k}), None)


def out_of_range(param: Any, kind: type) -> list[str]:
    """Values the option must refuse: just below its minimum, just above its maximum, NaN and inf for floats."""
    step = 1 if kind is int else 0.5
    values = []
    if param.min is not None:
        values.append(str(param.min - step))
    if param.max is not None:
        values.append(str(param.max + step))
    callback = getattr(param.callback, "__name__", "")
    if callback == "positive":
        values.append("0")
    if callback == "workers":
        values.append("0")
    if callback == "below_an_hour":
        values += ["-0.5", "60"]
    if kind is float:
        values += ["nan", "inf"]
    return list(dict.fromkeys(values))


CASES = [(path, p.opts[0], value) for path, command in commands() for p in command.params
         if p.opts and p.opts[0].startswith("--") and (kind := numeric(p)) is not None
         for value in out_of_range(p, kind)]


def test_every_numeric_option_of_every_command_has_a_bound() -> None:
    unbounded = [(path, p.opts[0]) for path, command in commands() for p in command.params
                 if numeric(p) is not None and not out_of_range(p, int)]
    assert unbounded == []
    assert len({(path, opt) for path, opt, _ in CASES}) >= 25


@pytest.mark.parametrize(("path", "option", "value"), CASES, ids=[f"{p} {o} {v}" for p, o, v in CASES])
def test_an_option_out_of_range_is_refused(workdir: Path, path: str, option: str, value: str) -> None:
    line = one_line(cloudbroker(*path.split(), *BASE.get(path, ()), f"{option}={value}"))
    assert f"'{option}'" in line or option in line, line
    shown = "nan" if value == "nan" else ("inf" if value == "inf" else str(float(value)))
    assert value in line or shown in line or math.isnan(float(value)), line
