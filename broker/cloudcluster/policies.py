"""The cloud-cluster policies (``SPEC.md`` §7, cloud-cluster paper §4): small rules with one hook each.

The world (:mod:`broker.cloudcluster.world`) asks four questions; a :class:`ClusterPolicy` composes
the rules that answer them:

- *Which instances may a job use?* The pools (P2): :class:`Merged` (one pool for every user) or
  :class:`PerUser` (instances dedicated to the user whose job started them); hook ``pool_of``.
- *How many instances at most?* The cap (P1), a number the world checks before it hires.
- *When may a new instance start for a job that arrived at ``a``?* The start rules, hook
  ``not_before``: :class:`Delay` (P4) holds it until the job has waited ``seconds``, unless more
  than ``burst_ratio x cap`` jobs wait (P5 lifts the delay in a burst); :class:`NextHour` (P6) holds
  jobs that arrive within ``seconds`` of the end of a wall-clock hour until that hour ends. Combined,
  a job's instance starts at the latest of the times they give.
- *Keep an idle instance for another paid period?* At the end of a period the world pauses and the
  keep-alive rule (P3) decides, hook ``keep``: with probability ``f(p)``, :class:`FixedKeepAlive`
  ``p``; :class:`IdleKeepAlive` ``(1 - i/t) p`` (``i`` idle of ``t`` hired instances);
  :class:`LoadKeepAlive` ``p x`` active over hired instance-time in the last ``window`` seconds.
  An instance idle for a whole period always goes. Without a keep-alive rule it goes at the end of
  its period (:class:`EndOfPeriod`), or — the production baseline of autoscalers' idle timers —
  :class:`IdleTimeout` releases it after ``seconds`` idle, whatever the billing period.

:data:`CLUSTER_POLICIES` names a policy of each kind, with defaults, for the CLI's help and the
contract suite.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from heuristics.registry import Registry
from workloads.errors import ConfigError


class ClusterView(Protocol):
    """What a keep-alive rule may read of the cloud cluster at a decision."""

    @property
    def idle(self) -> int:
        """Instances idle now."""
        ...

    @property
    def hired(self) -> int:
        """Instances hired now (booting, active or idle)."""
        ...

    def load(self, t: float, window: float) -> float:
        """Active over hired instance-time in ``[t - window, t]``."""
        ...


# -- P2: pools ------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Merged:
    """P2: one pool; any user's job may use any instance."""

    def pool_of(self, users: np.ndarray) -> np.ndarray:
        """The pool of each job: 0 for all."""
        return np.zeros(len(users), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class PerUser:
    """P2: a pool per user; an instance serves only the user whose job started it."""

    def pool_of(self, users: np.ndarray) -> np.ndarray:
        """The pool of each job: its user."""
        return users.astype(np.int64)


# -- P4, P5, P6: when a new instance may start ---------------------------------------------------------

class StartRule(Protocol):
    """A rule on the earliest start of a new instance (wall-clock seconds)."""

    def not_before(self, arrival: float, *, waiting: int, cap: float) -> float:
        """When an instance may start for a job that arrived at ``arrival``; ``waiting`` jobs queue now.

        Non-decreasing in ``arrival`` for fixed ``waiting`` and ``cap`` (the world relies on it).
        """
        ...


@dataclass(frozen=True, slots=True)
class Delay:
    """P4: wait ``seconds`` before starting an instance; P5: no delay while more than ``burst_ratio x cap`` wait."""

    seconds: float
    burst_ratio: float | None = None

    def __post_init__(self) -> None:
        if not self.seconds >= 0:
            raise ConfigError(f"delay must be >= 0 s, got {self.seconds}")
        if self.burst_ratio is not None and not self.burst_ratio >= 0:
            raise ConfigError(f"burst_ratio must be >= 0, got {self.burst_ratio}")

    def not_before(self, arrival: float, *, waiting: int, cap: float) -> float:
        """``arrival + seconds``, or ``arrival`` in a burst."""
        if self.burst_ratio is not None and waiting > self.burst_ratio * cap:
            return arrival
        return arrival + self.seconds


@dataclass(frozen=True, slots=True)
class NextHour:
    """P6: a job arriving within ``seconds`` of the end of a wall-clock ``hour`` waits for that hour to end."""

    seconds: float
    hour: float = 3600.0

    def __post_init__(self) -> None:
        if not 0 <= self.seconds < self.hour:
            raise ConfigError(f"wait_next_hour must be in [0, {self.hour}) s, got {self.seconds}")

    def not_before(self, arrival: float, *, waiting: int, cap: float) -> float:
        """The end of the hour when the job arrived in its last ``seconds``, else ``arrival``."""
        hour_end = (math.floor(arrival / self.hour) + 1) * self.hour
        return hour_end if hour_end - arrival <= self.seconds else arrival


# -- P3: keep-alive and the release rules --------------------------------------------------------------

class _KeepAliveRule:
    """What the keep-alive rules share: a probability ``p`` in [0, 1], and one draw per decision."""

    __slots__ = ()
    p: float

    def __post_init__(self) -> None:
        if not 0 <= self.p <= 1:
            raise ConfigError(f"keep-alive probability must be in [0, 1], got {self.p}")

    def probability(self, t: float, view: ClusterView) -> float:
        """The probability of keeping the instance at ``t``."""
        raise NotImplementedError

    def keep(self, t: float, view: ClusterView, rng: np.random.Generator) -> bool:
        """Keep the instance another period? One draw of ``rng``."""
        return bool(rng.random() < self.probability(t, view))


@dataclass(frozen=True, slots=True)
class FixedKeepAlive(_KeepAliveRule):
    """P3 Fixed: keep with probability ``p``."""

    p: float
    window: ClassVar[float | None] = None

    def probability(self, t: float, view: ClusterView) -> float:
        """``p``."""
        return self.p


@dataclass(frozen=True, slots=True)
class IdleKeepAlive(_KeepAliveRule):
    """P3 Idle: keep with probability ``(1 - idle / hired) p``."""

    p: float
    window: ClassVar[float | None] = None

    def probability(self, t: float, view: ClusterView) -> float:
        """``(1 - i/t) p``; 0 with no instance hired."""
        hired = view.hired
        return (1.0 - view.idle / hired) * self.p if hired else 0.0


@dataclass(frozen=True, slots=True)
class LoadKeepAlive(_KeepAliveRule):
    """P3 Load: keep with probability ``p x`` active over hired instance-time in the last ``window`` seconds."""

    p: float
    window: float = 3600.0

    def __post_init__(self) -> None:
        _KeepAliveRule.__post_init__(self)
        if not self.window > 0:
            raise ConfigError(f"keep-alive load window must be > 0 s, got {self.window}")

    def probability(self, t: float, view: ClusterView) -> float:
        """``load x p``."""
        return view.load(t, self.window) * self.p


KeepAlive = FixedKeepAlive | IdleKeepAlive | LoadKeepAlive
_KEEPALIVE: dict[str, Callable[..., KeepAlive]] = {"fixed": FixedKeepAlive, "idle": IdleKeepAlive,
                                                   "load": LoadKeepAlive}


def parse_keepalive(text: str) -> KeepAlive:
    """``"fixed:0.3"``, ``"idle:0.3"`` or ``"load:0.3[:WINDOW_S]"``."""
    parts = text.split(":")
    shapes = {"fixed": (2,), "idle": (2,), "load": (2, 3)}
    if len(parts) not in shapes.get(parts[0], ()):
        raise ConfigError(f"keep-alive {text!r}: expected fixed:P, idle:P or load:P[:WINDOW_S]")
    try:
        numbers = [float(x) for x in parts[1:]]
    except ValueError as e:
        raise ConfigError(f"keep-alive {text!r}: {e}") from e
    return _KEEPALIVE[parts[0]](*numbers)


@dataclass(frozen=True, slots=True)
class EndOfPeriod:
    """Release an idle instance at the end of its paid period (the paper; keep-alive may extend it)."""

    def idle_timeout(self) -> float | None:
        """No timer: the period end decides."""
        return None


@dataclass(frozen=True, slots=True)
class IdleTimeout:
    """The autoscalers' baseline: release an instance ``seconds`` after it became idle, whatever the period."""

    seconds: float

    def __post_init__(self) -> None:
        if not self.seconds >= 0:
            raise ConfigError(f"idle_timeout must be >= 0 s, got {self.seconds}")

    def idle_timeout(self) -> float | None:
        """Seconds idle before the release."""
        return self.seconds


ReleaseRule = EndOfPeriod | IdleTimeout


# -- the composition --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ClusterPolicy:
    """A composition of P1-P6 and the idle-timeout baseline (module docstring).

    ``cap`` (P1) is ``None`` for no cap; ``pools`` (P2); ``keepalive`` (P3, at the end of a period);
    ``start`` (P4-P6, the latest of their times); ``release`` (the end of the period, or an idle timer).
    """

    cap: int | None = None
    pools: Merged | PerUser = field(default_factory=Merged)
    keepalive: KeepAlive | None = None
    start: tuple[StartRule, ...] = ()
    release: ReleaseRule = field(default_factory=EndOfPeriod)

    def __post_init__(self) -> None:
        if self.cap is not None and not self.cap >= 1:
            raise ConfigError(f"cap must be >= 1 instance (or None), got {self.cap}")
        if isinstance(self.release, IdleTimeout) and self.keepalive is not None:
            raise ConfigError("keep-alive (P3) decides at the end of a paid period; the idle-timeout baseline "
                             "ignores periods: choose one")

    def not_before(self, arrival: float, *, waiting: int, cap: float) -> float:
        """The latest of the start rules' times (``arrival`` with none)."""
        t = arrival
        for rule in self.start:
            t = max(t, rule.not_before(arrival, waiting=waiting, cap=cap))
        return t


def _registry() -> Registry[Callable[..., ClusterPolicy]]:
    reg: Registry[Callable[..., ClusterPolicy]] = Registry("cloud-cluster policy")
    reg.register("merged", lambda: ClusterPolicy())
    reg.register("per-user", lambda: ClusterPolicy(pools=PerUser()))
    reg.register("cap", lambda n=50: ClusterPolicy(cap=n))
    reg.register("keepalive-fixed", lambda p=0.5: ClusterPolicy(keepalive=FixedKeepAlive(p)))
    reg.register("keepalive-idle", lambda p=0.5: ClusterPolicy(keepalive=IdleKeepAlive(p)))
    reg.register("keepalive-load", lambda p=0.5, window=3600.0: ClusterPolicy(keepalive=LoadKeepAlive(p, window)))
    reg.register("delay", lambda seconds=300.0: ClusterPolicy(start=(Delay(seconds),)))
    reg.register("burst", lambda seconds=600.0, ratio=0.5, cap=30: ClusterPolicy(
        cap=cap, start=(Delay(seconds, burst_ratio=ratio),)))
    reg.register("next-hour", lambda seconds=1200.0: ClusterPolicy(start=(NextHour(seconds),)))
    reg.register("idle-timeout", lambda seconds=600.0: ClusterPolicy(release=IdleTimeout(seconds)))
    return reg


#: One policy of each rule, with defaults: ``CLUSTER_POLICIES.get("keepalive-load")(p=0.3)``.
CLUSTER_POLICIES = _registry()
