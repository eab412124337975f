"""Renderers: each reads the matrix model (matrix.json) only."""

DEFAULT_STALE_AFTER_HOURS = 168.0  # a column older than this shows STALE on the page
