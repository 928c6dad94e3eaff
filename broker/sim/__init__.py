"""The one simulation kernel and what every world shares.

The kernel, the instance ledger, the result shape, the recorder and the invariant checks.
"""
