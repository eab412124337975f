"""docs/reliability.md's table matches tests/faults one to one: every fault test has exactly
one row, and every row names a test that exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.faults.conftest import REPO

DOC = REPO / "docs" / "reliability.md"
FAULTS = REPO / "tests" / "faults"
_ROW_TEST_RE = re.compile(r"`(test_[a-z_]+\.py)::(test_[A-Za-z0-9_]+)`")


def fault_tests() -> set[str]:
    found: set[str] = set()
    for path in sorted(FAULTS.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found |= {f"{path.name}::{node.name}" for node in tree.body if isinstance(node, ast.FunctionDef)}
    return {name for name in found if name.split("::")[1].startswith("test_")}


def table_rows() -> list[str]:
    return [line for line in DOC.read_text(encoding="utf-8").splitlines() if re.match(r"^\| \d+ \|", line)]


def test_every_fault_test_has_exactly_one_row() -> None:
    named = [f"{m.group(1)}::{m.group(2)}" for row in table_rows() for m in _ROW_TEST_RE.finditer(row)]
    assert sorted(named) == sorted(set(named)), "a test is listed twice"
    assert set(named) == fault_tests()


def test_every_issue_point_has_rows() -> None:
    points = {int(row.split("|")[1]) for row in table_rows()}
    assert points == set(range(1, 10))


def test_container_rows_point_to_a_real_file() -> None:
    container_rows = [row for row in table_rows() if int(row.split("|")[1]) in (3, 9)]
    assert container_rows and all("tests/docker/test_container_faults.py" in row for row in container_rows)
    assert (REPO / "tests" / "docker" / "test_container_faults.py").is_file()
