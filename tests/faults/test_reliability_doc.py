"""docs/reliability.md's table matches the fault tests one to one: every fault test (tests/faults
and the container faults) has exactly one row, and every row names a test that exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.faults.conftest import REPO

DOC = REPO / "docs" / "reliability.md"
FAULTS = REPO / "tests" / "faults"
CONTAINER_FAULTS = REPO / "tests" / "docker" / "test_container_faults.py"
_ROW_TEST_RE = re.compile(r"`((?:tests/[a-z_/]+/)?test_[a-z_]+\.py)::(test_[A-Za-z0-9_]+)`")


def _tests_in(path: Path, label: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        f"{label}::{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def fault_tests() -> set[str]:
    """Every fault test: tests/faults/* (named relative to it) and the container faults (full path)."""
    found: set[str] = set()
    for path in sorted(FAULTS.glob("test_*.py")):
        if path.name != Path(__file__).name:
            found |= _tests_in(path, path.name)
    return found | _tests_in(CONTAINER_FAULTS, str(CONTAINER_FAULTS.relative_to(REPO)))


def test_every_row_names_a_test_that_exists() -> None:
    for row in table_rows():
        for m in _ROW_TEST_RE.finditer(row):
            path = REPO / m.group(1) if m.group(1).startswith("tests/") else FAULTS / m.group(1)
            assert f"x::{m.group(2)}" in _tests_in(path, "x"), row


def table_rows() -> list[str]:
    return [line for line in DOC.read_text(encoding="utf-8").splitlines() if re.match(r"^\| \d+ \|", line)]


def test_every_fault_test_has_exactly_one_row() -> None:
    named = [f"{m.group(1)}::{m.group(2)}" for row in table_rows() for m in _ROW_TEST_RE.finditer(row)]
    assert sorted(named) == sorted(set(named)), "a test is listed twice"
    assert fault_tests() <= set(named), sorted(fault_tests() - set(named))


def test_every_issue_point_has_rows() -> None:
    points = {int(row.split("|")[1]) for row in table_rows()}
    assert points == set(range(1, 12))


def test_container_rows_name_container_tests() -> None:
    container_rows = [row for row in table_rows() if int(row.split("|")[1]) in (3, 9)]
    assert container_rows and all(
        "`tests/" in row and ("docker" in row or "container" in row) for row in container_rows
    )


def delivery_rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Delivery:") : text.index("## Known limits")]
    return [line for line in section.splitlines() if line.startswith("| ") and "`tests/" in line]


_DELIVERY_TEST_RE = re.compile(r"`(tests/[a-z_/]*test_[a-z_]+\.py)::(test_[A-Za-z0-9_]+)`")


def test_every_delivery_row_names_a_test_that_exists() -> None:
    rows = delivery_rows()
    assert len(rows) >= 20
    for row in rows:
        found = list(_DELIVERY_TEST_RE.finditer(row))
        assert found, row
        for m in found:
            assert f"x::{m.group(2)}" in _tests_in(REPO / m.group(1), "x"), row


def mistake_rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## A user's mistake") : text.index("## Delivery:")]
    return [line for line in section.splitlines() if line.startswith("| ") and "`tests/" in line]


def test_every_mistake_row_names_a_test_that_exists() -> None:
    """The user's mistakes (issue 42): each row names the tests that prove it, and they exist."""
    rows = mistake_rows()
    assert len(rows) >= 20
    for row in rows:
        found = list(_DELIVERY_TEST_RE.finditer(row))
        assert found, row
        for m in found:
            assert f"x::{m.group(2)}" in _tests_in(REPO / m.group(1), "x"), row
