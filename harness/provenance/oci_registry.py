"""A submission in an OCI registry (GHCR, a lab's own registry): pushed as an OCI artifact whose one
layer is the archive (`harness submit --push oci://HOST/REPO:TAG`), pulled back by `harness collect
--submissions` with the registry's HTTP API (https://github.com/opencontainers/distribution-spec).
Standard library only. The layer is checked against the digest the manifest names, and its size
against MAX_ARCHIVE, before it is kept.

Credentials, when the registry needs them: HARNESS_OCI_USERNAME and HARNESS_OCI_PASSWORD (GHCR: a
user and a token with read:packages / write:packages); anonymous otherwise (a public package). A
redirect to another host (a registry's blob storage) is followed without them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from harness import outputs
from harness.errors import InfrastructureError, InputError, UsageError

SCHEME: Final = "oci://"
CONFIG_TYPE: Final = "application/vnd.torch-compat.cell.config.v1+json"  # the artifact's type (ORAS style)
LAYER_TYPE: Final = "application/vnd.torch-compat.cell.v1.tar+gzip"
MANIFEST_TYPE: Final = "application/vnd.oci.image.manifest.v1+json"
MAX_ARCHIVE: Final = 8 << 30
MAX_MANIFEST: Final = 1 << 20
_REF_RE: Final = re.compile(
    r"^(?P<host>[A-Za-z0-9.-]+(?::\d+)?)/(?P<repo>[a-z0-9]+(?:[._/-][a-z0-9]+)*)"
    # The tag as the OCI distribution spec writes it (not a cell id, though the two rules agree today).
    r"(?::(?P<tag>[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)
_LOOPBACK: Final = ("127.0.0.1", "localhost", "[::1]")
TIMEOUT: Final = 60.0


@dataclass(frozen=True)
class Reference:
    host: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def base(self) -> str:
        """Plain HTTP only for a registry on this machine (as Docker does); https everywhere else."""
        plain = self.host.split(":")[0] in _LOOPBACK or self.host.startswith("[::1]")
        return f"{'http' if plain else 'https'}://{self.host}/v2/{self.repository}"

    @property
    def version(self) -> str:
        return self.digest or self.tag or "latest"

    def __str__(self) -> str:
        return f"{SCHEME}{self.host}/{self.repository}" + (f"@{self.digest}" if self.digest else f":{self.version}")


def parse_reference(text: str) -> Reference:
    """`oci://HOST[:PORT]/REPO[:TAG][@sha256:...]`; one UsageError line for anything else."""
    if not text.startswith(SCHEME):
        raise UsageError(f"{text!r} is not an OCI reference (oci://HOST/REPO:TAG)")
    match = _REF_RE.match(text[len(SCHEME) :])
    if not match or ("." not in match["host"] and ":" not in match["host"] and match["host"] != "localhost"):
        raise UsageError(
            f"{text!r} is not an OCI reference: oci://HOST/REPO:TAG, a registry host (ghcr.io, 127.0.0.1:5000) "
            "and a lower-case repository"
        )
    return Reference(match["host"], match["repo"], match["tag"], match["digest"])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # followed by hand, so credentials never go to another host


_OPENER: Final = urllib.request.build_opener(_NoRedirect)


class _Registry:
    """The few calls a submission needs, with the registry's token dance (a 401 names where to get one)."""

    def __init__(self, ref: Reference) -> None:
        self.ref = ref
        self.token: str | None = None
        user, password = os.environ.get("HARNESS_OCI_USERNAME"), os.environ.get("HARNESS_OCI_PASSWORD")
        self.basic = base64.b64encode(f"{user}:{password}".encode()).decode() if user and password else None

    def _auth(self) -> dict[str, str]:
        if self.token:
            return {"Authorization": f"Bearer {self.token}"}
        return {"Authorization": f"Basic {self.basic}"} if self.basic else {}

    def _login(self, challenge: str) -> None:
        fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        if not challenge.lower().startswith("bearer") or "realm" not in fields:
            raise InputError(f"{self.ref}: the registry asks for credentials (set HARNESS_OCI_USERNAME/PASSWORD)")
        query = urllib.parse.urlencode({k: v for k, v in fields.items() if k in ("service", "scope")})
        request = urllib.request.Request(f"{fields['realm']}?{query}")
        if self.basic:
            request.add_header("Authorization", f"Basic {self.basic}")
        try:
            with _OPENER.open(request, timeout=TIMEOUT) as answer:
                data = json.loads(answer.read(MAX_MANIFEST))
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise InfrastructureError(f"{self.ref}: no registry token from {fields['realm']} ({err})") from None
        self.token = data.get("token") or data.get("access_token")
        if not self.token:
            raise InputError(f"{self.ref}: the registry gave no token")

    def call(
        self, method: str, url: str, *, body: bytes | None = None, headers: Mapping[str, str] | None = None
    ) -> urllib.response.addinfourl:
        """The answer to one request (2xx), following redirects by hand and logging in on a 401."""
        for _ in range(5):
            request = urllib.request.Request(url, data=body, method=method, headers={**(headers or {})})
            same_host = urllib.parse.urlsplit(url).netloc == self.ref.host
            for name, value in (self._auth() if same_host else {}).items():
                request.add_header(name, value)
            try:
                return _OPENER.open(request, timeout=TIMEOUT)
            except urllib.error.HTTPError as err:
                if err.code == 401 and same_host and self.token is None:
                    self._login(err.headers.get("WWW-Authenticate", ""))
                    continue
                if err.code in (301, 302, 303, 307, 308) and err.headers.get("Location"):
                    url = urllib.parse.urljoin(url, err.headers["Location"])
                    continue
                detail = err.read(300).decode("utf-8", "replace").strip().replace("\n", " ")
                path = urllib.parse.urlsplit(url).path
                raise InputError(f"{self.ref}: {method} {path}: HTTP {err.code} {detail}") from None
            except (urllib.error.URLError, OSError) as err:
                reason = getattr(err, "reason", err)
                raise InfrastructureError(f"{self.ref}: cannot reach the registry ({reason})") from None
        raise InputError(f"{self.ref}: too many redirects or logins")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _upload(registry: _Registry, data: bytes, digest: str) -> None:
    base = registry.ref.base
    try:
        with registry.call("HEAD", f"{base}/blobs/{digest}"):
            return  # there already
    except InputError:
        pass
    with registry.call("POST", f"{base}/blobs/uploads/", body=b"") as answer:
        location = urllib.parse.urljoin(base + "/", answer.headers.get("Location", ""))
    joiner = "&" if "?" in location else "?"
    headers = {"Content-Type": "application/octet-stream"}
    with registry.call("PUT", f"{location}{joiner}digest={digest}", body=data, headers=headers):
        pass


