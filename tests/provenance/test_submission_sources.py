"""The submissions list: folders, archives, URLs (a release asset, served here by a real HTTP server)
and OCI references; a line it cannot take is one line naming its number."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.provenance.submission import pack
from harness.provenance.submission_sources import fetch, read_sources
from tests.provenance.conftest import Signed


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTP server on a free loopback port serving a folder (a release's assets), with one
    redirect, as GitHub redirects a release asset to its storage."""
    root = tmp_path / "served"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            if self.path.startswith("/releases/download/"):
                self.send_response(302)
                self.send_header("Location", "/" + self.path.rsplit("/", 1)[1])
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_list_names_folders_archives_urls_and_registries(tmp_path: Path) -> None:
    listing = tmp_path / "submissions.txt"
    listing.write_text(
        "# vendors' columns\n\nvendor/\ndrops/mi300x.cell.tar.gz   # the lab's nightly\n"
        "https://github.com/amd/compat/releases/download/nightly/mi300x.cell.tar.gz\n"
        "oci://ghcr.io/intel/xpu-cells:nightly\n"
    )
    sources = read_sources(listing)
    assert [s.line for s in sources] == [3, 4, 5, 6]
    assert sources[0].path == tmp_path / "vendor" and sources[1].path == tmp_path / "drops" / "mi300x.cell.tar.gz"
    assert sources[2].url and sources[3].oci is not None and sources[3].oci.tag == "nightly"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("ftp://example.org/x.cell.tar.gz", "submissions.txt:2: 'ftp://example.org/x.cell.tar.gz': only https://"),
        ("http://example.org/x.cell.tar.gz", "only https:// URLs"),
        ("oci://ghcr.io/Upper/Case:tag", "submissions.txt:2: 'oci://ghcr.io/Upper/Case:tag' is not an OCI reference"),
    ],
)
def test_a_line_it_cannot_take_is_one_line_with_its_number(tmp_path: Path, line: str, said: str) -> None:
    listing = tmp_path / "submissions.txt"
    listing.write_text(f"# one\n{line}\n")
    with pytest.raises(InputError) as err:
        read_sources(listing)
    assert said in str(err.value)


def test_a_folder_or_an_archive_is_taken_where_it_is(signed: Signed, tmp_path: Path) -> None:
    drops = tmp_path / "drops"
    archive = pack(signed.cell, drops / "cpu.cell.tar.gz")
    (drops / "notes.txt").write_text("not an archive")
    listing = tmp_path / "submissions.txt"
    listing.write_text("drops/\ndrops/cpu.cell.tar.gz\nmissing/\n")
    folder, single, missing = read_sources(listing)
    assert fetch(folder, tmp_path / "dl") == [archive] == fetch(single, tmp_path / "dl")
    with pytest.raises(InputError, match=r"neither a folder nor a \.cell\.tar\.gz archive"):
        fetch(missing, tmp_path / "dl")


def test_a_release_asset_is_downloaded_through_its_redirect(
    signed: Signed, tmp_path: Path, server: tuple[str, Path]
) -> None:
    base, root = server
    archive = pack(signed.cell, root / "cpu-2.13.0.cell.tar.gz")
    listing = tmp_path / "submissions.txt"
    listing.write_text(f"{base}/releases/download/nightly/cpu-2.13.0.cell.tar.gz\n{base}/absent.cell.tar.gz\n")
    asset, absent = read_sources(listing)
    (got,) = fetch(asset, tmp_path / "dl")
    assert got == tmp_path / "dl" / "cpu-2.13.0.cell.tar.gz" and got.read_bytes() == archive.read_bytes()
    with pytest.raises(InputError, match="HTTP 404"):
        fetch(absent, tmp_path / "dl")
    assert sorted(p.name for p in (tmp_path / "dl").iterdir()) == ["cpu-2.13.0.cell.tar.gz"], "no half download"
