"""The publish wing: reads the matrix model (harness/model.py) and writes the summary, page, badges, diffs and gate."""
