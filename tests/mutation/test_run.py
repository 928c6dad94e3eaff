"""The mutation script's arithmetic and configuration (mutation/run.py)."""

from __future__ import annotations

import tomllib

import pytest

from mutation.run import BEGIN, END, config_block, module_name, recheck, score, table, with_table


def test_the_score_counts_killed_and_timed_out_over_all_but_the_equivalent_survivors() -> None:
    found = {"a": "killed", "b": "survived", "c": "timeout", "d": "survived", "e": "no tests", "f": "suspicious"}
    out = score(found, {"a", "d"})  # "a" was killed: a judgement of it does not take it out of the score
    assert (out["mutants"], out["equivalent"], out["detected"]) == (6, 1, 2)
    assert out["score"] == 2 / 5
    assert out["open"] == ["b", "e", "f"]
    assert out["by_status"] == {"killed": 1, "no tests": 1, "survived": 2, "suspicious": 1, "timeout": 1}
    assert out["stale_judgements"] == ["a"]  # judged equivalent, yet a test kills it: the name now means another
    assert score({}, set())["score"] is None


def test_a_modules_block_is_valid_toml_with_its_tests_and_deselections() -> None:
    block = tomllib.loads(config_block("broker/sim/kernel.py", ["tests/broker/sim"], ["tests/x.py::test_y"]))
    mutmut = block["tool"]["mutmut"]
    assert mutmut["only_mutate"] == ["broker/sim/kernel.py"]
    assert mutmut["pytest_add_cli_args_test_selection"] == ["tests/broker/sim"]
    assert mutmut["pytest_add_cli_args"] == ["-p", "no:randomly", "-x", "-q", "--deselect", "tests/x.py::test_y"]
    assert module_name("broker/sim/kernel.py") == "broker.sim.kernel"


def test_the_table_gives_each_module_and_the_whole_with_every_judgement_and_every_open_mutant() -> None:
    results = {
        "b/y.py": {"mutants": 4, "detected": 2, "equivalent": 1, "open": ["b.y.x_f__mutmut_2"], "score": 2 / 3},
        "a/x.py": {"mutants": 3, "detected": 3, "equivalent": 0, "open": [], "score": 1.0},
    }
    reasons = {"b.y.x_f__mutmut_1": "same floats", "c.z.x_g__mutmut_1": "not run here"}
    lines = table(results, reasons).splitlines()
    assert lines[2] == "| `a/x.py` | 3 | 3 | 0 | 0 | 100.0% |"
    assert lines[3] == "| `b/y.py` | 4 | 2 | 1 | 1 | 66.7% |"
    assert lines[4] == "| **all** | 7 | 5 | 1 | 1 | **83.3%** |"  # 5 of the 6 not judged equivalent
    assert "  - `x_f__mutmut_1`: same floats" in lines
    assert not any("c.z" in line or "x_g" in line for line in lines)  # a module not in the results: not listed
    assert lines[-1] == "- `b.y.x_f__mutmut_2`"
    pending = table(results, reasons, ["c/z.py", "d/w.py"]).splitlines()
    assert pending[-1] == "Core modules not run through this script yet: `c/z.py`, `d/w.py`."


def test_the_table_replaces_only_the_marked_part_and_refuses_a_page_without_markers() -> None:
    page = f"# Testing\n\nbefore\n{BEGIN}\nold\n{END}\nafter\n"
    assert with_table(page, "new") == f"# Testing\n\nbefore\n{BEGIN}\nnew\n{END}\nafter\n"
    with pytest.raises(ValueError, match="lacks the markers"):
        with_table("# Testing\n", "new")
    with pytest.raises(ValueError, match="lacks the markers"):
        with_table(f"{BEGIN}\nno end", "new")


def test_only_timed_out_and_crashed_mutants_are_run_again() -> None:
    found = {"d": "timeout", "a": "killed", "c": "segfault", "b": "survived", "e": "suspicious", "f": "not checked"}
    assert recheck(found) == ["c", "d"]
    assert recheck({}) == []
