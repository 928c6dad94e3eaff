"""Elastic provisioning with SARSA and an echo state network (``SPEC.md`` §6).

A pool of cores as a world on the kernel; the rules a site runs, the learner, the metrics, the
Gymnasium environment, sweeps and figures.
"""
