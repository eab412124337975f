"""harness attest's writer: provenance.json written whole; a cell still running is refused unwritten."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cell import STATEMENT
from harness.errors import InputError
from harness.provenance.attestation import attest_cell
from harness.provenance.keys import load_private_key
from tests.provenance.conftest import CELLS, write_key_pair


def test_a_cell_is_signed_again_in_one_rename_and_a_temp_file_of_a_killed_one_goes(tmp_path: Path) -> None:
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell")
    key = load_private_key(write_key_pair(tmp_path)[0])
    first = attest_cell(cell, key=key)
    assert first.path == cell / STATEMENT and first.files == 7 and first.signer == f"key {key.public.fingerprint}"
    (cell / ".harness-tmp-999999-dead-provenance.json").write_text("{")  # a killed attest's temp file
    again = attest_cell(cell, key=key, run_url="https://example.org/r/2")
    assert again.digest == first.digest, "the statement is not content: signing again signs the same cell"
    assert not list(cell.glob(".harness-tmp-*"))
    envelope = json.loads((cell / STATEMENT).read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"


def test_keyless_signing_gets_the_statement_and_writes_what_it_returns(tmp_path: Path) -> None:
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell")
    seen: list[bytes] = []

    def keyless(payload: bytes) -> bytes:
        seen.append(payload)
        return b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}'

    done = attest_cell(cell, key=None, keyless=keyless)
    assert json.loads(seen[0])["subject"][0]["digest"]["sha256"] == done.digest
    assert (cell / STATEMENT).read_bytes().startswith(b'{"mediaType"') and done.signer == "Sigstore (keyless)"


def test_a_running_cell_or_a_folder_without_a_manifest_is_refused_unwritten(tmp_path: Path) -> None:
    key = load_private_key(write_key_pair(tmp_path)[0])
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell")
    data = json.loads((cell / "manifest.json").read_text())
    data["status"] = "running"
    (cell / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="its run has not ended"):
        attest_cell(cell, key=key)
    assert not (cell / STATEMENT).exists()
    with pytest.raises(InputError, match="not a cell dir"):
        attest_cell(tmp_path, key=key)
