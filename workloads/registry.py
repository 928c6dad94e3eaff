"""The trace registry: trace name -> download URL, file name, checksum and job count.

The registry is data (``workloads/data/traces.toml``), not code; this module loads and validates
it. :mod:`workloads.cache` uses it to download a trace by name and verify what it downloaded.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from workloads.errors import InputError

#: Package-relative location of the registry file.
REGISTRY_RESOURCE = ("workloads", "data/traces.toml")

_SHA256 = re.compile(r"[0-9a-f]{64}")
_FIELDS = frozenset({"file", "url", "sha256", "jobs", "synthetic"})


class RegistryError(InputError):
    """The registry file is malformed (the message names the entry and the field)."""


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One downloadable trace.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"KTH-SP2-1996-2.1-cln"``.
    filename : str
        Name of the downloaded file (the last component of ``url``).
    url : str
        Where the trace is published (https).
    sha256 : str
        Lower-case hex SHA-256 of the uncompressed content.
    jobs : int
        Number of job records in the trace.
    synthetic : bool
        True for generated (model) workloads rather than real logs.
    """

    name: str
    filename: str
    url: str
    sha256: str
    jobs: int
    synthetic: bool = False


def registry() -> dict[str, TraceEntry]:
    """Return the registered traces by name (a fresh dict; the file is parsed once per process).

    Raises
    ------
    RegistryError
        If ``workloads/data/traces.toml`` is malformed.
    """
    return dict(_load_packaged())


@functools.cache
def _load_packaged() -> Mapping[str, TraceEntry]:
    package, relative = REGISTRY_RESOURCE
    text = resources.files(package).joinpath(relative).read_text(encoding="utf-8")
    return MappingProxyType(parse_registry(text, source=relative))


def parse_registry(text: str, *, source: str = "<string>") -> dict[str, TraceEntry]:
    """Parse and validate registry TOML text.

    Parameters
    ----------
    text : str
        TOML with one table per trace (see ``workloads/data/traces.toml``).
    source : str
        Name used in error messages.

    Returns
    -------
    dict of str to TraceEntry
        Entries in file order.

    Raises
    ------
    RegistryError
        If the TOML is invalid or an entry lacks a field or has a bad value.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{source}: not valid TOML: {exc}") from exc
    entries = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise RegistryError(f"{source}: entry {name!r}: expected a table, got {table!r}")
        entries[name] = _entry(name, table, source)
    return entries


def _entry(name: str, table: dict[str, Any], source: str) -> TraceEntry:
    def fail(field: str, problem: str) -> RegistryError:
        return RegistryError(f"{source}: entry {name!r}: field {field!r}: {problem}")

    unknown = sorted(set(table) - _FIELDS)
    if unknown:
        raise fail(unknown[0], f"unknown field (known: {sorted(_FIELDS)})")
    for field in ("file", "url", "sha256"):
        if not isinstance(table.get(field), str) or not table[field]:
            raise fail(field, f"expected a non-empty string, got {table.get(field)!r}")
    url, filename, sha256 = table["url"], table["file"], table["sha256"]
    if urlsplit(url).scheme != "https":
        raise fail("url", f"expected an https URL, got {url!r}")
    if url.rsplit("/", 1)[-1] != filename:
        raise fail("file", f"{filename!r} is not the last component of the URL {url!r}")
    if not _SHA256.fullmatch(sha256):
        raise fail("sha256", f"expected 64 lower-case hex digits, got {sha256!r}")
    jobs = table.get("jobs")
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs <= 0:
        raise fail("jobs", f"expected a positive integer, got {jobs!r}")
    synthetic = table.get("synthetic", False)
    if not isinstance(synthetic, bool):
        raise fail("synthetic", f"expected true or false, got {synthetic!r}")
    return TraceEntry(name, filename, url, sha256, jobs, synthetic)
