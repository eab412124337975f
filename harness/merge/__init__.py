"""The merge wing: combines the records of many cells (read by harness/ingest/) into the matrix model
(harness/model.py)."""
