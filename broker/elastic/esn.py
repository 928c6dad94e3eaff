"""An echo state network as the value function ``Q(s, a)`` (the elastic RL paper §3.3 and §4.1, after Jaeger).

The paper's network: 100 sigmoid reservoir units, reservoir weights drawn uniformly in ``[0, 1]``
with 10 % connectivity, 15 % connectivity from the reservoir to the output, the output weights
found by linear (here ridge) regression, re-trained in batches. Choices where it says no more:

- The recurrent matrix is rescaled to ``spectral_radius`` (0.9 by default), as Jaeger's recipe
  does. Drawn in ``[0, 1]`` at 10 % its spectral radius is about 5: the units then sit near the
  sigmoid's ceiling (mean state 0.97 on random inputs, against 0.62 scaled) and carry little to the
  readout, and nothing guarantees the echo-state property (the contraction bound is ``radius / 4``);
  ``spectral_radius=None`` keeps the raw draw. The echo-state property of the default is tested.
- Input weights are uniform in ``[-1, 1]`` times ``input_scaling`` and connect every input to every
  unit (the paper gives no input connectivity).
- The readout sees a bias, the inputs themselves and the 15 % of reservoir units drawn for it.

Each decision asks for ``Q`` of many candidate actions from one reservoir state: :meth:`fork` computes
the one-step states of a batch of inputs without moving the reservoir, :meth:`step` moves it with
the action taken. ``reservoirpy`` fits the reservoir (sigmoid units, uniform weights, connectivity)
but runs a node on time series: each fork is a separate call (measured here: 40 us per candidate,
20 ms for a decision of 500 candidates against well under 1 ms batched), and its ridge readout reads
every unit, not a drawn 15 %. So the network is this small numpy class.
"""

from __future__ import annotations

import numpy as np

from workloads.errors import ConfigError


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow warnings for large ``|x|``."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class EchoStateNetwork:
    """A reservoir of sigmoid units and a ridge readout (see the module docstring)."""

    def __init__(self, inputs: int, units: int = 100, *, density: float = 0.1, readout_density: float = 0.15,
                 spectral_radius: float | None = 0.9, input_scaling: float = 1.0, ridge: float = 1e-2,
                 seed: int | np.random.SeedSequence | None = 0) -> None:
        if inputs < 1 or units < 1:
            raise ConfigError(f"an echo state network needs inputs >= 1 and units >= 1, got {inputs}, {units}")
        if not (0 < density <= 1 and 0 < readout_density <= 1):
            raise ConfigError(f"connectivities must lie in (0, 1], got {density}, {readout_density}")
        if spectral_radius is not None and not spectral_radius > 0:
            raise ConfigError(f"the spectral radius must be > 0 (or None), got {spectral_radius}")
        if not (input_scaling > 0 and ridge >= 0):
            raise ConfigError(f"need input_scaling > 0 and ridge >= 0, got {input_scaling}, {ridge}")
        rng = np.random.default_rng(seed)
        w = rng.uniform(0.0, 1.0, (units, units)) * (rng.random((units, units)) < density)
        if spectral_radius is not None:
            radius = float(np.max(np.abs(np.linalg.eigvals(w))))
            if radius > 0:
                w *= spectral_radius / radius
        self.w = w
        self.w_in = rng.uniform(-1.0, 1.0, (units, inputs)) * input_scaling
        self.read = np.sort(rng.choice(units, size=max(1, round(readout_density * units)), replace=False))
        self.inputs, self.units, self.ridge = inputs, units, ridge
        self.x = np.zeros(units)
        self.coef = np.zeros(inputs + len(self.read))
        self.intercept = 0.0

    def reset(self, x: np.ndarray | None = None) -> None:
        """Set the reservoir state (zeros by default)."""
        self.x = np.zeros(self.units) if x is None else np.array(x, dtype=np.float64)

    def fork(self, u: np.ndarray) -> np.ndarray:
        """The readout units' states one step on from the current state, for each row of ``u``; the state stays."""
        u = np.atleast_2d(u)
        return sigmoid(u @ self.w_in[self.read].T + self.w[self.read] @ self.x)

    def step(self, u: np.ndarray) -> np.ndarray:
        """Move the reservoir one step with input ``u``; returns the readout units' new states."""
        self.x = sigmoid(self.w_in @ u + self.w @ self.x)
        return self.x[self.read]

    def features(self, u: np.ndarray, read_states: np.ndarray) -> np.ndarray:
        """The readout's inputs: the network inputs and the readout units' states."""
        return np.hstack([np.atleast_2d(u), np.atleast_2d(read_states)])

    def value(self, features: np.ndarray) -> np.ndarray:
        """The readout's output for rows of :meth:`features`."""
        return np.atleast_2d(features) @ self.coef + self.intercept

    def q(self, u: np.ndarray) -> np.ndarray:
        """``Q`` of each row of ``u`` from the current state (the state stays)."""
        return self.value(self.features(u, self.fork(u)))

    def fit(self, features: np.ndarray, targets: np.ndarray) -> None:
        """Re-train the readout from scratch on ``features`` -> ``targets`` (ridge regression)."""
        gram = Gram(features.shape[1])
        gram.add(features)
        self.coef, self.intercept = gram.solve(features, targets, self.ridge)

    def run(self, u: np.ndarray) -> np.ndarray:
        """The full reservoir states after each row of ``u`` in turn (moves the state; for tests and studies)."""
        out = np.empty((len(u), self.units))
        for k, row in enumerate(u):
            self.step(row)
            out[k] = self.x
        return out


class Gram:
    """Ridge regression with an unpenalised intercept, from an accumulated Gram matrix.

    A learner that re-trains on a growing set of rows whose *features* never change (reservoir
    states, once computed) but whose *targets* do (SARSA's bootstrapped values) adds each row's
    outer product once (:meth:`add`) and solves with the targets of the day (:meth:`solve`):
    ``(X'X + alpha I) w = X'y`` on the rows augmented with a column of ones, the intercept's
    diagonal entry unpenalised — the same solution as scikit-learn's ``Ridge(alpha)`` (tested),
    without forming ``X'X`` again at every re-training.
    """

    def __init__(self, width: int) -> None:
        self.matrix = np.zeros((width + 1, width + 1))
        self.rows = 0

    def add(self, features: np.ndarray) -> None:
        """Add rows of features."""
        augmented = _augment(features)
        self.matrix += augmented.T @ augmented
        self.rows += len(augmented)

    def solve(self, features: np.ndarray, targets: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
        """The coefficients and intercept for the added rows (their ``features``) and their ``targets``."""
        if len(features) != self.rows:
            raise ValueError(f"the Gram matrix holds {self.rows} rows, {len(features)} were given")
        penalty = np.full(len(self.matrix), float(alpha))
        penalty[-1] = 0.0
        solution = np.linalg.lstsq(self.matrix + np.diag(penalty), _augment(features).T @ targets, rcond=None)[0]
        return solution[:-1], float(solution[-1])


def _augment(features: np.ndarray) -> np.ndarray:
    features = np.atleast_2d(np.asarray(features, dtype=np.float64))
    return np.hstack([features, np.ones((len(features), 1))])
