"""The cloud model, the tick engine, the policies, metrics and the ``cloudbroker`` CLI."""
