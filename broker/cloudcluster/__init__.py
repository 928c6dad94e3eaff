"""A cluster run wholly on the cloud (``SPEC.md`` §7).

The world on the kernel, the P1-P6 and idle-timeout rules, the bill, sweeps and figures.
"""
