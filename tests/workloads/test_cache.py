"""Tests of the download cache against a local HTTP server serving copies of a shared trace."""

from __future__ import annotations

import functools
import gzip
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import trace_path
from workloads.cache import (
    ENV_CACHE,
    ENV_MIRROR,
    TraceDownloadError,
    UnknownTraceError,
    cache_dir,
    content_sha256,
    fetch_trace,
    load_trace,
    resolve_trace,
    trace_url,
)
from workloads.registry import registry

NAME = "KTH-SP2-1996-2.1-cln"
FILE = "KTH-SP2-1996-2.1-cln.swf.gz"
SHA = "fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87"


@dataclass
class Mirror:
    """A local HTTP server serving ``root``; ``url`` is its ``/pwa`` folder; requests recorded."""

    root: Path
    url: str
    requests: list[str] = field(default_factory=list)
    #: request paths answered with a Content-Length larger than the body (a cut-off transfer)
    short: set[str] = field(default_factory=set)

    @property
    def folder(self) -> Path:
        return self.root / "pwa"


class _Handler(SimpleHTTPRequestHandler):
    mirror: Mirror

    def do_GET(self) -> None:
        self.mirror.requests.append(self.path)
        if self.path in self.mirror.short:
            body = (self.mirror.root / self.path.lstrip("/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output quiet


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    state = Mirror(root=tmp_path / "mirror", url="")
    state.folder.mkdir(parents=True)

    class Handler(_Handler):
        mirror = state

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=state.root))
    state.url = f"http://127.0.0.1:{server.server_port}/pwa"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def publish(mirror: Mirror, data: bytes | None = None) -> Path:
    """Put KTH (or other bytes under its name) on the mirror."""
    target = mirror.folder / FILE
    if data is None:
        shutil.copyfile(trace_path(FILE), target)
    else:
        target.write_bytes(data)
    return target


def kth_content() -> bytes:
    return gzip.decompress(trace_path(FILE).read_bytes())


def test_fetch_downloads_verifies_and_caches(mirror, cache):
    publish(mirror)
    path = fetch_trace(NAME, mirror=mirror.url, cache=cache)
    assert path == cache / FILE
    assert path.read_bytes() == trace_path(FILE).read_bytes()
    assert content_sha256(path) == SHA
    sidecar = cache / f"{FILE}.sha256"
    assert sidecar.read_text().split() == [SHA, str(path.stat().st_size)]
    assert sorted(p.name for p in cache.iterdir()) == [FILE, f"{FILE}.sha256"]
    assert mirror.requests == [f"/pwa/{FILE}"]


def test_second_fetch_uses_the_cache(mirror, cache):
    publish(mirror)
    first = fetch_trace(NAME, mirror=mirror.url, cache=cache)
    second = fetch_trace(NAME, mirror=mirror.url, cache=cache)
    assert first == second
    assert len(mirror.requests) == 1


def test_missing_sidecar_is_reverified_without_download(mirror, cache):
    publish(mirror)
    path = fetch_trace(NAME, mirror=mirror.url, cache=cache)
    (cache / f"{FILE}.sha256").unlink()
    assert fetch_trace(NAME, mirror=mirror.url, cache=cache) == path
    assert len(mirror.requests) == 1
    assert (cache / f"{FILE}.sha256").exists()


def test_damaged_cached_file_is_downloaded_again(mirror, cache):
    publish(mirror)
    path = fetch_trace(NAME, mirror=mirror.url, cache=cache)
    path.write_bytes(path.read_bytes()[:1000])
    assert fetch_trace(NAME, mirror=mirror.url, cache=cache) == path
    assert len(mirror.requests) == 2
    assert content_sha256(path) == SHA


def test_stale_sidecar_is_not_trusted(mirror, cache):
    publish(mirror)
    path = fetch_trace(NAME, mirror=mirror.url, cache=cache)
    (cache / f"{FILE}.sha256").write_text(f"{'0' * 64} {path.stat().st_size}\n")
    assert fetch_trace(NAME, mirror=mirror.url, cache=cache) == path
    assert len(mirror.requests) == 1  # re-hashed, still good: no download
    assert (cache / f"{FILE}.sha256").read_text().split()[0] == SHA


def test_changed_content_is_a_checksum_mismatch(mirror, cache):
    content = bytearray(kth_content())
    content[100_000:100_004] = b"9999"
    publish(mirror, gzip.compress(bytes(content), compresslevel=1, mtime=0))
    with pytest.raises(TraceDownloadError) as caught:
        fetch_trace(NAME, mirror=mirror.url, cache=cache)
    message = str(caught.value)
    assert NAME in message
    assert f"{mirror.url}/{FILE}" in message
    assert f"expected sha256 {SHA}, got " in message
    assert list(cache.iterdir()) == []


def test_corrupted_gzip_bytes_are_detected(mirror, cache):
    data = bytearray(trace_path(FILE).read_bytes())
    data[200_000:200_004] = bytes(b ^ 0xFF for b in data[200_000:200_004])
    publish(mirror, bytes(data))
    with pytest.raises(TraceDownloadError, match=rf"trace {NAME}: .* is (corrupt|truncated)"):
        fetch_trace(NAME, mirror=mirror.url, cache=cache)
    assert list(cache.iterdir()) == []


