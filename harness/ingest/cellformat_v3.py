"""Cell format 3 (December 2026 on): a cell `harness import` made from another CI's JUnit.

The JUnit is read once, at import time, and its tests decided there (the identity and retry
rules of docs/outcomes.md); events.jsonl then holds what the merge needs, as compact as a run's
own log: a `pass` line per test that simply passed (`{"event": "pass", "nodeid", "duration"}`),
a `result` line per other test (`{"event": "result", "nodeid", "result": <the matrix's result
object>}`), a `read_error` / `note` line per thing the import found wrong in its files or said
about them, between `session_start` and `session_finish`. collected.json's `groups` (as format 2)
list only the tests whose report named their feature or scope (the project's own JUnit carries
them as properties); the cell's feature map places the others. The original files are kept
gzipped under junit/ for provenance; the merge never reads them. An older harness refuses the
format with one line instead of reading the cell without its results.
"""

from __future__ import annotations

from typing import Any, Final

from harness.ingest.cellformat_v1 import read_groups
from harness.outcomes import Scope

FORMAT: Final = 3
PLAIN_FINISH: Final = False


def read_collected_tests(data: dict[str, Any], plan: dict[str, tuple[str | None, Scope | None]]) -> None:
    if "groups" not in data:
        raise KeyError("groups (a format 3 cell lists its tests in groups)")
    read_groups(data["groups"], plan)
