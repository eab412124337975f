"""Keyless statements: signed in GitHub Actions with the workflow's identity (Sigstore: a short-lived
Fulcio certificate for the workflow's OIDC token, the signature logged in Rekor) and verified offline
here against a pinned trusted root (`sigstore_trusted_root.json`, refreshed by `harness trust
refresh-root`, which says what changed).

The `sigstore` library does the work (the `provenance` extra: pip install 'torch-compat-harness[provenance]');
it is imported only when a bundle is signed or checked. Who signed is read from the certificate's
Fulcio extensions (https://github.com/sigstore/fulcio/blob/main/docs/oid-info.md): the issuer, the
source repository and ref, the workflow that ran (its Build Config URI: the caller of a reusable
workflow) and the run.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.errors import InfrastructureError, InputError, UsageError
from harness.provenance.dsse import PAYLOAD_TYPE
from harness.provenance.trust import GITHUB, TrustedIdentity

TRUSTED_ROOT: Final = Path(__file__).with_name("sigstore_trusted_root.json")
BUNDLE_MEDIA_PREFIX: Final = "application/vnd.dev.sigstore.bundle"
INSTALL_HINT: Final = "pip install 'torch-compat-harness[provenance]' (or: pip install sigstore)"

# Fulcio's certificate extensions (1.3.6.1.4.1.57264.1.N): N -> what it holds. 1-6 are the
# deprecated raw-string forms, 8 and later DER UTF8Strings.
_OID: Final = "1.3.6.1.4.1.57264.1."
_ISSUER_V1, _REPOSITORY_V1, _REF_V1 = 1, 5, 6
_ISSUER, _SOURCE_REPOSITORY, _SOURCE_REF, _BUILD_CONFIG, _RUN = 8, 12, 14, 18, 21


def _sigstore() -> Any:
    try:
        import sigstore.models
        import sigstore.verify
    except ImportError:
        raise InfrastructureError(
            "a Sigstore bundle cannot be signed or checked here: the sigstore library is not installed",
            hint=INSTALL_HINT,
        ) from None
    import sigstore

    return sigstore


def said(err: BaseException) -> str:
    """An exception as one line: its first line, or its kind when it says nothing."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _der_utf8(raw: bytes) -> str:
    """A DER UTF8String's text (Fulcio's extensions from 1.8 on)."""
    if len(raw) < 2 or raw[0] != 0x0C:
        return raw.decode("utf-8", "replace")
    length, start = raw[1], 2
    if length & 0x80:
        count = length & 0x7F
        length, start = int.from_bytes(raw[2 : 2 + count], "big"), 2 + count
    return raw[start : start + length].decode("utf-8", "replace")


@dataclass(frozen=True, kw_only=True)
class Signer:
    """Who a Fulcio certificate says signed: the OIDC issuer and, for GitHub Actions, the repository,
    its ref, the top-level workflow (with ref) and the run."""

    issuer: str | None = None
    subject: str | None = None  # the certificate's SAN: the workflow file that signed, or an email
    repository: str | None = None  # OWNER/NAME
    ref: str | None = None
    workflow: str | None = None  # https://github.com/OWNER/REPO/.github/workflows/X.yml@REF
    run_url: str | None = None

    def describe(self) -> str:
        if self.workflow:
            return self.workflow.removeprefix("https://")
        return f"{self.subject or 'an unknown subject'} (issuer {self.issuer or 'unknown'})"


def signer_of(cert: Any) -> Signer:
    from cryptography import x509

    found: dict[int, str] = {}
    for ext in cert.extensions:
        dotted = ext.oid.dotted_string
        if dotted.startswith(_OID) and dotted[len(_OID) :].isdigit():
            number = int(dotted[len(_OID) :])
            raw = ext.value.value
            found[number] = raw.decode("utf-8", "replace") if number <= 6 else _der_utf8(raw)
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        found_names = [*names.get_values_for_type(x509.UniformResourceIdentifier)]
        found_names += names.get_values_for_type(x509.RFC822Name)
        subject = found_names[0] if found_names else None
    except x509.ExtensionNotFound:
        subject = None
    source = found.get(_SOURCE_REPOSITORY)
    repository = source.removeprefix(f"{GITHUB}/") if source and source.startswith(f"{GITHUB}/") else None
    return Signer(
        issuer=found.get(_ISSUER) or found.get(_ISSUER_V1),
        subject=subject,
        repository=repository or found.get(_REPOSITORY_V1),
        ref=found.get(_SOURCE_REF) or found.get(_REF_V1),
        workflow=found.get(_BUILD_CONFIG) or (subject if subject and subject.startswith(f"{GITHUB}/") else None),
        run_url=found.get(_RUN),
    )


