"""The advisor's inputs as a caller may give them: numbers as text or in object arrays, a UTF-8 table, odd hits.

Tests from a mutmut pass over :mod:`broker.advisor.knn`, :mod:`broker.advisor.decide` and
:mod:`broker.advisor.evaluate`; every expected value is worked by hand.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from broker.advisor.decide import Cutoff, LinearSpeed, TableSpeed
from broker.advisor.evaluate import Protocol, evaluate
from broker.advisor.knn import HeomEmbedding, KernelKNN
from workloads.errors import InputError


def test_numbers_written_as_text_are_read_as_numbers_by_the_estimator() -> None:
    # X = 0, 2, 4 (range 4): embedded at 0, 0.5, 1; the query 1 sits at 0.25, 0.25 from rows 0 and 1 (labels 1
    # and 2) and 0.75 from row 2. k = 2: equal weights 1/2, mean 1.5, spread 1/2 x 0.5^2 x 2 = 0.25 over
    # 1 - (1/4 + 1/4) = 0.5: variance 0.5
    model = KernelKNN(n_neighbors=2).fit([["0"], ["2"], ["4"]], [1.0, 2.0, 4.0])
    mean, std = model.predict([["1"]], return_std=True)
    assert mean.tolist() == [1.5]
    assert std[0] == pytest.approx(math.sqrt(0.5), rel=1e-15)


def test_the_embedding_reads_text_and_object_arrays_as_double_precision_numbers() -> None:
    # the range of 0 and 4 is 4: 1 embeds at 1/4 and 2 at 1/2
    embedding = HeomEmbedding().fit(np.array([[0.0], [4.0]]))
    assert embedding.transform([["1"]]).tolist() == [[0.25]]
    got = embedding.transform(np.array([[1], [2]], dtype=object))
    assert got.dtype == np.float64 and got.tolist() == [[0.25], [0.5]]


def test_a_missing_value_in_an_object_array_is_refused_in_the_estimators_own_name() -> None:
    X = np.array([[0.0], [np.nan], [4.0]], dtype=object)
    with pytest.raises(ValueError, match="KernelKNN does not accept missing values"):
        KernelKNN(n_neighbors=2).fit(X, [1.0, 2.0, 4.0])
    model = KernelKNN(n_neighbors=2).fit(np.array([[0.0], [2.0], [4.0]]), [1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="KernelKNN does not accept missing values"):
        model.predict(np.array([[np.nan]], dtype=object))


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


def _steady_frame(n: int = 10) -> pd.DataFrame:
    """Jobs 100 s apart that all wait 50 s and run 30 s on 2 processors; each label known from the next job on."""
    i = np.arange(n)
    submit = 100.0 * i
    return pd.DataFrame({"job_id": 100 + i, "user": i % 3, "group": i % 2, "queue": np.zeros(n, dtype=np.int64),
                         "submit_s": submit, "requested_time_s": np.full(n, 60.0), "requested_procs": np.full(n, 2.0),
                         "queue_size": i.astype(float), "queued_work": 10.0 * i, "remaining_work": 5.0 * i,
                         "weekday": (i % 7).astype(float), "time_of_day_s": submit, "free_procs": np.full(n, 4.0),
                         "wait_s": np.full(n, 50.0), "run_s": np.full(n, 30.0), "wait_known_at": submit + 50.0,
                         "run_known_at": submit + 80.0})


def test_labels_held_as_python_objects_are_predicted_as_numbers() -> None:
    # every wait is 50 s: whatever the neighbours and their weights (summing to 1), each evaluated job that
    # knows a past (all of rows 4..9) is predicted 50 s, and the run 30 s
    frame = _steady_frame()
    frame["wait_s"] = frame["wait_s"].astype(object)
    got = evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(tune=4, skip=4, evaluate=6), k=3, cutoff=False)
    assert got.jobs["wait_pred_s"].tolist() == pytest.approx([50.0] * 6, rel=1e-12)
    assert got.jobs["run_pred_s"].tolist() == pytest.approx([30.0] * 6, rel=1e-12)
    assert got.rmse_wait_s == pytest.approx(0.0, abs=1e-9)


def test_a_feature_that_is_not_a_number_is_refused_by_name_before_a_weight_search() -> None:
    frame = _steady_frame()
    frame["user"] = [["ann", "bob", "cy"][u] for u in frame["user"]]
    with pytest.raises(ValueError, match="could not convert string to float: 'ann'"):
        evaluate(frame, [LinearSpeed(0.0)], protocol=Protocol(tune=4, skip=4, evaluate=6), weights="search",
                 search_iterations=1)
