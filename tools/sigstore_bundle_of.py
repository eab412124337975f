"""A PyPI attestation as the Sigstore bundle it is: the recorded fixtures of tests/data/sigstore/.

    python tools/sigstore_bundle_of.py tests/data/sigstore/NAME.provenance > tests/data/sigstore/NAME.sigstore.json

PyPI's integrity API (PEP 740) serves each attestation as `{version, verification_material:
{certificate, transparency_entries}, envelope: {statement, signature}}`: the parts of a Sigstore
bundle (v0.3) over a DSSE envelope of an in-toto statement, renamed. This puts them back in the
bundle's own shape, unchanged (the certificate, the log entries, the signature and the statement's
bytes are copied as they are), so the harness checks them exactly as it checks a bundle that
`harness attest` made in GitHub Actions. tests/provenance/test_sigstore_bundle.py checks that the
committed bundles are what this prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def bundle_of(provenance: dict[str, Any]) -> dict[str, Any]:
    """The first attestation of a PyPI provenance object as a Sigstore bundle (v0.3)."""
    attestation = provenance["attestation_bundles"][0]["attestations"][0]
    material = attestation["verification_material"]
    return {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {
            "certificate": {"rawBytes": material["certificate"]},
            "tlogEntries": material["transparency_entries"],
        },
        "dsseEnvelope": {
            "payload": attestation["envelope"]["statement"],
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"sig": attestation["envelope"]["signature"]}],
        },
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    provenance = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print(json.dumps(bundle_of(provenance), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
