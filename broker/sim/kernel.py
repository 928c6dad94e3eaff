"""The simulation kernel: one clock and one heap of events, and nothing about any world.

Every world (the CoH fleet, the hybrid site, the cloud cluster) is a model on this kernel, as
SimPy's resources are small things on its ``core.py``. An event is ``(time, kind, sequence,
payload)``: ``kind`` is both the event's rank among events at the same instant (the world declares
its order, e.g. departure < tick < deadline) and the index of the handler that takes it, and the
sequence number (the order of scheduling) breaks the remaining ties, so a run never depends on how
the heap happens to order equal keys.

:meth:`Kernel.run` hands events in that order to the world's handlers; a handler that returns
``True`` pauses the run at a *decision point*, so a driver (a policy, a learner, a Gymnasium
environment) can act and resume it without threads or generators, and a world can be copied while
paused (:meth:`Kernel.copy` copies the pending events; payloads are immutable values).

:class:`Ticker` is a periodic source of decision ticks on the grid ``k * period`` that skips empty
ticks: the world asks for a tick when something can change, and only the earliest request is kept.
No I/O, no randomness, no process state.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from typing import Any

from workloads.errors import ConfigError

#: A world's handler of one kind of event: ``handler(time, payload)``; ``True`` pauses the run.
Handler = Callable[[float, Any], "bool | None"]


class Kernel:
    """The clock and the pending events of one run.

    Attributes
    ----------
    now : float
        The time of the event being handled (s), or the ``until`` a run stopped at.
    popped : int
        Events taken off the heap so far, cancelled ones included (a cost figure of the run).
    """

    __slots__ = ("_cancelled", "_heap", "_seq", "now", "popped")

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.popped = 0
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = 0
        self._cancelled: set[int] = set()

    def __len__(self) -> int:
        """Pending events (cancelled ones not yet popped included)."""
        return len(self._heap)

    def schedule(self, t: float, kind: int, payload: Any = None) -> int:
        """Schedule an event of ``kind`` at time ``t`` (not before :attr:`now`); returns its id for :meth:`cancel`."""
        if not t >= self.now:  # NaN too
            raise ValueError(f"cannot schedule an event at {t} before the current time {self.now}")
        seq = self._seq
        self._seq = seq + 1
        heapq.heappush(self._heap, (t, kind, seq, payload))
        return seq

    def cancel(self, event: int) -> None:
        """Cancel a pending event (its handler will not be called; it still counts in :attr:`popped`).

        ``event`` must be pending: the id of an event already handled would be kept until the run ends.
        """
        self._cancelled.add(event)

    def peek(self) -> float:
        """The time of the next event that will be handled, ``inf`` when none is pending."""
        heap, cancelled = self._heap, self._cancelled
        if not cancelled:
            return heap[0][0] if heap else math.inf
        while heap and heap[0][2] in cancelled:
            cancelled.discard(heapq.heappop(heap)[2])
            self.popped += 1
        return heap[0][0] if heap else math.inf

    def run(self, handlers: Sequence[Handler], until: float = math.inf,
            settle: Callable[[float], None] | None = None) -> bool:
        """Handle events in order until none is left, the next lies after ``until``, or a handler pauses.

        ``settle(t)``, when given, is called once the last event of the instant ``t`` is handled (an
        event it schedules at ``t`` opens a new batch of that instant, settled in turn). Returns
        ``True`` when a handler paused the run (call again to resume). Otherwise the clock stands at
        ``until`` (or at the last event when ``until`` is infinite) and ``False`` is returned.
        """
        if until < self.now:
            raise ValueError(f"cannot run until {until}, before the current time {self.now}")
        heap, pop, cancelled = self._heap, heapq.heappop, self._cancelled
        popped = 0
        try:
            while heap and heap[0][0] <= until:
                t, kind, seq, payload = pop(heap)
                popped += 1
                if cancelled and seq in cancelled:
                    cancelled.discard(seq)
                    continue
                self.now = t
                if handlers[kind](t, payload):
                    return True
                if settle is not None:
                    while cancelled and heap and heap[0][0] == t and heap[0][2] in cancelled:  # hides nothing
                        cancelled.discard(pop(heap)[2])
                        popped += 1
                    if not heap or heap[0][0] > t:
                        settle(t)
        finally:
            self.popped += popped
        if until < math.inf:
            self.now = until
        return False

    def copy(self) -> Kernel:
        """An independent copy of the clock and the pending events (payloads are shared: keep them immutable)."""
        twin = Kernel.__new__(Kernel)
        twin.now, twin.popped, twin._seq = self.now, self.popped, self._seq
        twin._heap, twin._cancelled = list(self._heap), set(self._cancelled)
        return twin


class Ticker:
    """Decision ticks of one ``kind`` on the grid ``k * period`` (s), scheduled only when asked for.

    :meth:`request` asks for a tick at the first grid point at or after a time and after the last
    tick; a request later than the pending tick is ignored, an earlier one replaces it. The world's
    handler of ``kind`` calls :meth:`fired` first.
    """

    __slots__ = ("_event", "at", "kernel", "kind", "last", "period")

    def __init__(self, kernel: Kernel, kind: int, period: float) -> None:
        if not period > 0:
            raise ConfigError(f"a tick period must be > 0 s, got {period}")
        self.kernel, self.kind, self.period = kernel, kind, period
        self.last, self.at = -math.inf, math.inf
        self._event = -1

    def grid(self, t: float) -> float:
        """The first grid point at or after ``t`` and after the last tick (``inf`` for ``inf``)."""
        if t == math.inf:
            return t
        period = self.period
        return max(math.ceil(t / period) * period, self.last + period)

    def request(self, t: float) -> None:
        """Ask for a tick at ``grid(t)`` unless one is pending at or before it (``t = inf``: no tick)."""
        if t == math.inf:
            return
        period = self.period
        at = max(math.ceil(t / period) * period, self.last + period)  # grid(t)
        if at < self.at:
            if self.at < math.inf:
                self.kernel.cancel(self._event)
            self.at = at
            self._event = self.kernel.schedule(at, self.kind)

    def fired(self, t: float) -> None:
        """The pending tick is being handled at ``t``."""
        self.last, self.at = t, math.inf

    def copy(self, kernel: Kernel) -> Ticker:
        """The same ticker on a copy of its kernel."""
        twin = Ticker(kernel, self.kind, self.period)
        twin.last, twin.at, twin._event = self.last, self.at, self._event
        return twin
