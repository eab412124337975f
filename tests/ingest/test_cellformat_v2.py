"""Cell format 2 (harness/ingest/cellformat_v2.py): the plan from collected.json's `groups` (ids per
feature and scope); a `tests`-only collected.json is not this format's and is refused; hostile
groups and ids are left out, the rest planned."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.ingest.cellformat_v2 import read_collected_tests
from harness.outcomes import Scope
from tests.committed import CELLS, as_tests


def _plan(data: dict[str, Any]) -> dict[str, tuple[str | None, Scope | None]]:
    plan: dict[str, tuple[str | None, Scope | None]] = {}
    read_collected_tests(data, plan)
    return plan


def test_the_groups_of_a_real_cell() -> None:
    collected = json.loads((CELLS / "cu130-2.14.1-cpu-only" / "collected.json").read_text(encoding="utf-8"))
    plan = _plan(collected)
    tests = as_tests(collected)["tests"]
    assert list(plan) == [t["nodeid"] for t in tests] and len(plan) == collected["count"]
    assert all(plan[t["nodeid"]] == (t["feature"], Scope(t["scope"])) for t in tests)


def test_a_tests_only_collected_json_is_refused() -> None:
    with pytest.raises(KeyError, match="groups"):
        _plan({"count": 1, "tests": [{"nodeid": "a::t", "feature": "a", "scope": "backend"}]})


def test_groups_that_are_not_a_list_are_refused() -> None:
    with pytest.raises(TypeError, match="`groups` is a dict, not a list"):
        _plan({"groups": {"feature": "a"}})


def test_hostile_groups_and_ids_are_left_out() -> None:
    plan = _plan(
        {
            "groups": [
                {"feature": "a", "scope": "backend", "tests": ["a::t1", 5, None, "a::t2"]},
                "not a group",
                {"feature": "b", "tests": "a::not-a-list"},
                {"feature": ["x"], "scope": 3, "tests": ["c::t"]},
                {"feature": "d", "scope": "measurement", "tests": []},
            ]
        }
    )
    assert plan == {"a::t1": ("a", Scope.BACKEND), "a::t2": ("a", Scope.BACKEND), "c::t": (None, None)}
