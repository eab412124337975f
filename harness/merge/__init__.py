"""The merge wing: reads cell dirs (harness/cell.py) and builds the matrix model (harness/model.py)."""
