"""The protocol every world on the kernel follows: advance, act, copy, result.

A world is a model on :class:`~broker.sim.kernel.Kernel` and a pausable state machine. A driver (a
policy, a learner, a Gymnasium environment, a clone) steps it from outside::

    while (decision := world.advance()) is not None:
        world.act(policy(decision))
    result = world.result()

- :meth:`World.advance` runs to the next decision point and returns what must be decided, or
  ``None`` once the run is over (and again at every later call).
- :meth:`World.act` applies the decision: an action of the world's own type (a CoH plan, a hybrid
  site's cap for the next step, a cloud cluster's keep-alive answer, an elastic pool's job and
  size). Acting with no decision pending, or advancing past a pending one, raises
  :class:`RuntimeError`.
- :meth:`World.copy` clones the paused state: driving the copy never changes the original. It is
  derived from the world's attributes (:func:`broker.sim.copying.copy_state`); a world lists in
  ``_shared`` what it reads and never changes.
- :meth:`World.result` is what the finished run produced (a world's raw record or its result).

Every world takes its recorder and whether to check its invariants as constructor arguments
(``recorder=``, ``validate=``); the recorder is shared by copies. The worlds declare the protocol
by subclassing it, so mypy checks each one's methods against it with the world's own decision,
action and result types.
"""

from __future__ import annotations

from typing import Protocol, Self, TypeVar, runtime_checkable

from broker.sim.copying import copy_state
from broker.sim.recorder import Recorder

DecisionT = TypeVar("DecisionT", covariant=True)
ActionT = TypeVar("ActionT", contravariant=True)
ResultT = TypeVar("ResultT", covariant=True)


@runtime_checkable
class World(Protocol[DecisionT, ActionT, ResultT]):
    """A pausable world on the kernel (see the module docstring).

    Attributes
    ----------
    recorder : Recorder
        Receives the run's progress (shared by copies).
    """

    recorder: Recorder

    def advance(self) -> DecisionT | None:
        """Run to the next decision point and return it; ``None`` once the run is over."""
        ...

    def act(self, action: ActionT, /) -> None:
        """Apply ``action`` to the pending decision."""
        ...

    def copy(self) -> Self:
        """An independent copy of the paused state (the data listed in ``_shared`` and the recorder shared)."""
        return copy_state(self)

    def result(self) -> ResultT:
        """What the finished run produced."""
        ...
