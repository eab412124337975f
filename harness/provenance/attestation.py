"""`harness attest`: sign a cell's statement and put it in the cell as provenance.json, with an
ed25519 key (a DSSE envelope) or, in GitHub Actions, keyless with the workflow's identity (a
Sigstore bundle). Written whole (harness/outputs.py): a cell holds its old statement or its new one."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness import outputs
from harness.cell import MANIFEST, STATEMENT, CellStatus, read_manifest
from harness.errors import InputError
from harness.provenance import dsse
from harness.provenance.keys import PrivateKey
from harness.provenance.statement import cell_content, make_statement


@dataclass(frozen=True)
class Attested:
    path: Path
    digest: str  # the canonical content's sha256
    files: int
    signer: str  # "key sha256:..." or "Sigstore (keyless)"


def attest_cell(
    cell: Path,
    *,
    key: PrivateKey | None,
    keyless: Callable[[bytes], bytes] | None = None,
    suites_tree: str | None = None,
    run_url: str | None = None,
) -> Attested:
    """Sign the statement of `cell` with `key`, or with `keyless` (a function that signs a payload into
    a Sigstore bundle) when no key is given. Everything is read and signed before anything is written."""
    cell = Path(cell)
    if not (cell / MANIFEST).is_file():
        raise InputError(f"{cell}: not a cell dir (no manifest.json)", hint="attest the folder `harness run` wrote")
    manifest = read_manifest(cell / MANIFEST)
    if manifest.status is CellStatus.RUNNING:
        raise InputError(f"{cell}: its run has not ended (manifest status: running): attest it after the run")
    content = cell_content(cell)
    statement = make_statement(manifest, content, suites_tree=suites_tree, run_url=run_url)
    if key is not None:
        data = json.dumps(dsse.sign(statement, key).to_json(), indent=1).encode("utf-8") + b"\n"
        signer = f"key {key.public.fingerprint}"
    else:
        assert keyless is not None, "attest_cell needs a key or a keyless signer"
        data = keyless(statement)
        signer = "Sigstore (keyless)"
    outputs.sweep(cell)  # a killed attest's temp file
    outputs.write_file(cell / STATEMENT, data)
    return Attested(path=cell / STATEMENT, digest=content.digest, files=len(content.files), signer=signer)
