"""Cell format 2 (December 2026 on): the manifest says `"cell_format": 2`.

collected.json lists test ids per feature and scope (`{"count", "collect_errors", "groups":
[{"feature", "scope", "tests": [ids]}]}`), and a test that only passed is one `pass` event
(`{"event": "pass", "nodeid", "duration"}`); every other test ends with a `finish` event.
"""

from __future__ import annotations

from typing import Any, Final

from harness.ingest.cellformat_v1 import read_groups
from harness.outcomes import Scope

FORMAT: Final = 2
PLAIN_FINISH: Final = False


def read_collected_tests(data: dict[str, Any], plan: dict[str, tuple[str | None, Scope | None]]) -> None:
    if "groups" not in data:
        raise KeyError("groups (a format 2 cell lists its tests in groups)")
    read_groups(data["groups"], plan)
