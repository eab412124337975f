"""The DSSE envelope (https://github.com/secure-systems-lab/dsse, protocol v1) that carries a
key-signed statement: the payload and its type, base64, and each signature over PAE(type, payload),
so a signature can never be taken for one over other bytes or another payload type. The Sigstore
bundle of a keyless statement holds the same envelope (sigstore_bundle.py)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness.errors import InputError
from harness.provenance.keys import PrivateKey, PublicKey

PAYLOAD_TYPE: Final = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what a signature signs."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload: bytes
    payload_type: str
    signatures: tuple[Signature, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "payloadType": self.payload_type,
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "signatures": [{"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")} for s in self.signatures],
        }

    def signed_by(self, key: PublicKey) -> bool:
        """Some signature of the envelope is `key`'s over this payload and type."""
        message = pae(self.payload_type, self.payload)
        return any(key.verifies(s.sig, message) for s in self.signatures)


def sign(payload: bytes, key: PrivateKey, payload_type: str = PAYLOAD_TYPE) -> Envelope:
    signature = Signature(keyid=key.public.fingerprint, sig=key.sign(pae(payload_type, payload)))
    return Envelope(payload=payload, payload_type=payload_type, signatures=(signature,))


def _b64(value: Any, what: str, where: str) -> bytes:
    if not isinstance(value, str):
        raise InputError(f"{where}: {what} is not a base64 string")
    standard = value.replace("-", "+").replace("_", "/")  # DSSE allows the URL-safe alphabet too
    try:
        return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"{where}: {what} is not base64") from None


def read_envelope(raw: bytes, where: str) -> Envelope:
    """A DSSE envelope from its JSON; one InputError line naming `where` for anything else."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{where}: not JSON ({getattr(err, 'msg', err)})") from None
    neither = "neither a DSSE envelope (payloadType, payload, signatures) nor a Sigstore bundle (mediaType)"
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: {neither}")
    payload_type = data.get("payloadType")
    if not isinstance(payload_type, str) or "payload" not in data:
        what = " but a PyPI attestation" if "attestation_bundles" in data or "verification_material" in data else ""
        raise InputError(f"{where}: {neither}{what}")
    payload = _b64(data.get("payload"), "its payload", where)
    items = data.get("signatures")
    if not isinstance(items, list) or not items:
        raise InputError(f"{where}: the DSSE envelope has no signatures")
    signatures = []
    for item in items:
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: a signature is not a JSON object")
        keyid = item.get("keyid", "")
        sig = _b64(item.get("sig"), "a sig", where)
        signatures.append(Signature(keyid=keyid if isinstance(keyid, str) else "", sig=sig))
    return Envelope(payload=payload, payload_type=payload_type, signatures=tuple(signatures))
