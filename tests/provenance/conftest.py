"""A signed cell to work on: a copy of a committed real cell, a real ed25519 key, a trust file.

Keys are made by the `cryptography` library in PKCS#8 PEM, the form `openssl genpkey -algorithm
ed25519` writes (the fast tier starts no subprocess; tests/provenance/test_keys.py reads a key the
openssl command itself wrote, in the slow tier)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.provenance.attestation import attest_cell
from harness.provenance.keys import load_private_key, load_public_key
from harness.provenance.trust import Trust, add_key
from tests.conftest import in_ci

CELLS = Path(__file__).resolve().parents[1] / "data" / "cells"
SIGSTORE = Path(__file__).resolve().parents[1] / "data" / "sigstore"


def write_key_pair(folder: Path, name: str = "vendor") -> tuple[Path, Path]:
    """KEY.pem and KEY.pub as openssl genpkey / openssl pkey -pubout write them."""
    key = Ed25519PrivateKey.generate()
    private = folder / f"{name}.pem"
    public = folder / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


@dataclass
class Signed:
    cell: Path
    key: Path
    public: Path
    trust_file: Path
    trust: Trust


def sign_copy(source: Path, folder: Path, *, backends: tuple[str, ...] = ("cpu",)) -> Signed:
    cell = folder / source.name
    shutil.copytree(source, cell)
    key, public = write_key_pair(folder)
    attest_cell(cell, key=load_private_key(key))
    trust_file = folder / "trust.toml"
    trust = add_key(trust_file, load_public_key(public), name="ACME lab", backends=list(backends), columns=[])
    return Signed(cell, key, public, trust_file, trust)


@pytest.fixture
def signed(tmp_path: Path) -> Signed:
    return sign_copy(CELLS / "cpu-2.13.0", tmp_path)


def need_sigstore() -> None:
    """The sigstore library is the `provenance` extra: CI installs it (.ci/run); elsewhere it may be absent."""
    try:
        import sigstore.verify  # noqa: F401
    except ImportError:
        if in_ci():
            pytest.fail("CI must check Sigstore bundles: pip install -e '.[provenance]'")
        pytest.skip("the sigstore library is not installed (pip install -e '.[provenance]')")
