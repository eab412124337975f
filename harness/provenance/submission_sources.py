"""Where a matrix's submissions come from: a file of the repository (reviewed like code) that lists
one source per line, `#` starting a comment:

    results/vendor/                                  a folder: its *.cell.tar.gz archives
    drops/mi300x.cell.tar.gz                         one archive
    https://github.com/OWNER/REPO/releases/download/nightly/mi300x.cell.tar.gz   a release asset, any https URL
    oci://ghcr.io/OWNER/compat-cells:mi300x          an OCI registry (harness submit --push)

Relative paths are read from the list's folder. Each source is fetched on its own: one that cannot
be had is one line, and the others are still taken.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from harness import outputs
from harness.errors import InfrastructureError, InputError
from harness.provenance import oci_registry
from harness.provenance.submission import SUFFIX
from harness.regular_file import read_regular

MAX_LIST: Final = 1 << 20
_URL_NAME_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.cell\.tar\.gz")


@dataclass(frozen=True)
class Source:
    text: str
    line: int
    path: Path | None = None  # a folder or an archive
    url: str | None = None
    oci: oci_registry.Reference | None = None

    def __str__(self) -> str:
        return self.text


def read_sources(path: Path) -> list[Source]:
    """The sources a list names; one InputError line (with its line number) for a line it cannot take."""
    try:
        text = read_regular(path)[: MAX_LIST + 1]
    except OSError as err:
        raise InputError(f"{path}: cannot read the submissions list: {err.strerror or err}") from None
    if len(text) > MAX_LIST:
        raise InputError(f"{path}: more than {MAX_LIST} bytes is not a list of submissions")
    sources = []
    for number, raw in enumerate(text.decode("utf-8", "replace").splitlines(), 1):
        line = re.split(r"\s#", raw, maxsplit=1)[0].strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        if line.startswith(oci_registry.SCHEME):
            try:
                sources.append(Source(line, number, oci=oci_registry.parse_reference(line)))
            except Exception as err:
                raise InputError(f"{where}: {err}") from None
        elif line.startswith("https://") or _loopback(line):
            sources.append(Source(line, number, url=line))
        elif "://" in line:
            raise InputError(f"{where}: {line!r}: only https:// URLs and oci:// references are fetched")
        else:
            sources.append(Source(line, number, path=(path.parent / line)))
    return sources


def _loopback(url: str) -> bool:
    """Plain http only from this machine (a test's server, a lab's local mirror), as for registries."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


def _download(url: str, folder: Path) -> Path:
    name = Path(urllib.parse.urlsplit(url).path).name
    dest = folder / (name if _URL_NAME_RE.fullmatch(name) else "download" + SUFFIX)

    def write(handle: IO[bytes]) -> None:
        try:
            with urllib.request.urlopen(url, timeout=oci_registry.TIMEOUT) as answer:
                left = oci_registry.MAX_ARCHIVE
                while chunk := answer.read(1 << 20):
                    left -= len(chunk)
                    if left < 0:
                        raise InputError(f"{url}: more than {oci_registry.MAX_ARCHIVE >> 30} GiB; refused")
                    handle.write(chunk)
        except urllib.error.HTTPError as err:
            raise InputError(f"{url}: HTTP {err.code} {err.reason}") from None
        except (urllib.error.URLError, OSError) as err:
            raise InfrastructureError(f"{url}: cannot fetch ({getattr(err, 'reason', err)})") from None

    outputs.write_file(folder / dest.name, write)
    return dest


def fetch(source: Source, downloads: Path) -> list[Path]:
    """The archives a source holds, downloaded into `downloads` when they are not on this machine."""
    if source.path is not None:
        if source.path.is_dir():
            return sorted(p for p in source.path.iterdir() if p.name.endswith(SUFFIX) and p.is_file())
        if source.path.is_file() and source.path.name.endswith(SUFFIX):
            return [source.path]
        raise InputError(f"{source.path}: neither a folder nor a {SUFFIX} archive")
    outputs.make_dirs(downloads)
    if source.oci is not None:
        return [oci_registry.pull_archive(source.oci, downloads)]
    assert source.url is not None
    return [_download(source.url, downloads)]
