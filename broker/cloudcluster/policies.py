"""The cloud-cluster policies (``SPEC.md`` §7, cloud-cluster paper §4), each a small rule with one hook.

The simulator (:mod:`broker.cloudcluster.site`) asks three questions and these rules answer them:

- *May a new instance start now for a job that arrived at ``a``?* :class:`StartRule`'s
  ``not_before``: P4 delays it until the job has waited ``delay`` seconds; P5 lifts that delay while
  more than ``burst_ratio x cap`` jobs wait; P6 holds jobs that arrive within ``wait_next_hour``
  seconds of the end of a wall-clock hour until that hour ends. Combined, a job's instance starts
  at the latest of the times they give. P1 (the cap) is a number the simulator checks.
- *Keep an idle instance for another paid period?* :class:`KeepAlive` (P3): with probability
  ``f(p)``: Fixed ``p``; Idle ``(1 - i/t) p`` (``i`` idle of ``t`` hired instances); Load
  ``p x`` active over hired instance-time in the last ``window`` seconds. An instance idle for a
  whole period always goes.
- *When does an idle instance go?* At the end of its paid period (the paper), or — the production
  baseline of autoscalers' idle timers — after :attr:`ClusterPolicy.idle_timeout` seconds idle,
  whatever the billing period.

P2 (one merged pool, or instances dedicated to the user who started them) is a flag.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

KeepAliveKind = Literal["fixed", "idle", "load"]


@dataclass(frozen=True, slots=True)
class KeepAlive:
    """P3: keep an idle instance for one more period with probability ``f(p)`` (module docstring)."""

    kind: KeepAliveKind
    p: float
    window: float = 3600.0

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "idle", "load"):
            raise ValueError(f"keep-alive kind must be fixed, idle or load, got {self.kind!r}")
        if not 0 <= self.p <= 1:
            raise ValueError(f"keep-alive probability must be in [0, 1], got {self.p}")
        if self.window <= 0:
            raise ValueError(f"keep-alive load window must be > 0 s, got {self.window}")

    @classmethod
    def parse(cls, text: str) -> KeepAlive:
        """``"fixed:0.3"``, ``"idle:0.3"`` or ``"load:0.3[:WINDOW_S]"``."""
        parts = text.split(":")
        shapes = {"fixed": (2,), "idle": (2,), "load": (2, 3)}
        if len(parts) not in shapes.get(parts[0], ()):
            raise ValueError(f"keep-alive {text!r}: expected fixed:P, idle:P or load:P[:WINDOW_S]")
        try:
            numbers = [float(x) for x in parts[1:]]
        except ValueError as e:
            raise ValueError(f"keep-alive {text!r}: {e}") from e
        return cls(parts[0], *numbers)  # type: ignore[arg-type]

    def probability(self, *, idle: int, hired: int, load: float) -> float:
        """``f(p)`` for ``idle`` of ``hired`` instances and the window's ``load`` (active / hired time)."""
        if self.kind == "fixed":
            return self.p
        if self.kind == "idle":
            return (1.0 - idle / hired) * self.p if hired else 0.0
        return load * self.p


@dataclass(frozen=True, slots=True)
class StartRule:
    """P4, P5 and P6: the earliest instant a new instance may start for a job (module docstring).

    Times are on the wall clock (the simulator adds the trace's offset into its hour), ``hour`` in s.
    """

    delay: float = 0.0
    burst_ratio: float | None = None
    wait_next_hour: float = 0.0
    hour: float = 3600.0

    def __post_init__(self) -> None:
        if self.delay < 0 or self.wait_next_hour < 0:
            raise ValueError("delay and wait_next_hour must be >= 0 s")
        if not self.wait_next_hour < self.hour:
            raise ValueError(f"wait_next_hour must be below the hour ({self.hour} s), got {self.wait_next_hour}")
        if self.burst_ratio is not None and self.burst_ratio < 0:
            raise ValueError(f"burst_ratio must be >= 0, got {self.burst_ratio}")

    def not_before(self, arrival: float, *, waiting: int, cap: float) -> float:
        """When an instance may start for a job that arrived at ``arrival``; ``waiting`` jobs queue now.

        Non-decreasing in ``arrival`` for fixed ``waiting`` and ``cap`` (the simulator relies on it).
        """
        t = arrival
        burst = self.burst_ratio is not None and waiting > self.burst_ratio * cap
        if self.delay and not burst:
            t = arrival + self.delay
        if self.wait_next_hour:
            hour_end = (math.floor(arrival / self.hour) + 1) * self.hour
            if hour_end - arrival <= self.wait_next_hour:
                t = max(t, hour_end)
        return t


@dataclass(frozen=True, slots=True)
class ClusterPolicy:
    """A composition of P1-P6 and the idle-timeout baseline (module docstring).

    ``cap`` (P1) is ``None`` for no cap; ``merge`` (P2) shares instances among users; ``keepalive``
    (P3); ``start`` (P4-P6); ``idle_timeout`` (s) replaces the end-of-period release rule.
    """

    cap: int | None = None
    merge: bool = True
    keepalive: KeepAlive | None = None
    start: StartRule = field(default_factory=StartRule)
    idle_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.cap is not None and self.cap < 1:
            raise ValueError(f"cap must be >= 1 instance (or None), got {self.cap}")
        if self.idle_timeout is not None and self.idle_timeout < 0:
            raise ValueError(f"idle_timeout must be >= 0 s, got {self.idle_timeout}")
        if self.idle_timeout is not None and self.keepalive is not None:
            raise ValueError("keep-alive (P3) decides at the end of a paid period; the idle-timeout baseline "
                             "ignores periods: choose one")
