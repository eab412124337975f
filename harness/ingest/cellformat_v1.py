"""Cell format 1: cells written before the format was versioned (no `cell_format` in the manifest).

collected.json listed one object per test (`"tests": [{"nodeid", "feature", "scope"}]`), and every
test ended with a `finish` event carrying its passed phases. The last unversioned writer (Dec 2026)
already wrote `groups` and `pass` lines, so this reader takes both layouts: an unversioned cell is
read as whatever it holds.
"""

from __future__ import annotations

import sys
from itertools import repeat
from typing import Any, Final

from harness.outcomes import Scope

FORMAT: Final = 1
PLAIN_FINISH: Final = True
_SCOPES: Final = {s.value: s for s in Scope}


def read_collected_tests(data: dict[str, Any], plan: dict[str, tuple[str | None, Scope | None]]) -> None:
    groups = data.get("groups")
    if groups is not None:
        read_groups(groups, plan)
        return
    shared: dict[tuple, tuple] = {}
    for entry in data["tests"]:
        try:
            nodeid, key = entry["nodeid"], (entry.get("feature") or None, entry.get("scope"))
            # One (feature, scope) per kind, shared: 50,000 tests, a handful of features.
            found = shared.get(key)
            if found is None:
                found = shared[key] = (key[0], _SCOPES.get(key[1]))
            plan[nodeid] = found
        except (KeyError, TypeError, AttributeError):
            continue  # not an entry of the plugin's: left out of the plan


def read_groups(groups: Any, plan: dict[str, tuple[str | None, Scope | None]]) -> None:
    """`groups`: one list of ids per feature and scope. A hostile group (not an object, ids that
    are not strings) is left out of the plan, the rest planned."""
    if not isinstance(groups, list):
        raise TypeError(f"`groups` is a {type(groups).__name__}, not a list")
    for group in groups:
        ids = group.get("tests") if isinstance(group, dict) else None
        if not isinstance(ids, list):
            continue  # not a group of the plugin's: left out of the plan
        feature, scope = group.get("feature"), group.get("scope")
        planned = (
            sys.intern(feature) if isinstance(feature, str) and feature else None,
            _SCOPES.get(scope) if isinstance(scope, str) else None,
        )
        if not all(map(isinstance, ids, repeat(str))):
            ids = [nodeid for nodeid in ids if isinstance(nodeid, str)]
        plan.update(dict.fromkeys(ids, planned))  # one shared tuple per group, set in C
