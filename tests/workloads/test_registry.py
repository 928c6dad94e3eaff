"""Tests of the trace registry: its data matches the shared traces; malformed data is refused."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib

import pytest

from tests.conftest import trace_path
from workloads.registry import RegistryError, TraceEntry, parse_registry, registry

NAMES = {
    "KTH-SP2-1996-2.1-cln",
    "SDSC-SP2-1998-4.2-cln",
    "SDSC-BLUE-2000-4.2-cln",
    "LCG-2005-1",
    "LPC-EGEE-2004-1.2-cln",
    "LLNL-Atlas-2006-2.1-cln",
    "NASA-iPSC-1993-3.1-cln",
    "OSC-Clust-2000-3.1-cln",
    "lublin_256",
}
PWA = "https://www.cs.huji.ac.il/labs/parallel/workload/l_"


def test_registry_lists_every_shared_trace():
    assert set(registry()) == NAMES


def test_registry_returns_a_fresh_dict():
    first = registry()
    first.clear()
    assert set(registry()) == NAMES


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NAMES))
def test_registry_checksum_and_job_count_match_the_shared_copy(traces_dir, name):
    # The shared copies are named <name>.swf.gz (lublin_256 was gzipped there; it is plain text
    # at its source, which is why the registry hashes uncompressed content).
    entry = registry()[name]
    digest = hashlib.sha256()
    jobs = 0
    with gzip.open(trace_path(f"{name}.swf.gz"), "rb") as stream:
        for line in stream:
            digest.update(line)
            jobs += bool(line.strip()) and not line.lstrip().startswith(b";")
    assert digest.hexdigest() == entry.sha256
    assert jobs == entry.jobs


def test_archive_urls():
    entries = registry()
    for name, entry in entries.items():
        assert entry.name == name
        assert entry.url.endswith("/" + entry.filename)
        if name == "lublin_256":
            assert entry.synthetic
            assert entry.filename == "lublin_256.swf"
            assert entry.url.startswith(
                "https://raw.githubusercontent.com/DIR-LAB/deep-batch-scheduler/"
            )
        else:
            assert not entry.synthetic
            assert entry.url.startswith(PWA)
            assert entry.filename == f"{name}.swf.gz"
    assert entries["OSC-Clust-2000-3.1-cln"].url == f"{PWA}osc/OSC-Clust-2000-3.1-cln.swf.gz"


def test_entries_are_frozen():
    entry = registry()["LCG-2005-1"]
    assert isinstance(entry, TraceEntry)
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.jobs = 1


SHA = "ab" * 32
GOOD = f"""
["T-1"]
file = "T-1.swf.gz"
url = "https://example.org/logs/T-1.swf.gz"
sha256 = "{SHA}"
jobs = 10
"""


def test_parse_registry_accepts_a_minimal_entry():
    entries = parse_registry(GOOD)
    assert entries["T-1"] == TraceEntry(
        name="T-1",
        filename="T-1.swf.gz",
        url="https://example.org/logs/T-1.swf.gz",
        sha256=SHA,
        jobs=10,
    )


@pytest.mark.parametrize(
    ("old", "new", "field", "problem"),
    [
        (f'sha256 = "{SHA}"', 'sha256 = "ABC"', "sha256", "64 lower-case hex"),
        ("jobs = 10", "jobs = -3", "jobs", "positive integer"),
        ("jobs = 10", 'jobs = "10"', "jobs", "positive integer"),
        ("jobs = 10\n", "", "jobs", "positive integer"),
        ('file = "T-1.swf.gz"', 'file = "other.swf.gz"', "file", "last component"),
        ('file = "T-1.swf.gz"', "file = 3", "file", "non-empty string"),
        ("https://example.org", "http://example.org", "url", "https URL"),
        ("jobs = 10", "jobs = 10\ncount = 3", "count", "unknown field"),
        ("jobs = 10", "jobs = 10\nsynthetic = 1", "synthetic", "true or false"),
    ],
)
def test_malformed_entries_name_the_entry_and_field(old, new, field, problem):
    text = GOOD.replace(old, new)
    assert text != GOOD
    with pytest.raises(RegistryError, match=problem) as caught:
        parse_registry(text, source="traces.toml")
    assert str(caught.value).startswith(f"traces.toml: entry 'T-1': field '{field}': ")


def test_invalid_toml_and_non_table_entries():
    with pytest.raises(RegistryError, match="not valid TOML"):
        parse_registry("[unterminated", source="x.toml")
    with pytest.raises(RegistryError, match="entry 'loose': expected a table"):
        parse_registry('loose = "value"')
