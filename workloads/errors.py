"""The errors cloudbroker raises on purpose: one hierarchy, so a caller (the CLI) can tell a refusal from a bug.

- :class:`InputError`: a file or data that cannot be read or used (a trace, a price book, a plan, a
  demand or volumes file, a sweep spec); the message names the file, the line and the field.
- :class:`ConfigError`: a parameter out of range or inconsistent with another; the message names
  the parameter, what was given and what is allowed.
- :class:`UnavailableError`: something outside the project that is not there (a download mirror, a
  cluster scheduler); the message says what was tried and how to do without it.

Each also derives from the built-in exception a caller would expect (``ValueError``,
``LookupError``, ``RuntimeError``). Anything else that escapes is a bug.
"""

from __future__ import annotations

import math


class CloudbrokerError(Exception):
    """Base of the errors cloudbroker raises on purpose (see the module docstring)."""


class InputError(CloudbrokerError, ValueError):
    """A file or data that cannot be read or used; the message names file, line and field."""


class ConfigError(CloudbrokerError, ValueError):
    """A parameter out of range or inconsistent; the message names it, what was given and what is allowed."""


class UnknownName(ConfigError, KeyError):
    """A name that no registry knows (a policy, a heuristic, a solver, a trace); the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnavailableError(CloudbrokerError, RuntimeError):
    """Something outside the project that is not there (a download, a cluster); the message says what to do."""


def require_finite(name: str, value: float, *, least: float, strict: bool) -> None:
    """Refuse ``value`` unless it is finite and above ``least`` (``strict``) or at least ``least``.

    The :class:`ConfigError` names ``name``, what is allowed and the value given (NaN fails every comparison).
    """
    if not (math.isfinite(value) and (value > least if strict else value >= least)):
        raise ConfigError(f"{name} must be a finite number {'>' if strict else '>='} {least}, got {value!r}")
