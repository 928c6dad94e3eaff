"""Price books: the bundled CoH Table 5 book, validation errors naming file, entry and field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from broker.pricing.book import Catalog, PriceBookError, load_price_book
from workloads.pricebooks import bundled_price_books


def test_bundled_book_is_coh_table_5() -> None:
    book = load_price_book()
    assert "ec2-2013" in bundled_price_books()
    assert {t.name: t.capacity for t in book.types} == {"small": 100, "large": 410}
    expect = {
        ("small", "on-demand"): (0.065, 0), ("large", "on-demand"): (0.26, 0),
        ("small", "reserved-light"): (0.039, 69), ("large", "reserved-light"): (0.156, 276),
        ("small", "reserved-medium"): (0.024, 160), ("large", "reserved-medium"): (0.096, 640),
        ("small", "reserved-heavy"): (0.016, 195), ("large", "reserved-heavy"): (0.064, 780),
    }
    for (name, option), (hourly, upfront) in expect.items():
        offer = book.offer(name, option)
        assert offer is not None and (offer.hourly, offer.upfront) == (hourly, upfront)
    catalog = book.catalog()
    assert catalog.most_cost_efficient() == 1  # large: 410 / 0.26 > 100 / 0.065
    assert catalog.cost_efficient_for(100) == 1


def test_book_from_a_path_and_its_errors(tmp_path: Path) -> None:
    good = tmp_path / "mine.toml"
    good.write_text('name = "mine"\n[[instance_types]]\nname = "a"\ncapacity = 8\n'
                    '[[offers]]\ninstance_type = "a"\noption = "on-demand"\nhourly = 0.5\n')
    assert load_price_book(good).catalog().hourly.tolist() == [0.5]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[instance_types]]\nname = "a"\ncapacity = "big"\n'
                   '[[offers]]\ninstance_type = "a"\noption = "on-demand"\nhourly = 0.5\n')
    with pytest.raises(PriceBookError, match=r"bad\.toml: instance_types\[0\]: field 'capacity'"):
        load_price_book(bad)
    bad.write_text('[[instance_types]]\nname = "a"\ncapacity = 4\n'
                   '[[offers]]\ninstance_type = "b"\noption = "on-demand"\nhourly = 0.5\n')
    with pytest.raises(PriceBookError, match=r"offers\[0\]: field 'instance_type'"):
        load_price_book(bad)
    with pytest.raises(ValueError, match="unknown price book"):
        load_price_book("nope")


@pytest.mark.parametrize(("capacity", "ok"), [("8", True), ("8.0", True), ("0.5", False), ("100.25", False),
                                              ("9007199254740992", False)])
def test_a_book_with_a_fractional_capacity_is_refused_with_the_fix(tmp_path: Path, capacity: str, ok: bool) -> None:
    book = tmp_path / "book.toml"
    book.write_text(f'name = "mine"\n[[instance_types]]\nname = "a"\ncapacity = {capacity}\n'
                    '[[offers]]\ninstance_type = "a"\noption = "on-demand"\nhourly = 0.1\n')
    if ok:
        assert load_price_book(book).catalog().capacity.tolist() == [8.0]
        return
    with pytest.raises(PriceBookError, match=r"book\.toml: instance_types\[0\]: field 'capacity' must be a whole "
                                             r"number of capacity units .* milli-vCPU"):
        load_price_book(book)


def test_a_catalog_built_by_hand_refuses_a_fractional_capacity() -> None:
    Catalog(("a", "b"), np.array([100.0, 410.0]), np.array([0.065, 0.26]))
    with pytest.raises(PriceBookError, match=r"whole numbers .* \[100.0, 0.5\]"):
        Catalog(("a", "b"), np.array([100.0, 0.5]), np.array([0.065, 0.26]))
