"""A local cluster that leases cloud nodes (``SPEC.md`` §5).

The hybrid site world, the leasing policies (constant, random, Q-learning, epsilon-greedy), the
balance metrics, sweeps and figures.
"""
