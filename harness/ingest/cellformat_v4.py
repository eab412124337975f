"""Cell format 4 (December 2026 on): a cell `harness import` made, its plain passes batched.

As format 3 (harness/ingest/cellformat_v3.py: the JUnit read and decided once, at import time; the
originals kept gzipped under junit/ for provenance; collected.json's `groups` for the tests whose
report named their feature or scope), except that the tests that simply passed are written up to
a thousand to a line, `{"event": "passes", "nodeids": [...], "durations": [...]}` (the same
test ids and seconds as that many `pass` lines), beside a `result` line per other test and the
`read_error` / `note` lines, between `session_start` and `session_finish`. The merge reads such a
line in bulk, in about a tenth of the time of the pass lines it stands for. A harness that
knows only format 3 would skip the new lines without a word, so the format is new: it refuses the
cell with one line instead. This harness reads both.
"""

from __future__ import annotations

from typing import Final

from harness.ingest.cellformat_v3 import read_collected_tests

FORMAT: Final = 4
PLAIN_FINISH: Final = False

__all__ = ["FORMAT", "PLAIN_FINISH", "read_collected_tests"]
