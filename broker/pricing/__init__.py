"""The cloud as data: price books, billing time units and their period ends, egress tiers, reservations.

No simulation here; every world that rents instances bills through :class:`broker.pricing.billing.Billing`.
"""
