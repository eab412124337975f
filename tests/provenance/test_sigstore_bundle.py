"""Keyless statements, checked on real Sigstore bundles recorded from public sources, offline.

tests/data/sigstore/README.md says where each came from: PyPI's attestations of two releases, published
by GitHub Actions workflows (trailofbits/pypi-attestations and sigstore/sigstore-python release.yml),
and one message signature (a file, no statement). Each is checked against the pinned trusted root with
every socket refused: a bundle verifies with its own identity over its own bytes, and is refused for
another identity, over other bytes, or changed."""

from __future__ import annotations

import base64
import hashlib
import json
import runpy
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cell import STATEMENT
from harness.errors import InfrastructureError, InputError
from harness.model import ProvenanceState
from harness.provenance import sigstore_bundle
from harness.provenance.statement import read_statement
from harness.provenance.trust import parse_trust
from harness.provenance.verify import verify_cell
from tests.conftest import REPO
from tests.provenance.conftest import CELLS, SIGSTORE, need_sigstore

PYPI_ATTESTATIONS = SIGSTORE / "pypi_attestations-0.0.19.tar.gz.sigstore.json"
SIGSTORE_PYTHON = SIGSTORE / "sigstore-3.6.1.tar.gz.sigstore.json"
SDIST = SIGSTORE / "pypi_attestations-0.0.19.tar.gz"
TRUST = """version = 1
[[identity]]
name = "pypi-attestations releases"
repository = "trailofbits/pypi-attestations"
workflow = ".github/workflows/release.yml"
ref = "refs/tags/v*"
backends = ["cpu"]
"""


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No network at all: a check that reached out would fail here."""
    need_sigstore()

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("the network is off in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield


def test_a_real_bundle_verifies_offline_over_its_own_bytes_and_names_its_workflow() -> None:
    verified = sigstore_bundle.verify_bundle(PYPI_ATTESTATIONS.read_bytes(), "bundle")
    signer = verified.signer
    assert signer.issuer == "https://token.actions.githubusercontent.com"
    assert signer.repository == "trailofbits/pypi-attestations" and signer.ref == "refs/tags/v0.0.19"
    assert signer.workflow == (
        "https://github.com/trailofbits/pypi-attestations/.github/workflows/release.yml@refs/tags/v0.0.19"
    )
    assert signer.run_url == "https://github.com/trailofbits/pypi-attestations/actions/runs/12169989787/attempts/1"
    statement = read_statement(sigstore_bundle.payload_is_statement(verified, "bundle"), "bundle")
    assert statement.covers(hashlib.sha256(SDIST.read_bytes()).hexdigest()), "over the sdist PyPI serves"
    (identity,) = parse_trust(TRUST, "trust.toml").identities
    assert sigstore_bundle.identity_matches(identity, signer)


def test_a_bundle_for_another_identity_is_refused() -> None:
    (identity,) = parse_trust(TRUST, "trust.toml").identities
    other = sigstore_bundle.verify_bundle(SIGSTORE_PYTHON.read_bytes(), "bundle").signer
    assert other.repository == "sigstore/sigstore-python"
    assert not sigstore_bundle.identity_matches(identity, other)
    same_repo_other_ref = parse_trust(TRUST.replace("refs/tags/v*", "refs/heads/main"), "t").identities[0]
    mine = sigstore_bundle.verify_bundle(PYPI_ATTESTATIONS.read_bytes(), "bundle").signer
    assert not sigstore_bundle.identity_matches(same_repo_other_ref, mine), "a ref trust.toml does not allow"


def test_a_bundle_over_other_bytes_is_refused() -> None:
    verified = sigstore_bundle.verify_bundle(SIGSTORE_PYTHON.read_bytes(), "bundle")
    statement = read_statement(verified.payload, "bundle")
    assert not statement.covers(hashlib.sha256(SDIST.read_bytes()).hexdigest())


def test_a_changed_bundle_does_not_verify() -> None:
    bundle = json.loads(PYPI_ATTESTATIONS.read_text())
    payload = base64.b64decode(bundle["dsseEnvelope"]["payload"])
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(payload.replace(b"9bb1add0", b"9bb1add1")).decode()
    with pytest.raises(InputError, match="the Sigstore bundle does not verify"):
        sigstore_bundle.verify_bundle(json.dumps(bundle).encode(), "provenance.json")


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("rfc8785-0.1.2-py3-none-any.whl.sigstore", "a Sigstore bundle over a file, not over a statement"),
        ("pypi_attestations-0.0.19.tar.gz.provenance", "not a Sigstore bundle (no application/vnd.dev.sigstore.bundle"),
    ],
)
def test_a_bundle_of_another_format_is_one_line(name: str, said: str) -> None:
    with pytest.raises(InputError) as err:
        sigstore_bundle.verify_bundle((SIGSTORE / name).read_bytes(), "provenance.json")
    assert said in str(err.value) and "\n" not in str(err.value)


def _cell_with(bundle: Path, folder: Path) -> Path:
    cell = shutil.copytree(CELLS / "cpu-2.13.0", folder / "cell")
    shutil.copy(bundle, cell / STATEMENT)
    return cell


def test_in_a_cell_another_identitys_bundle_is_invalid_naming_who_signed(tmp_path: Path) -> None:
    verdict = verify_cell(_cell_with(SIGSTORE_PYTHON, tmp_path), parse_trust(TRUST, "trust.toml"))
    assert verdict.state is ProvenanceState.INVALID
    assert verdict.reason == (
        "signed by github.com/sigstore/sigstore-python/.github/workflows/release.yml@refs/tags/v3.6.1, "
        "which trust.toml does not list"
    )


def test_in_a_cell_a_trusted_workflows_bundle_over_other_bytes_is_invalid(tmp_path: Path) -> None:
    verdict = verify_cell(_cell_with(PYPI_ATTESTATIONS, tmp_path), parse_trust(TRUST, "trust.toml"))
    assert verdict.state is ProvenanceState.INVALID
    assert verdict.reason.startswith("the statement is over other content (sha256 9bb1add04b1b…")
    narrower = parse_trust(TRUST.replace('backends = ["cpu"]', 'backends = ["rocm"]'), "t")
    verdict = verify_cell(_cell_with(PYPI_ATTESTATIONS, tmp_path / "2"), narrower)
    assert "whom trust.toml allows for rocm, not for cpu (cpu-2.13.0)" in verdict.reason


def test_the_committed_bundles_are_what_the_recording_tool_makes_of_pypis_attestations() -> None:
    tool = runpy.run_path(str(REPO / "tools" / "sigstore_bundle_of.py"))
    for name in ("pypi_attestations-0.0.19.tar.gz", "sigstore-3.6.1.tar.gz"):
        provenance = json.loads((SIGSTORE / f"{name}.provenance").read_text())
        assert tool["bundle_of"](provenance) == json.loads((SIGSTORE / f"{name}.sigstore.json").read_text())


def test_the_pinned_root_changes_are_said_one_line_each() -> None:
    old = json.loads(sigstore_bundle.TRUSTED_ROOT.read_text())
    assert sigstore_bundle.root_changes(old, old) == []
    new = json.loads(json.dumps(old))
    gone = new["tlogs"].pop(0)
    new["ctlogs"][-1]["publicKey"]["validFor"]["end"] = "2030-01-01T00:00:00Z"
    lines = sigstore_bundle.root_changes(old, new)
    assert lines[0].startswith(f"removed: transparency log {gone['baseUrl']} key ")
    assert lines[1].startswith("changed: certificate transparency log https://ctfe.sigstore.dev/2022")
    assert lines[1].endswith("to 2030-01-01T00:00:00Z") and len(lines) == 2


def test_without_the_sigstore_library_a_bundle_is_an_infrastructure_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sigstore", None)
    monkeypatch.setitem(sys.modules, "sigstore.models", None)
    with pytest.raises(InfrastructureError, match="the sigstore library is not installed"):
        sigstore_bundle.verify_bundle(PYPI_ATTESTATIONS.read_bytes(), "provenance.json")


def test_keyless_signing_without_an_identity_or_without_sigstores_services_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Outside GitHub Actions there is no OIDC token (exit 2, saying what to do); with a token but no
    way to Fulcio and Rekor (every socket refused here) it is exit 3, never a traceback."""
    from harness.errors import UsageError

    for name in ("ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "SIGSTORE_ID_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match="no OIDC identity here"):
        sigstore_bundle.sign_keyless(b"{}")
    with pytest.raises(InfrastructureError) as err:
        sigstore_bundle.sign_keyless(b"{}", token="not-a-jwt")
    assert str(err.value).startswith("Sigstore signing failed: ") and "\n" not in str(err.value)


def test_refreshing_the_root_where_tuf_cannot_be_reached_is_one_line() -> None:
    with pytest.raises(InfrastructureError) as err:
        sigstore_bundle.current_root()
    assert str(err.value).startswith("cannot reach Sigstore's TUF repository: ") and "--from FILE" in str(err.value)
