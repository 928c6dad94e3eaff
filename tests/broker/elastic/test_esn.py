"""The echo state network: the paper's shape, the echo-state property, a readout that recovers known targets."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.esn import EchoStateNetwork, Gram, sigmoid
from workloads.errors import ConfigError


def test_the_papers_shape() -> None:
    net = EchoStateNetwork(6, seed=1, spectral_radius=None)
    assert net.w.shape == (100, 100) and net.w_in.shape == (100, 6)
    # reservoir weights in [0, 1] at 10 % connectivity (raw draw), 15 units read out
    assert net.w.min() >= 0.0 and net.w.max() <= 1.0 and 0.08 < (net.w > 0).mean() < 0.12
    assert len(net.read) == 15 and len(set(net.read.tolist())) == 15 and net.read.tolist() == sorted(net.read)
    assert np.abs(net.w_in).max() <= 1.0 and net.coef.shape == (6 + 15,)
    # the raw draw has a spectral radius near 100 x 0.1 x 0.5 = 5; by default it is scaled to 0.9
    assert 4.0 < max(abs(np.linalg.eigvals(net.w))) < 6.0
    scaled = EchoStateNetwork(6, seed=1)
    assert max(abs(np.linalg.eigvals(scaled.w))) == pytest.approx(0.9, rel=1e-9)
    assert np.count_nonzero(scaled.w) == np.count_nonzero(net.w)  # the same draw, rescaled
    np.testing.assert_allclose(scaled.w * (max(abs(np.linalg.eigvals(net.w))) / 0.9), net.w, rtol=1e-9)


def test_sigmoid_is_the_logistic_function_without_overflow() -> None:
    x = np.array([-1000.0, -2.0, 0.0, 3.0, 1000.0])
    with np.errstate(over="raise"):
        got = sigmoid(x)
    np.testing.assert_allclose(got[1:4], 1 / (1 + np.exp(-x[1:4])), rtol=1e-15)
    assert got[0] == 0.0 and got[-1] == 1.0


def test_the_echo_state_property_the_start_is_forgotten() -> None:
    rng = np.random.default_rng(5)
    u = rng.uniform(-1, 1, (80, 4))
    a, b = EchoStateNetwork(4, seed=2), EchoStateNetwork(4, seed=2)
    a.reset(np.zeros(100))
    b.reset(np.ones(100))
    gap = [np.abs(xa - xb).max() for xa, xb in zip(a.run(u), b.run(u), strict=True)]
    assert gap[0] > 0.01 and gap[-1] < 1e-9 and gap[-1] < gap[20] < gap[0]


def test_without_the_spectral_scaling_the_units_saturate() -> None:
    # the raw [0, 1] draw: the contraction bound radius / 4 is above 1, and the units sit near 1
    rng = np.random.default_rng(5)
    u = rng.uniform(-1, 1, (200, 4))
    raw, scaled = EchoStateNetwork(4, seed=2, spectral_radius=None), EchoStateNetwork(4, seed=2)
    assert 0.25 * max(abs(np.linalg.eigvals(raw.w))) > 1.0
    assert raw.run(u)[50:].mean() > 0.9 > 0.8 > scaled.run(u)[50:].mean() > 0.5


def test_fork_gives_the_next_states_without_moving_the_reservoir() -> None:
    net = EchoStateNetwork(3, seed=4)
    net.run(np.full((5, 3), 0.3))
    before = net.x.copy()
    u = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
    forked = net.fork(u)
    assert np.array_equal(net.x, before)
    for row, expected in zip(u, forked, strict=True):
        net.reset(before)
        np.testing.assert_allclose(net.step(row), expected, rtol=1e-14)
        np.testing.assert_allclose(net.x, sigmoid(net.w_in @ row + net.w @ before), rtol=1e-14)


def test_the_readout_recovers_a_known_linear_target_of_the_inputs() -> None:
    rng = np.random.default_rng(8)
    net = EchoStateNetwork(3, seed=3, ridge=0.0)
    u = rng.uniform(-1, 1, (400, 3))
    states = np.array([net.step(row) for row in u])
    y = 2.0 * u[:, 0] - 0.5 * u[:, 2] + 0.25
    net.fit(net.features(u, states), y)
    np.testing.assert_allclose(net.coef[:3], [2.0, 0.0, -0.5], atol=1e-8)
    np.testing.assert_allclose(net.coef[3:], 0.0, atol=1e-8)
    assert net.intercept == pytest.approx(0.25, abs=1e-8)
    np.testing.assert_allclose(net.value(net.features(u, states)), y, atol=1e-8)


def test_the_readout_recovers_a_linear_target_of_the_read_units() -> None:
    rng = np.random.default_rng(9)
    net = EchoStateNetwork(2, seed=6, ridge=0.0)
    u = rng.uniform(-1, 1, (500, 2))
    states = np.array([net.step(row) for row in u])
    weights = rng.normal(size=len(net.read))
    net.fit(net.features(u, states), states @ weights - 1.0)
    np.testing.assert_allclose(net.coef[2:], weights, atol=1e-6)
    # q() reads the same readout from the current state
    probe = rng.uniform(-1, 1, (4, 2))
    np.testing.assert_allclose(net.q(probe), net.fork(probe) @ weights - 1.0, atol=1e-6)


def test_the_ridge_penalty_shrinks_the_readout() -> None:
    rng = np.random.default_rng(1)
    u = rng.uniform(-1, 1, (200, 2))
    free, shrunk = EchoStateNetwork(2, seed=1, ridge=0.0), EchoStateNetwork(2, seed=1, ridge=100.0)
    for net in (free, shrunk):
        net.fit(net.features(u, np.array([net.step(r) for r in u])), 3.0 * u[:, 0])
    assert np.abs(shrunk.coef).sum() < np.abs(free.coef).sum()


def test_the_same_seed_gives_the_same_network_and_another_a_different_one() -> None:
    a, b, c = EchoStateNetwork(3, seed=11), EchoStateNetwork(3, seed=11), EchoStateNetwork(3, seed=12)
    assert np.array_equal(a.w, b.w) and np.array_equal(a.w_in, b.w_in) and np.array_equal(a.read, b.read)
    assert not np.array_equal(a.w, c.w)


@pytest.mark.parametrize("kwargs", [{"inputs": 0}, {"units": 0}, {"density": 0.0}, {"readout_density": 1.5},
                                    {"spectral_radius": 0.0}, {"input_scaling": 0.0}, {"ridge": -1.0}])
def test_bad_settings_are_refused(kwargs) -> None:
    settings = {"inputs": 3, **kwargs}
    with pytest.raises(ConfigError):
        EchoStateNetwork(**settings)


@pytest.mark.parametrize("alpha", [0.0, 0.01, 5.0])
def test_the_gram_solve_is_scikit_learns_ridge(alpha: float) -> None:
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 6)) + 3.0
    y = x @ rng.normal(size=6) + 0.7 + rng.normal(scale=0.1, size=300)
    gram = Gram(6)
    for part in np.array_split(np.arange(300), 4):  # rows added in batches give the same matrix
        gram.add(x[part])
    coef, intercept = gram.solve(x, y, alpha)
    reference = Ridge(alpha=alpha).fit(x, y)
    np.testing.assert_allclose(coef, reference.coef_, rtol=1e-8, atol=1e-10)
    assert intercept == pytest.approx(reference.intercept_, rel=1e-8)
    with pytest.raises(ValueError, match="holds 300 rows, 299 were given"):
        gram.solve(x[:299], y[:299], alpha)


# --- by hand: the smallest network, the bounds of its settings, an empty reservoir --------------------------------


def test_the_smallest_network_one_input_one_unit() -> None:
    net = EchoStateNetwork(1, units=1, density=1.0)
    # a single self-connection drawn in [0, 1) is scaled to the spectral radius: exactly 0.9
    assert net.w.shape == (1, 1) and net.w[0, 0] == pytest.approx(0.9, rel=1e-12)
    assert net.read.tolist() == [0] and net.coef.shape == (2,)  # 15 % of one unit rounds to none: one is read


def test_an_empty_reservoir_stays_empty() -> None:
    net = EchoStateNetwork(2, units=3, density=1e-12)  # no connection drawn: radius 0, nothing to scale
    assert net.w.tolist() == [[0.0] * 3] * 3


def test_the_defaults_seed_0_ridge_0_01_and_an_untrained_readout_of_0() -> None:
    net = EchoStateNetwork(2, units=10)
    assert np.array_equal(net.w, EchoStateNetwork(2, units=10, seed=0).w) and net.ridge == 0.01
    assert not np.array_equal(net.w, EchoStateNetwork(2, units=10, seed=1).w)
    assert net.q(np.array([[0.5, -0.5], [1.0, 1.0]])).tolist() == [0.0, 0.0]


def test_the_input_weights_scale_and_every_unit_may_be_read() -> None:
    one, two = EchoStateNetwork(3, units=10, seed=4), EchoStateNetwork(3, units=10, seed=4, input_scaling=2.0)
    np.testing.assert_allclose(two.w_in, 2.0 * one.w_in, rtol=1e-15)
    full = EchoStateNetwork(3, units=10, density=1.0, readout_density=1.0)
    assert full.read.tolist() == list(range(10)) and np.count_nonzero(full.w) == 100
    assert len(EchoStateNetwork(3, units=10, readout_density=0.05).read) == 1  # half a unit: one is read


def test_reset_without_a_state_is_zeros() -> None:
    net = EchoStateNetwork(2, units=5)
    net.step(np.array([1.0, -1.0]))
    net.reset()
    assert net.x.tolist() == [0.0] * 5


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"inputs": 0}, r"^an echo state network needs inputs >= 1 and units >= 1, got 0, 100$"),
    ({"density": 1.5}, r"^connectivities must lie in \(0, 1\], got 1.5, 0.15$"),
    ({"readout_density": 0.0}, r"^connectivities must lie in \(0, 1\], got 0.1, 0.0$"),
    ({"spectral_radius": -1.0}, r"^the spectral radius must be > 0 \(or None\), got -1.0$"),
    ({"ridge": -0.5}, r"^need input_scaling > 0 and ridge >= 0, got 1.0, -0.5$"),
])
def test_bad_settings_say_why(kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message):
        EchoStateNetwork(**{"inputs": 3, **kwargs})


# --- hand-worked edges: a draw on the density, doubles ------------------------------------------------------------
# Where a test places an input exactly on a random draw, the draw is read from an independent
# ``numpy.random.default_rng`` of the same seed (the definition: a connection, an exploration, when the draw is
# *below* the probability).


def test_a_draw_equal_to_the_density_is_no_connection() -> None:
    # one unit: its weight is uniform(0, 1), then the connection draw; a connection exists where draw < density,
    # so with the density set to exactly that draw there is none (and nothing to rescale)
    rng = np.random.default_rng(0)
    rng.uniform(0.0, 1.0, (1, 1))
    draw = rng.random()  # 0.2697867137638703
    assert EchoStateNetwork(1, units=1, density=draw, seed=0).w.tolist() == [[0.0]]


def test_reset_sets_a_state_of_doubles() -> None:
    net = EchoStateNetwork(2, units=3)
    net.reset([1, 0, 0])  # integers are a state of doubles
    assert net.x.dtype == np.float64 and net.x.tolist() == [1.0, 0.0, 0.0]
    net.reset(np.full(3, 0.5, dtype=np.longdouble))  # and so is an extended-precision one: the step is in doubles
    assert net.step(np.zeros(2)).dtype == np.float64


def test_the_gram_reads_features_as_doubles() -> None:
    # y = 1 + 2 x at x = 0, 1, 2 without a penalty: coefficient 2, intercept 1, from extended-precision features too
    features = np.array([[0.0], [1.0], [2.0]], dtype=np.longdouble)
    gram = Gram(1)
    gram.add(features)
    coef, intercept = gram.solve(features, np.array([1.0, 3.0, 5.0]), 0.0)
    assert coef.dtype == np.float64 and coef == pytest.approx([2.0], rel=1e-12) and intercept == pytest.approx(1.0)
