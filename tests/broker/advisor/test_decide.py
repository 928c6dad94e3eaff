"""The advisor's decision by hand: speed models, the strict inequalities, saved time, the oracle, the cutoff."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from broker.advisor.decide import PAPER_OVERHEADS, Cutoff, LinearSpeed, TableSpeed, decide, oracle, saved_time
from workloads.errors import ConfigError, InputError


def test_the_linear_speed_model_by_hand() -> None:
    np.testing.assert_allclose(LinearSpeed(0.1).cloud_run(np.array([10, 1]), np.array([100.0, 100.0])), [200.0, 110.0],
                               rtol=1e-15)
    assert LinearSpeed(0.0).cloud_run(np.array([64]), np.array([5.0])).tolist() == [5.0]
    assert LinearSpeed(0.5).s == 0.5 and len(PAPER_OVERHEADS) == 10
    with pytest.raises(ConfigError, match="overhead"):
        LinearSpeed(-0.1)


def test_a_speed_table_is_read_and_looked_up_by_the_most_processors_not_above_the_jobs(tmp_path: Path) -> None:
    path = tmp_path / "speed.csv"
    path.write_text("procs,ratio\n64,3.0\n1,1.1\n8,1.5\n")
    table = TableSpeed.read(path)
    assert table.procs == (1, 8, 64) and table.ratios == (1.1, 1.5, 3.0)
    got = table.cloud_run(np.array([1, 4, 8, 63, 64, 500]), np.full(6, 100.0))
    np.testing.assert_allclose(got, [110.0, 110.0, 150.0, 150.0, 300.0, 300.0])
    assert table.s == pytest.approx((1.1 + 1.5 + 3.0) / 3 - 1)


@pytest.mark.parametrize(("text", "where"), [("proc,ratio\n1,1\n", ":1:"),
                                             ("procs,ratio\n0,1.5\n", ":2: field 'procs'"),
                                             ("procs,ratio\n2,x\n", ":2: field 'ratio'"),
                                             ("procs,ratio\n2,nan\n", ":2: field 'ratio'"),
                                             ("procs,ratio\n2,1\n2,3\n", ":3: field 'procs'"),
                                             ("procs,ratio\n2,1,5\n", ":2: 3 fields"), ("procs,ratio\n", "no rows")])
def test_a_bad_speed_table_names_the_line_and_field(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "speed.csv"
    path.write_text(text)
    with pytest.raises(InputError, match="speed.csv" + ".*" + where.replace("(", r"\(").replace(")", r"\)")):
        TableSpeed.read(path)


def test_the_decision_needs_a_strictly_shorter_cloud_run_and_a_variance_strictly_below_the_cutoff() -> None:
    wait, run = np.array([100.0, 100.0, 100.0, 100.0]), np.array([50.0, 50.0, 50.0, 50.0])
    cloud = np.array([149.0, 150.0, 149.0, 149.0])
    var = np.array([9.0, 9.0, 10.0, 11.0])
    assert decide(wait, run, var, cloud, 10.0).tolist() == [True, False, False, False]
    assert decide(wait, run, var, cloud, math.inf).tolist() == [True, False, True, True]  # no cutoff


def test_saved_time_and_the_oracle_by_hand() -> None:
    run, wait, cloud = np.array([100.0, 100.0, 100.0]), np.array([50.0, 0.0, 10.0]), np.array([120.0, 120.0, 110.0])
    assert saved_time(np.array([True, True, False]), run, wait, cloud).tolist() == [30.0, -20.0, 0.0]
    assert oracle(run, wait, cloud).tolist() == [True, False, False]  # 110 = 110 saves nothing: kept


def test_no_advisor_saves_more_than_the_oracle_on_any_job() -> None:
    rng = np.random.default_rng(11)
    run, wait = rng.exponential(3600, 2000), rng.exponential(7200, 2000)
    for o in PAPER_OVERHEADS:
        cloud = LinearSpeed(o).cloud_run(rng.integers(1, 128, 2000), run)
        best = saved_time(oracle(run, wait, cloud), run, wait, cloud)
        for choice in (rng.random(2000) < 0.5, np.ones(2000, bool), np.zeros(2000, bool)):
            assert np.all(best >= saved_time(choice, run, wait, cloud))
        assert np.all(best >= 0)


def test_the_cutoff_separates_hits_below_the_line_from_misses_above() -> None:
    rng = np.random.default_rng(5)
    s = rng.choice(PAPER_OVERHEADS, 600)
    line = 2.0 + 0.5 * s  # hits have log variance below 2 + 0.5 s, misses above, with a margin of 0.5
    log_var = np.where(rng.random(600) < 0.5, line - rng.uniform(0.5, 3, 600), line + rng.uniform(0.5, 3, 600))
    hit = log_var < line
    cutoff = Cutoff.fit(s, np.exp(log_var), hit)
    assert all((np.exp(v) < cutoff(x)) == h for x, v, h in zip(s, log_var, hit, strict=True))
    assert cutoff.beta == pytest.approx(0.5, abs=0.35) and cutoff.log_alpha == pytest.approx(2.0, abs=0.5)
    assert Cutoff()(3.0) == math.inf


def test_the_cutoff_does_not_depend_on_the_units_of_s_nor_on_how_many_misses_were_pooled() -> None:
    rng = np.random.default_rng(9)
    s = rng.choice([0.01, 0.05, 0.1], 400)
    log_var = rng.normal(12.0, 3.0, 400)
    hit = (log_var + 60 * s + rng.normal(0, 2.0, 400)) < 14.0  # fewer hits where s is larger
    cutoff, scaled = Cutoff.fit(s, np.exp(log_var), hit), Cutoff.fit(100 * s, np.exp(log_var), hit)
    assert scaled.log_alpha == pytest.approx(cutoff.log_alpha) and 100 * scaled.beta == pytest.approx(cutoff.beta)
    # the same points with every miss counted twice: the classes are weighed equally, so the line stays but
    # for the standardisation's shift (0.13 %; with the classes unweighted log alpha moves by 5.4 %)
    more = np.concatenate([s, s[~hit]]), np.exp(np.concatenate([log_var, log_var[~hit]])), np.concatenate(
        [hit, hit[~hit]])
    doubled = Cutoff.fit(*more)
    assert doubled.log_alpha == pytest.approx(cutoff.log_alpha, rel=0.01)
    assert doubled.beta == pytest.approx(cutoff.beta, rel=0.01)


def test_a_cutoff_needs_hits_and_misses() -> None:
    with pytest.raises(ConfigError, match="both hits and misses"):
        Cutoff.fit(np.array([0.1, 0.2]), np.array([1.0, 2.0]), np.array([True, True]))
    with pytest.raises(ConfigError, match="one speed"):  # hits above misses, one speed: no cutoff can keep them
        Cutoff.fit(np.array([0.1] * 4), np.array([1.0, 2.0, 100.0, 200.0]), np.array([False, False, True, True]))


def test_when_the_variance_does_not_separate_the_cutoff_is_a_cut_on_s_alone() -> None:
    # hits at s = 0, misses at s = 2, and the hits the *less* certain: no line in (s, log variance) keeps them
    s = np.array([0.0] * 4 + [2.0] * 4)
    variance = np.exp(np.array([5.0, 6.0, 5.5, 6.5, 1.0, 1.5, 2.0, 0.5]))
    cutoff = Cutoff.fit(s, variance, np.array([True] * 4 + [False] * 4))
    assert cutoff.log_alpha == math.inf and cutoff.s_max == pytest.approx(1.0, abs=1e-6)  # symmetric: the middle
    assert cutoff(0.0) == math.inf and cutoff(0.999) == math.inf and cutoff(1.001) == 0.0 and cutoff(2.0) == 0.0
    # hits at the larger speed and the less certain: neither the variance nor s separates them the right way
    with pytest.raises(ConfigError, match="neither"):
        Cutoff.fit(s, variance[::-1], np.array([False] * 4 + [True] * 4))


def test_a_cutoff_acts_strictly_below_s_max() -> None:
    assert Cutoff(s_max=0.5)(0.5) == 0.0 and Cutoff(s_max=0.5)(0.4999) == math.inf
    assert Cutoff(log_alpha=1.0, beta=-2.0, s_max=0.5)(0.25) == pytest.approx(math.e**0.5)
    assert Cutoff(log_alpha=1.0, beta=-2.0, s_max=0.5)(0.5) == 0.0
    assert Cutoff()(1e9) == math.inf
    sent = decide(np.array([10.0]), np.array([10.0]), np.array([0.0]), np.array([1.0]), Cutoff(s_max=0.5)(0.5))
    assert not sent.any()  # a variance of 0 is not below a limit of 0


@pytest.mark.parametrize("ratio", ["1_5", "inf", "-1.5", "0", "0.0"])
def test_a_ratio_must_be_a_plain_finite_number_above_0(tmp_path: Path, ratio: str) -> None:
    path = tmp_path / "speed.csv"
    path.write_text(f"procs,ratio\n2,{ratio}\n")  # float() reads '1_5' as 15: refused all the same
    with pytest.raises(InputError, match=r"speed.csv:2: field 'ratio': '" + ratio + "' is not a finite number > 0"):
        TableSpeed.read(path)


def test_a_speed_table_skips_blank_lines_and_keeps_its_source(tmp_path: Path) -> None:
    path = tmp_path / "speed.csv"
    path.write_text("procs,ratio\n1,1.1\n\n   \n , \n8,1.5\n")  # rows after blank ones still count
    table = TableSpeed.read(path)
    assert (table.procs, table.ratios, table.source) == ((1, 8), (1.1, 1.5), str(path))


def test_an_empty_speed_file_or_a_wrong_header_is_refused_on_line_1(tmp_path: Path) -> None:
    path = tmp_path / "speed.csv"
    path.write_text("")
    with pytest.raises(InputError, match=r"speed\.csv:1: the header must be 'procs,ratio', got ''"):
        TableSpeed.read(path)
    path.write_text("proc,ratio\n1,1.5\n")
    with pytest.raises(InputError, match="got 'proc,ratio'"):
        TableSpeed.read(path)


def test_cloud_run_times_are_seconds_in_floating_point() -> None:
    got = TableSpeed((1, 4), (2, 3)).cloud_run(np.array([1, 5]), np.array([10, 10]))  # integer ratios and runs
    assert got.dtype == np.float64 and got.tolist() == [20.0, 30.0]


def test_a_cutoff_learns_from_variances_below_1_too() -> None:
    # hits with variances 0.01..0.1 (log below 0), misses 10..100 (log above), mirror images around log 1 = 0
    variance = np.array([0.01, 0.02, 0.05, 0.1, 10.0, 20.0, 50.0, 100.0])
    hit = np.array([True] * 4 + [False] * 4)
    cutoff = Cutoff.fit(np.full(8, 0.1), variance, hit)
    assert all(variance[:4] < cutoff(0.1)) and all(variance[4:] > cutoff(0.1))
    assert cutoff(0.1) == pytest.approx(1.0, abs=1e-9)  # the line sits halfway, at log variance 0


def test_variances_that_say_nothing_leave_a_cut_on_s_halfway_between_hits_and_misses() -> None:
    # every variance is 1: its log is 0 for all, so its weight stays exactly 0 and no line in (s, log
    # variance) exists; hits at s = 0.1 and misses at s = 0.5, as many of each: the cut on s is halfway
    s, hit = np.array([0.1, 0.1, 0.5, 0.5]), np.array([True, True, False, False])
    cutoff = Cutoff.fit(s, np.ones(4), hit)
    assert (cutoff.log_alpha, cutoff.beta) == (math.inf, 0.0) and cutoff.s_max == pytest.approx(0.3, abs=1e-12)
    with pytest.raises(ConfigError, match=r"^hits are not the more certain predictions and there is one speed: "
                                          r"no cutoff separates them$"):
        Cutoff.fit(np.full(4, 0.1), np.ones(4), hit)
    with pytest.raises(ConfigError,
                       match=r"^fitting the cutoff needs both hits and misses with a finite, positive variance$"):
        Cutoff.fit(np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.0, np.inf]), np.array([True, False, False]))


def test_a_cut_on_s_weighs_hits_and_misses_alike_and_needs_the_hits_at_the_smaller_speeds() -> None:
    # three hits at s = 0.1, one miss at 0.5, variances that say nothing: the classes weigh the same in
    # total, so by symmetry the cut is halfway between them, 0.3 (the mean of s, 0.2, is not)
    cutoff = Cutoff.fit(np.array([0.1, 0.1, 0.1, 0.5]), np.ones(4), np.array([True, True, True, False]))
    assert cutoff.s_max == pytest.approx(0.3, abs=1e-4)
    neither = (r"^hits are neither the more certain predictions nor those at the smaller speeds: "
               r"no cutoff separates them$")
    # s says nothing (its weight is exactly 0), or leans the wrong way, however weakly (a weight of 0.4)
    for s, hit in (([0.1, 0.5, 0.1, 0.5], [True, True, False, False]),
                   ([0.5, 0.5, 0.1, 0.1, 0.1, 0.5], [True, True, True, False, False, False])):
        with pytest.raises(ConfigError, match=neither):
            Cutoff.fit(np.array(s), np.ones(len(s)), np.array(hit))


# --- The linear speed model in double precision whatever the processor counts' type -------------------------------
# The expected values are worked by hand.


def test_single_precision_processor_counts_slow_the_cloud_in_double_precision() -> None:
    # 3 processors at o = 0.1 run (0.1 x 3 + 1) x 100 = 130 s; in single precision 1.3 is 1.29999995
    got = LinearSpeed(0.1).cloud_run(np.array([3.0], dtype=np.float32), np.array([100.0]))
    assert got.dtype == np.float64 and got[0] == pytest.approx(130.0, rel=1e-15)
    assert LinearSpeed(0.5).cloud_run(np.array([2], dtype=np.int8), np.array([10], dtype=np.int64)).tolist() == [20.0]


def test_a_cut_on_single_precision_speeds_is_placed_in_double_precision() -> None:
    from broker.advisor.decide import Cutoff

    # hits at s = 0.1, misses at 0.5, variances that say nothing: the cut is halfway, the mean of the four
    # speeds as given; 0.1 in single precision is 0.10000000149011612, so the mean is 0.30000000074505806
    # (in single precision it would round to 0.30000001192092896)
    s = np.array([0.1, 0.1, 0.5, 0.5], dtype=np.float32)
    cutoff = Cutoff.fit(s, np.ones(4), np.array([True, True, False, False]))
    assert cutoff.s_max == pytest.approx((2 * 0.10000000149011612 + 2 * 0.5) / 4, abs=1e-12)


# --- the inputs as a caller may give them: object arrays, a UTF-8 or quoted table, odd variances and hits ---------
# Every expected value is worked by hand.


def test_the_cloud_run_of_run_times_in_an_object_array_is_in_double_precision() -> None:
    # o = 0.5 on 2 processors: (0.5 x 2 + 1) = 2 times the local run
    got = LinearSpeed(0.5).cloud_run([2, 2], np.array([10, 20], dtype=object))
    assert got.dtype == np.float64 and got.tolist() == [20.0, 40.0]
    assert LinearSpeed(0.5).cloud_run([2], ["10"]).tolist() == [20.0]


def test_a_quoted_field_keeps_its_own_line_break_in_the_message(tmp_path: Path) -> None:
    # the csv module reads a quoted field's \r\n as written only from a file opened with newline=""
    path = tmp_path / "speeds.csv"
    path.write_bytes(b'procs,ratio\r\n"1\r\n2",1.5\r\n')
    with pytest.raises(InputError) as caught:
        TableSpeed.read(path)
    assert str(caught.value) == f"{path}:2: field 'procs': '1\\r\\n2' is not an integer >= 1"


def test_a_utf8_table_reads_the_same_where_the_default_encoding_is_latin1(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # fields followed by a no-break space (UTF-8 c2 a0, as spreadsheets write them): stripped as whitespace;
    # read as Latin-1 the two bytes would be 'Â' and a no-break space, and 'Â' is no number
    path = tmp_path / "speeds.csv"
    path.write_bytes("procs,ratio\n1,1.5\u00a0\n4\u00a0,2.5\n".encode())
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: "latin-1" if encoding is None else encoding)
    table = TableSpeed.read(path)
    assert (table.procs, table.ratios) == ((1, 4), (1.5, 2.5))


def test_no_limit_on_the_variance_stays_infinite_whatever_the_slope() -> None:
    # log alpha = inf stands for no limit below s_max: inf, not exp(inf - inf) = nan
    assert Cutoff(beta=-math.inf)(1.0) == math.inf
    assert Cutoff(beta=-1e308)(10.0) == math.inf  # -1e309 overflows to -inf
    assert Cutoff(beta=-1e308, s_max=10.0)(10.0) == 0.0


def test_a_variance_given_as_none_is_unknown_and_left_out_of_the_fit() -> None:
    # without the fifth entry: hits at s = 0.1, misses at 0.5, variances that say nothing (log 1 = 0 everywhere):
    # the classes weigh the same and the standardised speeds are -1, -1, 1, 1, so the cut is at their mean 0.3
    cutoff = Cutoff.fit([0.1, 0.1, 0.5, 0.5, 0.3], [1.0, 1.0, 1.0, 1.0, None], [True, True, False, False, True])
    assert (cutoff.log_alpha, cutoff.beta) == (math.inf, 0.0)
    assert cutoff.s_max == pytest.approx(0.3, abs=1e-12)


def test_hits_are_truth_values_so_counts_mark_hits_by_being_nonzero() -> None:
    # 1 and 2 are both hits, 0 a miss: the same four points as above, the cut at 0.3
    cutoff = Cutoff.fit(pd.Series([0.1, 0.1, 0.5, 0.5]), np.ones(4), np.array([1, 2, 0, 0]))
    assert cutoff.s_max == pytest.approx(0.3, abs=1e-12)
