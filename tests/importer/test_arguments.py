"""The import's argument and input checks (harness/importer/arguments.py), one rule each, checked before
anything is written; the whole door (harness import end to end) is in tests/faults/test_import_faults.py
and tests/importer/test_junit_import.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from harness.errors import InputError, UsageError
from harness.importer import arguments as importcheck


def test_the_cell_id_is_a_usage_error_when_bad() -> None:
    assert importcheck.check_cell_id("vendor-cu132") == "vendor-cu132"
    for bad in ("x\n", "", "-x", "a b", "x" * 129):
        with pytest.raises(UsageError, match="--cell-id"):
            importcheck.check_cell_id(bad)


def test_a_backend_is_a_build_variant_never_a_family() -> None:
    assert importcheck.check_backend("cu132").id == "cu132"
    assert importcheck.check_backend("cu134").id == "cu134", "recognised by its name"
    for bad in ("cuda", "tpu", "cu13\n2"):
        with pytest.raises(UsageError, match="is not a build variant"):
            importcheck.check_backend(bad)


def test_torch_and_urls_and_texts() -> None:
    assert str(importcheck.check_torch("2.15.0+cu132")) == "2.15.0+cu132" and importcheck.check_torch("") is None
    with pytest.raises(UsageError, match="is not a torch version"):
        importcheck.check_torch("latest")
    assert importcheck.check_url("https://ci.example/run/1") == "https://ci.example/run/1"
    for bad in ("javascript:alert(1)", "ftp://x/y", "https://", "https://x/ y"):
        with pytest.raises(UsageError, match="is not an http or https URL"):
            importcheck.check_url(bad)
    with pytest.raises(UsageError, match="one line"):
        importcheck.check_text("--device", "H200\nevil")


def test_inputs_are_regular_files_named_as_what_they_are(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text("<testsuite/>")
    importcheck.check_input(report)
    (tmp_path / "link.xml").symlink_to(report)
    os.mkfifo(tmp_path / "pipe.xml")
    cases = {"link.xml": "a symbolic link", ".": "a directory", "pipe.xml": "a FIFO (named pipe)"}
    for name, what in cases.items():
        with pytest.raises(InputError, match=re.escape(f"is {what}, not a file")):
            importcheck.check_input(tmp_path / name)
    with pytest.raises(InputError, match="no such file"):
        importcheck.check_input(tmp_path / "missing.xml")


def test_opening_never_follows_a_link(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("token")
    (tmp_path / "report.xml").symlink_to(secret)
    with pytest.raises(InputError, match="symbolic link"):
        importcheck.open_input(tmp_path / "report.xml")
    real = tmp_path / "real.xml"
    real.write_text("<testsuite/>")
    with importcheck.open_input(real) as handle:
        assert handle.read() == b"<testsuite/>"


def test_copied_names_are_numbered_safe_and_short() -> None:
    assert importcheck.copied_name(1, Path("TEST-a.b.xml")) == "001-TEST-a.b.xml"
    long = importcheck.copied_name(2, Path("r" * 300 + ".xml"))
    assert long.startswith("002-") and len(long) == len("002-") + importcheck.NAME_CAP + len(".xml")
    assert importcheck.copied_name(3, Path("../../etc/pass wd.xml")) == "003-pass_wd.xml"
