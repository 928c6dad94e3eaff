"""The ``cloudbroker`` command line: one module per command; the only place in ``broker`` that reads or writes files."""

from broker.cli.app import app

__all__ = ["app"]
