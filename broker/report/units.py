"""The page's units, one per kind: hours for waits and overheads, dollars for costs."""

from __future__ import annotations

HOUR = 3600.0


def hours(seconds: float) -> str:
    """Seconds as hours on the page: three significant digits below 100 h, whole hours above."""
    h = seconds / HOUR
    return f"{h:,.0f} h" if abs(h) >= 100 else f"{h:.3g} h"


def dollars(amount: float) -> str:
    """A cost in dollars, to the cent."""
    return f"-${-amount:,.2f}" if amount < 0 else f"${amount:,.2f}"


#: Table columns in dollars (the rest of a name ending in ``cost`` too, but not a share of one).
DOLLAR_COLUMNS = frozenset({"lower_bound", "upfront_amortized"})


def column(name: str) -> tuple[str, float]:
    """A table column's heading on the page, with its unit, and the factor its values are shown at."""
    if name.endswith("_s"):  # seconds: waits, overheads, CPU time
        return f"{name[:-2]} (h)", 1 / HOUR
    if name.endswith("_pct"):
        return f"{name[:-4]} (%)", 1.0
    if name.endswith("cost") or name in DOLLAR_COLUMNS:
        return f"{name} ($)", 1.0
    return name, 1.0