def identity_matches(identity: TrustedIdentity, signer: Signer) -> bool:
    """The signer is this trust entry's workflow: same issuer, repository and workflow file, and a ref
    the entry allows (any, when it names none)."""
    if signer.issuer != identity.issuer or signer.repository != identity.repository or not signer.workflow:
        return False
    path, _, ref = signer.workflow.partition("@")
    if path != identity.workflow_uri:
        return False
    return identity.ref is None or fnmatch.fnmatchcase(signer.ref or ref, identity.ref)


@dataclass(frozen=True)
class VerifiedBundle:
    payload_type: str
    payload: bytes
    signer: Signer


class _Recorded:
    """A verification policy that records the verified certificate (whose identity the caller judges
    against trust.toml, to say who signed when no entry allows it)."""

    def __init__(self) -> None:
        self.cert: Any = None

    def verify(self, cert: Any) -> None:
        self.cert = cert


def read_bundle(raw: bytes, where: str) -> Any:
    """The Sigstore bundle in `raw`; one InputError line for a file of another format."""
    sigstore = _sigstore()
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{where}: not JSON ({getattr(err, 'msg', err)})") from None
    media = data.get("mediaType") if isinstance(data, dict) else None
    if not isinstance(media, str) or not media.startswith(BUNDLE_MEDIA_PREFIX):
        pypi = isinstance(data, dict) and "attestation_bundles" in data
        kind = " (a PyPI attestation: convert it to a bundle)" if pypi else ""
        raise InputError(f"{where}: not a Sigstore bundle (no {BUNDLE_MEDIA_PREFIX} mediaType){kind}")
    try:
        return sigstore.models.Bundle.from_json(raw)
    except Exception as err:  # the library raises several kinds for a malformed bundle
        raise InputError(f"{where}: not a valid Sigstore bundle ({said(err)})") from None


def verify_bundle(raw: bytes, where: str, *, root: Path = TRUSTED_ROOT) -> VerifiedBundle:
    """Check a bundle's DSSE envelope offline: the certificate chains to the pinned root at the time
    the log saw it, the log entry is proven, the signature is over this payload. InputError otherwise."""
    sigstore = _sigstore()
    bundle = read_bundle(raw, where)
    if bundle._dsse_envelope is None:  # the library's own accessor; a message signature has none
        raise InputError(f"{where}: a Sigstore bundle over a file, not over a statement (no DSSE envelope)")
    from sigstore.errors import Error as SigstoreError

    try:
        trusted = sigstore.models.TrustedRoot.from_file(str(root))
        recorded = _Recorded()
        payload_type, payload = sigstore.verify.Verifier(trusted_root=trusted).verify_dsse(bundle, recorded)
    except SigstoreError as err:
        raise InputError(f"{where}: the Sigstore bundle does not verify: {said(err)}") from None
    except ValueError as err:
        raise InputError(f"{where}: the Sigstore bundle does not verify: {said(err)}") from None
    return VerifiedBundle(payload_type, payload, signer_of(recorded.cert or bundle.signing_certificate))


