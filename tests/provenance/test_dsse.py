"""The DSSE envelope: PAE as the spec gives it, a round trip, and what is not an envelope."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.provenance import dsse
from harness.provenance.keys import load_private_key, load_public_key
from tests.provenance.conftest import write_key_pair


def test_pae_is_the_specs_encoding() -> None:
    # the example of the DSSE protocol document
    assert dsse.pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_an_envelope_round_trips_and_binds_payload_and_type(tmp_path: Path) -> None:
    private, public = write_key_pair(tmp_path)
    key, pub = load_private_key(private), load_public_key(public)
    envelope = dsse.sign(b'{"_type": "x"}', key)
    read = dsse.read_envelope(json.dumps(envelope.to_json()).encode(), "provenance.json")
    assert read == envelope and read.signed_by(pub)
    assert read.signatures[0].keyid == pub.fingerprint
    other_type = dsse.Envelope(read.payload, "text/plain", read.signatures)
    assert not other_type.signed_by(pub), "the payload type is signed too"
    other_payload = dsse.Envelope(b'{"_type": "y"}', read.payload_type, read.signatures)
    assert not other_payload.signed_by(pub)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "neither a DSSE envelope"),
        (b'{"attestation_bundles": []}', "but a PyPI attestation"),
        (b'{"payloadType": "a", "payload": "!!!", "signatures": [{"sig": "AA=="}]}', "its payload is not base64"),
        (b'{"payloadType": "a", "payload": "", "signatures": []}', "has no signatures"),
        (b'{"payloadType": "a", "payload": "", "signatures": ["x"]}', "a signature is not a JSON object"),
    ],
)
def test_what_is_not_an_envelope_is_one_line(raw: bytes, said: str) -> None:
    with pytest.raises(InputError) as err:
        dsse.read_envelope(raw, "provenance.json")
    assert said in str(err.value) and str(err.value).startswith("provenance.json: ")


def test_url_safe_base64_is_read() -> None:
    payload = bytes(range(250, 256)) * 3
    raw = json.dumps(
        {
            "payloadType": "t",
            "payload": base64.urlsafe_b64encode(payload).decode().rstrip("="),
            "signatures": [{"sig": "AA"}],
        }
    ).encode()
    assert dsse.read_envelope(raw, "p").payload == payload
