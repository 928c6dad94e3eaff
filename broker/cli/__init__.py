"""The ``cloudbroker`` command line, one module per command (with the sweep store, what in ``broker`` writes files)."""

from broker.cli.app import app

__all__ = ["app"]
