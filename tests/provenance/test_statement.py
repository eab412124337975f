"""The statement: its subject is the digest of the canonical content, its predicate says what ran."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from harness.cell import STATEMENT, canonical_files, read_manifest
from harness.errors import InputError
from harness.provenance.statement import (
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    cell_content,
    make_statement,
    read_statement,
    suites_tree_digest,
    what_changed,
)
from tests.provenance.conftest import CELLS


def test_the_digest_is_sha256sums_listing_of_the_files_in_order(tmp_path: Path) -> None:
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell")
    content = cell_content(cell)
    listing = "".join(f"{hashlib.sha256((cell / n).read_bytes()).hexdigest()}  {n}\n" for n in canonical_files(cell))
    assert content.listing.decode() == listing
    assert content.digest == hashlib.sha256(listing.encode()).hexdigest()
    (cell / STATEMENT).write_text("{}")
    (cell / ".harness-tmp-1-x-manifest.json").write_text("half")
    assert cell_content(cell) == content, "the statement and outputs.py's own files are not content"


def test_the_statement_is_an_in_toto_statement_of_what_ran(tmp_path: Path) -> None:
    cell = CELLS / "cpu-2.13.0"
    manifest = read_manifest(cell / "manifest.json")
    content = cell_content(cell)
    raw = make_statement(manifest, content, suites_tree="sha256:abc", run_url="https://example.org/run/1")
    assert raw == make_statement(manifest, content, suites_tree="sha256:abc", run_url="https://example.org/run/1")
    data = json.loads(raw)
    assert data["_type"] == STATEMENT_TYPE and data["predicateType"] == PREDICATE_TYPE
    assert data["subject"] == [{"name": f"cell:cpu-2.13.0/{manifest.run_id}", "digest": {"sha256": content.digest}}]
    predicate = data["predicate"]
    assert predicate["cell"]["backend"] == "cpu" and predicate["cell"]["status"] == "completed"
    assert predicate["suites"]["sha"] == manifest.suite_sha and predicate["suites"]["commit"] == manifest.suite_sha
    assert predicate["suites"]["tree"] == "sha256:abc"
    assert predicate["harness_version"] == manifest.harness_version
    assert predicate["image"] == "native" and manifest.mode == "native"
    assert predicate["torch"]["version"] == "2.13.0+cpu" and predicate["torch"]["build"] == "cpu"
    assert predicate["device"]["accelerator"] == manifest.environment.to_json()["accelerator"]
    assert predicate["runner"]["host"] == manifest.runner.host
    assert predicate["run_url"] == "https://example.org/run/1"
    assert predicate["files"] == dict(content.files)
    read = read_statement(raw, "p")
    assert read.covers(content.digest) and read.files == dict(content.files)


def test_the_suites_tree_digest_follows_the_files_not_the_checkout(tmp_path: Path) -> None:
    suites = tmp_path / "suites"
    (suites / "amp").mkdir(parents=True)
    (suites / "amp" / "test_a.py").write_text("def test_a(): pass\n")
    first = suites_tree_digest(suites)
    (suites / "amp" / "__pycache__").mkdir()
    (suites / "amp" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert suites_tree_digest(suites) == first
    (suites / "amp" / "test_a.py").write_text("def test_a(): assert 0\n")
    assert suites_tree_digest(suites) != first


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        (b"\xff", "not JSON"),
        (b'{"_type": "https://in-toto.io/Statement/v0.1"}', "not an in-toto Statement v1"),
        (
            b'{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "x", "digest": {"sha1": "a"}}]}',
            "no sha256 subject",
        ),
    ],
)
def test_a_payload_that_is_no_statement_is_one_line(payload: bytes, said: str) -> None:
    with pytest.raises(InputError, match=said):
        read_statement(payload, "provenance.json")


def test_what_changed_names_files_and_manifest_facts(tmp_path: Path) -> None:
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell")
    manifest = read_manifest(cell / "manifest.json")
    statement = read_statement(make_statement(manifest, cell_content(cell)), "p")
    (cell / "faults-gw7.log").write_text("x")
    (cell / "collected.json").unlink()
    data = json.loads((cell / "manifest.json").read_text())
    data["environment"]["build"] = "cuda"
    (cell / "manifest.json").write_text(json.dumps(data))
    said = what_changed(statement, cell_content(cell), read_manifest(cell / "manifest.json"))
    assert said == (
        "manifest.json changed since it was signed (torch.build 'cpu' -> 'cuda'); faults-gw7.log added after "
        "signing; collected.json removed after signing"
    )
