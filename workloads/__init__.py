"""Workloads: trace readers, the download cache, generators and the broker's job view.

This is the only package that reads files.
"""
