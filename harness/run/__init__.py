"""The run wing: runs the suites for one backend and torch build and writes a cell dir (harness/cell.py)."""
