"""Read price books (instance types and their billing offers) from TOML data files.

Price books are data, never constants in code paths (``SPEC.md`` §2). The package ships
``ec2-2013`` (CoH paper Table 5) and ``ec2-2013-cluster``; a user passes a path to use their own.
This module only reads the files; :func:`broker.pricing.book.load_price_book` parses and validates them.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from workloads.errors import UnknownName

DEFAULT_PRICE_BOOK = "ec2-2013"


def bundled_price_books() -> list[str]:
    """Names of the price books shipped with the package."""
    folder = resources.files("workloads") / "data" / "pricebooks"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def read_price_book_data(name_or_path: str | Path = DEFAULT_PRICE_BOOK) -> tuple[dict[str, Any], str]:
    """The raw TOML content of a price book and a label naming its file."""
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.exists():
        with path.open("rb") as fh:
            return tomllib.load(fh), str(path)
    name = str(name_or_path)
    if name not in bundled_price_books():
        raise UnknownName(f"unknown price book {name!r}: not a .toml file, nor one of {bundled_price_books()}")
    resource = resources.files("workloads") / "data" / "pricebooks" / f"{name}.toml"
    return tomllib.loads(resource.read_text(encoding="utf-8")), f"{name}.toml"
