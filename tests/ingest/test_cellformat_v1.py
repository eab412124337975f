"""Cell format 1 (harness/ingest/cellformat_v1.py): the plan from collected.json's one object per
test (the committed real cells), and, since the last unversioned writer already wrote them, from
`groups` too; entries that are not the plugin's are left out of the plan."""

from __future__ import annotations

import json
from typing import Any

from harness.ingest.cellformat_v1 import read_collected_tests
from harness.outcomes import Scope
from tests.committed import CELLS, as_tests


def _collected() -> dict[str, Any]:
    """A real cell's plan as format 1 wrote it (one object per test)."""
    return as_tests(json.loads((CELLS / "cpu-2.13.0" / "collected.json").read_text(encoding="utf-8")))


def _plan(data: dict[str, Any]) -> dict[str, tuple[str | None, Scope | None]]:
    plan: dict[str, tuple[str | None, Scope | None]] = {}
    read_collected_tests(data, plan)
    return plan


def test_the_per_test_layout_of_a_real_cell() -> None:
    data = _collected()
    plan = _plan(data)
    assert list(plan) == [t["nodeid"] for t in data["tests"]] and len(plan) == data["count"]
    assert all(plan[t["nodeid"]] == (t["feature"], Scope(t["scope"])) for t in data["tests"])
    assert {scope for _, scope in plan.values()} == {Scope.BACKEND, Scope.HOST, Scope.MEASUREMENT}


def test_the_groups_layout_reads_to_the_same_plan() -> None:
    groups = json.loads((CELLS / "cpu-2.13.0" / "collected.json").read_text(encoding="utf-8"))
    assert _plan(groups) == _plan(_collected())


def test_entries_that_are_not_the_plugins_are_left_out() -> None:
    plan = _plan(
        {
            "tests": [
                {"nodeid": "a::t1", "feature": "a", "scope": "host"},
                {"feature": "a"},
                "a::not-an-object",
                {"nodeid": "a::t2", "feature": "", "scope": "nonsense"},
                {"nodeid": "a::t3"},
            ]
        }
    )
    assert plan == {"a::t1": ("a", Scope.HOST), "a::t2": (None, None), "a::t3": (None, None)}
