"""Renderers: each reads the matrix model (matrix.json) only."""
