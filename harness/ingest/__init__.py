"""The ingest wing: reads one cell dir (any cell format) into one record per logical test; writes nothing."""
