"""Interpreters as data (harness/interpreters.py): keys, tags, the id rule, a cell's record, contradictions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.interpreters import (
    Interpreter,
    PythonKey,
    base_python,
    contradiction,
    id_tag,
    parse_python,
    python_key,
)

PROBE = Path(__file__).resolve().parents[2] / "suites" / "_support" / "probe.py"


@pytest.mark.parametrize(
    ("text", "label", "tag", "free"),
    [("3.15", "3.15", "cp315", False), ("3.14t", "3.14t", "cp314t", True), (" 3.11 ", "3.11", "cp311", False)],
)
def test_keys_read_as_the_registry_writes_them(text: str, label: str, tag: str, free: bool) -> None:
    key = parse_python(text)
    assert (key.label, key.tag, key.free_threaded) == (label, tag, free)
    assert key.program == f"python{label}"
    assert key.display == f"Python {label}"


@pytest.mark.parametrize("bad", ["3.14x", "3", "3.15.0", "2.7", "py3.15", "3.15tt", "cp315", "", "3.15rc1", "03.15"])
def test_anything_else_is_a_usage_error_naming_the_valid_keys(bad: str) -> None:
    with pytest.raises(UsageError, match=r"is not a Python like 3\.15 or 3\.14t.*valid keys: 3\.11, 3\.14t"):
        parse_python(bad, valid=["3.11", "3.14t"])
    assert python_key(bad) is None


def test_base_images_say_their_python() -> None:
    assert base_python("debian:bookworm-slim") == PythonKey(3, 11)
    assert base_python("ubuntu:24.04") == PythonKey(3, 12)
    assert base_python("torch-compat/local-base:forky") == PythonKey(3, 14)
    assert base_python("python:3.15-slim-bookworm") == PythonKey(3, 15), "the official image's own tag"
    assert base_python("registry.example/mirror/python:3.13-slim") == PythonKey(3, 13)
    assert base_python("example/unknown:1") is None


def test_the_id_rule_keeps_the_default_images_python_untagged() -> None:
    default = PythonKey(3, 11)
    assert id_tag(PythonKey(3, 11), default) is None
    assert id_tag(None, default) is None
    assert id_tag(PythonKey(3, 15), default) == "cp315"
    assert id_tag(PythonKey(3, 14, True), default) == "cp314t"


def test_a_record_says_its_key_and_an_older_one_says_nothing() -> None:
    record = Interpreter.from_json(
        {"version": "3.14.2", "implementation": "cpython", "abi": "cp314t", "free_threaded": True, "gil_enabled": False}
    )
    assert record is not None and record.key == PythonKey(3, 14, True)
    assert record.describe() == "CPython 3.14.2 (cp314t, free-threaded, GIL disabled after import torch)"
    assert Interpreter.from_json(record.to_json()) == record
    assert Interpreter.from_json({"version": "3.11.7"}) is None, "a version string alone is not a record"
    assert Interpreter.from_json("3.11.7") is None
    pypy = Interpreter.from_json({"version": "3.11.9", "implementation": "pypy", "abi": "pp311"})
    assert pypy is not None and pypy.key is None, "a column's Python is a CPython key"


def test_a_contradiction_is_one_line_naming_both() -> None:
    ran = Interpreter(version="3.11.7", implementation="cpython", abi="cp311", free_threaded=False)
    assert contradiction(None, ran) is None
    assert contradiction(PythonKey(3, 11), ran) is None
    assert contradiction(PythonKey(3, 15), ran) == "planned for Python 3.15, ran on CPython 3.11.7 (cp311)"
    assert contradiction(PythonKey(3, 15), None) == "planned for Python 3.15, and the cell recorded no interpreter"
    assert contradiction(PythonKey(3, 11, True), ran) is not None, "3.11t is not 3.11"


@pytest.mark.slow
def test_the_suites_probe_records_this_interpreter() -> None:
    """The real probe, run by this interpreter: its record reads back as this interpreter's key."""
    done = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, timeout=300, check=True)
    record = Interpreter.from_json(json.loads(done.stdout)["interpreter"])
    assert record is not None
    assert record.key == PythonKey(*sys.version_info[:2], free_threaded=record.free_threaded)
    assert record.abi == record.key.tag
    assert record.executable == sys.executable
