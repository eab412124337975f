"""Is a cell what its statement says, signed by someone trust.toml allows for it? Offline.

verified: a statement over the cell's canonical content as it is now, whose signature verifies with a
key or a workflow identity trust.toml lists for the cell's backend or cell id. unverified: no
statement. invalid, with one line naming what failed: a statement that cannot be read or is too
large, a bad signature, a signer trust.toml does not list or does not allow for this backend, a
statement over other content (a result, a file, the manifest or the suites changed since signing).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.cell import MANIFEST, STATEMENT, Manifest, read_manifest
from harness.errors import InfrastructureError, InputError
from harness.model import Provenance, ProvenanceState
from harness.provenance.dsse import PAYLOAD_TYPE, read_envelope
from harness.provenance.statement import PREDICATE_TYPE, cell_content, read_statement, what_changed
from harness.provenance.trust import Scope, Trust
from harness.regular_file import read_regular

MAX_STATEMENT: Final = 4 << 20  # a statement lists every file of its cell: thousands fit in a MiB
UNSIGNED: Final = Provenance(state=ProvenanceState.UNVERIFIED, reason="no statement")


def invalid(reason: str) -> Provenance:
    return Provenance(state=ProvenanceState.INVALID, reason=reason)


def read_statement_file(path: Path) -> bytes:
    """A statement file's bytes: a regular file, within MAX_STATEMENT; InputError otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as err:
        raise InputError(f"{path.name}: cannot read: {err.strerror or err}") from None
    if stat.S_ISLNK(mode):
        raise InputError(f"{path.name} is a symbolic link, not a file")
    size = os.lstat(path).st_size
    if size > MAX_STATEMENT:
        raise InputError(f"{path.name} is {size} bytes, more than a statement may be ({MAX_STATEMENT >> 20} MiB)")
    try:
        raw = read_regular(path)
    except OSError as err:
        raise InputError(f"{path.name}: cannot read: {err.strerror or err}") from None
    if len(raw) > MAX_STATEMENT:  # it grew between the check and the read
        raise InputError(f"{path.name} is more than a statement may be ({MAX_STATEMENT >> 20} MiB)")
    return raw


@dataclass(frozen=True)
class _Signed:
    payload: bytes
    by: str
    signer: str
    scope: Scope
    run_url: str | None = None


def is_sigstore_bundle(raw: bytes) -> bool:
    """A Sigstore bundle (keyless) rather than a DSSE envelope (a key): bundles name their media type."""
    return b'"mediaType"' in raw[:4096] and b"application/vnd.dev.sigstore.bundle" in raw[:4096]


def _by_key(raw: bytes, trust: Trust) -> _Signed:
    envelope = read_envelope(raw, STATEMENT)
    if envelope.payload_type != PAYLOAD_TYPE:
        raise InputError(f"{STATEMENT}: its payload is {envelope.payload_type!r}, not an in-toto statement")
    named = [trust.key(s.keyid) for s in envelope.signatures]
    # The keyid is a hint, unsigned: every key trust.toml lists is tried.
    for key in [k for k in named if k is not None] + list(trust.keys):
        if envelope.signed_by(key.key):
            return _Signed(envelope.payload, key.name, f"key {key.fingerprint[:19]}…", key.scope)
    listed = next((k for k in named if k is not None), None)
    if listed is not None:
        raise InputError(
            f"the signature does not verify with key {listed.name!r} ({listed.fingerprint[:19]}…): "
            "the statement changed after signing, or another key signed it"
        )
    ids = ", ".join(s.keyid or "(none)" for s in envelope.signatures)
    raise InputError(f"signed by a key trust.toml does not list (keyid {ids})")


def _by_identity(raw: bytes, trust: Trust) -> _Signed:
    from harness.provenance.sigstore_bundle import matching_identities, payload_is_statement, verify_bundle

    verified = verify_bundle(raw, STATEMENT)
    payload = payload_is_statement(verified, STATEMENT)
    found = matching_identities(trust.identities, verified.signer)
    if not found:
        raise InputError(f"signed by {verified.signer.describe()}, which trust.toml does not list")
    identity = found[0]
    scope = Scope(
        backends=tuple(b for i in found for b in i.scope.backends),
        columns=tuple(c for i in found for c in i.scope.columns),
    )
    return _Signed(payload, identity.name, verified.signer.describe(), scope, verified.signer.run_url)


def verify_cell(cell: Path, trust: Trust, manifest: Manifest | None = None) -> Provenance:
    """The cell's provenance against `trust` (never raises: a failure is the verdict's reason)."""
    cell = Path(cell)
    try:
        path = cell / STATEMENT
        if not os.path.lexists(path):
            return UNSIGNED
        raw = read_statement_file(path)
        signed = _by_identity(raw, trust) if is_sigstore_bundle(raw) else _by_key(raw, trust)
        if manifest is None:
            manifest = read_manifest(cell / MANIFEST)
        if not signed.scope.allows(manifest.backend, manifest.cell_id):
            raise InputError(
                f"signed by {signed.by!r} ({signed.signer}), whom trust.toml allows for "
                f"{signed.scope.describe()}, not for {manifest.backend} ({manifest.cell_id})"
            )
        statement = read_statement(signed.payload, path.name)
        content = cell_content(cell)
        if not statement.covers(content.digest):
            raise InputError(what_changed(statement, content, manifest))
        if statement.predicate_type != PREDICATE_TYPE:
            kind = statement.predicate_type or "statement without a predicate type"
            raise InputError(f"the statement is a {kind}, not a cell run")
    except InputError as err:
        return invalid(str(err))
    except InfrastructureError:
        raise  # this machine cannot check (no sigstore library): the merge's problem, not the cell's
    except Exception as err:  # a statement no reader foresaw must cost its column only
        text = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return invalid(f"{STATEMENT}: cannot be checked ({type(err).__name__}{': ' + text if text else ''})")
    return Provenance(
        state=ProvenanceState.VERIFIED,
        by=signed.by,
        signer=signed.signer,
        run_url=signed.run_url or statement.run_url,
    )