def test_truncated_copy_is_detected(mirror, cache):
    data = trace_path(FILE).read_bytes()
    publish(mirror, data[: len(data) // 2])
    with pytest.raises(TraceDownloadError, match="is truncated: the gzip stream ends early"):
        fetch_trace(NAME, mirror=mirror.url, cache=cache)
    assert list(cache.iterdir()) == []


def test_transfer_shorter_than_content_length_is_detected(mirror, cache):
    publish(mirror)
    mirror.short.add(f"/pwa/{FILE}")
    with pytest.raises(TraceDownloadError, match=r"is truncated: received \d+ bytes, the server"):
        fetch_trace(NAME, mirror=mirror.url, cache=cache)
    assert list(cache.iterdir()) == []


def test_missing_file_on_the_server(mirror, cache):
    with pytest.raises(TraceDownloadError, match=r"download from .* failed \(HTTP Error 404.*CLOUDBROKER_TRACE_MIRROR"):
        fetch_trace(NAME, mirror=mirror.url, cache=cache)
    assert list(cache.iterdir()) == []


def test_mirror_from_the_environment(mirror, cache, monkeypatch):
    publish(mirror)
    monkeypatch.setenv(ENV_MIRROR, mirror.url + "/")
    assert fetch_trace(NAME, cache=cache) == cache / FILE
    assert mirror.requests == [f"/pwa/{FILE}"]


def test_trace_url(monkeypatch):
    monkeypatch.delenv(ENV_MIRROR, raising=False)
    entry = registry()[NAME]
    assert trace_url(entry, None) == entry.url
    assert trace_url(entry, "https://m.example/pwa/") == f"https://m.example/pwa/{FILE}"
    assert trace_url(entry, "") == entry.url


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv(ENV_CACHE)
    assert cache_dir() == tmp_path / "xdg" / "cloudbroker" / "traces"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "cloudbroker" / "traces"


def test_fetch_uses_the_environment_cache(mirror, tmp_path, monkeypatch):
    publish(mirror)
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "envcache"))
    assert fetch_trace(NAME, mirror=mirror.url) == tmp_path / "envcache" / FILE


def test_resolve_trace(mirror, cache):
    local = trace_path(FILE)
    assert resolve_trace(local) == local
    assert resolve_trace(str(local)) == local
    publish(mirror)
    assert resolve_trace(NAME, mirror=mirror.url, cache=cache) == cache / FILE
    with pytest.raises(UnknownTraceError, match=r"registered traces: .*LCG-2005-1") as caught:
        resolve_trace("no-such-trace", cache=cache)
    assert "'no-such-trace' is neither an existing file" in str(caught.value)
    with pytest.raises(UnknownTraceError, match="unknown trace 'nope'"):
        fetch_trace("nope", cache=cache)


def test_load_trace_by_name_and_by_path(mirror, cache):
    publish(mirror)
    by_name = load_trace(NAME, mirror=mirror.url, cache=cache)
    assert len(by_name.frame) == registry()[NAME].jobs == 28_476
    assert by_name.path == cache / FILE
    by_path = load_trace(trace_path(FILE), lenient=True)
    assert by_path.frame.equals(by_name.frame)


# -- the two environment variables are named in the errors they cause ----------------------------------------------
def test_a_cache_directory_from_the_environment_that_cannot_be_made_names_the_variable(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory\n")
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "file" / "cache"))
    monkeypatch.setenv(ENV_MIRROR, "file:///nowhere")  # never reached: the cache is refused first
    with pytest.raises(TraceDownloadError) as refused:
        fetch_trace(NAME)
    assert str(refused.value) == (f"trace {NAME}: cannot use the trace cache {tmp_path / 'file' / 'cache'} (Not a "
                                  f"directory); the directory is {ENV_CACHE}'s: set it to a directory that can be read "
                                  "and written")


def test_a_default_cache_directory_that_cannot_be_made_says_which_variable_chooses_another(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory\n")
    monkeypatch.delenv(ENV_CACHE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    with pytest.raises(TraceDownloadError, match=f"Not a directory\\); set {ENV_CACHE} to a directory that can be"):
        fetch_trace(NAME, mirror="file:///nowhere")


def test_a_cache_directory_given_by_the_caller_names_no_variable(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory\n")
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "elsewhere"))
    with pytest.raises(TraceDownloadError) as refused:
        fetch_trace(NAME, mirror="file:///nowhere", cache=tmp_path / "file" / "cache")
    assert str(refused.value).endswith("(Not a directory)") and ENV_CACHE not in str(refused.value)


@pytest.mark.parametrize("base", ["notaurl", "ftp//host/pwa"])
def test_a_mirror_from_the_environment_that_is_not_a_url_names_the_variable(cache, monkeypatch, base):
    monkeypatch.setenv(ENV_MIRROR, base)
    with pytest.raises(TraceDownloadError) as refused:
        fetch_trace(NAME, cache=cache)
    message = str(refused.value)
    assert message.startswith(f"trace {NAME}: download from {base}/{FILE} (from {ENV_MIRROR}) failed (unknown url type")
    assert f"{ENV_MIRROR} is {base!r}: set it to a directory URL" in message and "or unset it" in message
    assert list(cache.iterdir()) == []


def test_a_mirror_from_the_environment_that_lacks_the_trace_names_the_variable(mirror, cache, monkeypatch):
    monkeypatch.setenv(ENV_MIRROR, mirror.url)
    with pytest.raises(TraceDownloadError) as refused:
        fetch_trace(NAME, cache=cache)
    assert f"(from {ENV_MIRROR}) failed (HTTP Error 404" in str(refused.value)
    assert f"{ENV_MIRROR} is {mirror.url!r}: set it to" in str(refused.value)


def test_a_mirror_from_the_environment_serving_another_file_is_named_in_the_checksum_refusal(mirror, cache,
                                                                                             monkeypatch):
    publish(mirror, gzip.compress(b"; not KTH\n"))
    monkeypatch.setenv(ENV_MIRROR, mirror.url)
    with pytest.raises(TraceDownloadError, match=f"checksum mismatch for {mirror.url}/{FILE} \\(from {ENV_MIRROR}\\)"):
        fetch_trace(NAME, cache=cache)
