"""The mutation script's arithmetic and configuration (mutation/run.py)."""

from __future__ import annotations

import tomllib

from mutation.run import config_block, module_name, score


def test_the_score_counts_killed_and_timed_out_over_all_but_the_equivalent_survivors() -> None:
    found = {"a": "killed", "b": "survived", "c": "timeout", "d": "survived", "e": "no tests", "f": "suspicious"}
    out = score(found, {"a", "d"})  # "a" was killed: a judgement of it does not take it out of the score
    assert (out["mutants"], out["equivalent"], out["detected"]) == (6, 1, 2)
    assert out["score"] == 2 / 5
    assert out["open"] == ["b", "e", "f"]
    assert out["by_status"] == {"killed": 1, "no tests": 1, "survived": 2, "suspicious": 1, "timeout": 1}
    assert score({}, set())["score"] is None


def test_a_modules_block_is_valid_toml_with_its_tests_and_deselections() -> None:
    block = tomllib.loads(config_block("broker/sim/kernel.py", ["tests/broker/sim"], ["tests/x.py::test_y"]))
    mutmut = block["tool"]["mutmut"]
    assert mutmut["only_mutate"] == ["broker/sim/kernel.py"]
    assert mutmut["pytest_add_cli_args_test_selection"] == ["tests/broker/sim"]
    assert mutmut["pytest_add_cli_args"] == ["-p", "no:randomly", "-x", "-q", "--deselect", "tests/x.py::test_y"]
    assert module_name("broker/sim/kernel.py") == "broker.sim.kernel"
