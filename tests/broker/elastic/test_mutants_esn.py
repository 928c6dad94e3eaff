"""The echo state network's edges by hand: the smallest network, the bounds of its settings, an empty reservoir."""

from __future__ import annotations

import numpy as np
import pytest

from broker.elastic.esn import EchoStateNetwork
from workloads.errors import ConfigError


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