def sign_keyless(payload: bytes, *, token: str | None = None) -> bytes:
    """A Sigstore bundle over `payload` (an in-toto statement), signed with the ambient OIDC identity
    (GitHub Actions with `id-token: write`). Needs Fulcio and Rekor: InfrastructureError without them."""
    _sigstore()
    import sigstore.dsse
    import sigstore.models
    import sigstore.oidc
    import sigstore.sign

    if token is None:
        try:
            token = sigstore.oidc.detect_credential()
        except Exception as err:
            raise InfrastructureError(f"no OIDC token for Sigstore: {said(err)}") from None
    if not token:
        raise UsageError(
            "no key given and no OIDC identity here: pass --key KEY.pem, or run in GitHub Actions with "
            "`permissions: id-token: write`"
        )
    try:
        context = sigstore.sign.SigningContext.from_trust_config(sigstore.models.ClientTrustConfig.production())
        with context.signer(sigstore.oidc.IdentityToken(token), cache=True) as signer:
            bundle = signer.sign_dsse(sigstore.dsse.Statement(payload))
    except Exception as err:  # the network and the services: one line, exit 3
        raise InfrastructureError(f"Sigstore signing failed: {said(err)}") from None
    return bundle.to_json().encode("utf-8")


def payload_is_statement(verified: VerifiedBundle, where: str) -> bytes:
    if verified.payload_type != PAYLOAD_TYPE:
        raise InputError(f"{where}: the bundle's payload is {verified.payload_type!r}, not an in-toto statement")
    return verified.payload


# -- the pinned root -----------------------------------------------------------------------------
def _entries(root: dict[str, Any]) -> dict[str, str]:
    """What a trusted root vouches for, one line per key or authority (their validity included)."""
    out: dict[str, str] = {}
    for kind, label in (("tlogs", "transparency log"), ("ctlogs", "certificate transparency log")):
        for log in root.get(kind) or ():
            key = log.get("publicKey") or {}
            valid = key.get("validFor") or {}
            ident = (log.get("logId") or {}).get("keyId", "?")
            until = valid.get("end") or "now"
            out[f"{kind}:{ident}"] = (
                f"{label} {log.get('baseUrl')} key {ident[:16]}… valid {valid.get('start')} to {until}"
            )
    authorities = (("certificateAuthorities", "certificate authority"), ("timestampAuthorities", "timestamp authority"))
    for kind, label in authorities:
        for ca in root.get(kind) or ():
            valid = ca.get("validFor") or {}
            chain = ((ca.get("certChain") or {}).get("certificates") or [{}])[-1].get("rawBytes", "")
            ident = f"{ca.get('uri')} {valid.get('start')}"
            out[f"{kind}:{chain[-24:]}"] = f"{label} {ident} to {valid.get('end') or 'now'}"
    return out


def root_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per key or authority added, removed or changed between two trusted roots."""
    before, after = _entries(old), _entries(new)
    lines = [f"added: {after[k]}" for k in after if k not in before]
    lines += [f"removed: {before[k]}" for k in before if k not in after]
    lines += [f"changed: {before[k]} -> {after[k]}" for k in after if k in before and before[k] != after[k]]
    return lines


def current_root(fetch: Callable[[], bytes] | None = None) -> bytes:
    """Sigstore's production trusted root as its TUF repository serves it now (network)."""
    if fetch is not None:
        return fetch()
    sigstore = _sigstore()
    try:
        config = sigstore.models.ClientTrustConfig.production(offline=False)
    except Exception as err:
        raise InfrastructureError(
            f"cannot reach Sigstore's TUF repository: {said(err)}",
            hint="refresh where the network reaches tuf-repo-cdn.sigstore.dev, or pass --from FILE",
        ) from None
    return config.trusted_root._inner.to_json().encode("utf-8")  # the library keeps the parsed root there


def check_root(raw: bytes, where: str) -> dict[str, Any]:
    """A trusted root the library accepts, as JSON; InputError otherwise."""
    import tempfile

    sigstore = _sigstore()
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{where}: not JSON ({getattr(err, 'msg', err)})") from None
    if not isinstance(data, dict) or "trustedroot" not in str(data.get("mediaType", "")).lower():
        raise InputError(f"{where}: not a Sigstore trusted root (no trustedroot mediaType)")
    with tempfile.NamedTemporaryFile(suffix=".json") as handle:  # the library reads a root from a file only
        handle.write(raw)
        handle.flush()
        try:
            sigstore.models.TrustedRoot.from_file(handle.name)
        except Exception as err:
            raise InputError(f"{where}: not a usable Sigstore trusted root ({said(err)})") from None
    return data


def matching_identities(identities: Sequence[TrustedIdentity], signer: Signer) -> list[TrustedIdentity]:
    return [i for i in identities if identity_matches(i, signer)]
