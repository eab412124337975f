"""Compatibility-matrix harness for PyTorch releases.

The harness never imports torch: it runs on any CI box and talks to the torch under test
only through subprocesses (pytest and the suites' probe script).
"""

__version__ = "0.1.0"
