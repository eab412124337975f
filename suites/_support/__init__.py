"""Helpers shared by the compatibility suites (probe, requirement gates, expectations, perf)."""