def push_archive(path: Path, ref: Reference) -> Reference:
    """Push the archive at `path` as an OCI artifact at `ref`; the reference by digest."""
    data = path.read_bytes()
    registry = _Registry(ref)
    config = b"{}"
    _upload(registry, config, _digest(config))
    _upload(registry, data, _digest(data))
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "digest": _digest(config), "size": len(config)},
        "layers": [
            {
                "mediaType": LAYER_TYPE,
                "digest": _digest(data),
                "size": len(data),
                "annotations": {"org.opencontainers.image.title": path.name},
            }
        ],
    }
    body = json.dumps(manifest, separators=(",", ":")).encode()
    with registry.call(
        "PUT", f"{ref.base}/manifests/{ref.tag or 'latest'}", body=body, headers={"Content-Type": MANIFEST_TYPE}
    ):
        pass
    return Reference(ref.host, ref.repository, digest=_digest(body))


def pull_archive(ref: Reference, folder: Path) -> Path:
    """The submission at `ref`, checked against the digest its manifest names, written into `folder`."""
    registry = _Registry(ref)
    with registry.call("GET", f"{ref.base}/manifests/{ref.version}", headers={"Accept": MANIFEST_TYPE}) as answer:
        raw = answer.read(MAX_MANIFEST + 1)
    if len(raw) > MAX_MANIFEST:
        raise InputError(f"{ref}: a manifest of more than {MAX_MANIFEST} bytes; refused")
    if ref.digest and _digest(raw) != ref.digest:
        raise InputError(f"{ref}: the manifest is not the one its digest names")
    try:
        manifest = json.loads(raw)
        layers = [layer for layer in manifest.get("layers", []) if layer.get("mediaType") == LAYER_TYPE]
    except (ValueError, AttributeError):
        raise InputError(f"{ref}: the registry's manifest is not JSON") from None
    if len(layers) != 1:
        raise InputError(f"{ref}: not a cell submission (no single {LAYER_TYPE} layer)")
    layer = layers[0]
    digest, size = str(layer.get("digest", "")), layer.get("size")
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest) or not isinstance(size, int) or not 0 < size <= MAX_ARCHIVE:
        raise InputError(f"{ref}: its layer's digest or size is not one to take ({digest}, {size})")
    title = str((layer.get("annotations") or {}).get("org.opencontainers.image.title", ""))
    name = (
        title
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.cell\.tar\.gz", title)
        else f"{digest[7:19]}.cell.tar.gz"
    )
    dest = Path(folder) / name

    def write(handle: IO[bytes]) -> None:
        hasher, left = hashlib.sha256(), size
        with registry.call("GET", f"{ref.base}/blobs/{digest}") as blob:
            while left and (chunk := blob.read(min(1 << 20, left))):
                hasher.update(chunk)
                handle.write(chunk)
                left -= len(chunk)
            if left or blob.read(1):
                raise InputError(f"{ref}: the layer is not {size} bytes as the manifest says")
        if "sha256:" + hasher.hexdigest() != digest:
            raise InputError(f"{ref}: the layer's bytes are not the ones its digest names")

    outputs.write_file(dest, write)
    return dest
