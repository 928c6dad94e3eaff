"""Workloads, the bottom of the tree: SWF traces, the download cache, generators and the job views.

It imports nothing above it. It reads trace files and the price-book data files it ships; the
broker's own files (results, plans, demand series) are read and written by :mod:`broker.cli`.
"""
