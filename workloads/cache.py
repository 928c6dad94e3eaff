"""Download registered traces by name into a per-user cache, verified against SHA-256.

A trace is downloaded to a temporary file inside the cache directory, checked (complete transfer,
intact gzip stream, SHA-256 of the uncompressed content equal to the registry's) and only then
renamed into place, so nothing unverified is ever cached. Beside each cached file a sidecar
``<file>.sha256`` records the verified checksum and the file size; later calls trust a file whose
sidecar matches and re-verify one whose sidecar is missing or stale.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import tempfile
import urllib.request
import zlib
from http.client import HTTPException
from os import PathLike
from pathlib import Path
from typing import BinaryIO

from workloads.errors import UnavailableError, UnknownName
from workloads.registry import TraceEntry, registry
from workloads.swf import SwfTrace, open_stream, read_swf

logger = logging.getLogger(__name__)

#: Environment variable naming the cache directory (overrides the XDG default).
ENV_CACHE = "CLOUDBROKER_CACHE"
#: Environment variable naming a mirror base URL used when ``mirror`` is not given.
ENV_MIRROR = "CLOUDBROKER_TRACE_MIRROR"
#: Socket timeout of a download, in seconds.
DOWNLOAD_TIMEOUT_S = 60.0
_BLOCK_BYTES = 1 << 20
_USER_AGENT = "cloudbroker (workload trace download)"


class TraceDownloadError(UnavailableError):
    """A trace could not be downloaded, or what was downloaded failed verification."""


class UnknownTraceError(UnknownName):
    """A name is neither an existing file nor a registered trace."""


def cache_dir() -> Path:
    """Return the trace cache directory (not created here).

    ``$CLOUDBROKER_CACHE`` if set, else ``$XDG_CACHE_HOME/cloudbroker/traces`` if that variable
    is an absolute path, else ``~/.cache/cloudbroker/traces``.
    """
    explicit = os.environ.get(ENV_CACHE)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "cloudbroker" / "traces"


def content_sha256(path: Path) -> str:
    """Compute the SHA-256 (hex) of a file's content, decompressed first when it is gzip.

    Raises
    ------
    EOFError, gzip.BadGzipFile, zlib.error
        When a gzip file is truncated or corrupt.
    """
    with open_stream(path) as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def trace_entry(name: str) -> TraceEntry:
    """Return the registry entry of ``name``.

    Raises
    ------
    UnknownTraceError
        If ``name`` is not registered (the message lists the registered names).
    """
    entries = registry()
    if name not in entries:
        raise UnknownTraceError(f"unknown trace {name!r}; registered traces: {_known(entries)}")
    return entries[name]


def trace_url(entry: TraceEntry, mirror: str | None = None) -> str:
    """Return the URL to download ``entry`` from.

    Parameters
    ----------
    entry : TraceEntry
        The trace.
    mirror : str, optional
        Base URL replacing the directory of the registry URL: the file is fetched from
        ``mirror + "/" + entry.filename``. Defaults to ``$CLOUDBROKER_TRACE_MIRROR``; without
        either (or with an empty string), the registry URL is used.
    """
    base = mirror if mirror is not None else os.environ.get(ENV_MIRROR)
    return f"{base.rstrip('/')}/{entry.filename}" if base else entry.url


def fetch_trace(name: str, *, mirror: str | None = None, cache: Path | None = None) -> Path:
    """Return the path of a registered trace in the cache, downloading and verifying it if needed.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"KTH-SP2-1996-2.1-cln"``.
    mirror : str, optional
        Base URL to download from instead of the archive (see :func:`trace_url`).
    cache : Path, optional
        Cache directory; default :func:`cache_dir`.

    Returns
    -------
    Path
        The cached file (as published: gzip-compressed or plain).

    Raises
    ------
    UnknownTraceError
        If ``name`` is not registered.
    TraceDownloadError
        If the download fails, is shorter than the server's ``Content-Length``, is a truncated
        or corrupt gzip stream, or its uncompressed SHA-256 differs from the registry's. The
        temporary file is removed: nothing unverified is cached. Also when the cache directory
        cannot be made, read or written. The message names ``$CLOUDBROKER_CACHE`` and
        ``$CLOUDBROKER_TRACE_MIRROR`` when they chose the directory or the URL.
    """
    entry = trace_entry(name)
    directory = cache if cache is not None else cache_dir()
    target = directory / entry.filename
    try:
        if target.exists() and _cached_file_ok(target, entry):
            logger.debug("trace %s: using cached %s", name, target)
            return target
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{entry.filename}.", suffix=".part")
    except OSError as exc:
        raise TraceDownloadError(
            f"trace {name}: cannot use the trace cache {directory} ({exc.strerror}){_cache_hint(cache)}"
        ) from exc
    url = trace_url(entry, mirror)
    partial = Path(temporary)
    try:
        logger.info("trace %s: downloading %s", name, url)
        with os.fdopen(handle, "wb") as out:
            size = _download(entry, url, out, _mirror_hint(entry, mirror), shown=url + _mirror_named(mirror))
        _verify(entry, url + _mirror_named(mirror), partial)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    _write_sidecar(target, entry)
    logger.info("trace %s: cached %s (%d bytes, sha256 verified)", name, target, size)
    return target


def resolve_trace(
    path_or_name: str | PathLike[str], *, mirror: str | None = None, cache: Path | None = None
) -> Path:
    """Turn a file path or a registered trace name into the path of a local trace file.

    An existing path is returned as is; a registered name is fetched (or taken from the cache,
    see :func:`fetch_trace`).

    Raises
    ------
    UnknownTraceError
        If the argument is neither an existing path nor a registered name (the message lists the
        registered names).
    """
    path = Path(path_or_name)
    if path.exists():
        return path
    name = os.fspath(path_or_name)
    entries = registry()
    if name not in entries:
        raise UnknownTraceError(
            f"{name!r} is neither an existing file nor a registered trace; "
            f"registered traces: {_known(entries)}"
        )
    return fetch_trace(name, mirror=mirror, cache=cache)


def load_trace(
    path_or_name: str | PathLike[str],
    *,
    lenient: bool = False,
    strict: bool = False,
    mirror: str | None = None,
    cache: Path | None = None,
) -> SwfTrace:
    """Read a trace given as a file path or a registered name (see :func:`resolve_trace`).

    ``lenient`` and ``strict`` are passed to :func:`workloads.swf.read_swf`.
    """
    return read_swf(resolve_trace(path_or_name, mirror=mirror, cache=cache), lenient=lenient, strict=strict)


def _known(entries: dict[str, TraceEntry]) -> str:
    return ", ".join(sorted(entries))


def _cache_hint(cache: Path | None) -> str:
    """How the cache directory was chosen, for a message: ``$CLOUDBROKER_CACHE`` named when it did (or could)."""
    if cache is not None:
        return ""
    if os.environ.get(ENV_CACHE):
        return f"; the directory is {ENV_CACHE}'s: set it to a directory that can be read and written"
    return f"; set {ENV_CACHE} to a directory that can be read and written"


def _mirror_named(mirror: str | None) -> str:
    """`` (from $CLOUDBROKER_TRACE_MIRROR)`` when the download URL came from that variable, else nothing."""
    return f" (from {ENV_MIRROR})" if mirror is None and os.environ.get(ENV_MIRROR) else ""


def _mirror_hint(entry: TraceEntry, mirror: str | None) -> str:
    """What to do when the download fails: set, or fix, ``$CLOUDBROKER_TRACE_MIRROR``."""
    where = f"a directory URL (file:///path/ or http://host/path/) that holds {entry.filename}"
    if _mirror_named(mirror):
        return (f"{ENV_MIRROR} is {os.environ[ENV_MIRROR]!r}: set it to {where}, or unset it, or pass the file's "
                "path instead of the name")
    return f"offline, set {ENV_MIRROR} to {where}, or pass the file's path instead of the name"


def _download(entry: TraceEntry, url: str, out: BinaryIO, hint: str, *, shown: str) -> int:
    """Copy ``url`` to ``out``; return the byte count, checked against ``Content-Length``.

    ``hint`` says what to do when the download fails; ``shown`` is the URL as messages give it.
    """
    try:
        request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response:
            announced = response.headers.get("Content-Length")
            received = 0
            while block := response.read(_BLOCK_BYTES):
                out.write(block)
                received += len(block)
    except (OSError, HTTPException, ValueError) as exc:  # ValueError: not a URL urllib knows
        raise TraceDownloadError(f"trace {entry.name}: download from {shown} failed ({exc}); {hint}") from exc
    if announced is not None and announced.strip().isdigit() and int(announced) != received:
        raise TraceDownloadError(
            f"trace {entry.name}: download from {shown} is truncated: received {received} bytes, "
            f"the server announced {int(announced)} (Content-Length)"
        )
    return received


def _verify(entry: TraceEntry, url: str, path: Path) -> None:
    """Check the downloaded file's uncompressed SHA-256 against the registry."""
    try:
        actual = content_sha256(path)
    except EOFError as exc:
        raise TraceDownloadError(
            f"trace {entry.name}: download from {url} is truncated: the gzip stream ends early"
        ) from exc
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise TraceDownloadError(
            f"trace {entry.name}: download from {url} is corrupt: bad gzip data ({exc})"
        ) from exc
    if actual != entry.sha256:
        raise TraceDownloadError(
            f"trace {entry.name}: checksum mismatch for {url}: "
            f"expected sha256 {entry.sha256}, got {actual} (uncompressed content)"
        )


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _write_sidecar(target: Path, entry: TraceEntry) -> None:
    """Record ``<sha256 of the uncompressed content> <file size in bytes>`` beside ``target``."""
    _sidecar(target).write_text(f"{entry.sha256} {target.stat().st_size}\n", encoding="ascii")


def _sidecar_matches(target: Path, entry: TraceEntry) -> bool:
    try:
        recorded = _sidecar(target).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return False
    return recorded == [entry.sha256, str(target.stat().st_size)]


def _cached_file_ok(target: Path, entry: TraceEntry) -> bool:
    """Trust a matching sidecar; otherwise re-hash, and delete the file if it does not verify."""
    if _sidecar_matches(target, entry):
        return True
    logger.info("trace %s: re-verifying cached %s", entry.name, target)
    try:
        intact = content_sha256(target) == entry.sha256
    except (EOFError, gzip.BadGzipFile, zlib.error):
        intact = False
    if intact:
        _write_sidecar(target, entry)
        return True
    logger.warning("trace %s: cached %s fails verification; downloading again", entry.name, target)
    target.unlink()
    _sidecar(target).unlink(missing_ok=True)
    return False
