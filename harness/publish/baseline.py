"""The previous published matrix, from a file or from the site (an http(s) URL): what `publish`
diffs against, the gate judges regressions by and a pull request is compared with.

A site publishes matrix.json split (an index naming its parts, fetched beside it: schema 1.4); an
older one matrix.json.gz, or matrix.json whole; every form is read. A baseline that does not exist
yet (the first publication: HTTP 404, no file) is None when it is optional, never a crash.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Final

from harness.errors import InputError
from harness.matrix_json import load_matrix, matrix_from_bytes
from harness.model import Matrix

FETCH_TIMEOUT: Final = 60  # seconds: a matrix of a large site is tens of MB
MAX_BYTES: Final = 1 << 30  # refuse a "matrix" over 1 GiB rather than fill the runner's memory


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://", "file://"))


def fetch(url: str, *, required: bool) -> bytes | None:
    """The bytes at `url`; None when it does not exist and is not required."""
    request = urllib.request.Request(url, headers={"User-Agent": "torch-compat-harness"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:
            data = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as err:
        if err.code == 404 and not required:
            return None
        raise InputError(f"{url}: HTTP {err.code} {err.reason}") from None
    except FileNotFoundError:
        if not required:
            return None
        raise InputError(f"{url}: no such file") from None
    except (urllib.error.URLError, OSError, TimeoutError) as err:
        reason = getattr(err, "reason", err)
        raise InputError(f"{url}: cannot fetch ({reason})") from None
    if len(data) > MAX_BYTES:
        raise InputError(f"{url}: larger than {MAX_BYTES >> 20} MB; not a matrix this harness reads")
    return data


def load_baseline(source: str | Path, *, required: bool = False, results: str = "all") -> Matrix | None:
    """The matrix at `source` (a path, or a URL of matrix.json / matrix.json.gz). `results`: as
    `load_matrix` takes it ("outcomes" where only the outcomes are compared: a diff)."""
    text = str(source)
    if is_url(text):
        data = fetch(text, required=required)
        if data is None:
            return None
        part = lambda name: _fetched(urllib.parse.urljoin(text, name))  # noqa: E731
        return matrix_from_bytes(data, text, read_part=part, results=results)
    path = Path(text)
    if not path.exists() and not required:
        return None
    return load_matrix(path, results=results)


def _fetched(url: str) -> bytes:
    data = fetch(url, required=True)
    assert data is not None  # required: a missing part is an InputError
    return data


def site_matrix(site: Path) -> Path | None:
    """The matrix a site folder holds from its last publication (matrix.json: the split form's
    index, or an older publication's whole matrix; else an older one's matrix.json.gz)."""
    for name in ("matrix.json", "matrix.json.gz"):
        if (site / name).is_file():
            return site / name
    return None
