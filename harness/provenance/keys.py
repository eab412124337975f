"""Ed25519 keys for runners without OIDC: a private key in PEM (what `openssl genpkey -algorithm
ed25519` writes) signs; its public half (PEM, `openssl pkey -in KEY.pem -pubout`), kept in
trust.toml, verifies. The maths is the `cryptography` library's; nothing here is hand-rolled.

A key's fingerprint is `sha256:` and the hex SHA-256 of its DER SubjectPublicKeyInfo, so anyone can
recompute it: `openssl pkey -pubin -in KEY.pub -outform DER | sha256sum`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from harness.errors import InputError
from harness.regular_file import read_regular

MAX_KEY_FILE: Final = 64 * 1024  # a PEM key is a few hundred bytes
_GENERATE: Final = "make one with: openssl genpkey -algorithm ed25519 -out KEY.pem"


@dataclass(frozen=True)
class PublicKey:
    """An ed25519 public key, as trust.toml holds it."""

    key: Ed25519PublicKey

    @property
    def der(self) -> bytes:
        return self.key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)

    @property
    def fingerprint(self) -> str:
        return "sha256:" + hashlib.sha256(self.der).hexdigest()

    @property
    def pem(self) -> str:
        return self.key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def verifies(self, signature: bytes, data: bytes) -> bool:
        try:
            self.key.verify(signature, data)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class PrivateKey:
    key: Ed25519PrivateKey

    @property
    def public(self) -> PublicKey:
        return PublicKey(self.key.public_key())

    def sign(self, data: bytes) -> bytes:
        return self.key.sign(data)


def _read(path: Path, what: str) -> bytes:
    try:
        data = read_regular(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read the {what}: {err.strerror or err}") from None
    if len(data) > MAX_KEY_FILE:
        raise InputError(f"{path}: {len(data)} bytes is not a key file (a PEM key is a few hundred bytes)")
    return data


def _kind(key: object) -> str:
    return type(key).__name__.replace("_", "").removesuffix("PrivateKey").removesuffix("PublicKey") or "unknown"


def load_private_key(path: Path) -> PrivateKey:
    """The ed25519 private key in `path` (PEM); one InputError line for anything else."""
    data = _read(path, "key file")
    if b"PRIVATE KEY" not in data:
        hint = " (that is a public key: sign with its private half)" if b"PUBLIC KEY" in data else ""
        raise InputError(f"{path}: not a PEM private key{hint}", hint=_GENERATE)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise InputError(
            f"{path}: the key is encrypted; harness attest takes an unencrypted key file kept by the runner",
            hint="openssl pkey -in KEY.pem -out plain.pem",
        ) from None
    except (ValueError, UnsupportedAlgorithm) as err:
        reason = str(err).splitlines()[0]
        raise InputError(f"{path}: not a readable PEM private key ({reason})", hint=_GENERATE) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{path}: an {_kind(key)} key; statements are signed with ed25519 keys", hint=_GENERATE)
    return PrivateKey(key)


def public_key_from_pem(data: bytes, where: str) -> PublicKey:
    """An ed25519 public key from PEM text; `where` names it in the one-line error."""
    if b"PRIVATE KEY" in data:
        raise InputError(
            f"{where}: a private key; trust.toml holds public keys only",
            hint="openssl pkey -in KEY.pem -pubout -out KEY.pub",
        )
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as err:
        raise InputError(f"{where}: not a PEM public key ({str(err).splitlines()[0]})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"{where}: an {_kind(key)} key; trust.toml takes ed25519 keys", hint=_GENERATE)
    return PublicKey(key)


def load_public_key(path: Path) -> PublicKey:
    return public_key_from_pem(_read(path, "public key file"), str(path))
