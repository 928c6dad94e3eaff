"""CoH and CoH-R (``SPEC.md`` §3-§4).

The VM fleet world on the kernel, the portfolio policy, its integer program and exact path, metrics
and the one-call ``simulate``.
"""
