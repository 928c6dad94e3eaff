"""Sweep helpers: the Pareto front, equation 7, grids from a spec, the HTC view and the bursty load."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.cloudcluster.sweep import SpecError, cap_benefit, cluster_cell, grid, pareto_front
from workloads.bursty import bursty_workload
from workloads.htc import VolumeModel, htc_view
from workloads.lublin import generate_lublin


def test_pareto_front_by_hand():
    cost = [5, 4, 3, 4, 6, 3]
    over = [1, 2, 5, 3, 1, 6]
    assert list(pareto_front(cost, over)) == [True, True, True, False, False, False]


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30))
def test_pareto_front_is_exactly_the_undominated_points(points):
    c, o = np.array(points).T
    front = pareto_front(c, o)
    for i in range(len(c)):
        dominated = any((c[j] <= c[i] and o[j] <= o[i]) and (c[j] < c[i] or o[j] < o[i]) for j in range(len(c)))
        duplicate_before = any(c[j] == c[i] and o[j] == o[i] and front[j] for j in range(len(c)) if j != i)
        assert front[i] == (not dominated and not duplicate_before)


def test_cap_benefit_is_equation_7():
    b = cap_benefit([50, 10, 20], [30.0, 10.0, 14.0], [100.0, 900.0, 500.0])
    # sorted caps 10, 20, 50: B_20 = -(14 - 10) / (500 - 900) = 0.01, B_50 = -(30 - 14) / (100 - 500) = 0.04
    assert np.isnan(b[1]) and b[2] == pytest.approx(0.01) and b[0] == pytest.approx(0.04)
    assert cap_benefit([1, 2], [1.0, 2.0], [5.0, 5.0])[1] == 0.0


def test_grid_products_and_errors():
    spec = {"workload": {"synthetic": 1.0, "limit": 500}, "base": {"boot_s": 120},
            "family": [{"name": "a", "cap": [1, 2], "merge": [True, False]}, {"keepalive": "fixed:0.3"}]}
    configs = grid(spec)
    assert len(configs) == 5 and configs[0]["boot_s"] == 120 and configs[4]["family"] == "family 2"
    result = cluster_cell(configs[0], 0)
    assert result["jobs"] == 500 and result["peak_instances"] <= 1
    for bad in ({"workload": {}, "family": [{"cap": 1}]},
                {"workload": {"synthetic": 1.0}},
                {"workload": {"synthetic": 1.0}, "family": [{"cap": [0]}]},
                {"workload": {"synthetic": 1.0}, "family": [{"keepalive": ["often"]}]}):
        with pytest.raises(SpecError):
            grid(bad, source="x.toml")


def test_htc_view_filters_counts_and_expands():
    frame = generate_lublin(400, nodes=64, seed=2)
    frame.loc[3, "run_time"] = -1
    frame.loc[5, "status"] = 5
    frame.loc[7, "user_id"] = None
    one, report = htc_view(frame, seed=1)
    assert len(one) == 398 and report.removed["run time unknown or < 0"] == 1
    assert report.removed["cancelled by the user (status 5)"] == 1
    assert report.kept_flagged["with unknown user (one shared user)"] == 1
    expanded, _ = htc_view(frame, parallel="expand", seed=1)
    kept = frame.drop(index=[3, 5])
    assert len(expanded) == int(kept["allocated_procs"].sum())
    assert (np.diff(expanded.submit) >= 0).all()
    other = frame.copy()
    other.loc[1, "run_time"] = -1  # the filter removes one more job: the others keep their volumes
    again, _ = htc_view(other, seed=1)
    assert np.array_equal(np.delete(one.output_bytes, 1), again.output_bytes)
    big = VolumeModel().draw(20000, seed=0)
    assert big[1].max() <= 903e6 and 200e6 < big[1].mean() < 300e6


def test_bursty_load_scales_by_users_and_nests():
    s1, s3 = bursty_workload(1, seed=4), bursty_workload(3, seed=4)
    assert s1.user_id.nunique() == 10 and s3.user_id.nunique() == 30
    first = s3[s3.user_id <= 10].reset_index(drop=True)
    assert np.array_equal(first.submit_time.to_numpy(), s1.submit_time.to_numpy())
    assert (s1.run_time >= 1).all() and s1.submit_time.is_monotonic_increasing


def test_a_cluster_grid_on_dask_matches_loky():
    from distributed import Client, LocalCluster
    from joblib import parallel_config

    from broker.sweep import cells, run_sweep

    spec = {"workload": {"synthetic": 1.0, "limit": 2000, "seed": 2}, "base": {"boot_s": 120},
            "family": [{"name": "keep", "keepalive": ["fixed:0.3", "load:0.5"], "cap": [20, "none"]}]}
    todo = cells(grid(spec), name="cluster-dask-test", root_seed=5, paired=True)
    with parallel_config(backend="loky"):
        on_loky = run_sweep(cluster_cell, todo, n_jobs=2)
    assert len({r["cost"] for r in on_loky}) == len(todo)  # the cells differ: the comparison means something
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client, \
            parallel_config(backend="dask", client=client):
        assert run_sweep(cluster_cell, todo) == on_loky


def test_check_settings_names_the_setting_its_value_and_its_range():
    from broker.cloudcluster.sweep import check_settings

    cases = [({"wait_next_hour_min": 60.0}, "wait_next_hour_min must be a number in [0, 60), got 60.0"),
             ({"boot_s": 3601}, "boot_s must be a number in [0, 3600], got 3601"),
             ({"cap": 0}, 'cap must be an integer >= 1 or "none", got 0'),
             ({"merge": "yes"}, "merge must be true or false, got 'yes'"),
             ({"keepalive": 3}, "keepalive must be a string, got 3"),
             ({"charging": 5}, "charging must be a string, got 5")]
    for settings, message in cases:
        with pytest.raises(ValueError) as caught:
            check_settings(settings)
        assert str(caught.value) == message
    check_settings({"wait_next_hour_min": 59.999, "boot_s": 3600, "cap": "none", "merge": False, "charging": "exact"})


def test_workload_problem_names_the_key_and_what_it_takes():
    from broker.cloudcluster.sweep import _workload_problem

    nan, inf = float("nan"), float("inf")
    cases = [({"trace": "t", "volumes": "v.csv", "limit": 1, "seed": 0, "parallel": "expand"}, None),
             ({"synthetic": 0.5}, None),
             ({"bogus": 1}, "unknown key 'bogus'; known: lenient, limit, parallel, seed, synthetic, trace, volumes"),
             ({"trace": ""}, "trace must be a path or registry name, got ''"),
             ({"trace": 5}, "trace must be a path or registry name, got 5"),
             ({"trace": "t", "volumes": ""}, "volumes must be a path, got ''"),
             ({"trace": "t", "volumes": 5}, "volumes must be a path, got 5"),
             *[({"synthetic": v}, f"synthetic must be a scale > 0, got {v!r}") for v in (0, -1.0, True, nan, inf, "x")],
             ({"synthetic": 1, "limit": 0}, "limit must be an integer >= 1, got 0"),
             ({"synthetic": 1, "seed": -1}, "seed must be an integer >= 0, got -1"),
             ({"synthetic": 1, "parallel": "two"}, "parallel must be \"one\" or \"expand\", got 'two'"),
             ({"synthetic": 1.0, "volumes": "v.csv"}, "volumes goes with trace")]
    assert [(w, _workload_problem(w)) for w, _ in cases] == cases
