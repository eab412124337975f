"""Ed25519 keys as openssl writes them; every other key or file is one line naming what it is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from harness.errors import InputError
from harness.provenance.keys import load_private_key, load_public_key
from tests.provenance.conftest import write_key_pair


def test_a_key_signs_and_its_public_half_verifies(tmp_path: Path) -> None:
    private, public = write_key_pair(tmp_path)
    key, pub = load_private_key(private), load_public_key(public)
    assert key.public.fingerprint == pub.fingerprint and pub.fingerprint.startswith("sha256:")
    signature = key.sign(b"statement")
    assert pub.verifies(signature, b"statement")
    assert not pub.verifies(signature, b"statement!"), "a signature over other bytes never verifies"
    other = load_public_key(write_key_pair(tmp_path, "other")[1])
    assert not other.verifies(signature, b"statement"), "nor with another key"


def _pem(key: object, private: bool) -> bytes:
    if private:
        return key.private_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    return key.public_key().public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (lambda: _pem(rsa.generate_private_key(65537, 2048), True), "an RSA key; statements are signed with ed25519"),
        (lambda: _pem(ec.generate_private_key(ec.SECP256R1()), True), "an EC key"),
        (lambda: b"hello", "not a PEM private key"),
        (lambda: _pem(ec.generate_private_key(ec.SECP256R1()), False), "that is a public key"),
        (lambda: b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "not a readable PEM private key"),
        (lambda: b"x" * 100_000, "is not a key file"),
    ],
)
def test_what_is_not_an_ed25519_private_key_is_one_line(tmp_path: Path, content, said: str) -> None:
    path = tmp_path / "KEY.pem"
    path.write_bytes(content())
    with pytest.raises(InputError) as err:
        load_private_key(path)
    assert said in str(err.value) and "\n" not in str(err.value)


def test_an_encrypted_key_or_a_missing_file_is_one_line(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = tmp_path / "KEY.pem"
    path.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    with pytest.raises(InputError, match="the key is encrypted"):
        load_private_key(path)
    with pytest.raises(InputError, match="no such key file"):
        load_private_key(tmp_path / "absent.pem")


def test_a_public_key_file_must_hold_a_public_ed25519_key(tmp_path: Path) -> None:
    private, _ = write_key_pair(tmp_path)
    with pytest.raises(InputError, match=r"a private key; trust\.toml holds public keys only"):
        load_public_key(private)
    path = tmp_path / "rsa.pub"
    path.write_bytes(_pem(rsa.generate_private_key(65537, 2048), False))
    with pytest.raises(InputError, match=r"an RSA key; trust\.toml takes ed25519 keys"):
        load_public_key(path)


@pytest.mark.slow  # runs openssl
def test_keys_openssl_writes_are_read_and_its_fingerprint_matches_openssls(tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl here")
    private, public = tmp_path / "KEY.pem", tmp_path / "KEY.pub"
    subprocess.run([openssl, "genpkey", "-algorithm", "ed25519", "-out", str(private)], check=True)
    subprocess.run([openssl, "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True)
    der = subprocess.run(
        [openssl, "pkey", "-pubin", "-in", str(public), "-outform", "DER"], check=True, capture_output=True
    ).stdout
    import hashlib

    key = load_private_key(private)
    assert load_public_key(public).fingerprint == key.public.fingerprint == "sha256:" + hashlib.sha256(der).hexdigest()
    # and openssl itself verifies what the harness signed (raw ed25519 over the message)
    message = tmp_path / "message"
    message.write_bytes(b"DSSEv1 payload")
    (tmp_path / "sig").write_bytes(key.sign(message.read_bytes()))
    done = subprocess.run(
        [openssl, "pkeyutl", "-verify", "-pubin", "-inkey", str(public), "-rawin", "-in", str(message),
         "-sigfile", str(tmp_path / "sig")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
