"""The one simulation kernel and what every world shares.

The kernel, the World protocol and the copies of a paused world, the instance ledger, the result shape,
the recorder and the invariant checks.
"""
