"""verify_cell: verified by whom, unverified, or invalid with one line naming what failed. Each part of
a signed cell is changed in turn and each change is caught."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cell import STATEMENT
from harness.ingest.cell_reader import ingest_cell
from harness.model import ProvenanceState
from harness.provenance.attestation import attest_cell
from harness.provenance.keys import load_private_key, load_public_key
from harness.provenance.trust import add_key
from harness.provenance.verify import MAX_STATEMENT, verify_cell
from tests.provenance.conftest import CELLS, Signed, sign_copy, write_key_pair


def test_a_signed_cell_is_verified_by_the_entry_that_allows_it(signed: Signed) -> None:
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.state is ProvenanceState.VERIFIED and verdict.by == "ACME lab"
    assert verdict.signer == f"key {load_public_key(signed.public).fingerprint[:19]}…"
    assert verdict.describe().startswith("verified: ACME lab (key sha256:")


def test_a_cell_without_a_statement_is_unverified(signed: Signed) -> None:
    (signed.cell / STATEMENT).unlink()
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.state is ProvenanceState.UNVERIFIED and verdict.describe() == "unverified: no statement"


def _first_pass_fails(cell: Path) -> None:
    """One outcome: the first test that passed now failed (an edit of the event log the merge reads)."""
    path = cell / "events.jsonl"
    lines = path.read_text().splitlines(True)
    at = next(i for i, line in enumerate(lines) if '"event": "pass"' in line)
    event = json.loads(lines[at])
    report = {"event": "report", "nodeid": event["nodeid"], "when": "call", "outcome": "failed",
              "duration": event["duration"], "message": "AssertionError", "longrepr": "x"}  # fmt: skip
    finish = {"event": "finish", "nodeid": event["nodeid"], "passed": {"setup": 0.0, "teardown": 0.0}}
    lines[at] = json.dumps(report) + "\n" + json.dumps(finish) + "\n"
    path.write_text("".join(lines))


def _one_duration(cell: Path) -> None:
    path = cell / "events.jsonl"
    text = path.read_text()
    at = text.index('"duration": ') + len('"duration": ')
    path.write_text(text[:at] + "9" + text[at:])


def _manifest(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def edit(cell: Path) -> None:
        data = json.loads((cell / "manifest.json").read_text())
        change(data)
        (cell / "manifest.json").write_text(json.dumps(data, indent=2))

    return edit


TAMPERING = {
    "one outcome": (_first_pass_fails, "events.jsonl changed since it was signed"),
    "one duration": (_one_duration, "events.jsonl changed since it was signed"),
    "a file added": (
        lambda c: (c / "faults-gw9.log").write_text("Fatal Python error"),
        "faults-gw9.log added after signing",
    ),
    "a file removed": (lambda c: (c / "collected.json").unlink(), "collected.json removed after signing"),
    "the manifest's build": (
        _manifest(lambda m: m["environment"].update(build="cuda")),
        "manifest.json changed since it was signed (torch.build 'cpu' -> 'cuda')",
    ),
    "the suites' hash": (
        _manifest(lambda m: m.update(suite_sha="0" * 40)),
        "manifest.json changed since it was signed (suites.sha '09692c38e3cc0842bac742d3ef29121018a3c5ed' -> "
        "'0000000000000000000000000000000000000000')",
    ),
    "a junit result": (
        lambda c: (c / "junit.xml").write_bytes(
            (c / "junit.xml").read_bytes().replace(b"<testcase", b"<testcase x='1'", 1)
        ),
        "junit.xml changed since it was signed",
    ),
}


@pytest.mark.parametrize("part", list(TAMPERING))
def test_each_change_to_a_signed_cell_is_caught(signed: Signed, part: str) -> None:
    change, said = TAMPERING[part]
    change(signed.cell)
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.state is ProvenanceState.INVALID
    assert verdict.reason == said


def test_the_changed_outcome_is_one_the_merge_would_show(signed: Signed) -> None:
    """The tampering above is real: the edited log makes a passed test failed in what the merge reads."""
    before = dict(
        zip(ingest_cell(signed.cell).nodeids, (r.outcome.value for r in ingest_cell(signed.cell).results), strict=True)
    )
    _first_pass_fails(signed.cell)
    read = ingest_cell(signed.cell)
    after = dict(zip(read.nodeids, (r.outcome.value for r in read.results), strict=True))
    changed = {k for k in after if after[k] != before.get(k)}
    assert len(changed) == 1 and after[changed.pop()] == "failed"


def test_a_signature_over_an_edited_statement_fails(signed: Signed) -> None:
    envelope = json.loads((signed.cell / STATEMENT).read_text())
    import base64

    payload = base64.b64decode(envelope["payload"]).replace(b'"backend":"cpu"', b'"backend":"cpx"')
    envelope["payload"] = base64.b64encode(payload).decode()
    (signed.cell / STATEMENT).write_text(json.dumps(envelope))
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.state is ProvenanceState.INVALID
    assert verdict.reason.startswith("the signature does not verify with key 'ACME lab'")


def test_a_key_trust_toml_does_not_list_or_does_not_allow_is_invalid(tmp_path: Path, signed: Signed) -> None:
    stranger = load_private_key(write_key_pair(tmp_path, "stranger")[0])
    attest_cell(signed.cell, key=stranger)
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.reason == f"signed by a key trust.toml does not list (keyid {stranger.public.fingerprint})"
    rocm_only = add_key(tmp_path / "rocm.toml", stranger.public, name="ROCm lab", backends=["rocm"], columns=[])
    verdict = verify_cell(signed.cell, rocm_only)
    assert verdict.state is ProvenanceState.INVALID
    assert verdict.reason == (
        f"signed by 'ROCm lab' (key {stranger.public.fingerprint[:19]}…), whom trust.toml allows for rocm, "
        "not for cpu (cpu-2.13.0)"
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is not json", "provenance.json: not JSON"),
        (b'{"attestation_bundles": [{}]}', "neither a DSSE envelope"),
        (
            b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}',
            "provenance.json: not a valid Sigstore bundle",
        ),
    ],
)
def test_a_statement_that_cannot_be_read_is_invalid(signed: Signed, content: bytes, said: str) -> None:
    if b"sigstore" in content:
        from tests.provenance.conftest import need_sigstore

        need_sigstore()
    (signed.cell / STATEMENT).write_bytes(content)
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.state is ProvenanceState.INVALID and said in (verdict.reason or "")


def test_a_huge_statement_or_a_linked_one_is_refused_unread(signed: Signed, tmp_path: Path) -> None:
    with (signed.cell / STATEMENT).open("r+b") as handle:
        handle.truncate(MAX_STATEMENT + 1)
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.reason == f"provenance.json is {MAX_STATEMENT + 1} bytes, more than a statement may be (4 MiB)"
    (signed.cell / STATEMENT).unlink()
    os.symlink("/etc/passwd", signed.cell / STATEMENT)
    assert verify_cell(signed.cell, signed.trust).reason == "provenance.json is a symbolic link, not a file"


def test_a_link_inside_a_signed_cell_is_invalid(signed: Signed) -> None:
    os.symlink("/etc/hostname", signed.cell / "faults-gw5.log")
    assert verify_cell(signed.cell, signed.trust).reason == "faults-gw5.log is a symbolic link: a cell holds files only"


def test_an_imported_cell_signs_and_verifies_with_its_junit_folder(tmp_path: Path) -> None:
    """A cell with files below it (junit/): the canonical content goes down into folders."""
    cell = tmp_path / "imported"
    shutil.copytree(CELLS / "cpu-2.13.0", cell)
    (cell / "junit").mkdir()
    (cell / "junit" / "001-report.xml.gz").write_bytes(b"\x1f\x8b...")
    made = sign_copy(cell, tmp_path / "signed")
    assert verify_cell(made.cell, made.trust).verified
    (made.cell / "junit" / "001-report.xml.gz").write_bytes(b"other")
    assert verify_cell(made.cell, made.trust).reason == "junit/001-report.xml.gz changed since it was signed"


def test_a_statement_no_reader_foresaw_costs_its_column_only(signed: Signed) -> None:
    """A hostile statement that breaks the JSON reader itself (nested a million deep: RecursionError)
    is that column's verdict, never the merge's end."""
    (signed.cell / STATEMENT).write_text("[" * 1_000_000 + "]" * 1_000_000)
    verdict = verify_cell(signed.cell, signed.trust)
    assert verdict.state is ProvenanceState.INVALID
    assert verdict.reason.startswith("provenance.json: cannot be checked (RecursionError: ")
