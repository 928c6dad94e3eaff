"""What the cloud charges a cluster run on it and how fast it is (``SPEC.md`` §7, cloud-cluster paper §5)."""

from __future__ import annotations

from dataclasses import dataclass, field

from broker.pricing.billing import Charging
from broker.pricing.book import PriceBook
from broker.pricing.egress import EgressPrices
from workloads.errors import ConfigError

#: Bandwidths measured by the paper between Newcastle and EC2 US-East (§5), bytes per second.
UPLOAD_BPS, DOWNLOAD_BPS = 11_811_000.0, 22_925_000.0
INSTANCE_TYPE = "instance"


@dataclass(frozen=True, slots=True)
class CloudTerms:
    """What the cloud charges and how fast it is: price per instance-hour, egress, boot, bandwidths.

    The defaults charge no egress; :meth:`from_book` gives a price book's terms (what ``cloudbroker
    cluster`` bills: ``ec2-2013-cluster``'s c1.medium on demand and its egress tiers).
    """

    hourly: float = 0.145
    egress: EgressPrices = field(default_factory=EgressPrices.free)
    charging: Charging = "exact"
    boot: float = 0.0
    btu: float = 3600.0
    upload_bps: float = UPLOAD_BPS
    download_bps: float = DOWNLOAD_BPS
    instance_type: str = INSTANCE_TYPE

    def __post_init__(self) -> None:
        if not (self.hourly >= 0 and 0 <= self.boot <= 3600 and self.btu > 0):
            raise ConfigError("CloudTerms needs hourly >= 0, boot in [0, 3600] s and btu > 0")
        if not (self.upload_bps > 0 and self.download_bps > 0):
            raise ConfigError("bandwidths must be > 0 bytes/s")

    @classmethod
    def from_book(cls, book: PriceBook, *, charging: Charging = "exact", boot: float = 0.0) -> CloudTerms:
        """The terms of ``book``: its first instance type on demand ($/h) and its egress tiers; ``boot`` in s."""
        name = book.types[0].name
        offer = book.offer(name, "on-demand")
        if offer is None:
            raise ConfigError(f"price book {book.name!r} has no on-demand offer for {name!r}")
        return cls(hourly=offer.hourly, egress=book.egress, charging=charging, boot=boot, instance_type=name)
